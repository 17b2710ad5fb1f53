/*
 * The heartbeat record (man 5 xg-records): what the run is inside, every
 * beat of the stall watch (stall.c), made under the watch's lock.
 *
 *   phase         retry while a retry's wait runs; tool inside a tool;
 *                 waiting_subagents when the only tools are the subagent
 *                 ones; else model
 *   active_tools  each tool the run is inside, and for how long (the seeds'
 *                 activeTools), oldest_tool_ms the longest (oldestToolMs)
 *   quiet_ms      since the last event other than a heartbeat
 *   children      the children still running, with their own phase
 *
 * Heartbeats are not events: they do not reset the clock they report.
 */
#include "xg.h"
#include "run/internal.h"

jv xg_run_watch_tool_peek(const struct run_watch_tool *t, int64_t now)
{
	jv v = jv_object();

	v = xg_json_set(v, "name", jv_string(t->name));
	v = xg_json_set(v, "id", jv_string(t->id));
	v = xg_json_set(v, "ms", jv_number((double)(now - t->t0)));
	if (t->detail[0])
		v = xg_json_set(v, "detail", xg_json_string_bytes(t->detail, strlen(t->detail)));
	return v;
}

static const char *phase_of(const struct run_watch *w, int64_t now)
{
	if (w->retry_at && w->retry_at > now)
		return "retry";
	if (xg_run_watch_only_subagents(w))
		return "waiting_subagents";
	if (w->ntools)
		return "tool";
	return "model";
}

static jv children_of(const struct run *r, int64_t now)
{
	const struct run_watch *w = &r->watch;
	jv a = jv_array(), c;
	int i;

	for (i = 0; i < w->nchildren; i++) {
		const struct run_child *ch = &w->child[i];

		if (ch->ended)
			continue;
		c = jv_object();
		c = xg_json_set(c, "run", jv_string(ch->run));
		c = xg_json_set(c, "name", jv_string(ch->name));
		c = xg_json_set(c, "phase", jv_string(ch->term_at ? "stopping" : ch->phase));
		c = xg_json_set(c, "ms", jv_number((double)(now - ch->t0)));
		c = xg_json_set(c, "quiet_ms", jv_number((double)(now - ch->last_event)));
		a = jv_array_append(a, c);
	}
	return a;
}

int xg_run_watch_only_subagents(const struct run_watch *w)
{
	int i;

	for (i = 0; i < w->ntools; i++)
		if (!xg_run_subagent_tool(w->tools[i].name))
			return 0;
	return w->ntools > 0;
}

jv xg_run_heartbeat(struct run *r, int64_t now)
{
	const struct run_watch *w = &r->watch;
	jv v = xg_rec_new("heartbeat"), tools = jv_array();
	int64_t oldest = 0;
	const char *phase = phase_of(w, now);
	int i;

	v = xg_json_set(v, "run", jv_string(r->id));
	v = xg_json_set(v, "phase", jv_string(phase));
	for (i = 0; i < w->ntools; i++) {
		tools = jv_array_append(tools, xg_run_watch_tool_peek(&w->tools[i], now));
		if (now - w->tools[i].t0 > oldest)
			oldest = now - w->tools[i].t0;
	}
	v = xg_json_set(v, "active_tools", tools);
	v = xg_json_set(v, "oldest_tool_ms", jv_number((double)oldest));
	v = xg_json_set(v, "quiet_ms", jv_number((double)(now - w->last_event)));
	v = xg_json_set(v, "slice", jv_number(r->slice.number ? r->slice.number : 1));
	v = xg_json_set(v, "children", children_of(r, now));
	if (!strcmp(phase, "model") && w->request) {
		/* waiting: nothing of the reply yet, only the request's time */
		v = xg_json_set(v, "request_ms", jv_number((double)(now - w->request_t0)));
		v = xg_json_set(v, "waiting", jv_bool(!w->heard));
	}
	if (!strcmp(phase, "retry")) {
		jv rt = jv_object();

		rt = xg_json_set(rt, "attempt", jv_number(w->retry_attempt));
		rt = xg_json_set(rt, "of", jv_number(w->retry_of));
		rt = xg_json_set(rt, "in_ms", jv_number((double)(w->retry_at - now)));
		v = xg_json_set(v, "retry", rt);
	}
	return xg_json_set(v, "ms", jv_number((double)(now - r->t0)));
}
