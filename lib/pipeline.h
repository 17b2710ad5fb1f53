#ifndef XG_PIPELINE_H
#define XG_PIPELINE_H
/*
 * A pipeline of programs run as real processes joined by pipes, as a shell
 * runs "a | b | c", each stage spawned (vfork and exec): the first stage
 * reads bytes the caller gives (written into its pipe at once when the
 * pipe holds them, else fed by a small child process, so a long input
 * never blocks the caller), the last
 * writes to a descriptor the caller picks, and every stage's standard error
 * is the caller's (a standard descriptor the caller has closed is opened on
 * /dev/null first).  Pipe ends are close-on-exec, so no stage holds another's
 * pipe open and every stage sees end of input when the one before it ends.
 *
 * While the pipeline runs, SIGINT, SIGTERM and SIGHUP sent to the caller by
 * a process (kill(1), timeout(1), a supervisor) are passed on to every stage
 * still running, and the caller does not die of them: the last stage can
 * write its last records and the caller waits for it.  Those a terminal
 * sends (^C) reach the whole process group already and are not sent twice.
 *
 *   struct xg_pipeline p;
 *   xg_pipeline_init(&p);
 *   xg_pipeline_add(&p, "/usr/bin/xg-run", args);  (args NULL-terminated)
 *   if (xg_pipeline_start(&p, input, len, 1) < 0) ...;
 *   rc = xg_pipeline_wait(&p);
 *   xg_pipeline_release(&p);
 */
#include <stddef.h>
#include <sys/types.h>
#include <signal.h>
#include "json.h"

struct xg_buf;

struct xg_pipeline_stage {
	char *path;		/* the program */
	char **argv;		/* argv[0] is the name shown; NULL-terminated */
	pid_t pid;		/* 0 when not started or reaped */
	int status;		/* the wait status, once reaped */
	int reaped;
};

/* A pipe from a stage to the caller (xg_pipeline_cue). */
struct xg_pipeline_cue {
	size_t stage;
	const char *var;
};

struct xg_pipeline {
	struct xg_pipeline_stage *stages;
	size_t n, alloc;
	pid_t feeder;		/* the child writing the input, 0 when none */
	int out_fd;		/* the read end of the last stage's output when
				 * start was given XG_PIPELINE_CAPTURE, else -1 */
	struct xg_pipeline_cue cue;	/* var NULL: none */
	int cue_fd;		/* with XG_PIPELINE_CAPTURE and a cue: its read
				 * end, which sees the end of the pipe once the
				 * stage closes its end or ends; else -1 */
};

/* Passed as start's out_fd: the last stage writes to a pipe whose read end
 * is left in p->out_fd for the caller to read. */
#define XG_PIPELINE_CAPTURE (-2)

void xg_pipeline_init(struct xg_pipeline *p);
void xg_pipeline_release(struct xg_pipeline *p);
/* Adds a stage running path with argv (copied; argv[0] is the name shown
 * in messages and in the shell form). */
void xg_pipeline_add(struct xg_pipeline *p, const char *path, const char *const *argv);

/*
 * A cue from stage (its index in the order added) to the caller: a pipe
 * whose write end the stage is given, as the descriptor that the
 * environment variable var holds in its environment alone (the name is
 * kept, not copied), and whose read end the caller gets as cue_fd.  Only
 * with XG_PIPELINE_CAPTURE: without it there is no cue, and the stage gets
 * no variable.  A pipeline has one cue at most; it is not in the shell
 * form.
 */
void xg_pipeline_cue(struct xg_pipeline *p, size_t stage, const char *var);

/*
 * Starts every stage, feeding input[0..len) to the first.  The last stage's
 * output goes to out_fd (or a pipe, see XG_PIPELINE_CAPTURE).  Returns 0, or
 * -1 (reported) when a process cannot be made; then the stages already
 * started are ended and reaped.  A stage whose program cannot be executed
 * exits 70 with a message.
 */
int xg_pipeline_start(struct xg_pipeline *p, const char *input, size_t len, int out_fd);

/*
 * Waits for every stage and returns the last stage's exit status as a
 * shell gives it: its exit code, or 128+N when signal N ended it.
 */
int xg_pipeline_wait(struct xg_pipeline *p);

/* Appends word to b quoted for sh(1): as is when it holds only characters
 * no shell treats specially, else in single quotes.  The quoted form holds
 * neither '$' (which make(1) expands) nor '%' (which cron(8) turns into a
 * newline): inside the quotes each is written as the output of printf with
 * its octal escape, in backquotes, so the line can go in a Makefile or a
 * crontab as it is. */
void xg_shell_quote(struct xg_buf *b, const char *word);

/*
 * One program run alone for the records it writes, as xg-run runs the
 * xg-snapshot beside it: its standard input /dev/null, its standard output
 * read here, its standard error the caller's, nothing else of the
 * caller's open in it, no signal blocked; env is its whole environment.
 * While it runs *pid is its pid (0 once it has ended), for the caller's
 * signal handler to stop it, and a nonzero *stop set before the pid was
 * seen has it sent SIGTERM at once.  Returns 0 with *last the last record
 * of type it wrote (null when none; a record line that cannot be read ends
 * the reading, *err saying why) and *status its wait status; -1 with errno
 * when it could not be started.
 */
int xg_pipeline_capture(const char *prog, char *const argv[], char *const env[],
			const char *type, volatile pid_t *pid, volatile sig_atomic_t *stop,
			jv *last, int *status, char **err);

#endif
