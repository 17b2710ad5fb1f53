/*
 * The commands the tools run (bash, and the ask command of ask_user), as
 * child processes: each is /bin/sh -c in a session of its own, so the
 * whole process group it starts can be stopped together.
 *
 * The registry of running groups comes first (a signal handler kills them
 * all through it), then the keeper that ties each group to this process's
 * life, then the start: the environment less the credential variables, the
 * fork and what the child sets up before exec.  Last is the wait, one poll
 * loop that feeds the command's input, hands its output to the caller's
 * sink as it comes, and kills the group at a timeout, the run's deadline
 * or an abort: TERM, a grace, then KILL.
 */
#include "xg.h"
#include "tools/internal.h"
#include "exec.h"
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void procs_add(struct xg_tool_procs *p, pid_t pgid)
{
	int i;

	if (!p)
		return;
	/* Calls may run in parallel threads: claim a slot atomically. */
	for (i = 0; i < XG_TOOL_MAX_PROCS; i++)
		if (__sync_bool_compare_and_swap(&p->pgid[i], 0, pgid))
			return;
	/* Full: the call still kills its own group on timeout or abort. */
}

static void procs_remove(struct xg_tool_procs *p, pid_t pgid)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < XG_TOOL_MAX_PROCS; i++)
		if (p->pgid[i] == pgid)
			p->pgid[i] = 0;
}

void xg_tool_procs_kill(struct xg_tool_procs *procs, int sig)
{
	int i;

	if (!procs)
		return;
	for (i = 0; i < XG_TOOL_MAX_PROCS; i++) {
		pid_t g = procs->pgid[i];
		if (g > 0)
			kill(-g, sig);
	}
}

int xg_tool_proc_aborted(const struct xg_tool_ctx *ctx)
{
	return ctx->abort && *ctx->abort;
}

/* Signals the child's group; before the child's setsid the group does not
 * exist yet, so the child itself gets it too. */
static void kill_group(pid_t pid, int sig)
{
	if (kill(-pid, sig) < 0 && errno == ESRCH)
		kill(pid, sig);
}

/*
 * The keeper: one process for all the commands, outside their groups,
 * which is the only way a SIGKILL of ours can be answered (no handler of
 * ours runs then).  A PR_SET_PDEATHSIG of each group's leader would not
 * do: the background jobs are not the leader, and the setting is tied to
 * the thread that forked it.
 *
 * It reads a record per message on fd 0: a group's id, sent by the
 * command's own process before it execs (so no group can exist that the
 * keeper has not been told of first), or its negation, sent by this
 * process once the group has emptied.  At end-of-file, when every holder
 * of the other end has gone (this process, and a child between its fork
 * and its exec), it kills every group it still holds, and ends.  Once a
 * second while it holds any it looks for the ones that emptied by
 * themselves (a call's background job that ended later): a group's id is
 * pinned while any member lives, so it is not another's until it empties,
 * and it is forgotten at most a second after that.  Async-signal-safe
 * throughout: it is forked from a process that may have threads.
 */
#define KEEPER_MAX_GROUPS 4096
#define KEEPER_LOOK_MS 1000

__attribute__((noreturn))
static void keeper_run(void)
{
	static pid_t held[KEEPER_MAX_GROUPS];
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct pollfd p = { .fd = 0, .events = POLLIN };
	sigset_t none;
	int n = 0, i, sig, fd;

	/* No terminal's signal reaches it, and no other signal but KILL
	 * stops it: it leaves when this process has, not before. */
	setsid();
	prctl(PR_SET_NAME, "xg-keeper");
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (close_range(1, ~0U, 0) < 0)
		for (fd = 1; fd < 1024; fd++)
			close(fd);
	for (;;) {
		pid_t g;
		ssize_t k;

		if (poll(&p, 1, n ? KEEPER_LOOK_MS : -1) == 0) {
			for (i = 0; i < n; i++)
				if (kill(-held[i], 0) < 0 && errno == ESRCH)
					held[i--] = held[--n];
			continue;
		}
		k = recv(0, &g, sizeof(g), 0);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0) {
			for (i = 0; i < n; i++)
				kill(-held[i], SIGKILL);
			_exit(0);
		}
		if (k != sizeof(g) || g == 0 || g == -1)
			continue;
		for (i = 0; i < n && held[i] != (g > 0 ? g : -g); i++)
			;
		if (g < 0 && i < n)
			held[i] = held[--n];
		else if (g > 0 && i == n && n < KEEPER_MAX_GROUPS)
			held[n++] = g;
	}
}

