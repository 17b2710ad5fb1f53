/*
 * xg-run's input: the upstream records (request, model, pack, snapshot),
 * and the snapshot itself when none comes.
 *
 * The run starts as soon as it holds a request, a model and a pack: in an
 * xg pipeline they come before the snapshot, which xg-snapshot writes once
 * the tree is read.  The rest of the input is read on a thread of its own,
 * which also takes a snapshot when the input ends without one, by running
 * xg-snapshot (so xg-run itself never loads libgit2).  The thread is
 * joined before run_start, at the first event of the first reply at the
 * latest, and no tool runs before that: the model's first reply cannot
 * touch the tree before its tool calls run.
 */
#include "xg.h"
#include "run/run.h"
#include "conversation.h"
#include "dispatch.h"
#include "prompt.h"
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

/* The snapshot's process, for a signal handler to stop. */
static volatile pid_t snapshot_pid;

void xg_run_input_abort(void)
{
	pid_t pid = snapshot_pid;

	if (pid > 0)
		kill(pid, SIGTERM);
}

/* A request field that must be a string when present; -1 after failing. */
static int request_string(struct run *r, size_t line, const char *key, const char **out)
{
	jv v = xg_json_get_peek(r->request, key);

	*out = NULL;
	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL)
		return 0;
	if (jv_get_kind(v) != JV_KIND_STRING) {
		xg_run_fail(r, XG_EX_DATAERR, "standard input:%zu: field '%s' of the request is "
			    "%s, not a string", line, key, xg_json_kind_peek(v));
		return -1;
	}
	*out = jv_string_value(v);
	return 0;
}
static int check_request(struct run *r, size_t line)
{
	const char *text, *mode, *conv, *cwd;

	if (request_string(r, line, "text", &text) < 0 ||
	    request_string(r, line, "mode", &mode) < 0 ||
	    request_string(r, line, "conversation", &conv) < 0 ||
	    request_string(r, line, "cwd", &cwd) < 0)
		return -1;
	if (!text || !*text)
		return xg_run_fail(r, XG_EX_DATAERR, "standard input:%zu: field 'text' of the request "
			    "is missing or empty", line), -1;
	if (mode && !xg_mode_valid(mode))
		return xg_run_fail(r, XG_EX_DATAERR, "standard input:%zu: field 'mode' is not a mode "
			    "name (%s)", line, XG_PROMPT_MODE_RULE), -1;
	if (conv && !xg_conv_id_valid(conv))
		return xg_run_fail(r, XG_EX_DATAERR, "standard input:%zu: field 'conversation' is '%s', "
			    "not a conversation id", line, conv), -1;
	return 0;
}

/* A consumed record's slot, or NULL for one that passes through. */
static jv *slot_of(struct run *r, const char *type)
{
	if (!type)
		return NULL;
	if (!strcmp(type, "request"))
		return &r->request;
	if (!strcmp(type, "snapshot"))
		return &r->snapshot;
	if (!strcmp(type, "model"))
		return &r->model;
	if (!strcmp(type, "pack"))
		return &r->pack;
	return NULL;
}

static int held(jv v)
{
	return jv_get_kind(v) == JV_KIND_OBJECT;
}

/*
 * Reads the input up to the point where a request, a model and a pack are
 * held (the last of each so far), passing through what it does not take;
 * the rest is left to xg_run_start_input.  With a request operand standard
 * input is not read at all, so a caller that leaves it open cannot hold the
 * run.
 */
int xg_run_read_input(struct run *r)
{
	struct xg_rec rec;
	size_t line = 0;
	int n = 0;

	if (r->o->text) {
		r->request = xg_rec_new("request");
		r->request = xg_json_set(r->request, "text", jv_string(r->o->text));
		return check_request(r, 0) < 0 ? r->rc : 0;
	}
	if (r->o->read_stdin) {
		xg_rec_reader_init(&r->rd, 0, "standard input");
		r->reading = 1;
		while (!(held(r->request) && held(r->model) && held(r->pack)) &&
		       (n = xg_rec_next(&r->rd, &rec)) > 0) {
			jv *slot = slot_of(r, rec.type);

			if (slot) {
				jv_free(*slot);
				*slot = jv_copy(rec.v);
				if (slot == &r->request)
					line = rec.lineno;
			} else {
				xg_run_out_pass(&r->out, &rec);
			}
			xg_rec_release(&rec);
		}
		if (n <= 0) {
			r->reading = 0;
			xg_rec_reader_release(&r->rd);
		}
		if (n < 0)
			return xg_run_fail(r, strncmp(r->rd.err, "cannot read", 11) ?
					   XG_EX_DATAERR : XG_EX_IOERR, "%s", r->rd.err);
	}
	if (!held(r->request))
		return xg_run_fail(r, XG_EX_DATAERR, "no request: give its text as an operand or "
				   "a request record on standard input");
	return check_request(r, line) < 0 ? r->rc : 0;
}

