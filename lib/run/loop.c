/*
 * The agent loop (man 1 xg-run): xg_run prepares the run (prepare.c), then
 * goes round: one provider call (call.c), the tool calls the reply asks
 * for, each through the gates and into the next request and the
 * conversation, with what the person sent meanwhile (steer.c), and again,
 * until a reply asks for no tool and no message came.  Then the run
 * ends: completed; unfinished, when the reply hit the model's output
 * limit; or, in plan mode, after one repair request when the reply could
 * not be read as a plan.  A failure anywhere, or a signal, ends it too, and
 * every way out goes through the same last steps: run_start if it is not
 * out yet, then run_end and the final run.json.
 *
 * This file is the top of the run (internal.h shows the layers): it calls
 * prepare.c, call.c and the parts beneath them, and nothing calls back up
 * into it.
 */
#include "xg.h"
#include "run/internal.h"
#include <malloc.h>
#include "provider/provider.h"
#include "choices/choices.h"
#include "plan/plan.h"
#include "prompt/prompt.h"

/* ---- one tool call ---- */

static jv refusal(const char *why)
{
	jv res = jv_object();

	res = xg_json_set(res, "ok", jv_false());
	res = xg_json_set(res, "output", jv_string(why));
	return xg_json_set(res, "refused", jv_true());
}

/* Whether the gates let the call run (args consumed); null, or the
 * refusal's result. */
static jv gate_call(struct run *r, const char *id, const char *name, jv args)
{
	char *reason = NULL, *why;
	jv res;

	if (!strcmp(r->mode, "plan") &&
	    !xg_gate_plan_check(xg_gate_call(id, name, jv_copy(args)), &reason))
		goto refused;
	if (r->gate && !xg_gate_check(r->gate, xg_gate_call(id, name, jv_copy(args)), &reason))
		goto refused;
	jv_free(args);
	return jv_null();
refused:
	jv_free(args);
	why = xg_asprintf("refused: %s; nothing was run", reason ? reason : XG_GATE_DEFAULT_REASON);
	res = refusal(why);
	free(why);
	free(reason);
	return res;
}

/* The call's result (args consumed): a refusal, or what the tool gave. */
static jv call_result(struct run *r, int bad_args, const char *id, const char *name, jv args)
{
	struct xg_tool_ctx ctx = { 0 };
	jv res;

	if (bad_args) {
		jv_free(args);
		return refusal("the arguments were not a JSON object; nothing was run");
	}
	if (r->signal) {
		jv_free(args);
		return refusal("not run: the run was interrupted");
	}
	if (xg_run_slice_refusing(r)) {
		jv_free(args);
		return refusal("refused: the work slice has ended; report, and call no tool");
	}
	if (!xg_tool_profile_allows(r->o->profile, name, r->sandbox.bwrap != NULL) ||
	    (xg_run_subagent_tool(name) && (r->o->parent || r->o->profile))) {
		jv_free(args);
		return refusal("refused: this run's profile does not offer that tool; nothing was run");
	}
	res = gate_call(r, id, name, jv_copy(args));
	if (jv_get_kind(res) != JV_KIND_NULL) {
		jv_free(args);
		return res;
	}
	ctx.workspace = r->cwd;
	ctx.run_dir = r->out.dir;
	ctx.call_id = id;
	ctx.ask_command = r->o->ask;
	ctx.env_drop = r->env_drop;
	ctx.abort = &r->signal;
	ctx.procs = &r->procs;
	ctx.sandbox = &r->sandbox;
	if (xg_run_goal_tool(r, name))
		return xg_run_goal_call(r, name, args);
	if (!strcmp(name, "spawn_subagent"))
		return xg_run_subagent_spawn(r, args);
	if (!strcmp(name, "wait_subagents"))
		return xg_run_subagent_wait(r, args);
	return xg_tool_run(&ctx, name, args);
}

/* The result (consumed) into the records, the next request and the
 * conversation. */
