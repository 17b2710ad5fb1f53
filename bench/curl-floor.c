/*
 * A driver for bench/run.sh: what libcurl alone costs a process on this
 * machine.  It sets libcurl up as xg-run does (curl_global_init, which
 * starts OpenSSL) and prints {"ms":N,"maxrss_kib":N} for itself, so the
 * run's figures can be read against that floor.
 *
 * It is a program of its own, bench/bin/curl-floor, not a sub-command of
 * tests/bin/xg-test: it is itself what is measured, and xg-test loads
 * libgit2, libjq and the rest besides.
 */
#include "xg.h"
#include <sys/resource.h>
#include <curl/curl.h>

int main(void)
{
	struct rusage ru;
	int64_t t0 = xg_clock_ms();

	xg_prog_init("curl-floor");
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		xg_die(XG_EX_SOFTWARE, "cannot set up libcurl");
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"ms\":%lld,\"maxrss_kib\":%ld}\n", (long long)(xg_clock_ms() - t0), ru.ru_maxrss);
	curl_global_cleanup();
	return xg_prog_exit(0);
}
