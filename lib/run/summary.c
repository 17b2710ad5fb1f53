/*
 * What the run says of itself: its own records, run_start and run_end, the
 * summary in runs/ID/run.json, and the outcome they report.
 *
 * run_start is always the run's first record, and it names the snapshot,
 * which may still be coming when the run's first records are made: so
 * those are held back (xg_run_emit, out.c) until xg_run_write_start sends
 * run_start and then them.  A failure (xg_run_fail) is noted in the run
 * for run_end and run.json to report, and said on standard error at once.
 * The run's last run.json also goes to the runs index, as one line, or,
 * when the index cannot take it, to the run's live marker; and before its
 * first request the marker keeps the line as it stands then, for a run
 * killed before it wrote any run.json.
 */
#include "xg.h"
#include "run/internal.h"
#include "runindex.h"

int xg_run_fail(struct run *r, int rc, const char *fmt, ...)
{
	va_list ap;
	char msg[2048];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* run_end says it too; said once when xg shows the records. */
	if (!xg_prog_records_shown())
		fprintf(stderr, "%s: %s\n", xg_progname, msg);
	if (!r->reason)
		r->reason = xg_strdup(msg);
	r->status = "failed";
	r->rc = rc;
	return rc;
}

static jv snapshot_commit(const struct run *r)
{
	return string_or_null(xg_json_string_peek(r->snapshot, "commit"));
}

/* What run_start and run.json both say of the run: its conversation, the
 * model and effort, the prompt's variant and version, the snapshot, the
 * mode, the workspace and the sandbox in force (null before it is known). */
static jv what_ran(const struct run *r, jv v)
{
	v = xg_json_set(v, "conversation", string_or_null(r->conv));
	v = xg_json_set(v, "model", string_or_null(xg_json_string_peek(r->model, "id")));
	v = xg_json_set(v, "effort", string_or_null(xg_json_string_peek(r->model, "effort")));
	v = xg_json_set(v, "variant", string_or_null(xg_json_string_peek(r->pack, "variant")));
	v = xg_json_set(v, "version", string_or_null(xg_json_string_peek(r->pack, "version")));
	v = xg_json_set(v, "snapshot", snapshot_commit(r));
	v = xg_json_set(v, "mode", string_or_null(r->mode));
	v = xg_json_set(v, "cwd", string_or_null(r->cwd));
	v = xg_json_set(v, "sandbox", jv_is_valid(r->sandbox_rec) ? jv_copy(r->sandbox_rec)
								  : jv_null());
	return v;
}

void xg_run_write_start(struct run *r)
{
	jv v = xg_rec_new("run_start");

	v = xg_json_set(v, "schema", jv_string("xg/1"));
	v = xg_json_set(v, "run", jv_string(r->id));
	v = xg_json_set(v, "parent", string_or_null(r->o->parent));
	v = what_ran(r, v);
	xg_run_out_write(&r->out, v);
	xg_run_write_summary(r, NULL);
	r->begun = 1;
	jv_array_foreach(r->pending, i, rec) {
		(void)i;
		xg_run_out_write(&r->out, rec);
	}
	jv_free(r->pending);
	r->pending = jv_array();
}

jv xg_run_usage(long long in, long long cached, long long out)
{
	jv u = jv_object();

	u = xg_json_set(u, "input", jv_number((double)in));
	u = xg_json_set(u, "cached_input", jv_number((double)cached));
	return xg_json_set(u, "output", jv_number((double)out));
}

/* What the run's tokens cost, from the catalog's price of its model;
 * null when it has none. */
static jv run_cost(const struct run *r)
{
	const char *id = xg_json_string_peek(r->model, "id");
	double cost;

	if (!r->have_catalog || !id)
		return jv_null();
	cost = xg_catalog_cost_peek(xg_catalog_model_peek(&r->choices.cat, id), r->in, r->cached,
				    r->output);
	return cost < 0 ? jv_null() : jv_number(cost);
}

/* What the run was asked, for run.json and the runs index: the request's
 * text; a goal's hidden round says its objective instead of the hidden
 * continuation text, which is the variant's, not the person's. */
static jv what_was_asked(jv request)
{
	const char *objective = xg_json_string_peek(xg_json_get_peek(request, "goal"), "objective");
	const char *text = xg_json_string_peek(request, "text");
	bool hidden = false;

	xg_json_bool_peek(request, "hidden", &hidden);
	if (hidden && objective)
		return jv_string_fmt("goal: %s", objective);
	return text ? jv_string(text) : jv_null();
}

/*
 * Appends the run's line (consumed) to the runs index.  When it cannot
 * (a full disk, a lock held too long), the run's live marker keeps the
 * line in the room it was made with, so xg-log adds the line as the run
 * ended, not one made from a run.json that could not be written.
 */