static int keep_result(struct run *r, const char *id, const char *name, jv res, int64_t t0)
{
	jv rec, m, e;

	/* A key a command printed or a file held goes no further. */
	res = xg_redact_jv(res);
	if (!strcmp(name, "todo_write") && jv_get_kind(xg_json_get_peek(res, "items")) == JV_KIND_ARRAY) {
		rec = xg_rec_new("todo");
		xg_run_emit(r, xg_json_set(rec, "items", jv_copy(xg_json_get_peek(res, "items"))));
	}
	rec = xg_rec_new("tool_result");
	rec = xg_json_set(rec, "id", jv_string(id));
	rec = xg_json_set(rec, "name", jv_string(name));
	rec = jv_object_merge(rec, jv_copy(res));
	xg_run_emit(r, xg_json_set(rec, "ms", jv_number((double)(xg_clock_ms() - t0))));

	m = jv_object();
	m = xg_json_set(m, "role", jv_string("tool"));
	m = xg_json_set(m, "id", jv_string(id));
	m = xg_json_set(m, "name", jv_string(name));
	m = xg_json_set(m, "output", jv_copy(xg_json_get_peek(res, "output")));
	m = xg_json_set(m, "ok", jv_copy(xg_json_get_peek(res, "ok")));
	r->messages = jv_array_append(r->messages, m);
	e = xg_rec_new("tool_result");
	e = xg_json_set(e, "id", jv_string(id));
	e = xg_json_set(e, "name", jv_string(name));
	e = xg_json_set(e, "ok", jv_copy(xg_json_get_peek(res, "ok")));
	e = xg_json_set(e, "output", jv_copy(xg_json_get_peek(res, "output")));
	jv_free(res);
	return xg_run_remember(r, e);
}

/* One tool call (consumed): its record, the gates, the tool, its result. */
static int run_call(struct run *r, jv call)
{
	const char *id = xg_json_string_peek(call, "id");
	const char *name = xg_json_string_peek(call, "name");
	jv args = jv_copy(xg_json_get_peek(call, "args")), rec, res;
	int64_t t0 = xg_clock_ms();
	int rc;

	if (!id)
		id = "";
	if (!name)
		name = "";
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		args = jv_object();
	}
	rec = xg_rec_new("tool_call");
	rec = xg_json_set(rec, "id", jv_string(id));
	rec = xg_json_set(rec, "name", jv_string(name));
	xg_run_emit(r, xg_json_set(rec, "args", jv_copy(args)));
	r->calls++;
	xg_run_watch_tool_begin(r, id, name, args);
	res = call_result(r, jv_is_valid(xg_json_get_peek(call, "bad_args")), id, name, jv_copy(args));
	xg_run_watch_tool_end(r, id);
	xg_run_slice_note_peek(r, name, args, res);
	jv_free(args);
	rc = keep_result(r, id, name, res, t0);
	jv_free(call);
	return rc;
}

/* ---- plan mode ---- */

/*
 * Classifies the settled reply and writes the plan record.  Returns 1 when
 * it is invalid (worth the one repair), with *problems the problems'
 * messages joined for the template.
 */
static int classify_plan(struct run *r, char **problems)
{
	struct xg_plan_result pr;
	struct xg_buf b = XG_BUF_INIT(0);
	const char *reply = r->reply ? r->reply : "";
	size_t i;
	int invalid;

	if (xg_plan_classify(reply, strlen(reply), &pr) < 0) {
		xg_run_fail(r, XG_EX_SOFTWARE, "cannot classify the plan reply");
		return -1;
	}
	xg_run_emit(r, xg_plan_record(&pr));
	invalid = pr.outcome == XG_PLAN_INVALID;
	for (i = 0; invalid && i < pr.nproblems; i++)
		xg_buf_addf(&b, "%s%s", i ? "; " : "", pr.problems[i].message);
	/* The template puts its own full stop after the list. */
	while (b.len && (b.buf[b.len - 1] == '.' || isspace((unsigned char)b.buf[b.len - 1])))
		xg_buf_setlen(&b, b.len - 1);
	*problems = xg_buf_detach(&b, NULL);
	xg_plan_result_release(&pr);
	return invalid;
}

/* The message that asks for the repair: the pack's plan-repair template,
 * or words of our own when the pack has none. */
static char *repair_text(const struct run *r, const char *problems)
{
	jv tmpl = xg_json_get_peek(xg_json_get_peek(r->pack, "templates"), "plan-repair");
	jv vars = jv_object();
	char *out;

	/* The classifier's words, not a person's data: they go in as written. */
	vars = xg_json_set(vars, "problems", jv_string(problems));
	if (jv_get_kind(tmpl) == JV_KIND_STRING)
		out = xg_prompt_render_peek(jv_string_value(tmpl),
				       (size_t)jv_string_length_bytes(jv_copy(tmpl)), vars);
	else
		out = xg_asprintf("Your last reply in plan mode could not be read as written: %s. "
				  "End it again with exactly one complete <proposed_plan> or "
				  "<plan_blocked> block, or with plain prose if there is nothing "
				  "to plan.", problems);
	jv_free(vars);
	return out;
}

