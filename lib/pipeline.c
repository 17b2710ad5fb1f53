/*
 * A pipeline of programs joined by pipes (pipeline.h): each stage spawned,
 * the first fed the caller's bytes, the last writing where the caller says,
 * and every stage waited for.  At the end, one program run alone for the
 * last record of a type it writes (xg-run's xg-snapshot).
 */
#include "xg.h"
#include "pipeline.h"
#include "exec.h"
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

/*
 * The processes a signal is passed on to.  A signal handler has no way to be
 * given a context, so this one table is file-scoped; it is only written with
 * the forwarded signals blocked.
 */
#define MAX_FORWARD 16
static volatile pid_t forward_to[MAX_FORWARD];
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP };

static void forward(int sig, siginfo_t *info, void *uctx)
{
	int saved = errno, i;

	(void)uctx;
	/* A terminal's ^C or hangup went to the whole process group: the
	 * stages have it already. */
	if (info && info->si_code == SI_KERNEL)
		return;
	for (i = 0; i < MAX_FORWARD; i++)
		if (forward_to[i] > 0)
			kill(forward_to[i], sig);
	errno = saved;
}

/* Blocks the forwarded signals, keeping the mask before in *old. */
static void block_forwarded(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

/*
 * Installs the forwarding handler, or puts back what was there.  A signal
 * ignored when xg started (nohup(1), a background job's SIGINT) stays
 * ignored, for xg and for the stages.
 */
static void set_forwarding(int on)
{
	static int installed[sizeof(forwarded) / sizeof(*forwarded)];
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++) {
		if (on) {
			if (sigaction(forwarded[i], NULL, &old) < 0 || old.sa_handler == SIG_IGN)
				continue;
			sa.sa_sigaction = forward;
			sa.sa_flags = SA_SIGINFO | SA_RESTART;
			installed[i] = sigaction(forwarded[i], &sa, NULL) == 0;
		} else if (installed[i]) {
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigaction(forwarded[i], &sa, NULL);
			installed[i] = 0;
		}
	}
}

static void track(pid_t pid, pid_t old)
{
	int i;

	for (i = 0; i < MAX_FORWARD; i++) {
		if (forward_to[i] == old) {
			forward_to[i] = pid;
			return;
		}
	}
}

void xg_pipeline_init(struct xg_pipeline *p)
{
	memset(p, 0, sizeof(*p));
	p->out_fd = -1;
	p->cue_fd = -1;
}

void xg_pipeline_release(struct xg_pipeline *p)
{
	size_t i, j;

	for (i = 0; i < p->n; i++) {
		free(p->stages[i].path);
		for (j = 0; p->stages[i].argv[j]; j++)
			free(p->stages[i].argv[j]);
		free(p->stages[i].argv);
	}
	free(p->stages);
	if (p->out_fd >= 0)
		close(p->out_fd);
	if (p->cue_fd >= 0)
		close(p->cue_fd);
	xg_pipeline_init(p);
}

void xg_pipeline_cue(struct xg_pipeline *p, size_t stage, const char *var)
{
	p->cue.stage = stage;
	p->cue.var = var;
}

void xg_pipeline_add(struct xg_pipeline *p, const char *path, const char *const *argv)
{
	struct xg_pipeline_stage *s;
	size_t n = 0, i;

	XG_ALLOC_GROW(p->stages, p->n + 1, p->alloc);
	s = &p->stages[p->n++];
	memset(s, 0, sizeof(*s));
	s->path = xg_strdup(path);
	while (argv[n])
		n++;
	s->argv = xg_calloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++)
		s->argv[i] = xg_strdup(argv[i]);
}

/* In a child: the default dispositions and mask back, so a stage handles
 * its signals as it would started from a shell. */
static void child_signals(const sigset_t *mask)
{
	set_forwarding(0);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
}

/* Whether len bytes go into the empty pipe fd without blocking. */
static int fits(int fd, size_t len)
{
	int cap = fcntl(fd, F_GETPIPE_SZ);

	return cap > 0 && len <= (size_t)cap;
}

static pid_t start_feeder(const char *input, size_t len, const int feed[2],
			   const sigset_t *mask)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	child_signals(mask);
	/* Holding the read end would keep a write to a stage that has
	 * ended from failing: the feeder would wait for ever. */
	close(feed[0]);
	_exit(xg_write_all(feed[1], input, len) < 0 ? XG_EX_IOERR : 0);
}

/*
 * A stage is spawned (vfork and exec, which costs a dispatcher's run far
 * less than a fork): its standard input and output the pipe ends given,
 * the default dispositions and the mask back, as child_signals does, and
 * the cue's end cue_fd (-1: none) kept open under its own number, named
 * by cue_var in its environment.  -1 with errno when it cannot be, exec's
 * errors included.
 */
