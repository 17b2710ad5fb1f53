/*
 * One round of a goal (internal.h): a request record holding the round's
 * text as a hidden user message, xg-run started on the conversation with
 * it on standard input, and its records read as they come: each passed on
 * unchanged, except run_end, which the drive settles; the tool calls
 * counted for the brakes; update_goal's results and the goal_check record
 * kept for the settle.
 *
 * xg-run is started as the driver's child with SIGTERM as its parent-death
 * signal, so a driver that is killed outright does not leave its round
 * running on.  The drive's signals (SIGINT, SIGTERM, SIGHUP) are noted and
 * passed on to that child, unless a terminal sent them to the whole
 * process group, which holds it already.  The variant's templates are read
 * here too.
 */
#include "xg.h"
#include "goal/internal.h"
#include "prompt/prompt.h"
#include "conversation.h"
#include "exec.h"
#include <sys/prctl.h>
#include <sys/wait.h>

static int is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* ---- signals ---- */

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };
static int installed[3];
static volatile sig_atomic_t first_signal;
static volatile pid_t round_pid;

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	int saved = errno;

	(void)uctx;
	if (!first_signal)
		first_signal = sig;
	if (round_pid > 0 && !(info && info->si_code == SI_KERNEL))
		kill(round_pid, sig);
	errno = saved;
}

void xg_goal_signals_catch(void)
{
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	for (i = 0; i < 3; i++) {
		/* One ignored from the start (nohup) stays ignored. */
		if (sigaction(caught[i], NULL, &old) < 0 || old.sa_handler == SIG_IGN)
			continue;
		installed[i] = sigaction(caught[i], &sa, NULL) == 0;
	}
}

void xg_goal_signals_release(void)
{
	size_t i;

	for (i = 0; i < 3; i++)
		if (installed[i]) {
			signal(caught[i], SIG_DFL);
			installed[i] = 0;
		}
}

int xg_goal_signal(void)
{
	return first_signal;
}

/* ---- the templates ---- */

char *xg_goal_template(const struct xg_goal_opts *o, const char *conv, const char *name)
{
	struct xg_prompt_manifest m;
	const struct xg_prompt_section *sec;
	char *ref = NULL, *vname = NULL, *version = NULL, *loaded = NULL, *head = NULL;
	char *text = NULL;

	if (o->variant)
		ref = xg_strdup(o->variant);
	else if (xg_conv_exists(conv) && xg_variant_selected(conv, &ref))
		return NULL;
	if (xg_variant_parse_ref(ref ? ref : XG_VARIANT_DEFAULT, &vname, &version) == 0 &&
	    xg_variant_load(vname, version, &m, &loaded, &head) == 0) {
		if ((sec = xg_prompt_section_find(&m, name)))
			text = xg_strndup(sec->text, sec->len);
		xg_prompt_manifest_release(&m);
	}
	free(ref);
	free(vname);
	free(version);
	free(loaded);
	free(head);
	return text;
}

/* ---- the round ---- */

void xg_goal_round_release(struct goal_round *rd)
{
	free(rd->run);
	free(rd->blocker);
	jv_free(rd->run_end);
	jv_free(rd->check);
	rd->run = rd->blocker = NULL;
	rd->run_end = rd->check = jv_null();
}

static char *request_line(const char *conv, const struct goal_round *rd)
{
	struct xg_buf b = XG_BUF_INIT(0);
	jv q = xg_rec_new("request"), g = jv_object();
	char *cwd = getcwd(NULL, 0);

	q = xg_json_set(q, "text", jv_string(rd->text));
	q = xg_json_set(q, "hidden", jv_true());
	q = xg_json_set(q, "kind", jv_string(rd->kind));
	q = xg_json_set(q, "conversation", jv_string(conv));
	if (cwd)
		q = xg_json_set(q, "cwd", xg_json_string_bytes(cwd, strlen(cwd)));
	free(cwd);
	g = xg_json_set(g, "status", jv_string(rd->status));
	g = xg_json_set(g, "round", jv_number((double)rd->number));
	if (rd->objective)
		g = xg_json_set(g, "objective", jv_string(rd->objective));
	q = xg_json_set(q, "goal", g);
	xg_json_dump(&b, q);
	xg_buf_addch(&b, '\n');
	return xg_buf_detach(&b, NULL);
}

/* xg-run's command line: the conversation and the run options given. */
static char **run_argv(const struct xg_goal_opts *o, const char *conv)
{
	const char *pairs[][2] = {
		{ "--model", o->model }, { "--effort", o->effort }, { "--account", o->account },
		{ "--variant", o->variant }, { "--ask", o->ask }, { "--gate", o->gate },
		{ "--work-slice", o->work_slice },
	};
	char **argv = xg_calloc(24, sizeof(char *));
	size_t n = 0, i;

	argv[n++] = xg_strdup("xg-run");
	argv[n++] = xg_strdup("--conversation");
	argv[n++] = xg_strdup(conv);
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if (pairs[i][1]) {
			argv[n++] = xg_strdup(pairs[i][0]);
			argv[n++] = xg_strdup(pairs[i][1]);
		}
	if (o->stream)
		argv[n++] = xg_strdup("--stream");
	if (o->verbose)
		argv[n++] = xg_strdup("-v");
	return argv;
}