/* ---- the rounds, and how they end ---- */

/*
 * A reply that asks for no tool ends the run: completed, or unfinished
 * when it reached the model's output limit.  In plan mode a reply that
 * cannot be read as a plan gets one repair first: 1 when that request is
 * added and the loop goes on, 0 when the run has ended.  A repair that is
 * again unreadable is not asked for again (ADR-0077: one bounded attempt):
 * the run is completed, since the model ended it, but exits 1, since no
 * plan came of it, with the problems as its reason.
 */
static int end_or_repair(struct run *r, const struct turn *t, int *repaired)
{
	char *problems = NULL, *text;
	int rc;

	if (!strcmp(t->finish, "length")) {
		r->status = "interrupted";
		r->stop = "unfinished";
		r->reason = xg_strdup("the reply reached the model's output limit");
		r->rc = XG_EX_FAIL;
		return 0;
	}
	if (!strcmp(r->mode, "plan")) {
		rc = classify_plan(r, &problems);
		if (rc == 1 && !*repaired && !r->signal) {
			*repaired = 1;
			text = repair_text(r, problems);
			free(problems);
			rc = xg_run_add_user_message(r, text, "plan-repair");
			free(text);
			return rc == 0;
		}
		if (rc == 1) {
			r->status = "completed";
			r->reason = xg_asprintf("the reply could not be read as a plan, even after "
						"its repair: %s", problems);
			r->rc = XG_EX_FAIL;
		}
		free(problems);
		if (rc != 0)
			return 0;
	}
	r->status = "completed";
	r->rc = 0;
	return 0;
}

/*
 * One call of the rounds.  A context overflow compacts the history; then
 * the request goes once more, and a second overflow fails the run.
 */
static int call(struct run *r, struct turn *t)
{
	struct xg_provider_error perr;
	int rc = xg_run_call(r, t, &perr), c;

	if (rc > 0 && !r->signal && r->rc < 0) {
		c = xg_run_compact_overflow(r, &perr);
		if (c == 1)
			rc = xg_run_call(r, t, &perr);
		else if (c)
			rc = -1;
	}
	if (!rc && !r->signal && r->rc < 0)
		xg_run_compact_note_peek(r, t->usage);
	return xg_run_settle(r, t, rc, &perr);
}

/* The conversation so far and the request, then the rounds. */
static int converse(struct run *r)
{
	struct turn t;
	int repaired = 0, n, i, s;

	xg_run_turn_init(&t, r);
	xg_run_slice_begin(r);
	if (xg_run_load_history(r) || xg_run_note_version(r) || xg_run_note_model_change(r))
		goto out;
	/* The watch starts with the first talk to the model (a compaction,
	 * else the request): a thread made while libcurl still loads would
	 * wait for it, and the work above would wait behind that. */
	xg_run_watch_start(r);
	if (xg_run_compact_fit_request(r) || xg_run_add_request_message(r))
		goto out;
	xg_run_steer_open(r);
	for (;;) {
		/* What the person sent meanwhile goes with the request. */
		if (r->signal || xg_run_steer_take(r) || xg_run_compact_maybe(r) || call(r, &t))
			break;
		n = xg_json_length_peek(t.calls);
		for (i = 0; i < n; i++)
			if (run_call(r, jv_array_get(jv_copy(t.calls), i)))
				goto out;
		/* A full work slice: its report, then the next slice, or the end. */
		if ((s = xg_run_slice_step(r, n)) != XG_RUN_SLICE_GO_ON) {
			if (s == XG_RUN_SLICE_ENDED)
				break;
			continue;
		}
		/* The results go with the next request; so do messages that
		 * came by the reply's end, the inbox closing when none did. */
		if (n || (s = xg_run_steer_last_look(r)) > 0)
			continue;
		if (s < 0 || !end_or_repair(r, &t, &repaired))
			break;
		/* A repair goes round: messages may come again. */
		xg_run_steer_open(r);
	}
	/* A goal's completion claim is checked once the reply has ended, by
	 * itself or at a work slice's bound. */
	if (r->status && (!strcmp(r->status, "completed") || !strcmp(r->status, "slice_complete")))
		xg_run_goal_settle(r);
out:
	xg_run_slice_end(r);
	/* A message that came too late for a request waits in the
	 * conversation, the newest thing in it. */
	xg_run_steer_close(r);
	xg_run_turn_release(&t);
	return r->rc;
}