static pid_t start_stage(struct xg_pipeline_stage *s, int in, int out, const sigset_t *mask,
			 int cue_fd, const char *cue_var)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def;
	char **env = environ, *added = NULL;
	struct xg_exec_keys keys;
	size_t i;
	pid_t pid;
	int rc;

	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	for (i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++) {
		struct sigaction sa;

		if (!sigaction(forwarded[i], NULL, &sa) && sa.sa_handler != SIG_IGN)
			sigaddset(&def, forwarded[i]);
	}
	if (xg_exec_keys_open(&keys) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	/* A dup2 of a descriptor onto itself clears its close-on-exec. */
	rc = (in != 0 ? posix_spawn_file_actions_adddup2(&fa, in, 0) : 0) ||
	     (out != 1 ? posix_spawn_file_actions_adddup2(&fa, out, 1) : 0) ||
	     (cue_fd >= 0 ? posix_spawn_file_actions_adddup2(&fa, cue_fd, cue_fd) : 0) ||
	     (keys.fd >= 0 ? posix_spawn_file_actions_adddup2(&fa, keys.fd, keys.fd) : 0) ||
	     posix_spawnattr_setsigdefault(&at, &def) || posix_spawnattr_setsigmask(&at, mask) ||
	     posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	if (cue_fd >= 0) {
		const char *drop[] = { cue_var, NULL };

		added = xg_asprintf("%s=%d", cue_var, cue_fd);
		env = xg_exec_env_keys(drop, added, &keys);
	} else if (keys.fd >= 0) {
		env = xg_exec_env_keys(NULL, NULL, &keys);
	}
	if (!rc)
		rc = posix_spawn(&pid, s->path, &fa, &at, s->argv, env);
	if (env != environ)
		free(env);
	free(added);
	xg_exec_keys_close(&keys);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc) {
		errno = rc;
		return -1;
	}
	return pid;
}

/*
 * A standard descriptor the caller closed is opened on /dev/null: a pipe
 * made there would be a stage's standard input or output without the
 * dup2 that clears its close-on-exec, and would be lost at exec.
 */
static void open_std_fds(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", fd ? O_WRONLY : O_RDONLY) < 0)
			return;
}

/* Ends and reaps whatever was started, after a failure to start. */
static void abandon(struct xg_pipeline *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->stages[i].pid > 0)
			kill(p->stages[i].pid, SIGTERM);
	xg_pipeline_wait(p);
}

/*
 * The last stage starts first, then the others in order: in an xg pipeline
 * the last (xg-run) has the most to load before it can work, and the
 * others pass the request along as soon as each has loaded.  All pipes are
 * made before any stage starts (the cue's too, after the feeder, which
 * holds none of them); each is close-on-exec, and the caller closes its
 * ends as the stages that hold them start.
 */
int xg_pipeline_start(struct xg_pipeline *p, const char *input, size_t len, int out_fd)
{
	sigset_t old;
	int (*pipes)[2], cue[2] = { -1, -1 }, rc = 0, capture = out_fd == XG_PIPELINE_CAPTURE;
	size_t i, k, npipes;

	if (p->n > MAX_FORWARD)
		return xg_error("a pipeline of %zu stages is longer than %d", p->n, MAX_FORWARD);
	open_std_fds();
	/* pipes[i] feeds stage i; pipes[n] is the captured output. */
	npipes = p->n + (size_t)capture;
	pipes = xg_calloc(npipes + 1, sizeof(*pipes));
	for (i = 0; i <= npipes; i++)
		pipes[i][0] = pipes[i][1] = -1;
	if (pipe2(pipes[0], O_CLOEXEC) < 0) {
		free(pipes);
		return xg_error_errno("cannot make a pipe");
	}
	block_forwarded(&old);
	set_forwarding(1);
	/* Input the pipe holds whole is written into it here; more, by a
	 * feeder, started first, before the other pipes exist, so that it
	 * holds no end but its own. */
	if (fits(pipes[0][1], len)) {
		if (xg_write_all(pipes[0][1], input, len) < 0)
			rc = xg_error_errno("cannot write the pipeline's input");
	} else {
		p->feeder = start_feeder(input, len, pipes[0], &old);
	}
	close(pipes[0][1]);
	pipes[0][1] = -1;
	if (rc < 0)
		goto out;
	if (p->feeder < 0) {
		p->feeder = 0;
		rc = xg_error_errno("cannot start a process");
		goto out;
	}
	for (i = 1; i < npipes; i++) {
		if (pipe2(pipes[i], O_CLOEXEC) < 0) {
			rc = xg_error_errno("cannot make a pipe");
			goto out;
		}
	}
	if (p->cue.var && capture && pipe2(cue, O_CLOEXEC) < 0) {
		rc = xg_error_errno("cannot make a pipe");
		goto out;
	}
	for (k = 0; k < p->n; k++) {
		int out, cued;

		i = k ? k - 1 : p->n - 1;
		out = i + 1 < npipes ? pipes[i + 1][1] : out_fd;
		cued = cue[1] >= 0 && i == p->cue.stage;
		p->stages[i].pid = start_stage(&p->stages[i], pipes[i][0], out, &old,
					       cued ? cue[1] : -1, p->cue.var);
		if (p->stages[i].pid < 0) {
			p->stages[i].pid = 0;
			rc = xg_error_errno("cannot start '%s'", p->stages[i].argv[0]);
			goto out;
		}
		track(p->stages[i].pid, 0);
		close(pipes[i][0]);
		pipes[i][0] = -1;
		if (i + 1 < npipes) {
			close(pipes[i + 1][1]);
			pipes[i + 1][1] = -1;
		}
		if (cued) {
			close(cue[1]);
			cue[1] = -1;
		}
	}
	if (capture) {
		p->out_fd = pipes[p->n][0];
		pipes[p->n][0] = -1;
		p->cue_fd = cue[0];
		cue[0] = -1;
	}
out:
	for (i = 0; i < npipes; i++) {
		if (pipes[i][0] >= 0)
			close(pipes[i][0]);
		if (pipes[i][1] >= 0)
			close(pipes[i][1]);
	}
	for (i = 0; i < 2; i++)
		if (cue[i] >= 0)
			close(cue[i]);
	free(pipes);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc < 0)
		abandon(p);
	return rc;
}

