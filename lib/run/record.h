#ifndef XG_RUN_RECORD_H
#define XG_RUN_RECORD_H
/*
 * A run's records (man 5 xg-records): each record xg-run writes goes to
 * standard output and to $state/runs/ID/events.ndjson, flushed as it is
 * written; runs/ID/run.json is the run's summary, replaced atomically.
 *
 * The output keeps going after a write error on one side so the other still
 * gets every record; the error is remembered (exit 74 at the end).
 */
#include <stdio.h>
#include "json.h"
#include "rec.h"

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

#endif
