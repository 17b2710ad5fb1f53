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
/*
 * Whether the variable name[0..len) holds a secret by its name: it ends in
 * _KEY, _TOKEN, _SECRET or _PASSWORD.  xg_prog_init zeroes the value of
 * each such variable in the block /proc/PID/environ shows, keeping a copy
 * that getenv and the programs started later still see.
 */
int xg_prog_secret_name(const char *name, size_t len);
/* For a program that holds keys (xg, xg-goal, xg-run): the person's other
 * processes may not read its memory or its environment, nor a core dump. */
void xg_prog_undumpable(void);
int xg_prog_exit(int code);

/* Whether standard input may be read without waiting on a person: it is
 * open and not a terminal. */
int xg_stdin_readable(void);

/*
 * Whether this program's records are being shown to a person: xg starts
 * the xg-run or xg-goal whose records it shows with XG_RENDERED=1 (man 7
 * xg).  That program then leaves off standard error what it also writes
 * in a record (a failure carried by run_end, a notice), so the person
 * reads it once.  xg_prog_init reads the variable and takes it out of the
 * environment, so the programs this one starts (a tool's command, a nested
 * run) do not inherit it.
 */
int xg_prog_records_shown(void);

#endif