static void reap(struct xg_pipeline *p, pid_t pid, int status)
{
	size_t i;

	if (pid == p->feeder) {
		p->feeder = 0;
		return;
	}
	for (i = 0; i < p->n; i++) {
		if (p->stages[i].pid == pid) {
			p->stages[i].pid = 0;
			p->stages[i].status = status;
			p->stages[i].reaped = 1;
		}
	}
}

static int running(const struct xg_pipeline *p)
{
	size_t i;

	if (p->feeder > 0)
		return 1;
	for (i = 0; i < p->n; i++)
		if (p->stages[i].pid > 0)
			return 1;
	return 0;
}

int xg_pipeline_wait(struct xg_pipeline *p)
{
	const struct xg_pipeline_stage *last;
	sigset_t old;
	siginfo_t info;
	int status;

	while (running(p)) {
		/* Look without reaping, then reap with signals blocked, so the
		 * handler never signals a pid that has been reaped and reused. */
		memset(&info, 0, sizeof(info));
		if (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		block_forwarded(&old);
		if (waitpid(info.si_pid, &status, 0) == info.si_pid) {
			track(0, info.si_pid);
			reap(p, info.si_pid, status);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	set_forwarding(0);
	if (!p->n)
		return 0;
	last = &p->stages[p->n - 1];
	if (!last->reaped)
		return XG_EX_SOFTWARE;
	if (WIFSIGNALED(last->status))
		return 128 + WTERMSIG(last->status);
	return WEXITSTATUS(last->status);
}

void xg_shell_quote(struct xg_buf *b, const char *word)
{
	const char *s;

	if (*word && strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-./:,+@") == strlen(word)) {
		xg_buf_addstr(b, word);
		return;
	}
	xg_buf_addch(b, '\'');
	for (s = word; *s; s++) {
		if (*s == '\'')
			xg_buf_addstr(b, "'\\''");
		else if (*s == '$')
			xg_buf_addstr(b, "'`printf '\\044'`'");
		else if (*s == '%')
			xg_buf_addstr(b, "'`printf '\\045'`'");
		else
			xg_buf_addch(b, *s);
	}
	xg_buf_addch(b, '\'');
}

/* ---- one program, its records read ---- */

static jv last_record(int fd, const char *name, const char *type, char **err)
{
	struct xg_rec_reader rd;
	struct xg_rec rec;
	char *what = xg_asprintf("the output of %s", name);
	jv found = jv_null();
	int n;

	xg_rec_reader_init(&rd, fd, what);
	while ((n = xg_rec_next(&rd, &rec)) > 0) {
		if (rec.type && !strcmp(rec.type, type)) {
			jv_free(found);
			found = jv_copy(rec.v);
		}
		xg_rec_release(&rec);
	}
	if (n < 0 && err)
		*err = xg_strdup(rd.err);
	xg_rec_reader_release(&rd);
	free(what);
	return found;
}

int xg_pipeline_capture(const char *prog, char *const argv[], char *const env[],
			const char *type, volatile pid_t *pid, volatile sig_atomic_t *stop,
			jv *last, int *status, char **err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	siginfo_t info;
	sigset_t none;
	pid_t p;
	int fd[2], e;

	*last = jv_null();
	*status = 0;
	if (pipe2(fd, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	e = posix_spawn(&p, prog, &fa, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (e) {
		close(fd[0]);
		errno = e;
		return -1;
	}
	__atomic_store_n(pid, p, __ATOMIC_SEQ_CST);
	if (stop && __atomic_load_n(stop, __ATOMIC_SEQ_CST))
		kill(p, SIGTERM);	/* the handler may have missed the pid */
	*last = last_record(fd[0], argv[0], type, err);
	close(fd[0]);
	/* Waited for, but left unreaped until the handler can no longer
	 * signal its pid, which could then be another process's. */
	while (waitid(P_PID, (id_t)p, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	__atomic_store_n(pid, 0, __ATOMIC_SEQ_CST);
	while (waitpid(p, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}