/* The rest of the input: a snapshot is taken (the last one), the rest is
 * kept to pass through when the thread is joined. */
static void read_rest(struct run *r)
{
	struct xg_rec rec;
	int n;

	if (!r->reading)
		return;
	while ((n = xg_rec_next(&r->rd, &rec)) > 0) {
		if (rec.type && !strcmp(rec.type, "snapshot")) {
			jv_free(r->snapshot);
			r->snapshot = jv_copy(rec.v);
			xg_rec_release(&rec);
		} else {
			XG_ALLOC_GROW(r->late, r->nlate + 1, r->alate);
			r->late[r->nlate++] = rec;
		}
	}
	if (n < 0) {
		r->late_rc = strncmp(r->rd.err, "cannot read", 11) ? XG_EX_DATAERR : XG_EX_IOERR;
		snprintf(r->late_err, sizeof(r->late_err), "%s", r->rd.err);
	}
	xg_rec_reader_release(&r->rd);
	r->reading = 0;
}

/* The last snapshot record xg-snapshot wrote, or null. */
static jv snapshot_record(const char *out, size_t len)
{
	jv found = jv_null();
	const char *p = out, *end = out + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		jv v = jv_parse_sized(p, (int)n);
		const char *type = jv_get_kind(v) == JV_KIND_OBJECT ?
				   xg_json_string_peek(v, "type") : NULL;

		if (type && !strcmp(type, "snapshot")) {
			jv_free(found);
			found = v;
		} else {
			jv_free(v);
		}
		p += n + 1;
	}
	return found;
}

/*
 * Takes the snapshot a pipeline's xg-snapshot would have: runs it on the
 * workspace with nothing on its standard input; its messages go to ours.
 * On failure the run goes on without one, as it would outside a
 * repository, after saying why.
 */
static jv take_snapshot(struct run *r)
{
	posix_spawn_file_actions_t fa;
	struct xg_buf out = XG_BUF_INIT(0);
	char *prog = xg_dispatch_find("snapshot");
	char *argv[] = { "xg-snapshot", "-C", r->cwd, NULL };
	int fd[2], status = 0, err;
	pid_t pid;
	jv snap;

	if (!prog) {
		fprintf(stderr, "%s: no snapshot: xg-snapshot is neither beside xg-run nor in "
			"PATH\n", xg_progname);
		return jv_null();
	}
	if (pipe2(fd, O_CLOEXEC) < 0) {
		fprintf(stderr, "%s: no snapshot: cannot make a pipe: %s\n", xg_progname,
			strerror(errno));
		free(prog);
		return jv_null();
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	err = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (err) {
		fprintf(stderr, "%s: no snapshot: cannot run '%s': %s\n", xg_progname, prog,
			strerror(err));
		close(fd[0]);
		free(prog);
		return jv_null();
	}
	snapshot_pid = pid;
	if (xg_read_fd(fd[0], &out) < 0)
		fprintf(stderr, "%s: cannot read from xg-snapshot: %s\n", xg_progname,
			strerror(errno));
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	snapshot_pid = 0;
	snap = snapshot_record(out.buf, out.len);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !held(snap)) {
		fprintf(stderr, "%s: no snapshot: '%s' %s %d\n", xg_progname, prog,
			WIFSIGNALED(status) ? "was killed by signal" : "exited with",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		jv_free(snap);
		snap = jv_null();
	}
	xg_buf_release(&out);
	free(prog);
	return snap;
}

static void *input_thread(void *arg)
{
	struct run *r = arg;

	read_rest(r);
	if (!held(r->snapshot)) {
		if (r->o->verbose)
			fprintf(stderr, "%s: no snapshot record: running xg-snapshot\n",
				xg_progname);
		jv_free(r->snapshot);
		r->snapshot = take_snapshot(r);
	}
	return NULL;
}

void xg_run_start_input(struct run *r)
{
	if (!r->reading && held(r->snapshot))
		return;
	if (pthread_create(&r->input_thread, NULL, input_thread, r) == 0)
		r->input_running = 1;
	else
		input_thread(r);
}

int xg_run_join_input(struct run *r)
{
	size_t i;

	if (r->input_running) {
		pthread_join(r->input_thread, NULL);
		r->input_running = 0;
	} else {
		read_rest(r);	/* the run ended before it started the thread */
	}
	for (i = 0; i < r->nlate; i++) {
		xg_run_out_pass(&r->out, &r->late[i]);
		xg_rec_release(&r->late[i]);
	}
	r->nlate = 0;
	if (r->late_rc && r->rc < 0)
		xg_run_fail(r, r->late_rc, "%s", r->late_err);
	r->late_rc = 0;
	return r->rc;
}
