#ifndef XG_LOG_LOG_H
#define XG_LOG_LOG_H
/*
 * The log subsystem, xg_log_: the runs index and its queries (xg-log(1),
 * design.md sections 2 and 4).  Its one public header.
 *
 *   index.c          reading runs.ndjson from its end; live and killed runs
 *   when.c           the times of --since and --before, and how rows say them
 *   list.c           the list of runs, one row each
 *   show.c           one run again, rendered as xg rendered it; its diff
 *   usage.c          tokens and cost, summed
 *   conversations.c  the conversations, one row each
 *   prune.c          deleting old runs on request
 *
 * Every function returns 0 or an XG_EX_* code after reporting.
 */
#include <stdio.h>

struct xg_log_opts {
	long max;		/* -n: at most this many rows; 0 for all */
	const char *since;	/* --since WHEN */
	const char *before;	/* --before WHEN */
	const char *status;	/* --status: a status, or a stop */
	const char *workspace;	/* --workspace DIR ("." for here) */
	const char *conversation;	/* --conversation ID */
	const char *by;		/* usage --by: model, day, account, workspace */
	int json;		/* --json: records, not rows */
	int verbose;		/* -v */
	int dry_run;		/* prune --dry-run */
	int worktree;		/* diff --worktree */
};

/* The default of -n. */
#define XG_LOG_DEFAULT_MAX 20

int xg_log_list(const struct xg_log_opts *o, FILE *out);
int xg_log_show(const struct xg_log_opts *o, const char *run, FILE *out);
/* Runs git diff with args (argc of them) after the two trees. */
int xg_log_diff(const struct xg_log_opts *o, const char *run, int argc, char **argv);
int xg_log_usage(const struct xg_log_opts *o, FILE *out);
int xg_log_conversations(const struct xg_log_opts *o, FILE *out);
int xg_log_prune(const struct xg_log_opts *o, FILE *out);

/*
 * A time of --since or --before: "7d", "12h", "30m", "2w" (that long
 * ago), a date "2026-11-30" (its local midnight), or a time
 * "2026-11-30T10:00" (local) or RFC 3339 with an offset.  0 and *ms set,
 * or -1 when it is none of them.
 */
int xg_log_parse_when(const char *s, int64_t now_ms, int64_t *ms);

#endif
