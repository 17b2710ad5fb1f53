#include "xg.h"

void xg_prog_init(const char *name)
{
	xg_progname = name;
	signal(SIGPIPE, SIG_DFL);
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
