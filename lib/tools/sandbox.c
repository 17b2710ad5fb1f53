/*
 * The sandbox of the bash tool (man 1 xg-run, Sandbox): a command line run
 * under bubblewrap, bwrap(1), instead of straight under /bin/sh.
 *
 * First the look for bwrap and the probe that it can make its namespaces
 * here (a missing program and user namespaces that are off are the two
 * usual reasons it cannot); then the command line that puts a command in
 * the sandbox: no capability, the system read-only (the kernel's settings
 * in /proc too), the workspace writable (or read-only), a /tmp of its own,
 * a PID namespace of its own with a /proc to match, no network unless
 * asked and then no host socket either, the writable folders the person
 * named, and the directories that must not be seen (xg's configuration and
 * state, where the keys and the runs are) made empty.
 *
 * Nothing here knows the run: confine.c decides from the setting whether
 * a run's bash is sandboxed and fills in struct xg_tool_sandbox (tools.h).
 */
#include "xg.h"
#include "tools/internal.h"
#include <spawn.h>
#include <sys/stat.h>
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

/*
 * The options that take every power away from the command, root's
 * included: a user namespace of its own, where the kernel allows one, in
 * which no further one may be made (so no namespace can hand the powers
 * back), and no capability at all.  Without them a command run as root
 * could unmount what hides xg's keys, remount the system writable, mount
 * what it likes, make devices and write the kernel's settings.
 */
static const char *const strict_userns[] = {
	"--unshare-user", "--disable-userns", "--cap-drop", "ALL", NULL
};
static const char *const strict_caps[] = { "--cap-drop", "ALL", NULL };

