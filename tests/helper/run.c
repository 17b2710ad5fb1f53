/*
 * A driver for bench/run.sh: runs a command and, once it has exited,
 * prints {"start_us":T,"ms":N,"maxrss_kib":N,"status":N} on standard error,
 * where T is the wall-clock time (epoch microseconds) just before the fork,
 * ms the time until the command was reaped, and maxrss_kib its peak resident
 * set as wait4(2) reports it (this small process's own pages are all the
 * child starts with, so the figure is the command's).
 */
#include "xg.h"
#include "xg-test.h"
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

static int64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int cmd__run(int argc, char **argv)
{
	struct rusage ru;
	int64_t t0, m0;
	int status = 0;
	pid_t pid;

	xg_prog_init("xg-test-run");
	if (argc < 2)
		xg_die(XG_EX_USAGE, "usage: xg-test-run command [argument ...]");
	t0 = wall_us();
	m0 = xg_clock_ms();
	pid = fork();
	if (pid < 0)
		xg_die_errno(XG_EX_SOFTWARE, "cannot fork");
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		xg_die_errno(XG_EX_SOFTWARE, "cannot wait");
	fprintf(stderr, "{\"start_us\":%lld,\"ms\":%lld,\"maxrss_kib\":%ld,\"status\":%d}\n",
		(long long)t0, (long long)(xg_clock_ms() - m0), ru.ru_maxrss,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return xg_prog_exit(0);
}
