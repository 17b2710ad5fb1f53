/*
 * Filter drivers: the clean command that a file's "filter" attribute
 * names through filter.NAME.clean in the configuration (as Git LFS sets
 * one up), run on the file's content before libgit2's own clean filters,
 * as git add runs it.  libgit2 runs no external driver itself.
 *
 * The drivers are read from the configuration once, the first time a
 * file is read while attributes may apply; a snapshot without any driver
 * asks no attribute and runs nothing.  The command runs as git runs it:
 * through sh -c, %f replaced by the path quoted for the shell, in the top
 * of the working tree, the content on its standard input and the cleaned
 * content from its standard output, and within the snapshot's deadline.
 * A command that fails leaves the content raw, as git does, unless the
 * driver is required (filter.NAME.required), when the file is left out.
 */
#include "xg.h"
#include "snapshot/internal.h"
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

struct xg_snapshot_driver {
	char *name;
	char *clean;		/* NULL: the driver has no clean command */
	int required;
	int process;		/* filter.NAME.process is set */
};

/* Notes each driver name the configuration mentions, once. */
static int add_name(const git_config_entry *e, void *arg)
{
	struct xg_snapshot_state *s = arg;
	const char *name, *dot;
	size_t i, len;

	/* Matched here rather than by libgit2's regular expression, whose
	 * match data libgit2 1.5 does not free. */
	if (strncmp(e->name, "filter.", 7))
		return 0;
	name = e->name + 7;
	dot = strrchr(name, '.');
	len = dot ? (size_t)(dot - name) : 0;
	if (!len || (strcmp(dot, ".clean") && strcmp(dot, ".process") && strcmp(dot, ".required")))
		return 0;
	for (i = 0; i < s->ndrivers; i++)
		if (strlen(s->drivers[i].name) == len && !memcmp(s->drivers[i].name, name, len))
			return 0;
	XG_ALLOC_GROW(s->drivers, s->ndrivers + 1, s->adrivers);
	memset(&s->drivers[s->ndrivers], 0, sizeof(*s->drivers));
	s->drivers[s->ndrivers++].name = xg_strndup(name, len);
	return 0;
}

/* Reads the drivers from the configuration: 0, or -1 when it cannot be
 * read (then no driver applies, as when there is none). */
static int load_drivers(struct xg_snapshot_state *s)
{
	git_config *cfg = NULL;
	size_t i;

	s->drivers_loaded = 1;
	if (xg_snapshot_repo_open(s) < 0 || git_repository_config_snapshot(&cfg, s->repo) < 0)
		return -1;
	git_config_foreach(cfg, add_name, s);
	for (i = 0; i < s->ndrivers; i++) {
		struct xg_snapshot_driver *d = &s->drivers[i];
		char *key = xg_asprintf("filter.%s.clean", d->name);
		const char *v;
		int b;

		if (!git_config_get_string(&v, cfg, key) && *v)
			d->clean = xg_strdup(v);
		free(key);
		key = xg_asprintf("filter.%s.process", d->name);
		d->process = !git_config_get_string(&v, cfg, key) && *v;
		free(key);
		key = xg_asprintf("filter.%s.required", d->name);
		d->required = !git_config_get_bool(&b, cfg, key) && b;
		free(key);
	}
	git_config_free(cfg);
	return 0;
}

/* The driver path's "filter" attribute names, or NULL. */
static const struct xg_snapshot_driver *driver_of(struct xg_snapshot_state *s, const char *path)
{
	const char *v = NULL;
	size_t i;

	if (git_attr_get(&v, s->repo, GIT_ATTR_CHECK_FILE_THEN_INDEX, path, "filter") < 0 ||
	    git_attr_value(v) != GIT_ATTR_VALUE_STRING)
		return NULL;
	for (i = 0; i < s->ndrivers; i++)
		if (!strcmp(s->drivers[i].name, v))
			return &s->drivers[i];
	return NULL;
}

/* The command as git expands it: %f the path in single quotes (a quote or
 * "!" closed, escaped and reopened, as git's sq_quote does), %% a "%". */
static char *expand(const char *cmd, const char *path)
{
	struct xg_buf b = XG_BUF_INIT(0);
	const char *p;

	for (; *cmd; cmd++) {
		if (cmd[0] != '%' || (cmd[1] != 'f' && cmd[1] != '%')) {
			xg_buf_addch(&b, *cmd);
			continue;
		}
		if (*++cmd == '%') {
			xg_buf_addch(&b, '%');
			continue;
		}
		xg_buf_addch(&b, '\'');
		for (p = path; *p; p++) {
			if (*p == '\'' || *p == '!')
				xg_buf_addf(&b, "'\\%c'", *p);
			else
				xg_buf_addch(&b, *p);
		}
		xg_buf_addch(&b, '\'');
	}
	return xg_buf_detach(&b, NULL);
}

/* Starts sh -c cmd in the top of the working tree, in a process group of
 * its own so that what it starts ends with it, reading from in and
 * writing to out: its id, or -1. */
