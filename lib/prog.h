#ifndef XG_PROG_H
#define XG_PROG_H
/*
 * What every program does at its start and end.
 *
 * xg_prog_init names the program for messages and puts SIGPIPE back to its
 * default, so "xg-run | head" ends quietly.  xg_prog_exit flushes and checks
 * stdout: a write error there is exit 74, whatever the program meant to
 * return.  main() ends with "return xg_prog_exit(rc);".
 */
void xg_prog_init(const char *name);
int xg_prog_exit(int code);

/* Whether standard input may be read without waiting on a person: it is
 * open and not a terminal. */
int xg_stdin_readable(void);

#endif
