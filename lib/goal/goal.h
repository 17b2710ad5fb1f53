#ifndef XG_GOAL_GOAL_H
#define XG_GOAL_GOAL_H
/*
 * The goal subsystem, xg_goal_: a person's long-running objective on a
 * conversation (design.md B7 and section 10; man 1 xg-goal).  Its one
 * public header.
 *
 *   state.c       the goal read from the conversation's goal entries, and
 *                 a new entry appended only when no other writer came first
 *   transcript.c  the goal's rounds as text, for the completion check
 *   tools.c       the goal as a run sees it: get_goal and update_goal, and
 *                 the completion check's question and its answer read
 *   round.c       one round: the request, xg-run started and its records read
 *   drive.c       the rounds until the goal settles, the brakes and the caps
 *   verbs.c       xg-goal's verbs: set, get, edit, pause, resume, clear
 *
 * State lives in the conversation, nowhere else: every change is a goal
 * entry holding the whole state after it,
 *
 *   {"type":"goal","event":E,"objective":..,"status":..,"rounds":N,
 *    "elapsed_s":S,"limits":{"rounds":N,"hours":H}, ...}
 *
 * with E one of set, edit, pause, resume, clear, status, round.  The goal
 * is what the entries since the newest "set" say; a "clear" ends it.  A
 * driver (the process running the rounds) holds ID.goal.lock beside the
 * conversation, so a goal whose entries say "active" while no process holds
 * that lock has lost its driver and is shown as paused.
 *
 * Functions return 0 or an XG_EX_* code after reporting, as a subsystem's
 * do; xg_goal_load reads, the others also write.
 */
#include <stdio.h>
#include "json.h"

#define XG_GOAL_OBJECTIVE_MAX 4000	/* characters (code points) */
#define XG_GOAL_ROUNDS_DEFAULT 30
#define XG_GOAL_HOURS_DEFAULT 8.0
/* Rounds in a row without activity, or with only failed commands, and the
 * rounds in a row one blocker must be reported in, before blocked. */
#define XG_GOAL_BRAKE_ROUNDS 3

/* The six states; "paused" is also how an undriven active goal shows. */
#define XG_GOAL_STATES "active paused blocked usage_limited budget_limited complete"

struct xg_goal_opts;

struct xg_goal {
	int exists;		/* a goal is set and not cleared */
	char *objective;
	char status[16];	/* as the entries say */
	long long rounds;	/* rounds run, the wrap-up included */
	double elapsed_s;	/* time the rounds took */
	long long max_rounds;
	double max_hours;
	int idle_streak;	/* the newest rounds in a row with no tool call */
	int failed_streak;	/* ... whose every call failed */
	char *blocker;		/* the blocker the newest round reported, or NULL */
	int blocker_streak;	/* rounds in a row that reported it */
	int edited;		/* edited since the last round */
	char *review;		/* the reason a claim was not accepted in the last
				 * round, for the next one; or NULL */
	int wrapped;		/* the wrap-up round after the cap has run */
	/* What the person gave the goal's runs, kept for every round and
	 * resume until they give another (NULL: xg-run decides). */
	char *model, *effort, *account, *variant;
	jv last;		/* the newest goal entry (owned); null when none */
};

/* Reads the conversation's goal into *g (released by xg_goal_release); a
 * conversation that does not exist has none.  0, or an exit code with *g
 * left empty. */
int xg_goal_load(const char *conv, struct xg_goal *g);
void xg_goal_release(struct xg_goal *g);
/* The run options the person gave (NULL fields left as they were) kept in
 * g; and forgotten, for a new goal. */
void xg_goal_take_opts(struct xg_goal *g, const struct xg_goal_opts *o);
void xg_goal_release_run(struct xg_goal *g);
/* The options a round runs with: o's, and where o gives none, the goal's. */
struct xg_goal_opts xg_goal_opts_for_round(const struct xg_goal_opts *o,
					   const struct xg_goal *g);

/* Whether a blocker reported now is the one the newest round reported. */
int xg_goal_same_blocker(const struct xg_goal *g, const char *blocker);

/* A new goal entry (owned) holding g's state, for event. */
jv xg_goal_entry(const struct xg_goal *g, const char *event);