static void index_line(struct run *r, jv line)
{
	jv kept = jv_copy(line);

	if (xg_runindex_append(line, r->out.live) == 0) {
		jv_free(kept);
		return;
	}
	if (r->out.live_fd < 0) {
		jv_free(kept);
		xg_warn("the run is not in the runs index yet; xg-log adds it");
	} else if (xg_runindex_live_keep(r->out.live_fd, kept, 1) == 0) {
		xg_warn("the run is not in the runs index yet; its live marker keeps its line, "
			"which xg-log adds");
	} else {
		xg_warn("the run is not in the runs index yet; xg-log adds it");
	}
}

/* What run.json says of the run, and its index line is made from: ended
 * is NULL while the run goes on. */
static jv summary_of(const struct run *r, const char *ended)
{
	jv v = jv_object();

	v = xg_json_set(v, "id", jv_string(r->id));
	v = xg_json_set(v, "parent", string_or_null(r->o->parent));
	v = xg_json_set(v, "profile", string_or_null(r->o->profile));
	v = what_ran(r, v);
	v = xg_json_set(v, "status", string_or_null(r->status));
	v = xg_json_set(v, "stop", string_or_null(r->stop));
	v = xg_json_set(v, "reason", string_or_null(r->reason));
	v = xg_json_set(v, "usage", xg_run_usage(r->in, r->cached, r->output));
	v = xg_json_set(v, "tool_calls", jv_number(r->calls));
	v = xg_json_set(v, "requests", jv_number(r->requests));
	v = xg_json_set(v, "slices", jv_number(r->slice.number ? r->slice.number : 1));
	v = xg_json_set(v, "started", jv_string(r->started));
	v = xg_json_set(v, "ended", string_or_null(ended));
	v = xg_json_set(v, "ms", ended ? jv_number((double)(xg_clock_ms() - r->t0)) : jv_null());
	/* A goal's round: the status and round xg-goal gave (it sets the
	 * status after the round once it has settled it). */
	if (jv_get_kind(xg_json_get_peek(r->request, "goal")) == JV_KIND_OBJECT)
		v = xg_json_set(v, "goal", jv_copy(xg_json_get_peek(r->request, "goal")));
	v = xg_json_set(v, "exit", ended ? jv_number(r->rc) : jv_null());
	v = xg_json_set(v, "cost", run_cost(r));
	v = xg_json_set(v, "account", string_or_null(r->account));
	v = xg_json_set(v, "request", what_was_asked(r->request));
	return xg_redact_jv(v);
}

/*
 * The run's first run.json waits for the first event of the first reply
 * (run_start names the snapshot, which may still be coming), so a run
 * killed while that request waits would leave xg-log nothing but its id.
 * Its live marker keeps its line as it stands before the request goes out
 * instead: the model, the workspace, the conversation and the request,
 * with no end.  No sync: a process killed keeps what it wrote, and the
 * first request is not held back for a disk.
 */
void xg_run_keep_start(struct run *r)
{
	jv v;

	if (r->out.live_fd < 0)
		return;
	v = summary_of(r, NULL);
	xg_runindex_live_keep(r->out.live_fd, xg_runindex_line_peek(v), 0);
	jv_free(v);
}

void xg_run_write_summary(struct run *r, const char *ended)
{
	jv v = summary_of(r, ended), line = jv_invalid();

	if (ended && r->out.dir)
		line = xg_runindex_line_peek(v);
	xg_run_out_summary(&r->out, v);
	/* After run.json, so a run killed in between is indexed from it. */
	if (jv_is_valid(line))
		index_line(r, line);
}

void xg_run_write_end(struct run *r)
{
	jv v = xg_rec_new("run_end");

	v = xg_json_set(v, "run", jv_string(r->id));
	v = xg_json_set(v, "conversation", string_or_null(r->conv));
	v = xg_json_set(v, "status", jv_string(r->status));
	if (r->stop)
		v = xg_json_set(v, "stop", jv_string(r->stop));
	if (r->reason)
		v = xg_json_set(v, "reason", jv_string(r->reason));
	if (r->provider_error && r->status && !strcmp(r->status, "failed"))
		v = xg_json_set(v, "provider_error", jv_string(r->provider_error));
	v = xg_json_set(v, "exit", jv_number(r->rc));
	v = xg_json_set(v, "reply", r->reply ? xg_json_string_bytes(r->reply, strlen(r->reply))
						: jv_null());
	v = xg_json_set(v, "usage", xg_run_usage(r->in, r->cached, r->output));
	v = xg_json_set(v, "tool_calls", jv_number(r->calls));
	v = xg_json_set(v, "requests", jv_number(r->requests));
	v = xg_json_set(v, "slices", jv_number(r->slice.number ? r->slice.number : 1));
	v = xg_json_set(v, "ms", jv_number((double)(xg_clock_ms() - r->t0)));
	{
		jv cost = run_cost(r);

		if (jv_get_kind(cost) == JV_KIND_NUMBER)
			v = xg_json_set(v, "cost", cost);
		else
			jv_free(cost);
	}
	xg_run_out_write(&r->out, v);
}
