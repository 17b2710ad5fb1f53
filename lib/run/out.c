/*
 * A run's records, to standard output and to the run's directory
 * (events.ndjson: its own records, and the notices it passes on, each
 * appended whole or not at all).  A record is written under the output's
 * lock: the stall watch's thread writes too.  xg_run_emit, the one way the run's own records go out,
 * also tells the watch that something happened.
 */
#include "xg.h"
#include "run/internal.h"
#include "runindex.h"

void xg_run_out_init(struct xg_run_out *o, FILE *fp)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->lock, NULL);
	o->live_fd = -1;
	o->ev_fd = -1;
	xg_buf_init(&o->ev_line, 0);
	xg_rec_writer_init(&o->out, fp);
}

int xg_run_out_open(struct xg_run_out *o, const char *id)
{
	char *rel = xg_path_join("runs", id), *path;

	o->dir = xg_path_state(rel);
	free(rel);
	/* A run's records hold prompts, tool output and file contents: only
	 * their owner reads them, as with conversations. */
	if (xg_mkdir_p(o->dir, 0700) < 0)
		goto fail;
	path = xg_path_join(o->dir, "events.ndjson");
	o->ev_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (o->ev_fd < 0) {
		xg_error_errno("cannot open '%s'", path);
		free(path);
		goto fail;
	}
	free(path);
	/* Held until the run's line is in the index: a run killed before
	 * then is found by it (runindex.h). */
	o->live_fd = xg_runindex_live_open(id);
	if (o->live_fd >= 0)
		o->live = xg_runindex_live_path(id);
	return 0;
fail:
	/* No folder, no run.json and no index line: the records still go to
	 * standard output, and the one error above says why. */
	free(o->dir);
	o->dir = NULL;
	return -1;
}

void xg_run_out_release(struct xg_run_out *o)
{
	if (o->ev_fd >= 0 && close(o->ev_fd) < 0)
		xg_warn("cannot append to '%s/events.ndjson': %s", o->dir, strerror(errno));
	o->ev_fd = -1;
	xg_buf_release(&o->ev_line);
	xg_rec_writer_release(&o->out);
	pthread_mutex_destroy(&o->lock);
	if (o->live_fd >= 0)
		close(o->live_fd);
	o->live_fd = -1;
	free(o->live);
	o->live = NULL;
	free(o->dir);
	o->dir = NULL;
}

/*
 * Appends the line in o->ev_line to events.ndjson, each record a write of
 * its own, so a crash keeps every record written before it.  The first
 * append that fails (taken back whole) is the last: the file stays the
 * run's records up to then, with no gap a reader could not see, and a
 * parent following it (child.c) never joins a part it read before it was
 * taken back to a record written after.
 */
static void events_append(struct xg_run_out *o)
{
	xg_buf_addch(&o->ev_line, '\n');
	if (xg_append_fd(o->ev_fd, o->ev_line.buf, o->ev_line.len, 0) < 0) {
		xg_warn("cannot append to '%s/events.ndjson': %s; the run's records go on to "
			"standard output only", o->dir, strerror(errno));
		close(o->ev_fd);
		o->ev_fd = -1;
	}
}

void xg_run_out_write(struct xg_run_out *o, jv rec)
{
	rec = xg_redact_jv(rec);
	pthread_mutex_lock(&o->lock);
	if (o->ev_fd >= 0) {
		xg_buf_reset(&o->ev_line);
		xg_json_dump(&o->ev_line, jv_copy(rec));
		events_append(o);
	}
	if (xg_rec_write(&o->out, rec) < 0)
		o->write_error = 1;
	pthread_mutex_unlock(&o->lock);
}

void xg_run_out_pass(struct xg_run_out *o, const struct xg_rec *rec)
{
	pthread_mutex_lock(&o->lock);
	/* A notice an upstream stage wrote is the person's to read again
	 * (xg-log show), so the run's events keep it too. */
	if (rec->type && !strcmp(rec->type, "notice") && o->ev_fd >= 0) {
		xg_buf_reset(&o->ev_line);
		xg_json_dump(&o->ev_line, xg_redact_jv(jv_copy(rec->v)));
		events_append(o);
	}
	if (xg_rec_pass(&o->out, rec) < 0)
		o->write_error = 1;
	pthread_mutex_unlock(&o->lock);
}

int xg_run_out_summary(struct xg_run_out *o, jv info)
{
	struct xg_buf b = XG_BUF_INIT(0);
	char *path;
	int rc;

	if (!o->dir) {
		jv_free(info);
		return 0;
	}
	xg_json_dump(&b, info);
	xg_buf_addch(&b, '\n');
	path = xg_path_join(o->dir, "run.json");
	rc = xg_write_atomic(path, b.buf, b.len, 0600);
	free(path);
	xg_buf_release(&b);
	return rc;
}

/* ---- the run's own records, each an event of the watch's clock ---- */

void xg_run_watch_event(struct run *r)
{
	struct run_watch *w = &r->watch;

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->last_event = xg_clock_ms();
	w->heard = 1;
	w->retry_at = 0;
	pthread_mutex_unlock(&w->lock);
}

void xg_run_emit(struct run *r, jv rec)
{
	const char *type = xg_json_string_peek(rec, "type");

	/* Every record of the run but a heartbeat is an event of its clock. */
	if (!type || strcmp(type, "heartbeat"))
		xg_run_watch_event(r);
	if (r->begun)
		xg_run_out_write(&r->out, rec);
	else
		r->pending = jv_array_append(r->pending, rec);
}
