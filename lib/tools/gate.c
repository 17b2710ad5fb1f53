/*
 * The tool gate: a jq filter compiled once, run on each tool_call record.
 */
#include "xg.h"
#include "tools/internal.h"
#include <jq.h>

struct xg_gate {
	jq_state *jq;
	struct xg_buf msgs;	/* jq's messages while compiling */
};

/* jq reports compile errors through this callback, one message a call. */
static void collect_message(void *data, jv msg)
{
	struct xg_gate *g = data;

	if (jv_get_kind(msg) != JV_KIND_STRING)
		msg = jv_dump_string(msg, 0);
	if (g->msgs.len)
		xg_buf_addstr(&g->msgs, "; ");
	xg_buf_addstr(&g->msgs, jv_string_value(msg));
	jv_free(msg);
}

struct xg_gate *xg_gate_new(const char *filter, char **err)
{
	struct xg_gate *g = xg_calloc(1, sizeof(*g));

	xg_buf_init(&g->msgs, 64 * 1024);
	g->jq = jq_init();
	if (!g->jq)
		xg_die(XG_EX_SOFTWARE, "out of memory");
	jq_set_error_cb(g->jq, collect_message, g);
	if (!jq_compile(g->jq, filter)) {
		*err = g->msgs.len ? xg_strdup(g->msgs.buf)
				   : xg_strdup("jq: error: the filter does not compile");
		xg_gate_free(g);
		return NULL;
	}
	xg_buf_reset(&g->msgs);
	return g;
}

void xg_gate_free(struct xg_gate *g)
{
	if (!g)
		return;
	jq_teardown(&g->jq);
	xg_buf_release(&g->msgs);
	free(g);
}

/* A jq error value as text for the reason. */
static char *error_text(jv msg)
{
	char *s;

	if (jv_get_kind(msg) == JV_KIND_STRING) {
		s = xg_strdup(jv_string_value(msg));
	} else {
		jv d = jv_dump_string(msg, 0);
		s = xg_strdup(jv_string_value(d));
		jv_free(d);
		return s;
	}
	jv_free(msg);
	return s;
}

int xg_gate_check(struct xg_gate *g, jv call, char **reason)
{
	jv out;
	char *why;

	jq_start(g->jq, call, 0);
	out = jq_next(g->jq);
	switch (jv_get_kind(out)) {
	case JV_KIND_TRUE:
		return 1;
	case JV_KIND_FALSE:
		*reason = xg_strdup(XG_GATE_DEFAULT_REASON);
		return 0;
	case JV_KIND_STRING:
		*reason = xg_strdup(jv_string_value(out));
		jv_free(out);
		return 0;
	case JV_KIND_INVALID:
		if (jv_invalid_has_msg(jv_copy(out))) {
			why = error_text(jv_invalid_get_msg(out));
			*reason = xg_asprintf("the tool gate failed, so the call is refused: %s", why);
			free(why);
		} else if (jq_halted(g->jq)) {
			jv msg = jq_get_error_message(g->jq);

			jv_free(out);
			if (jv_get_kind(msg) == JV_KIND_STRING) {
				why = error_text(msg);
				*reason = xg_asprintf("the tool gate halted, so the call is "
						      "refused: %s", why);
				free(why);
			} else {
				jv_free(msg);
				*reason = xg_strdup("the tool gate halted, so the call is refused");
			}
		} else {
			jv_free(out);
			*reason = xg_strdup("the tool gate gave no decision (no output), "
					    "so the call is refused");
		}
		return 0;
	default:
		*reason = xg_asprintf("the tool gate gave %s, not true, false or a "
				      "reason, so the call is refused",
				      xg_json_kind_peek(out));
		jv_free(out);
		return 0;
	}
}

int xg_gate_plan_check(jv call, char **reason)
{
	const char *name = xg_json_string_peek(call, "name");
	int allow = !name || (strcmp(name, "write") && strcmp(name, "edit"));

	/* The words are XG_GATE_PLAN's; a test holds the two together. */
	if (!allow)
		*reason = xg_asprintf("plan mode: %s is not available while planning; "
				      "read, investigate and propose the plan instead", name);
	jv_free(call);
	return allow;
}

jv xg_gate_decide(struct xg_gate *g, jv call)
{
	char *reason = NULL;
	jv d = jv_object();

	if (g ? xg_gate_check(g, call, &reason) : xg_gate_plan_check(call, &reason))
		return xg_json_set(d, "allow", jv_true());
	d = xg_json_set(d, "allow", jv_false());
	d = xg_json_set(d, "reason", xg_json_string_bytes(reason, strlen(reason)));
	free(reason);
	return d;
}

jv xg_gate_call(const char *id, const char *name, jv args)
{
	jv c = xg_rec_new("tool_call");

	c = xg_json_set(c, "id", jv_string(id));
	c = xg_json_set(c, "name", jv_string(name));
	return xg_json_set(c, "args", args);
}
