#ifndef XG_RUN_INTERNAL_H
#define XG_RUN_INTERNAL_H
/*
 * Private to lib/run/: nothing outside the folder includes this header.
 * The state a run's files share: the run itself, its records, the gates and
 * the tools.
 */
#include <stdio.h>
#include "json.h"
#include "rec.h"
#include <signal.h>
#include <stdint.h>
#include <pthread.h>
#include "choices/choices.h"
#include "run/run.h"
#include "run/gate.h"
#include "run/tools.h"

/*
 * A run's records (man 5 xg-records): each record xg-run writes goes to
 * standard output and to $state/runs/ID/events.ndjson, flushed as it is
 * written; runs/ID/run.json is the run's summary, replaced atomically.
 *
 * The output keeps going after a write error on one side so the other still
 * gets every record; the error is remembered (exit 74 at the end).
 */

struct xg_run_out {
	struct xg_rec_writer out;	/* standard output */
	struct xg_rec_writer ev;	/* events.ndjson; fp NULL until opened */
	char *dir;			/* $state/runs/ID */
	int write_error;		/* standard output failed */
};

void xg_run_out_init(struct xg_run_out *o, FILE *fp);
/* Creates $state/runs/ID and opens its events.ndjson; -1 after a message. */
int xg_run_out_open(struct xg_run_out *o, const char *id);
void xg_run_out_release(struct xg_run_out *o);

/* Writes one record of the run (consumed) to both places. */
void xg_run_out_write(struct xg_run_out *o, jv rec);
/* Passes a record the run does not consume to standard output only. */
void xg_run_out_pass(struct xg_run_out *o, const struct xg_rec *rec);

/* Writes runs/ID/run.json (info consumed) atomically; -1 after a message. */
int xg_run_out_summary(struct xg_run_out *o, jv info);

/*
 * What the files of the agent loop share (loop.c, input.c, history.c,
 * summary.c); private to lib/run: the public entry is run/loop.h.
 *
 * struct run is one run's whole state.  loop.c drives it; input.c reads
 * the upstream records and takes a missing snapshot; history.c loads the
 * conversation so far and appends to it; summary.c writes the run's own
 * records (run_start, run_end) and runs/ID/run.json.
 */

struct xg_provider;
struct xg_gate;
struct run_input;

struct run {
	const struct xg_run_opts *o;
	struct xg_run_out out;
	int64_t t0;
	char started[25];
	char *id, *conv, *cwd;
	int conv_new;
	jv request, snapshot, model, pack;
	struct run_input *input;	/* standard input and the snapshot (input.c) */
	pthread_t warm_thread;		/* libcurl's set-up, started at once */
	int warm_running;
	pthread_t gate_thread;
	int gate_running;
	char *gate_err;
	jv pending;		/* the run's records until run_start is out */
	int begun;
	const char *mode;
	struct xg_choices choices;
	int have_catalog;
	struct xg_provider *prov;
	const char **env_drop;
	struct xg_gate *gate;
	struct xg_tool_procs procs;
	jv messages, tools;
	long long stable;	/* bytes of the system prompt that never change */
	long long in, cached, output;
	int calls, requests;
	char *reply;
	const char *status, *stop;
	char *reason;
	int rc;
};

static inline jv string_or_null(const char *s)
{
	return s ? jv_string(s) : jv_null();
}

/* loop.c */

/* Ends the run as failed with exit code rc; the reason also goes to stderr.
 * Returns rc. */
__attribute__((format(printf, 3, 4)))
int xg_run_fail(struct run *r, int rc, const char *fmt, ...);
/* Starts a thread that takes no SIGINT or SIGTERM, so they reach the main
 * thread (and interrupt what it waits on); 0 or -1. */
int xg_run_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
/* Writes one of the run's own records (consumed), held back until
 * run_start is out. */
void xg_run_emit(struct run *r, jv rec);

/* input.c: the upstream records */

/* Reads standard input (or takes the operand) until a request, a model and
 * a pack are held; 0 or fails the run. */
int xg_run_read_input(struct run *r);
/* Once the workspace is known: reads the rest of the input and takes a
 * missing snapshot, on a thread. */
void xg_run_start_input(struct run *r);
/* Joins that thread (or reads the rest now), passes the records read
 * meanwhile and fails the run if the rest was bad; returns r->rc.  Once
 * *stop is set it waits no more for standard input: a thread still
 * reading it is left behind, and the run goes on without its snapshot. */
int xg_run_join_input(struct run *r, volatile sig_atomic_t *stop);
/* Releases what the input holds (not a thread left behind). */
void xg_run_input_release(struct run *r);
/* For a signal handler: stops a snapshot being taken. */
void xg_run_input_abort(void);

/* history.c: the conversation */

/* Appends entry (consumed) to the conversation; 0 or fails the run. */
int xg_run_remember(struct run *r, jv entry);
/* The conversation's messages and tool results as provider messages, in
 * r->messages; 0 or fails the run. */
int xg_run_load_history(struct run *r);
/* Records a model other than the conversation's last; 0 or fails the run. */
int xg_run_note_model_change(struct run *r);
/* Adds a user message to the request, the conversation and the records;
 * kind may be NULL. */
int xg_run_add_user_message(struct run *r, const char *text, const char *kind);

/* summary.c: the run's own records */

/* {"input", "cached_input", "output"} */
jv xg_run_usage(long long in, long long cached, long long out);
void xg_run_write_start(struct run *r);
void xg_run_write_end(struct run *r);
/* runs/ID/run.json; ended is NULL while the run goes on. */
void xg_run_write_summary(struct run *r, const char *ended);

#endif