int xg_tool_sandbox_find(char **bwrap, int *userns, char *why, size_t whylen)
{
	const char *argv[24];
	const char *const *x;
	char out[256];
	int status = -1, pass;
	size_t n;

	*userns = 0;
	*bwrap = find_bwrap();
	if (!*bwrap) {
		snprintf(why, whylen, "bubblewrap (bwrap) is not in PATH; install it "
			 "(apt-get install bubblewrap)");
		return 0;
	}
	/* With a user namespace where the kernel gives one; else (root where
	 * user namespaces are off) with the capabilities dropped alone. */
	for (pass = 0; pass < 2 && status != 0; pass++) {
		n = 0;
		argv[n++] = "bwrap";
		argv[n++] = "--die-with-parent";
		for (x = pass ? strict_caps : strict_userns; *x; x++)
			argv[n++] = *x;
		argv[n++] = "--unshare-pid";
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
		argv[n++] = "--";
		argv[n++] = "/bin/sh";
		argv[n++] = "-c";
		argv[n++] = ":";
		argv[n] = NULL;
		status = run_probe(*bwrap, (char *const *)argv, out, sizeof(out));
		if (status == 0)
			*userns = !pass;
		if (status < 0)
			break;
	}
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
	int userns, ok = xg_tool_sandbox_find(&bwrap, &userns, why, sizeof(why));

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

/*
 * The command line as it is built: every string its own, and beside it
 * the mounts so far in order, each a directory shown (a bind) or covered
 * (a tmpfs), so that whether a path is in sight is known as bwrap will
 * make it: the last mount over it decides.
 */
struct cmdline {
	char **argv;
	size_t n, alloc;
	struct mount {
		const char *dir;	/* one of argv's strings */
		int shown;
	} *mounts;
	size_t nmounts, mounts_alloc;
};

static void add(struct cmdline *c, const char *arg)
{
	if (c->n + 2 > c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 64;
		c->argv = xg_realloc(c->argv, c->alloc * sizeof(*c->argv));
	}
	c->argv[c->n++] = xg_strdup(arg);
	c->argv[c->n] = NULL;
}

static void add_mount(struct cmdline *c, const char *how, const char *src, const char *dir,
		      int shown)
{
	add(c, how);
	if (src)
		add(c, src);
	add(c, dir);
	if (c->nmounts == c->mounts_alloc) {
		c->mounts_alloc = c->mounts_alloc ? 2 * c->mounts_alloc : 16;
		c->mounts = xg_realloc(c->mounts, c->mounts_alloc * sizeof(*c->mounts));
	}
	c->mounts[c->nmounts].dir = c->argv[c->n - 1];
	c->mounts[c->nmounts++].shown = shown;
}

static int in_sight(const struct cmdline *c, const char *path)
{
	int shown = 1;
	size_t i;

	for (i = 0; i < c->nmounts; i++)
		if (beneath(path, c->mounts[i].dir))
			shown = c->mounts[i].shown;
	return shown;
}

/* Covers dir with an empty tmpfs when it is a real directory (a symlink
 * leads to one that is covered in its own right, or is not there). */
static void cover(struct cmdline *c, const char *dir)
{
	struct stat st;

	if (dir && dir[0] == '/' && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	    in_sight(c, dir))
		add_mount(c, "--tmpfs", NULL, dir, 0);
}

/* The hidden directories that are (inside set) or are not beneath the
 * workspace, which is mounted between the two. */
static void add_hidden(struct cmdline *c, const struct xg_tool_sandbox *sb, const char *ws,
		       int inside)
{
	char *const *h;

	for (h = sb->hide; h && *h; h++)
		if (beneath(*h, ws) == inside && !(inside && !strcmp(*h, ws)))
			add_mount(c, "--tmpfs", NULL, *h, 0);
}

/*
 * Every listening unix socket with a path that the command would still
 * see is covered by an empty file, so connect(2) finds no socket there:
 * the system is bound read-only, but a connection needs no write.  The
 * kernel lists them in /proc/net/unix (the last field, for those bound to
 * a path); those in a place already covered need nothing.
 */
#define SOCKETS_MAX 1024
static void cover_sockets(struct cmdline *c)
{
	FILE *fp = fopen("/proc/net/unix", "re");
	char *line = NULL, *p;
	size_t cap = 0;
	ssize_t len;
	int field, covered = 0;
	struct stat st;

	if (!fp)
		return;
	while ((len = getline(&line, &cap, fp)) > 0 && covered < SOCKETS_MAX) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		/* Num RefCount Protocol Flags Type St Inode Path: the path is
		 * what follows the seventh field, spaces and all. */
		for (p = line, field = 0; *p && field < 7; field++) {
			p += strspn(p, " ");
			p += strcspn(p, " ");
		}
		if (*p == ' ')
			p++;
		if (*p != '/' || !in_sight(c, p) || lstat(p, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		add_mount(c, "--ro-bind", "/dev/null", p, 0);
		covered++;
	}
	free(line);
	fclose(fp);
}

/* What of /proc a command must not write even as root: the kernel's
 * settings and its triggers (the rest of /proc is its own PID
 * namespace's). */
static const char *const proc_read_only[] = {
	"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", NULL
};

char **xg_tool_sandbox_argv(const struct xg_tool_sandbox *sb, const char *workspace,
			    const char *command)
{
	struct cmdline c = { 0 };
	const char *const *x;
	char *const *w;
	struct stat st;

	add(&c, "bwrap");
	/* It dies with the tool's leader, and everything in it with its
	 * PID namespace's first process; it stays in the tool's process group
	 * (no --new-session: the command has no terminal to reach), so the
	 * group's TERM and KILL reach it too. */
	add(&c, "--die-with-parent");
	/* It says there whether the command started (proc.c). */
	add(&c, "--json-status-fd");
	add(&c, XG_STR(XG_TOOL_SANDBOX_STATUS_FD));
	for (x = sb->userns ? strict_userns : strict_caps; *x; x++)
		add(&c, *x);
	add(&c, "--unshare-pid");
	add(&c, "--unshare-ipc");
	add(&c, "--unshare-uts");
	add(&c, "--unshare-cgroup-try");
	if (!sb->net)
		add(&c, "--unshare-net");
	add_mount(&c, "--ro-bind", "/", "/", 1);
	add(&c, "--dev");
	add(&c, "/dev");
	add(&c, "--proc");
	add(&c, "/proc");
	for (x = proc_read_only; *x; x++)
		if (stat(*x, &st) == 0)
			add_mount(&c, "--ro-bind", *x, *x, 1);
	add_mount(&c, "--tmpfs", NULL, "/tmp", 0);
	/* Without the network, no socket of the host either: the usual
	 * places of the daemons' and the session's, then any other. */
	if (!sb->net) {
		cover(&c, "/run");
		cover(&c, "/var/run");
		cover(&c, getenv("XDG_RUNTIME_DIR"));
	}
	for (w = sb->writable; w && *w; w++)
		add_mount(&c, "--bind", *w, *w, 1);
	add_hidden(&c, sb, workspace, 0);
	add_mount(&c, sb->read_only ? "--ro-bind" : "--bind", workspace, workspace, 1);
	add_hidden(&c, sb, workspace, 1);
	for (w = sb->show; w && *w; w++)
		add_mount(&c, "--ro-bind", *w, *w, 1);
	if (!sb->net)
		cover_sockets(&c);
	add(&c, "--chdir");
	add(&c, workspace);
	add(&c, "--");
	add(&c, "/bin/sh");
	add(&c, "-c");
	add(&c, command);
	free(c.mounts);
	return c.argv;
}

void xg_tool_sandbox_argv_free(char **argv)
{
	char **a;

	for (a = argv; a && *a; a++)
		free(*a);
	free(argv);
}
