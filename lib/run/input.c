/*
 * xg-run's input: the upstream records (request, model, pack, snapshot),
 * and the snapshot itself when none comes.
 *
 * The run starts as soon as it holds a request, a model and a pack: in an
 * xg pipeline they come before the snapshot, which xg-snapshot writes once
 * the tree is read.  The rest of the input is read on a thread of its own,
 * started once the first request is out (xg_run_prepare sets the hook),
 * which also takes a snapshot when the input ends without one, by running
 * xg-snapshot (so xg-run itself never loads libgit2).  The thread is
 * joined before run_start, at the first event of the first reply at the
 * latest, and no tool runs before that: the model's first reply cannot
 * touch the tree before its tool calls run.
 *
 * What the thread uses lives in struct run_input, on the heap: after a
 * signal a thread still blocked on an input its writer keeps open is left
 * behind (the process ends without it), and what it holds must stay valid
 * until then.
 */
#include "xg.h"
#include "run/internal.h"
#include "conversation.h"
#include "exec.h"
#include "pipeline.h"
#include "prompt/prompt.h"
#include <sys/wait.h>

extern char **environ;

struct run_input {
	struct xg_rec_reader rd;	/* standard input */
	int reading;			/* rd is open */
	struct xg_thread thread;	/* reads the rest, takes a snapshot */
	int running;
	int want_snapshot;		/* the thread takes one when none comes */
	jv snapshot;			/* the thread's result */
	struct xg_rec *late;		/* records read after the run started */
	size_t nlate, alate;
	int late_rc;			/* the rest of the input was bad */
	char late_err[256];
	char *cwd;
	char **env;			/* xg-snapshot's, without keys */
	int verbose;
};

/* A thread left behind, kept reachable until the process ends (volatile:
 * a store nothing reads would be optimised away). */
static struct run_input *volatile left_behind;

static struct run_input *input_of(struct run *r)
{
	if (!r->input) {
		r->input = xg_calloc(1, sizeof(*r->input));
		r->input->snapshot = jv_null();
	}
	return r->input;
}

/* The snapshot's process, for a signal handler to stop, and whether one
 * has come (then no snapshot is started). */
static volatile pid_t snapshot_pid;
static volatile sig_atomic_t input_aborted;
/* Written to by a signal handler, it wakes whatever reads the input. */
static int wake[2] = { -1, -1 };

