/*
 * The sandbox of the bash tool (man 1 xg-run, Sandbox): a command line run
 * under bubblewrap, bwrap(1), instead of straight under /bin/sh.
 *
 * First the look for bwrap and the probe that it can make its namespaces
 * here (a missing program and user namespaces that are off are the two
 * usual reasons it cannot); then the command line that puts a command in
 * the sandbox: the system read-only, the workspace writable (or read-only),
 * a /tmp of its own, a PID namespace of its own with a /proc to match, no
 * network unless asked, and the directories that must not be seen (xg's
 * configuration and state, where the keys and the runs are) made empty.
 *
 * Nothing here knows the run: prepare.c decides whether a run's bash is
 * sandboxed and fills in struct xg_tool_sandbox (tools.h).
 */
#include "xg.h"
#include "tools/internal.h"
#include <spawn.h>
#include <sys/wait.h>

/* The bwrap program in PATH, as a new string, or NULL. */
static char *find_bwrap(void)
{
	const char *path = getenv("PATH"), *p, *colon;

	if (!path || !*path)
		return NULL;
	for (p = path; ; p = colon + 1) {
		size_t len;
		char *cand;

		colon = strchr(p, ':');
		len = colon ? (size_t)(colon - p) : strlen(p);
		/* An empty or relative entry is looked up from the current
		 * directory, which is the workspace, the model's to fill:
		 * never looked in. */
		if (len && p[0] == '/') {
			cand = xg_asprintf("%.*s/bwrap", (int)len, p);
			if (access(cand, X_OK) == 0)
				return cand;
			free(cand);
		}
		if (!colon)
			return NULL;
	}
}

/*
 * Runs the probe, argv, with its standard error into why (its first line);
 * returns its exit status as waitpid gives it, or -1 when it cannot start.
 */
static int run_probe(const char *bwrap, char *const *argv, char *why, size_t whylen)
{
	extern char **environ;
	posix_spawn_file_actions_t fa;
	int err[2], status = -1;
	pid_t pid;
	ssize_t n;
	size_t got = 0;

	if (pipe2(err, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	if (posix_spawn(&pid, bwrap, &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(err[0]);
		close(err[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(err[1]);
	while (got + 1 < whylen && (n = read(err[0], why + got, whylen - got - 1)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(err[0]);
	why[got] = '\0';
	why[strcspn(why, "\n")] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

int xg_tool_sandbox_find(char **bwrap, char *why, size_t whylen)
{
	char *const argv[] = {
		"bwrap", "--die-with-parent", "--unshare-pid", "--unshare-net",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--", "/bin/sh", "-c", ":", NULL
	};
	char out[256];
	int status;

	*bwrap = find_bwrap();
	if (!*bwrap) {
		snprintf(why, whylen, "bubblewrap (bwrap) is not in PATH; install it "
			 "(apt-get install bubblewrap)");
		return 0;
	}
	status = run_probe(*bwrap, argv, out, sizeof(out));
	if (status == 0)
		return 1;
	if (status < 0)
		snprintf(why, whylen, "cannot run '%s': %s", *bwrap, strerror(errno));
	else
		snprintf(why, whylen, "'%s' cannot make its namespaces here%s%s; enable "
			 "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
			 "and user.max_user_namespaces above 0)", *bwrap, *out ? ": " : "", out);
	free(*bwrap);
	*bwrap = NULL;
	return 0;
}

int xg_tool_sandbox_available(void)
{
	char *bwrap, why[512];
	int ok = xg_tool_sandbox_find(&bwrap, why, sizeof(why));

	free(bwrap);
	return ok;
}

/* Whether path is dir or beneath it (both canonical). */
static int beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return 1;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* Adds the empty directories over the hidden ones that are (inside set)
 * or are not beneath the workspace, which is mounted between the two. */
static size_t add_hidden(const char **argv, size_t n, const struct xg_tool_sandbox *sb,
			 const char *ws, int inside)
{
	char *const *h;

	for (h = sb->hide; h && *h; h++)
		if (beneath(*h, ws) == inside && !(inside && !strcmp(*h, ws))) {
			argv[n++] = "--tmpfs";
			argv[n++] = *h;
		}
	return n;
}

char **xg_tool_sandbox_argv(const struct xg_tool_sandbox *sb, const char *workspace,
			    const char *command)
{
	const char **argv;
	size_t n = 0, nhide = 0;
	char *const *h;

	for (h = sb->hide; h && *h; h++)
		nhide++;
	argv = xg_calloc(40 + 2 * nhide, sizeof(*argv));
	argv[n++] = "bwrap";
	/* It dies with the tool's leader, and everything in it with its
	 * PID namespace's first process; it stays in the tool's process group
	 * (no --new-session: the command has no terminal to reach), so the
	 * group's TERM and KILL reach it too. */
	argv[n++] = "--die-with-parent";
	argv[n++] = "--unshare-pid";
	argv[n++] = "--unshare-ipc";
	argv[n++] = "--unshare-uts";
	argv[n++] = "--unshare-cgroup-try";
	if (!sb->net)
		argv[n++] = "--unshare-net";
	argv[n++] = "--ro-bind";
	argv[n++] = "/";
	argv[n++] = "/";
	argv[n++] = "--dev";
	argv[n++] = "/dev";
	argv[n++] = "--proc";
	argv[n++] = "/proc";
	argv[n++] = "--tmpfs";
	argv[n++] = "/tmp";
	n = add_hidden(argv, n, sb, workspace, 0);
	argv[n++] = sb->read_only ? "--ro-bind" : "--bind";
	argv[n++] = workspace;
	argv[n++] = workspace;
	n = add_hidden(argv, n, sb, workspace, 1);
	argv[n++] = "--chdir";
	argv[n++] = workspace;
	argv[n++] = "--";
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = command;
	argv[n] = NULL;
	return (char **)argv;
}
