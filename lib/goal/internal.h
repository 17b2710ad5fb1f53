#ifndef XG_GOAL_INTERNAL_H
#define XG_GOAL_INTERNAL_H
/*
 * Private to lib/goal/: nothing outside the folder includes this header.
 * What drive.c and verbs.c share with round.c: one round, as xg-run ran it.
 *
 * The files, top down: a file calls only files below it.
 *
 *   verbs.c      xg-goal's verbs: set, get, edit, pause, resume, clear
 *   drive.c      rounds on a goal until it settles, the brakes and caps
 *   round.c      one round: xg-run started on the conversation, its records
 *   tools.c      the goal as a run sees it: its tools, the completion check
 *   state.c      a goal's state, read from and written to its conversation
 *   transcript.c the rounds as text for the completion check
 */
#include "goal/goal.h"
#include "rec.h"

/* One round: what it was given, and what its records said. */
struct goal_round {
	/* In. */
	const char *text;	/* the hidden user message */
	const char *kind;	/* its kind: goal-continuation, ... */
	long long number;	/* the round's number, from 1 */
	const char *status;	/* the goal's status as it starts */
	const char *objective;	/* for the run's record of what it was asked */
	/* Out. */
	char *run;		/* the run's id, from run_start; NULL when none came */
	jv run_end;		/* held back for the drive to settle (owned), null */
	jv check;		/* the goal_check record (owned), null */
	int work_ok, work_failed;	/* tool calls that succeeded, failed */
	char *blocker;		/* the newest update_goal blocked, or NULL */
	int blocked;		/* and it was accepted */
	int exit;		/* xg-run's exit status */
	int signal;		/* the signal that came during the round, 0 */
	double secs;		/* how long it took */
};

void xg_goal_round_release(struct goal_round *rd);

/* Runs xg-run on conv with rd's text as a hidden request, passing its
 * records to w except run_end; 0, or an exit code when xg-run could not be
 * started (reported). */
int xg_goal_round_run(const struct xg_goal_opts *o, const char *conv, struct goal_round *rd,
		      struct xg_rec_writer *w);

/* The signals of a drive: SIGINT, SIGTERM and SIGHUP are noted (the first
 * one, returned by xg_goal_signal) and passed on to the round's xg-run
 * unless a terminal sent them to the whole group. */
void xg_goal_signals_catch(void);
void xg_goal_signals_release(void);
int xg_goal_signal(void);

/* The text of template name in the variant the conversation runs (or
 * o->variant), owned; NULL when it has none. */
char *xg_goal_template(const struct xg_goal_opts *o, const char *conv, const char *name);

#endif
