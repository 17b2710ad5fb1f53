/*
 * What every program does at its start and end (prog.h): naming itself,
 * SIGPIPE, the check of standard output, and what it was told about its
 * standard input and its readers.
 */
#include "xg.h"

/* Set once, by xg_prog_init, as xg_progname is. */
static int records_shown;

void xg_prog_init(const char *name)
{
	const char *shown = getenv("XG_RENDERED");

	xg_progname = name;
	signal(SIGPIPE, SIG_DFL);
	records_shown = shown && !strcmp(shown, "1");
	unsetenv("XG_RENDERED");
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