static void free_argv(char **argv)
{
	size_t i;

	for (i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* In the child: the shell's dispositions back, the parent's death a
 * SIGTERM, the request on standard input, the records into the pipe, the
 * keys through their own pipe (exec.h). */
static void exec_round(const char *path, char **argv, int in, int out, pid_t parent, int shown,
		       const struct xg_exec_keys *keys)
{
	sigset_t none;
	size_t i;

	for (i = 0; i < 3; i++)
		if (installed[i])
			signal(caught[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid() != parent)
		_exit(XG_EX_SOFTWARE);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0)
		_exit(XG_EX_SOFTWARE);
	if (shown)
		setenv("XG_RENDERED", "1", 1);
	if (keys->fd >= 0 && fcntl(keys->fd, F_SETFD, 0) < 0)
		_exit(XG_EX_SOFTWARE);
	execve(path, argv, xg_exec_env_keys(NULL, NULL, keys));
	fprintf(stderr, "%s: cannot run '%s': %s\n", xg_progname, path, strerror(errno));
	_exit(XG_EX_SOFTWARE);
}

/* What one record of the round tells the settle. */
static void note(struct goal_round *rd, const struct xg_rec *rec)
{
	jv v = rec->v;
	const char *name = xg_json_string_peek(v, "name");

	if (is(rec->type, "run_start") && xg_json_string_peek(v, "run")) {
		free(rd->run);
		rd->run = xg_strdup(xg_json_string_peek(v, "run"));
	} else if (is(rec->type, "tool_result")) {
		jv gu = xg_json_get_peek(v, "goal_update");
		bool ok = false, accepted = false;

		/* Every call counts as activity, the goal's own too: a round
		 * that only reports its blocker is not an idle one. */
		xg_json_bool_peek(v, "ok", &ok);
		if (ok)
			rd->work_ok++;
		else
			rd->work_failed++;
		if (is(name, "update_goal") && is(xg_json_string_peek(gu, "status"), "blocked") &&
		    xg_json_string_peek(gu, "blocker")) {
			free(rd->blocker);
			rd->blocker = xg_strdup(xg_json_string_peek(gu, "blocker"));
			xg_json_bool_peek(gu, "accepted", &accepted);
			rd->blocked = accepted;
		}
	} else if (is(rec->type, "goal_check")) {
		jv_free(rd->check);
		rd->check = jv_copy(v);
	}
}

/* Reads the round's records from fd to its end. */
static void read_records(struct goal_round *rd, int fd, struct xg_rec_writer *w)
{
	struct xg_rec_reader rr;
	struct xg_rec rec;
	int n;

	xg_rec_reader_init(&rr, fd, "xg-run's output");
	while ((n = xg_rec_next(&rr, &rec)) > 0) {
		note(rd, &rec);
		if (is(rec.type, "run_end")) {
			jv_free(rd->run_end);
			rd->run_end = jv_copy(rec.v);
		} else {
			xg_rec_pass(w, &rec);
		}
		xg_rec_release(&rec);
	}
	if (n < 0) {
		char sink[4096];

		/* The rest is dropped, but read, so xg-run never blocks on a
		 * pipe nobody reads while the round waits for it to end. */
		xg_warn("%s", rr.err);
		for (;;) {
			ssize_t k = read(fd, sink, sizeof(sink));

			if (k == 0 || (k < 0 && errno != EINTR))
				break;
		}
	}
	xg_rec_reader_release(&rr);
}

int xg_goal_round_run(const struct xg_goal_opts *o, const char *conv, struct goal_round *rd,
		      struct xg_rec_writer *w)
{
	struct xg_exec_keys keys;
	char *path = xg_exec_find("run"), *line, **argv;
	int64_t t0 = xg_clock_ms();
	FILE *in;
	int out[2], status = 0;
	pid_t pid, parent = getpid();

	rd->run = rd->blocker = NULL;
	rd->run_end = rd->check = jv_null();
	if (!path)
		return xg_error("cannot find xg-run beside xg-goal or in PATH"), XG_EX_SOFTWARE;
	line = request_line(conv, rd);
	in = tmpfile();
	if (!in || fputs(line, in) == EOF || fflush(in) == EOF || fseek(in, 0, SEEK_SET) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0) {
		xg_error_errno("cannot hand the round its request");
		if (in)
			fclose(in);
		free(line);
		free(path);
		return XG_EX_IOERR;
	}
	free(line);
	argv = run_argv(o, conv);
	fflush(NULL);
	if (xg_exec_keys_open(&keys) < 0)
		keys.fd = -1;	/* the round then finds no key, and says so */
	pid = fork();
	if (pid == 0)
		exec_round(path, argv, fileno(in), out[1], parent, xg_prog_records_shown(), &keys);
	xg_exec_keys_close(&keys);
	round_pid = pid > 0 ? pid : 0;
	close(out[1]);
	fclose(in);
	free_argv(argv);
	free(path);
	if (pid < 0) {
		close(out[0]);
		return xg_error_errno("cannot start xg-run"), XG_EX_SOFTWARE;
	}
	read_records(rd, out[0], w);
	close(out[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	round_pid = 0;
	rd->exit = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	rd->signal = first_signal;
	rd->secs = (double)(xg_clock_ms() - t0) / 1000.0;
	return 0;
}
