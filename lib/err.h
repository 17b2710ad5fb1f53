#ifndef XG_ERR_H
#define XG_ERR_H
/*
 * Errors and exit codes.  The table below is the one place the codes live;
 * man 7 xg documents the same table.
 *
 * xg_die() prints "PROG: message" on stderr and exits: for "cannot go on".
 * xg_error() prints the same and returns -1, so callers write
 * "return xg_error(...)".  Messages are lowercase, quote the thing they name
 * and end with the system's reason, e.g.
 *   xg-snapshot: cannot open index '.git/index': Permission denied
 */
enum {
	XG_EX_OK = 0,		/* done */
	XG_EX_FAIL = 1,		/* the work ended without success; records say why */
	XG_EX_USAGE = 2,	/* bad command line */
	XG_EX_DATAERR = 65,	/* bad input data */
	XG_EX_NOINPUT = 66,	/* a named input (a run, a file) does not exist */
	XG_EX_UNAVAILABLE = 69,	/* provider unavailable after retries */
	XG_EX_SOFTWARE = 70,	/* internal error, out of memory */
	XG_EX_IOERR = 74,	/* I/O error, stdout not writable */
	XG_EX_TEMPFAIL = 75,	/* rate or usage limit, lock busy */
	XG_EX_NOPERM = 77,	/* no credentials or permission */
	XG_EX_CONFIG = 78	/* configuration error */
};

/* The program name used in messages; set once by xg_prog_init(). */
extern const char *xg_progname;

__attribute__((noreturn, format(printf, 2, 3)))
void xg_die(int code, const char *fmt, ...);
/* Like xg_die(), with ": strerror(errno)" appended. */
__attribute__((noreturn, format(printf, 2, 3)))
void xg_die_errno(int code, const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
int xg_error(const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
int xg_error_errno(const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void xg_warn(const char *fmt, ...);
/*
 * From now on, the calling thread's xg_error and xg_error_errno write
 * their message, without the program's name, into buf (size bytes, the
 * last one kept, "" when none) instead of on standard error, so that a
 * caller can say it once, with its own failure; NULL or a size of 0 sends
 * them to standard error again.  Warnings and dying are not kept.
 */
void xg_error_keep(char *buf, size_t size);

/* The exit code for a failed call's errno: 77 for a permission refused
 * (EACCES, EPERM, EROFS), 70 for ENOMEM, 75 for a lock that timed out
 * (EWOULDBLOCK), 74 for the rest. */
int xg_exit_for_errno(int errnum);

/* The symbolic name of an exit code ("dataerr"), for records and tests. */
const char *xg_exit_name(int code);

#endif
