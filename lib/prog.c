/*
 * What every program does at its start and end (prog.h): naming itself,
 * SIGPIPE, the keys of its environment moved out of sight, the check of
 * standard output, and what it was told about its standard input and its
 * readers.
 */
#include "xg.h"
#include <sys/prctl.h>

/* Set once, by xg_prog_init, as xg_progname is. */
static int records_shown;

int xg_prog_secret_name(const char *name, size_t len)
{
	static const char *const ends[] = { "_KEY", "_TOKEN", "_SECRET", "_PASSWORD", NULL };
	const char *const *e;

	for (e = ends; *e; e++) {
		size_t n = strlen(*e);

		if (len > n && !memcmp(name + len - n, *e, n))
			return 1;
	}
	return 0;
}

/*
 * The environment a program was started with is a block of its memory
 * that /proc/PID/environ shows to every process of the same user, for the
 * program's whole life.  Each variable that names a secret is copied to
 * the heap (getenv and the programs started later still get it) and its
 * value in the block is zeroed.
 */
static void hide_keys(void)
{
	/* The copies stay listed here for the process's life: an unsetenv
	 * later drops one from the environment, which is no leak.  Volatile,
	 * as a list only written would otherwise be optimised away. */
	static char *volatile copies[64];
	static int done;
	extern char **environ;
	size_t n = 0;
	char **e;

	/* Once a process: a second xg_prog_init (the test driver's
	 * sub-commands) finds the block zeroed already. */
	if (done)
		return;
	done = 1;

	for (e = environ; e && *e && n < sizeof(copies) / sizeof(*copies); e++) {
		char *eq = strchr(*e, '=');

		if (!eq || !eq[1] || !xg_prog_secret_name(*e, (size_t)(eq - *e)))
			continue;
		copies[n] = xg_strdup(*e);
		explicit_bzero(eq + 1, strlen(eq + 1));
		*e = copies[n++];
	}
}

/*
 * The keys the program that started this one handed on through a pipe
 * (xg_exec_keys_open): put in the environment, on the heap, where getenv
 * and the programs this one starts find them but /proc/PID/environ does
 * not show them.
 */
static void take_keys(void)
{
	struct xg_buf b = XG_BUF_INIT(1 << 20);
	int fd = xg_env_fd("XG_KEYS_FD");
	char *p;

	if (fd < 0)
		return;
	if (xg_read_fd(fd, &b) == 0)
		for (p = b.buf; p < b.buf + b.len; p += strlen(p) + 1) {
			char *eq = strchr(p, '=');

			if (eq && xg_prog_secret_name(p, (size_t)(eq - p))) {
				*eq = '\0';
				setenv(p, eq + 1, 1);
			}
		}
	close(fd);
	explicit_bzero(b.buf, b.len);
	xg_buf_release(&b);
}

void xg_prog_init(const char *name)
{
	const char *shown = getenv("XG_RENDERED");

	xg_progname = name;
	hide_keys();
	take_keys();
	signal(SIGPIPE, SIG_DFL);
	records_shown = shown && !strcmp(shown, "1");
	unsetenv("XG_RENDERED");
}

void xg_prog_undumpable(void)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		xg_warn("cannot make the process undumpable: %s", strerror(errno));
}

int xg_prog_records_shown(void)
{
	return records_shown;
}

int xg_prog_exit(int code)
{
	int bad = 0;

	if (fflush(stdout) == EOF || ferror(stdout))
		bad = 1;
	/* Close so a deferred error (NFS, a full disk) is seen too. */
	if (fclose(stdout) == EOF && errno != EBADF)
		bad = 1;
	if (bad) {
		if (errno == EPIPE)
			return 128 + SIGPIPE;
		fprintf(stderr, "%s: cannot write standard output: %s\n", xg_progname,
			strerror(errno ? errno : EIO));
		return XG_EX_IOERR;
	}
	return code;
}

int xg_stdin_readable(void)
{
	if (fcntl(0, F_GETFD) < 0)
		return 0;
	return !isatty(0);
}