/* A signal, or the stall watch, overrides whatever else ended the run. */
static void note_signal(struct run *r)
{
	if (!r->signal)
		return;
	r->status = "interrupted";
	if (r->signal == XG_RUN_STALLED) {
		r->stop = "stalled";
		free(r->reason);
		r->reason = xg_strdup(r->watch.why);
		r->rc = XG_EX_FAIL;
		return;
	}
	r->stop = "user";
	free(r->reason);
	r->reason = xg_asprintf("stopped by %s", r->signal == SIGINT ? "SIGINT" : "SIGTERM");
	r->rc = 128 + r->signal;
}

static void run_release(struct run *r)
{
	size_t i;

	xg_run_out_release(&r->out);
	if (r->prov)
		xg_provider_free(r->prov);
	if (r->gate)
		xg_gate_free(r->gate);
	if (r->have_catalog)
		xg_choices_release(&r->choices);
	for (i = 0; r->env_drop && r->env_drop[i]; i++)
		free((char *)r->env_drop[i]);
	free(r->env_drop);
	xg_tool_sandbox_release(&r->sandbox);
	jv_free(r->sandbox_rec);
	jv_free(r->request);
	xg_run_input_release(r);
	jv_free(r->snapshot);
	jv_free(r->model);
	jv_free(r->pack);
	jv_free(r->messages);
	jv_free(r->tools);
	jv_free(r->pending);
	xg_run_compact_release(r);
	xg_run_goal_release(r);
	free(r->id);
	if (r->conv_hold >= 0)
		close(r->conv_hold);
	free(r->conv);
	free(r->cwd);
	free(r->account);
	free(r->reply);
	free(r->reason);
	free(r->gate_err);
	xg_run_children_release(r);
}

int xg_run(const struct xg_run_opts *o, FILE *fp)
{
	struct run *r;
	char ended[25];
	int rc;

	/* Mapped, not on the stack: its tables for subagents and their tools
	 * are most of it, and a run that has none never writes them; a page
	 * never written costs no memory, and a memset would write them all. */
	r = xg_map_zeroed(sizeof(*r));
	/* One heap for every thread: a thread's own arena (libcurl's set-up
	 * runs on one) holds pages the main heap would have room for. */
	mallopt(M_ARENA_MAX, 1);
	r->o = o;
	r->conv_hold = -1;
	r->steer.fd = -1;
	xg_run_prepare_start(r);
	r->t0 = xg_clock_ms();
	xg_clock_rfc3339(xg_clock_wall_ms(), r->started);
	r->request = r->snapshot = r->model = r->pack = jv_null();
	r->messages = r->tools = r->sandbox_rec = jv_null();
	r->pending = jv_array();
	r->rc = -1;
	xg_run_signals_catch(r);
	if (xg_run_prepare(r, fp) == 0) {
		if (o->compact) {
			xg_run_watch_start(r);
			xg_run_compact_alone(r);
		} else {
			converse(r);
		}
	}
	/* No child outlives the run, and the watch's last records are out
	 * before run_end. */
	xg_run_watch_stop(r);
	xg_run_prepare_join(r);
	/* What the conversation was given is durable before run_end says so. */
	xg_run_remembered(r);
	/* run_start, if it is not out yet; the rest of the input is joined
	 * first, and a signal that comes meanwhile counts too. */
	xg_run_begin(r);
	note_signal(r);
	if (!r->status)
		xg_run_fail(r, XG_EX_SOFTWARE, "the run ended without a status");
	xg_run_write_end(r);
	xg_clock_rfc3339(xg_clock_wall_ms(), ended);
	xg_run_write_summary(r, ended);
	if (r->out.write_error && !r->rc)
		r->rc = XG_EX_IOERR;
	xg_run_signals_release();
	run_release(r);
	rc = r->rc;
	xg_unmap(r, sizeof(*r));
	return rc;
}
