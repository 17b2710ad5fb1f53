#ifndef XG_LOG_INTERNAL_H
#define XG_LOG_INTERNAL_H
/*
 * Private to lib/log/: nothing outside the folder includes this header.
 *
 * The index is read through a map of its whole lines (a torn last line is
 * left out, and said once, as is any other line that is not a record); a
 * scan visits the lines from the newest to the oldest, so "the last 20"
 * costs what 20 lines cost.  Before any read, runs killed before their end
 * get their line (index.c), and runs still going are visited first, marked
 * "running", with the killed runs whose line the index would not take.
 *
 * The files, top down: a file calls only files below it.
 *
 *   conversations.c
 *               the conversations, one row each
 *   list.c      the runs that pass the filter, newest first
 *   prune.c     deleting runs on request
 *   show.c      one run again: its records, its diff
 *   usage.c     the tokens summed, in all or by a key
 *   index.c     the runs index as it is read, its lines completed first
 *   when.c      times, filters, and how a row writes them
 */
#include <stdint.h>
#include <stdio.h>
#include "json.h"
#include "log/log.h"

struct log_index {
	char *path;
	char *map;		/* the file, or NULL when it is empty or missing */
	size_t size;		/* its bytes of whole lines */
	size_t mapped;
	int torn;		/* it ended in a torn line, left out */
	int bad;		/* lines that were not records, left out */
	int unwritten;		/* killed runs' lines the index would not take
				   (listed from running all the same) */
	jv seen;		/* run ids visited, so a line written twice counts once */
	jv running;		/* the lines of the runs still going */
	char *needle;		/* when set, only lines holding it are parsed (and
				   only those are checked to be records) */
};

/* What a scan is given: each line (borrowed); nonzero stops the scan. */
typedef int (*log_visit_fn)(jv line, void *ctx);

/* Finds and indexes killed runs, then maps the index.  0 or an exit code
 * after reporting. */
int xg_log_index_open(struct log_index *ix);
void xg_log_index_close(struct log_index *ix);
/* Visits the runs still going (with running set: 1 before the index) and
 * then the index's lines, newest first.  Returns what visit returned, 0
 * at the end. */
int xg_log_index_scan(struct log_index *ix, int running, log_visit_fn visit, void *ctx);
/* The exit status the index calls for: 74 when a killed run's line could
 * not be appended to it, else 0 (a line that is not a record is named and
 * left out, and fails nothing). */
int xg_log_index_status(const struct log_index *ix);

/* A filter from the options: --since, --before, --status, --workspace,
 * --conversation.  0, or 2 after a usage message. */
struct log_filter {
	int64_t since, before;	/* epoch ms; 0 for none */
	const char *status;
	char *workspace;	/* its real path */
	const char *conversation;
};
int xg_log_filter_init(struct log_filter *f, const struct xg_log_opts *o);
/* A string every line the filter passes holds, as JSON writes it, for a
 * scan to skip the others unparsed; NULL when there is none.  The caller
 * frees it. */
char *xg_log_filter_needle(const struct log_filter *f);
void xg_log_filter_release(struct log_filter *f);
/* Whether line passes. */
int xg_log_filter_peek(const struct log_filter *f, jv line);
/* Whether dir is ws or under it. */
int xg_log_under(const char *dir, const char *ws);

/* A line's started time, epoch ms; -1 when it has none. */
int64_t xg_log_started_peek(jv line);
/* "2026-11-30 10:56", local, into out (17 bytes). */
void xg_log_local_time(int64_t ms, char out[17]);
/* A path with $HOME written "~" (the caller frees it). */
char *xg_log_short_path(const char *path);
/* 1234 -> "1234", 12345 -> "12.3k", 1234567 -> "1.2M". */
void xg_log_count(long long n, char out[24]);

/* The run that word names: a whole id, or a prefix or suffix of exactly
 * one run's; the caller frees it.  NULL after reporting, *rc the code. */
char *xg_log_find_run(const char *word, int *rc);
/* Whether the run goes on: its live marker is held. */
int xg_log_run_live(const char *id);
/* runs/ID/run.json (owned), jv_null() when it is missing. */
jv xg_log_run_json(const char *id);

#endif