static pid_t start(struct xg_snapshot_state *s, const char *cmd, int in, int out)
{
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	pid_t pid;
	int rc;

	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	rc = posix_spawn_file_actions_adddup2(&fa, in, 0) ||
	     posix_spawn_file_actions_adddup2(&fa, out, 1) ||
	     posix_spawn_file_actions_addchdir_np(&fa, s->workdir) ||
	     posix_spawnattr_setpgroup(&at, 0) || posix_spawnattr_setsigmask(&at, &none) ||
	     posix_spawnattr_setsigdefault(&at, &def) ||
	     posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					   POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawn(&pid, "/bin/sh", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc ? -1 : pid;
}

/* Feeds in to fd and reads fd's answer into out until its end, or until
 * the deadline (XG_SNAPSHOT_TIMED_OUT) or the ceiling (XG_SNAPSHOT_FAILED).
 * A command that stops reading early is not a failure: git ignores EPIPE
 * too. */
static int exchange(struct xg_snapshot_state *s, int to, int from, const struct xg_buf *in,
		    struct xg_buf *out)
{
	size_t sent = 0;

	while (from >= 0) {
		struct pollfd p[2] = { { from, POLLIN, 0 }, { to, POLLOUT, 0 } };
		int64_t left = s->deadline - xg_clock_ms();
		ssize_t n;

		if (left <= 0)
			return XG_SNAPSHOT_TIMED_OUT;
		if (poll(p, to >= 0 ? 2 : 1, (int)(left > 1000 ? 1000 : left)) < 0) {
			if (errno == EINTR)
				continue;
			return XG_SNAPSHOT_FAILED;
		}
		if (to >= 0 && p[1].revents) {
			n = write(to, in->buf + sent, in->len - sent);
			if (n > 0)
				sent += (size_t)n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) || sent == in->len) {
				close(to);
				to = -1;
			}
		}
		if (p[0].revents) {
			if (xg_buf_grow(out, 1 << 16) < 0)
				return XG_SNAPSHOT_FAILED;
			n = read(from, out->buf + out->len, out->alloc - out->len - 1);
			if (n > 0) {
				out->len += (size_t)n;
				out->buf[out->len] = '\0';
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				from = -1;
		}
	}
	if (to >= 0)
		close(to);
	return XG_SNAPSHOT_DONE;
}

/* Waits for pid until the deadline: its wait status, or -1 past it. */
static int reap(struct xg_snapshot_state *s, pid_t pid)
{
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (xg_clock_ms() > s->deadline)
			return -1;
		usleep(1000);
	}
}

/* Runs cmd on b's content into out: XG_SNAPSHOT_DONE when it exits 0,
 * XG_SNAPSHOT_FAILED, or XG_SNAPSHOT_TIMED_OUT with the command killed. */
static int run(struct xg_snapshot_state *s, const char *cmd, const struct xg_buf *b,
	       struct xg_buf *out)
{
	int in[2], ans[2], rc, status = -1;
	sigset_t pipe_sig, old, pending;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0)
		return XG_SNAPSHOT_FAILED;
	if (pipe2(ans, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return XG_SNAPSHOT_FAILED;
	}
	pid = start(s, cmd, in[0], ans[1]);
	close(in[0]);
	close(ans[1]);
	if (pid < 0) {
		close(in[1]);
		close(ans[0]);
		return XG_SNAPSHOT_FAILED;
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(ans[0], F_SETFL, O_NONBLOCK);
	/* A command that exits before reading all its input must not end
	 * xg-snapshot with SIGPIPE: blocked while writing, and one that
	 * arrived meanwhile taken back. */
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
	rc = exchange(s, in[1], ans[0], b, out);
	sigpending(&pending);
	if (!sigismember(&old, SIGPIPE) && sigismember(&pending, SIGPIPE)) {
		struct timespec zero = { 0, 0 };

		sigtimedwait(&pipe_sig, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(ans[0]);
	if (rc == XG_SNAPSHOT_DONE && (status = reap(s, pid)) < 0)
		rc = XG_SNAPSHOT_TIMED_OUT;
	if (status < 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (rc == XG_SNAPSHOT_DONE && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc = XG_SNAPSHOT_FAILED;
	return rc;
}

int xg_snapshot_driver_clean(struct xg_snapshot_state *s, const char *path, struct xg_buf *b)
{
	const struct xg_snapshot_driver *d;
	struct xg_buf out;
	char *cmd;
	int rc;

	if (!s->drivers_loaded && load_drivers(s) < 0)
		return XG_SNAPSHOT_DONE;
	if (!s->ndrivers || !(d = driver_of(s, path)))
		return XG_SNAPSHOT_DONE;
	/* The long-running protocol is not spoken: a driver with only
	 * filter.NAME.process cannot be run, and its output not guessed. */
	if (!d->clean)
		return d->process || d->required ? XG_SNAPSHOT_FAILED : XG_SNAPSHOT_DONE;
	/* The cleaned content may be larger than the file, but not without
	 * bound: past all the snapshot may hold besides, it is a failure. */
	xg_buf_init(&out, b->len + s->o->max_total_size);
	cmd = expand(d->clean, path);
	rc = run(s, cmd, b, &out);
	free(cmd);
	if (rc == XG_SNAPSHOT_DONE) {
		xg_buf_release(b);
		*b = out;
		b->max = 0;
		return XG_SNAPSHOT_DONE;
	}
	xg_buf_release(&out);
	if (rc == XG_SNAPSHOT_TIMED_OUT) {
		s->timed_out = 1;
		return rc;
	}
	return d->required ? XG_SNAPSHOT_FAILED : XG_SNAPSHOT_DONE;
}

void xg_snapshot_driver_release(struct xg_snapshot_state *s)
{
	size_t i;

	for (i = 0; i < s->ndrivers; i++) {
		free(s->drivers[i].name);
		free(s->drivers[i].clean);
	}
	free(s->drivers);
}