void xg_run_input_abort(void)
{
	int saved = errno;
	pid_t pid;

	/* The flag before the pid, as take_snapshot stores the pid before it
	 * reads the flag: one of the two sees the other. */
	__atomic_store_n(&input_aborted, 1, __ATOMIC_SEQ_CST);
	pid = __atomic_load_n(&snapshot_pid, __ATOMIC_SEQ_CST);
	if (wake[1] >= 0 && write(wake[1], "", 1) < 0) {
		/* full: it is readable already */
	}
	if (pid > 0)
		kill(pid, SIGTERM);
	errno = saved;
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
/* A request field that must be of kind (true: a boolean) when present. */
static int request_kind(struct run *r, size_t line, const char *key, jv_kind kind,
			const char *what)
{
	jv v = xg_json_get_peek(r->request, key);
	jv_kind k = jv_get_kind(v);

	if (!jv_is_valid(v) || k == JV_KIND_NULL || k == kind ||
	    (kind == JV_KIND_TRUE && k == JV_KIND_FALSE))
		return 0;
	xg_run_fail(r, XG_EX_DATAERR, "standard input:%zu: field '%s' of the request is %s, "
		    "not %s", line, key, xg_json_kind_peek(v), what);
	return -1;
}

/* The request's fields of xg-records(5), strings all, with the ones the
 * run itself does not use (its choosing of the model and its compiling
 * read them, or the stages before it did) checked too. */
static int check_request(struct run *r, size_t line)
{
	const char *text, *mode, *conv, *cwd, *unused;

	if (request_string(r, line, "text", &text) < 0 ||
	    request_string(r, line, "mode", &mode) < 0 ||
	    request_string(r, line, "conversation", &conv) < 0 ||
	    request_string(r, line, "cwd", &cwd) < 0 ||
	    request_string(r, line, "model", &unused) < 0 ||
	    request_string(r, line, "effort", &unused) < 0 ||
	    request_string(r, line, "variant", &unused) < 0 ||
	    request_string(r, line, "account", &unused) < 0)
		return -1;
	if (request_string(r, line, "kind", &unused) < 0 || request_kind(r, line, "hidden",
	    JV_KIND_TRUE, "a boolean") < 0 || request_kind(r, line, "goal", JV_KIND_OBJECT,
	    "an object") < 0)
		return -1;
	if (!text || !*text)
		return xg_run_fail(r, XG_EX_DATAERR, "standard input:%zu: field 'text' of the "
				   "request is missing or empty", line), -1;
	if (mode && !xg_conv_mode_valid(mode))
		return xg_run_fail(r, XG_EX_DATAERR, "standard input:%zu: field 'mode' is '%s', "
				   "which " XG_CONV_MODE_BAD, line, mode), -1;
	if (conv && !xg_conv_id_valid(conv))
		return xg_run_fail(r, XG_EX_DATAERR, "standard input:%zu: field 'conversation' is "
				   "'%s', which " XG_CONV_ID_BAD, line, conv), -1;
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

static int held_peek(jv v)
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
	struct run_input *in = input_of(r);
	struct xg_rec rec;
	size_t line = 0;
	int n = 0;

	if (r->o->compact) {	/* --compact: no request, a conversation */
		r->request = xg_rec_new("request");
		if (!r->o->conversation || !xg_conv_exists(r->o->conversation))
			return xg_run_fail(r, XG_EX_DATAERR, "there is no conversation '%s' to "
					   "compact", r->o->conversation ? r->o->conversation : "");
		return 0;
	}
	if (r->o->text) {
		r->request = xg_rec_new("request");
		r->request = xg_json_set(r->request, "text", jv_string(r->o->text));
		return check_request(r, 0) < 0 ? r->rc : 0;
	}
	if (r->o->read_stdin) {
		if (wake[0] < 0 && pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0)
			wake[0] = wake[1] = -1;
		xg_rec_reader_init(&in->rd, 0, "standard input");
		in->rd.wake_fd = wake[0];
		in->reading = 1;
		if (input_aborted)	/* a signal came before the pipe was there */
			n = -1;
		while (n >= 0 && !(held_peek(r->request) && held_peek(r->model) && held_peek(r->pack)) &&
		       (n = xg_rec_next(&in->rd, &rec)) > 0) {
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
		if (n < 0 && input_aborted)
			xg_run_fail(r, XG_EX_FAIL, "stopped by a signal while reading the input");
		else if (n < 0)
			xg_run_fail(r, in->rd.code, "%s", in->rd.err);
		if (n <= 0) {
			in->reading = 0;
			xg_rec_reader_release(&in->rd);
		}
		if (n < 0)
			return r->rc;
	}
	if (!held_peek(r->request))
		return xg_run_fail(r, XG_EX_DATAERR, "no request: give its text as an operand or "
				   "a request record on standard input");
	return check_request(r, line) < 0 ? r->rc : 0;
}

/* The rest of the input: a snapshot is taken (the last one), the rest is
 * kept to pass through when the thread is joined. */
static void read_rest(struct run_input *in)
{
	struct xg_rec rec;
	int n;

	if (!in->reading)
		return;
	while ((n = xg_rec_next(&in->rd, &rec)) > 0) {
		if (rec.type && !strcmp(rec.type, "snapshot")) {
			jv_free(in->snapshot);
			in->snapshot = jv_copy(rec.v);
			xg_rec_release(&rec);
		} else {
			XG_ALLOC_GROW(in->late, in->nlate + 1, in->alate);
			in->late[in->nlate++] = rec;
		}
	}
	if (n < 0 && !input_aborted) {
		in->late_rc = in->rd.code;
		snprintf(in->late_err, sizeof(in->late_err), "%s", in->rd.err);
	}
	xg_rec_reader_release(&in->rd);
	in->reading = 0;
}

/*
 * Takes the snapshot a pipeline's xg-snapshot would have: runs it on the
 * workspace with nothing on its standard input and an environment with no
 * key in it (copied in the main thread before the input thread starts: the
 * main thread soon unsets and zeroes the key variables in environ, which
 * must not happen under a spawn reading it); its messages go to ours.  On
 * failure the run goes on without one, as it would outside a repository,
 * after saying why.
 */
static jv take_snapshot(const struct run_input *in)
{
	char *prog = xg_exec_find("snapshot"), *err = NULL;
	char *argv[] = { "xg-snapshot", "-C", in->cwd, NULL };
	int status;
	jv snap;

	if (input_aborted) {
		free(prog);
		return jv_null();
	}
	if (!prog) {
		fprintf(stderr, "%s: no snapshot: xg-snapshot is neither beside xg-run nor in "
			"PATH\n", xg_progname);
		return jv_null();
	}
	if (xg_pipeline_capture(prog, argv, in->env, "snapshot", &snapshot_pid, &input_aborted,
				&snap, &status, &err) < 0) {
		fprintf(stderr, "%s: no snapshot: cannot run '%s': %s\n", xg_progname, prog,
			strerror(errno));
		free(prog);
		return jv_null();
	}
	if (err)
		fprintf(stderr, "%s: %s\n", xg_progname, err);
	free(err);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		if (!input_aborted)
			fprintf(stderr, "%s: no snapshot: '%s' %s %d\n", xg_progname, prog,
				WIFSIGNALED(status) ? "was killed by signal" : "exited with",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		jv_free(snap);
		snap = jv_null();
	} else if (!held_peek(snap)) {
		fprintf(stderr, "%s: no snapshot: '%s' wrote no snapshot record\n", xg_progname,
			prog);
	}
	free(prog);
	return snap;
}

static void *input_thread(void *arg)
{
	struct run_input *in = arg;

	read_rest(in);
	if (in->want_snapshot && !held_peek(in->snapshot)) {
		if (in->verbose)
			fprintf(stderr, "%s: no snapshot record: running xg-snapshot\n",
				xg_progname);
		jv_free(in->snapshot);
		in->snapshot = take_snapshot(in);
	}
	return NULL;
}

/* The thread owns the snapshot from here until it is joined. */
static void start_thread(struct run *r, struct run_input *in, int want_snapshot)
{
	jv_free(in->snapshot);
	in->snapshot = r->snapshot;
	r->snapshot = jv_null();
	in->want_snapshot = want_snapshot;
	free(in->cwd);
	in->cwd = xg_strdup(r->cwd ? r->cwd : ".");
	xg_exec_env_free(in->env);
	in->env = xg_exec_env_nokeys();
	in->verbose = r->o->verbose;
	if (xg_run_thread_start(&in->thread, input_thread, in) == 0) {
		in->running = 1;
		return;
	}
	input_thread(in);
	r->snapshot = in->snapshot;
	in->snapshot = jv_null();
}

/*
 * The cue xg hands the xg-run it starts, whose other end its phase row
 * watches: closed once the first request is out, or when the run goes to
 * the rest of its input without one, which may hold the snapshot record.
 */
static void release_cue(struct run *r)
{
	if (r->cue >= 0)
		close(r->cue);
	r->cue = -1;
}

void xg_run_start_input(struct run *r)
{
	struct run_input *in = input_of(r);

	release_cue(r);
	/* Begun, the run has joined its input and goes on without a thread. */
	if (!r->begun && !r->o->compact && (in->reading || !held_peek(r->snapshot)))
		start_thread(r, in, 1);
}

/* Waits for the thread; 0 once it is joined, -1 when it was left behind
 * after *stop: still reading standard input, or past a grace period for a
 * snapshot whose process was told to stop. */
static int wait_thread(struct run_input *in, volatile sig_atomic_t *stop)
{
	int64_t stopped = 0;
	pid_t pid;

	for (;;) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (xg_thread_clockjoin(&in->thread, &ts) == 0)
			return 0;
		if (!*stop)
			continue;
		/* The reading wakes at once and xg-snapshot was told to stop:
		 * two seconds are plenty, and then the run ends without them. */
		if (!stopped)
			stopped = xg_clock_ms();
		if (xg_clock_ms() - stopped > 2000)
			break;
	}
	/* Whatever it runs goes with the run, whether it heeds SIGTERM or not:
	 * it holds the run's standard error. */
	pid = __atomic_load_n(&snapshot_pid, __ATOMIC_SEQ_CST);
	if (pid > 0)
		kill(pid, SIGKILL);
	xg_thread_detach(&in->thread);
	return -1;
}

int xg_run_join_input(struct run *r, volatile sig_atomic_t *stop)
{
	struct run_input *in = input_of(r);
	size_t i;

	release_cue(r);
	/* A run that ended before it started the thread still passes the
	 * rest of its input through, read on a thread all the same so that a
	 * signal is not kept waiting by an input left open. */
	if (!in->running && in->reading)
		start_thread(r, in, 0);
	if (in->running) {
		in->running = 0;
		if (wait_thread(in, stop) < 0) {
			left_behind = in;
			r->input = NULL;
			return r->rc;
		}
		jv_free(r->snapshot);
		r->snapshot = in->snapshot;
		in->snapshot = jv_null();
	}
	for (i = 0; i < in->nlate; i++) {
		xg_run_out_pass(&r->out, &in->late[i]);
		xg_rec_release(&in->late[i]);
	}
	in->nlate = 0;
	if (in->late_rc && r->rc < 0)
		xg_run_fail(r, in->late_rc, "%s", in->late_err);
	in->late_rc = 0;
	return r->rc;
}

void xg_run_input_release(struct run *r)
{
	struct run_input *in = r->input;
	size_t i;

	if (!in)
		return;
	if (in->reading)
		xg_rec_reader_release(&in->rd);
	for (i = 0; i < in->nlate; i++)
		xg_rec_release(&in->late[i]);
	free(in->late);
	jv_free(in->snapshot);
	free(in->cwd);
	xg_exec_env_free(in->env);
	free(in);
	r->input = NULL;
}