/*
 * This process's end of the keeper's socket, the keeper started by the
 * first caller; -1 without a registry or when it cannot be started.
 * Forked twice, so it is nobody's child here to wait for.  Calls may
 * start commands from parallel threads, hence the claim.
 */
static int keeper_fd(struct xg_tool_procs *p)
{
	int sv[2];
	pid_t mid;

	if (!p)
		return -1;
	if (!__sync_bool_compare_and_swap(&p->keeper_state, 0, 1)) {
		while (p->keeper_state == 1)
			sched_yield();
		return p->keeper_state == 2 ? p->keeper : -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		p->keeper_state = 3;
		return -1;
	}
	mid = _Fork();
	if (mid == 0) {
		if (_Fork() == 0 && dup2(sv[0], 0) == 0)
			keeper_run();
		_exit(0);
	}
	close(sv[0]);
	if (mid > 0)
		while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
			;
	if (mid < 0) {
		close(sv[1]);
		p->keeper_state = 3;
		return -1;
	}
	p->keeper = sv[1];
	p->keeper_state = 2;
	return p->keeper;
}

/* Tells the keeper that group pgid has emptied, so it need not look. */
static void keeper_forget(struct xg_tool_procs *p, pid_t pgid)
{
	pid_t g = -pgid;

	if (p && p->keeper_state == 2 && kill(-pgid, 0) < 0 && errno == ESRCH)
		send(p->keeper, &g, sizeof(g), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* What the child of spawn_shell gets from its parent. */
struct shell_start {
	const char *path;	/* /bin/sh, or bwrap */
	char *const *argv;
	char **env;
	const char *dir;
	int in_fd;		/* standard input, or -1 for /dev/null */
	int out_fd;
	int stderr_too;
	pid_t parent;
	int keeper;		/* the keeper's socket, or -1: none */
	int status_fd;		/* bwrap's status, given it as its fd 3, or -1 */
};

/*
 * The child's side of spawn_shell, from fork to exec: only
 * async-signal-safe calls, as the parent may have threads.  The leader
 * dies with the thread that forked it (which waits for it), and its group
 * with this process, through the keeper, told of the group before exec.
 */
__attribute__((noreturn))
static void exec_shell(const struct shell_start *s)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	pid_t self;
	int sig, fd;

	self = setsid();
	if (s->keeper >= 0)
		send(s->keeper, &self, sizeof(self), MSG_NOSIGNAL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have gone before the prctl. */
	if (getppid() != s->parent)
		_exit(126);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (s->dir && chdir(s->dir) < 0)
		_exit(126);
	if (s->in_fd >= 0) {
		fd = s->in_fd;
	} else {
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0)
			_exit(126);
	}
	if (dup2(fd, 0) < 0 || dup2(s->out_fd, 1) < 0)
		_exit(126);
	if (s->stderr_too && dup2(s->out_fd, 2) < 0)
		_exit(126);
	fd = 3;
	if (s->status_fd >= 0) {
		/* dup2 onto itself would leave close-on-exec set. */
		if (s->status_fd == XG_TOOL_SANDBOX_STATUS_FD
		    ? fcntl(s->status_fd, F_SETFD, 0) < 0
		    : dup2(s->status_fd, XG_TOOL_SANDBOX_STATUS_FD) < 0)
			_exit(126);
		fd = XG_TOOL_SANDBOX_STATUS_FD + 1;
	}
	/* Descriptors the caller left inheritable (a lock, a socket)
	 * must not outlive it in a background job. */
	if (close_range((unsigned)fd, ~0U, 0) < 0)
		for (; fd < 1024; fd++)
			close(fd);
	execve(s->path, s->argv, s->env);
	_exit(127);
}

/*
 * Starts the child as posix_spawn does, not as fork: sharing this
 * process's memory, and this thread stopped, until the child's exec.  A
 * fork would mark every page of the run copy-on-write, and the run would
 * then fault on each page it next wrote (its conversation grows with
 * every round), for each command.  The child writes only its own stack;
 * every signal is blocked across the start, so no handler of this process
 * runs in the child before it has put them all back to the default.
 * Returns the child's pid, or -1 with errno set.
 */
#ifdef __SANITIZE_ADDRESS__
/* AddressSanitizer cannot follow a child on a stack of its own in this
 * process's memory: there, a plain fork. */
static pid_t spawn(const struct shell_start *st)
{
	pid_t pid = fork();

	if (pid == 0)
		exec_shell(st);
	return pid;
}
#else
static int spawn_child(void *st)
{
	exec_shell(st);
}

/* The child's own stack, while it shares this process's memory. */
#define SPAWN_STACK (64 * 1024)

static pid_t spawn(const struct shell_start *st)
{
	sigset_t all, old;
	void *stack;
	pid_t pid;
	int e;

	stack = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(spawn_child, (char *)stack + SPAWN_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD,
		    (void *)st);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	munmap(stack, SPAWN_STACK);
	errno = e;
	return pid;
}
#endif

/* Closes a pipe's or a socket pair's two ends, if made, keeping errno. */
static void close_pair(int fd[2])
{
	int e = errno;

	if (fd[0] >= 0) {
		close(fd[0]);
		close(fd[1]);
	}
	errno = e;
}

/*
 * Starts /bin/sh -c command in dir, in a session (and so a process group)
 * of its own, with no controlling terminal, so nothing it runs can wait on
 * the person's terminal.  Standard output and error go to one pipe; standard
 * input is /dev/null, or a socket the caller writes (ask_user); with
 * with_status, bwrap's status goes to a pipe (its descriptor 3; c->setup
 * the read end).  Returns 0, or -1 with errno set.
 */
static int spawn_shell(struct xg_tool_proc *c, const char *path, char *const *argv,
		       const char *dir, char **env, int with_input, int stderr_too, int keeper,
		       int with_status)
{
	struct shell_start st = { path, argv, env, dir, -1, -1, stderr_too, getpid(), keeper, -1 };
	int out[2], in[2] = { -1, -1 }, status[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(out, O_CLOEXEC) < 0)
		return -1;
	if ((with_input && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0) ||
	    (with_status && pipe2(status, O_CLOEXEC | O_NONBLOCK) < 0)) {
		close_pair(out);
		close_pair(in);
		return -1;
	}
	st.in_fd = with_input ? in[1] : -1;
	st.out_fd = out[1];
	st.status_fd = status[1];
	pid = spawn(&st);
	if (pid < 0) {
		close_pair(out);
		close_pair(in);
		close_pair(status);
		return -1;
	}
	close(out[1]);
	if (status[1] >= 0)
		close(status[1]);
	c->setup = status[0];
	c->pid = pid;
#ifdef SYS_pidfd_open
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
	c->pidfd = -1;
#endif
	c->out = out[0];
	c->in = -1;
	if (with_input) {
		close(in[1]);
		c->in = in[0];
		fcntl(c->in, F_SETFL, fcntl(c->in, F_GETFL) | O_NONBLOCK);
	}
	c->reaped = 0;
	c->status = 0;
	c->end = XG_TOOL_PROC_EXIT;
	return 0;
}

int xg_tool_proc_start(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c,
		       const char *command, int with_input, int stderr_too)
{
	char *const argv[] = { "sh", "-c", (char *)command, NULL };
	char **env = xg_exec_env(ctx->env_drop, NULL);
	int rc = spawn_shell(c, "/bin/sh", argv, ctx->workspace, env, with_input, stderr_too,
			     keeper_fd(ctx->procs), 0);

	free(env);
	return rc;
}

int xg_tool_proc_start_sandboxed(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c,
				 const char *command, int stderr_too)
{
	char **argv, **env;
	int rc;

	if (!ctx->sandbox || !ctx->sandbox->bwrap)
		return xg_tool_proc_start(ctx, c, command, 0, stderr_too);
	argv = xg_tool_sandbox_argv(ctx->sandbox, ctx->workspace, command);
	env = xg_exec_env(ctx->env_drop, NULL);
	rc = spawn_shell(c, ctx->sandbox->bwrap, argv, ctx->workspace, env, 0, stderr_too,
			 keeper_fd(ctx->procs), 1);
	free(env);
	xg_tool_sandbox_argv_free(argv);
	return rc;
}

static void proc_read(struct xg_tool_proc *c)
{
	char chunk[16384];	/* its stack pages stay with the process */
	ssize_t n = read(c->out, chunk, sizeof(chunk));

	if (n > 0) {
		c->sink(c->sink_data, chunk, (size_t)n);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(c->out);
		c->out = -1;
	}
}

static void proc_write(struct xg_tool_proc *c)
{
	ssize_t n = send(c->in, c->in_data + c->in_off, c->in_len - c->in_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n > 0)
		c->in_off += (size_t)n;
	if ((n < 0 && errno != EINTR && errno != EAGAIN) || c->in_off == c->in_len) {
		/* Done, or the command does not read: either way, EOF. */
		close(c->in);
		c->in = -1;
	}
}

static void proc_reap(struct xg_tool_proc *c, int options)
{
	if (c->reaped)
		return;
	if (waitpid(c->pid, &c->status, options) == c->pid)
		c->reaped = 1;
}

/* How long output may keep coming through the pipe after the shell has
 * gone (from a background job that still holds it). */
#define DRAIN_AFTER_EXIT_MS 500

/* Where the wait stands. */
struct waiting {
	int64_t stop_at;		/* the timeout or the run's deadline */
	enum xg_tool_proc_end why;	/* which of the two stop_at is */
	int64_t exit_at;		/* when the shell was found gone; 0 before */
	int64_t term_at;		/* when TERM was sent; 0 before */
	int killed;			/* the group is gone, or KILL was sent */
};

/*
 * One look at the command: reaped if it has ended, and stopped when that
 * is due (TERM first, KILL after the grace).  Returns the time it looked.
 */
static int64_t look(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c, struct waiting *w)
{
	/* The flag is read before reaping: a signal handler sets it and then
	 * kills the group, so a shell found dead here may have been killed by
	 * the interrupt, and the rest of its group still needs stopping. */
	int ab = xg_tool_proc_aborted(ctx), was_reaped = c->reaped;
	int64_t now = xg_clock_ms();

	proc_reap(c, WNOHANG);
	if (c->reaped && !w->exit_at)
		w->exit_at = now;
	if (!w->term_at && ((ab && !was_reaped) || (!c->reaped && now >= w->stop_at))) {
		c->end = ab ? XG_TOOL_PROC_ABORT : w->why;
		kill_group(c->pid, SIGTERM);
		w->term_at = now;
	}
	if (w->term_at && !w->killed) {
		/* Once the whole group has gone there is nothing to KILL; what
		 * it wrote is still read. */
		if (c->reaped && kill(-c->pid, 0) < 0 && errno == ESRCH) {
			w->killed = 1;
			w->exit_at = now;
		} else if (now - w->term_at >= XG_TOOL_KILL_GRACE_MS) {
			kill_group(c->pid, SIGKILL);
			w->killed = 1;
			proc_reap(c, 0);
			w->exit_at = xg_clock_ms();
		}
	}
	return now;
}

/* What to poll next, in pfd (*nfd of them), and for how many ms. */
static int poll_set(const struct xg_tool_proc *c, const struct waiting *w, int64_t now,
		    struct pollfd *pfd, int *nfd)
{
	int n = 0, wait_ms = 100;

	if (c->out >= 0) {
		pfd[n].fd = c->out;
		pfd[n++].events = POLLIN;
	}
	if (c->in >= 0) {
		pfd[n].fd = c->in;
		pfd[n++].events = POLLOUT;
	}
	if (!c->reaped && c->pidfd >= 0) {
		pfd[n].fd = c->pidfd;
		pfd[n++].events = POLLIN;
	} else if (!c->reaped && c->out < 0) {
		/* No pidfd: look for the shell's end often. */
		wait_ms = 5;
	}
	if (c->reaped && (!w->term_at || w->killed) &&
	    wait_ms > DRAIN_AFTER_EXIT_MS - (now - w->exit_at))
		wait_ms = (int)(DRAIN_AFTER_EXIT_MS - (now - w->exit_at));
	if (!w->term_at && w->stop_at - now < wait_ms)
		wait_ms = w->stop_at - now < 0 ? 0 : (int)(w->stop_at - now);
	if (wait_ms < 1)
		wait_ms = 1;
	*nfd = n;
	return wait_ms;
}

/*
 * Whether bwrap set the sandbox up: it reports the command's exit code on
 * its status descriptor only when the command was started; without that
 * report, its own exit 1 is a failure before the command (a mount it could
 * not make: a path that went between the command line and the mount).
 */
static void sandbox_check(struct xg_tool_proc *c)
{
	char buf[4096];
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1 &&
	       ((n = read(c->setup, buf + len, sizeof(buf) - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			len += (size_t)n;
	buf[len] = '\0';
	close(c->setup);
	c->setup = -1;
	if (c->end == XG_TOOL_PROC_EXIT && WIFEXITED(c->status) && WEXITSTATUS(c->status) == 1 &&
	    !strstr(buf, "\"exit-code\""))
		c->end = XG_TOOL_PROC_UNSET;
}

/* Reaps the shell for good and closes what the wait used. */
static void proc_close(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c)
{
	proc_reap(c, 0);
	if (c->setup >= 0)
		sandbox_check(c);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	procs_remove(ctx->procs, c->pid);
	keeper_forget(ctx->procs, c->pid);
	if (c->out >= 0)
		close(c->out);
	if (c->in >= 0)
		close(c->in);
	c->out = c->in = -1;
}

/*
 * Feeds the input, hands the output to the sink, and waits for the command
 * to end; at timeout_ms, the run's deadline or an abort it kills the whole
 * process group: TERM, a grace for it to go, then KILL.
 */
void xg_tool_proc_wait(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c,
		       int64_t timeout_ms)
{
	struct waiting w = { 0 };
	int64_t now = xg_clock_ms();

	w.stop_at = now + timeout_ms;
	w.why = XG_TOOL_PROC_TIMEOUT;
	if (ctx->deadline_ms && ctx->deadline_ms < w.stop_at) {
		w.stop_at = ctx->deadline_ms;
		w.why = XG_TOOL_PROC_DEADLINE;
	}
	procs_add(ctx->procs, c->pid);
	for (;;) {
		struct pollfd pfd[3];
		int nfd, wait_ms;

		now = look(ctx, c, &w);
		if (c->reaped && (c->out < 0 || now - w.exit_at >= DRAIN_AFTER_EXIT_MS) &&
		    (!w.term_at || w.killed))
			break;
		wait_ms = poll_set(c, &w, now, pfd, &nfd);
		if (poll(pfd, (nfds_t)nfd, wait_ms) <= 0)
			continue;
		nfd = 0;
		if (c->out >= 0) {
			if (pfd[nfd].revents)
				proc_read(c);
			nfd++;
		}
		if (c->in >= 0 && pfd[nfd].revents)
			proc_write(c);
	}
	proc_close(ctx, c);
}
