/*
 * A driver for bench/run.sh: what libcurl alone costs a process on this
 * machine.  It sets libcurl up as xg-run does (curl_global_init, which
 * starts OpenSSL) and prints {"ms":N,"maxrss_kib":N} for itself, so the
 * run's figures can be read against that floor.
 *
 * With --hold it also makes an easy handle, as a run has one, and then
 * waits for the end of its standard input: bench/parallel.sh holds many
 * at once to read what memory libcurl alone costs each process.
 *
 * It is a program of its own, bench/bin/curl-floor, not a sub-command of
 * tests/bin/xg-test: it is itself what is measured, and xg-test loads
 * libgit2, libjq and the rest besides.
 */
#include "xg.h"
#include <sys/resource.h>
#include <curl/curl.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int64_t t0 = xg_clock_ms();
	int hold = argc > 1 && !strcmp(argv[1], "--hold");
	CURL *easy = NULL;
	char b[512];

	xg_prog_init("curl-floor");
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		xg_die(XG_EX_SOFTWARE, "cannot set up libcurl");
	if (hold && !(easy = curl_easy_init()))
		xg_die(XG_EX_SOFTWARE, "cannot set up libcurl");
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"ms\":%lld,\"maxrss_kib\":%ld}\n", (long long)(xg_clock_ms() - t0), ru.ru_maxrss);
	fflush(stdout);
	while (hold && read(0, b, sizeof(b)) > 0)
		;
	if (easy)
		curl_easy_cleanup(easy);
	curl_global_cleanup();
	return xg_prog_exit(0);
}
