#ifndef XG_RUN_RUN_H
#define XG_RUN_RUN_H
/*
 * The agent loop of xg-run (design.md sections 2 to 4, B6, B9; man 1
 * xg-run).
 *
 * A run reads the upstream records (request, snapshot, model, pack),
 * computes those that are missing with the upstream programs' own library
 * calls, and then: sends the pack's system prompt, the conversation so far
 * and the request; streams the reply; runs the tool calls it asks for, in
 * order, through the gates; sends their results; and repeats until a reply
 * asks for no tool.  Every request is the previous one plus new items, so a
 * provider's prefix cache keeps hitting.
 *
 * The steps of a request are kept apart (build, stream, settle) so work
 * slices, compaction, the stall watch and goals can be added around them.
 *
 * run_start is always the run's first record and run_end its last, even
 * when it fails before its first request.
 */
#include <stdio.h>

struct xg_run_opts {
	const char *text;		/* the request operand; NULL: read records */
	const char *conversation;	/* --conversation */
	const char *model;		/* --model */
	const char *effort;		/* --effort */
	const char *account;		/* --account */
	const char *variant;		/* --variant */
	const char *mode;		/* --mode */
	const char *ask;		/* --ask */
	const char *gate;		/* --gate */
	const char *work_slice;		/* --work-slice: the slice policy */
	const char *profile;		/* --profile: the tools offered */
	const char *parent;		/* --parent: the run that started this one */
	const char *run_id;		/* --run-id: this run's id, new */
	const char *sandbox;		/* --sandbox: "on", "net", "off"; NULL: unset */
	int stream;			/* --stream: text records */
	int verbose;			/* -v */
	int read_stdin;			/* read records from standard input */
	int compact;			/* --compact: compact the conversation, no request */
};

/* Runs the loop, writing records to out; returns the exit code. */
int xg_run(const struct xg_run_opts *o, FILE *out);
/* xg-run --settings: the policies a run would follow and where each came
 * from, written to out (a table when it is a terminal); runs nothing and
 * returns 0. */
int xg_run_settings(const struct xg_run_opts *o, FILE *out);

#endif
