/*
 * Errors (err.h): "PROG: message" on standard error, the die and warn
 * family, an error kept for the caller instead, and the exit code an
 * errno stands for.
 */
#include "xg.h"

const char *xg_progname = "xg";

/* Where this thread's errors go instead of standard error (xg_error_keep). */
static __thread char *kept;
static __thread size_t kept_size;

void xg_error_keep(char *buf, size_t size)
{
	kept = size ? buf : NULL;
	kept_size = size;
	if (kept)
		*kept = '\0';
}

static void keep(const char *fmt, va_list ap, int errnum)
{
	int n = vsnprintf(kept, kept_size, fmt, ap);

	if (errnum && n >= 0 && (size_t)n < kept_size)
		snprintf(kept + n, kept_size - (size_t)n, ": %s", strerror(errnum));
}

static void vreport(const char *fmt, va_list ap, int errnum)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", xg_progname);
	vfprintf(stderr, fmt, ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
}

void xg_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap, 0);
	va_end(ap);
	exit(code);
}

void xg_die_errno(int code, const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap, errnum);
	va_end(ap);
	exit(code);
}

/* Reporting keeps errno, so a caller can still map it to an exit code. */
int xg_error(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	(kept ? keep : vreport)(fmt, ap, 0);
	va_end(ap);
	errno = errnum;
	return -1;
}

int xg_error_errno(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	(kept ? keep : vreport)(fmt, ap, errnum);
	va_end(ap);
	errno = errnum;
	return -1;
}

void xg_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap, 0);
	va_end(ap);
}

int xg_exit_for_errno(int errnum)
{
	switch (errnum) {
	case EACCES:
	case EPERM:
	case EROFS:
		return XG_EX_NOPERM;
	case ENOMEM:
		return XG_EX_SOFTWARE;
	case EWOULDBLOCK:
		return XG_EX_TEMPFAIL;
	default:
		return XG_EX_IOERR;
	}
}

const char *xg_exit_name(int code)
{
	switch (code) {
	case XG_EX_OK: return "ok";
	case XG_EX_FAIL: return "fail";
	case XG_EX_USAGE: return "usage";
	case XG_EX_DATAERR: return "dataerr";
	case XG_EX_NOINPUT: return "noinput";
	case XG_EX_UNAVAILABLE: return "unavailable";
	case XG_EX_SOFTWARE: return "software";
	case XG_EX_IOERR: return "ioerr";
	case XG_EX_TEMPFAIL: return "tempfail";
	case XG_EX_NOPERM: return "noperm";
	case XG_EX_CONFIG: return "config";
	}
	return "unknown";
}