/*
 * Appends entry (consumed) when the conversation's newest goal entry is
 * still g->last, checked under the conversation's lock.  0 when appended,
 * -1 when another writer came first (reload and decide again), else an
 * exit code (75 for a lock not had in time).
 */
int xg_goal_commit(const char *conv, const struct xg_goal *g, jv entry);

/* The goal record (owned) of entry, as xg-goal writes it: the entry with
 * the conversation's id and without "at". */
jv xg_goal_record(const char *conv, jv entry);

/* The process driving conv's goal (holding its lock), 0 when none. */
long xg_goal_driver(const char *conv);
/* Takes the driver's lock, waiting at most XG_LOCK_TIMEOUT: the
 * descriptor, or -1 after a message naming the holder (errno EWOULDBLOCK:
 * exit 75). */
int xg_goal_lock(const char *conv);

/*
 * What is wrong with an objective, NULL when nothing is: it must not be
 * empty, at most XG_GOAL_OBJECTIVE_MAX characters, valid UTF-8, no NUL.
 */
const char *xg_goal_objective_problem(const char *objective);

/*
 * The goal's rounds as text for the completion check (owned): the
 * conversation's messages and tool calls since the goal was set, hidden
 * messages left out, each clipped, and only the newest when all of it
 * would pass max bytes.
 */
char *xg_goal_transcript(const char *conv, size_t max);

/* The goal's todo list as the check reads it, a line an item ("[x] ",
 * "[~] " or "[ ] " and the item, as xg_prompt_todo_text makes it), from
 * the newest todo_write call that
 * succeeded since the goal was set; NULL when there is none. */
char *xg_goal_todo(const char *conv);

/* ---- inside a run (tools.c) ---- */

/* The table entries of get_goal and update_goal, an array (new). */
jv xg_goal_tool_schemas(void);
/* Whether name is one of them. */
int xg_goal_tool(const char *name);
/*
 * Runs get_goal or update_goal on conv's goal (args consumed) in round
 * (the request's goal round, 0 when it has none) and returns the tool's
 * result; a "complete" claim's evidence replaces *claim (owned), which
 * the caller keeps for the completion check.
 */
jv xg_goal_tool_call(const char *conv, long long round, const char *name, jv args,
		       char **claim);
/* The completion check's request for model (the run's model record, only
 * looked at), with system as its system prompt: conv's objective, the
 * claim, the todo list when one was written and a clipped transcript of
 * the goal's rounds. */
jv xg_goal_check_request_peek(const char *conv, jv model, const char *system,
				const char *claim);
/* The answer read strictly: one line, "done: REASON" or "continue:
 * REASON", a reason not empty; 0 with *verdict and *reason (owned), or -1
 * when it is not so. */
int xg_goal_check_answer(const char *s, const char **verdict, char **reason);

/* ---- driving ---- */

/* What xg-goal was asked, for the verbs. */
struct xg_goal_opts {
	const char *conversation;	/* NULL: a new one (set), the newest here */
	const char *objective;
	long long rounds;		/* 0: unchanged (default on set) */
	double hours;			/* 0: unchanged (default on set) */
	int replace, no_run;
	int json;			/* get: the record even on a terminal */
	/* Passed to xg-run. */
	const char *model, *effort, *account, *variant, *ask, *gate, *work_slice;
	int stream, verbose;
};

/* The verbs; each writes its goal records to out and returns the exit
 * status (the drive's for set and resume). */
int xg_goal_set(const struct xg_goal_opts *o, FILE *out);
int xg_goal_get(const struct xg_goal_opts *o, FILE *out);
int xg_goal_edit(const struct xg_goal_opts *o, FILE *out);
int xg_goal_pause(const struct xg_goal_opts *o, FILE *out);
int xg_goal_resume(const struct xg_goal_opts *o, FILE *out);
int xg_goal_clear(const struct xg_goal_opts *o, FILE *out);

/* Runs rounds on conv's goal until it settles, holding the driver's lock
 * fd (closed here); the exit status. */
int xg_goal_drive(const struct xg_goal_opts *o, const char *conv, int lock, FILE *out);

#endif
