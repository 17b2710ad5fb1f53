/*
 * OpenAI Responses.  The file fills in the kind's struct xg_wire: first
 * the encoder callbacks encode.c's walk calls, then the stream's event
 * handler.  Requests are stateless (store: false): the whole
 * conversation goes up each time, reasoning items travel back as their
 * encrypted content, and prompt_cache_key keeps a conversation's requests
 * on the same cache.  Function calls arrive as output items: the name and
 * call id in response.output_item.added, the arguments in deltas keyed by
 * the item's id.
 */
#include "xg.h"
#include "provider/internal.h"

/* The encoder: the system prompt is the instructions, and every message
 * becomes input items. */

static jv content_text(const char *type, const char *text)
{
	jv part = xg_json_set(jv_object(), "type", jv_string(type));

	return jv_array_append(jv_array(), xg_json_set(part, "text", jv_string(text)));
}

static void responses_system(struct xg_encode *e)
{
	e->body = xg_json_set(e->body, "instructions", jv_copy(e->system_v));
}

static void responses_user(struct xg_encode *e, const char *text)
{
	jv item = xg_json_set(jv_object(), "role", jv_string("user"));

	e->list = jv_array_append(e->list, xg_json_set(item, "content",
						       content_text("input_text", text)));
}

/* Without its encrypted content a reasoning item cannot be sent back
 * statelessly; it is left out. */
static jv responses_reasoning(const struct xg_encode_reasoning *b)
{
	jv item;

	if (!b->signature || !*b->signature)
		return jv_invalid();
	item = xg_json_set(jv_object(), "type", jv_string("reasoning"));
	if (b->id)
		item = xg_json_set(item, "id", jv_string(b->id));
	item = xg_json_set(item, "summary", b->text && *b->text ?
			   content_text("summary_text", b->text) : jv_array());
	return xg_json_set(item, "encrypted_content", jv_string(b->signature));
}

static jv responses_text(const char *text)
{
	jv item = xg_json_set(jv_object(), "type", jv_string("message"));

	item = xg_json_set(item, "role", jv_string("assistant"));
	return xg_json_set(item, "content", content_text("output_text", text));
}

static jv responses_tool_call(const char *id, const char *name, jv args)
{
	jv item = xg_json_set(jv_object(), "type", jv_string("function_call"));

	item = xg_json_set(item, "call_id", jv_string(id));
	item = xg_json_set(item, "name", jv_string(name));
	return xg_json_set(item, "arguments", xg_encode_args_text(args));
}

/* An assistant message is no item of its own: its parts are. */
static void responses_assistant(struct xg_encode *e, const char *text, jv parts)
{
	e->list = jv_array_concat(e->list, parts);
}

static void responses_tool_result(struct xg_encode *e, const char *id, const char *output,
				  bool ok)
{
	jv item = xg_json_set(jv_object(), "type", jv_string("function_call_output"));

	item = xg_json_set(item, "call_id", jv_string(id));
	e->list = jv_array_append(e->list, xg_json_set(item, "output", jv_string(output)));
}

static jv responses_tool(const char *name, const char *description, jv parameters)
{
	jv fn = xg_json_set(jv_object(), "type", jv_string("function"));

	fn = xg_json_set(fn, "name", jv_string(name));
	if (description)
		fn = xg_json_set(fn, "description", jv_string(description));
	fn = xg_json_set(fn, "parameters", parameters);
	return xg_json_set(fn, "strict", jv_false());
}

static void responses_end(struct xg_encode *e)
{
	e->body = xg_json_set(e->body, "stream", jv_true());
	e->body = xg_json_set(e->body, "store", jv_false());
	if (e->max_output > 0)
		e->body = xg_json_set(e->body, "max_output_tokens", jv_number((double)e->max_output));
	if (e->effort && *e->effort) {
		jv r = xg_json_set(jv_object(), "effort", jv_string(e->effort));

		e->body = xg_json_set(e->body, "reasoning", xg_json_set(r, "summary", jv_string("auto")));
		e->body = xg_json_set(e->body, "include",
				      jv_array_append(jv_array(),
						      jv_string("reasoning.encrypted_content")));
	}
	if (e->cache_key && *e->cache_key)
		e->body = xg_json_set(e->body, "prompt_cache_key", jv_string(e->cache_key));
}

/* The decoder. */

static void responses_usage_peek(struct xg_provider_decoder *d, jv resp)
{
	jv u = xg_json_get_peek(resp, "usage");
	long long v;

	if (jv_get_kind(u) != JV_KIND_OBJECT)
		return;
	d->usage.have = 1;
	if (!xg_json_int_peek(u, "input_tokens", &v))
		d->usage.input = v;
	if (!xg_json_int_peek(u, "output_tokens", &v))
		d->usage.output = v;
	if (!xg_json_int_peek(xg_json_get_peek(u, "input_tokens_details"), "cached_tokens", &v))
		d->usage.cached_input = v;
	if (!xg_json_int_peek(xg_json_get_peek(u, "output_tokens_details"), "reasoning_tokens", &v))
		d->usage.reasoning = v;
}

static int set_buf(struct xg_provider_decoder *d, struct xg_buf *b, const char *s,
		   const char *what)
{
	xg_buf_reset(b);
	return s ? xg_decoder_addstr(d, b, s, what) : 0;
}

/* A function call's item opens its slot: the call id and name come here,
 * the arguments in deltas. */
static int item_added_peek(struct xg_provider_decoder *d, jv item)
{
	const char *type = xg_json_string_peek(item, "type");
	const char *id = xg_json_string_peek(item, "id");
	struct xg_slot *s;

	if (!type || strcmp(type, "function_call") || !id)
		return 0;
	s = xg_decoder_slot_key(d, id, 1);
	s->kind = XG_SLOT_TOOL;
	xg_decoder_slot_set(&s->id, xg_json_string_peek(item, "call_id"));
	xg_decoder_slot_set(&s->name, xg_json_string_peek(item, "name"));
	return set_buf(d, &s->text, xg_json_string_peek(item, "arguments"), "tool call arguments");
}

static int item_done_peek(struct xg_provider_decoder *d, jv item)
{
	const char *type = xg_json_string_peek(item, "type");
	const char *id = xg_json_string_peek(item, "id");
	struct xg_slot *s;

	if (!type || !id)
		return 0;
	if (!strcmp(type, "function_call")) {
		s = xg_decoder_slot_key(d, id, 1);
		s->kind = XG_SLOT_TOOL;
		if (xg_json_string_peek(item, "call_id"))
			xg_decoder_slot_set(&s->id, xg_json_string_peek(item, "call_id"));
		if (xg_json_string_peek(item, "name"))
			xg_decoder_slot_set(&s->name, xg_json_string_peek(item, "name"));
		if (xg_json_string_peek(item, "arguments") &&
		    set_buf(d, &s->text, xg_json_string_peek(item, "arguments"),
			    "tool call arguments") < 0)
			return -1;
		return xg_decoder_tool_call(d, s);
	}
	if (!strcmp(type, "reasoning")) {
		const char *enc = xg_json_string_peek(item, "encrypted_content");

		s = xg_decoder_slot_key(d, id, 1);
		s->kind = XG_SLOT_THINKING;
		if (enc && set_buf(d, &s->sig, enc, "encrypted reasoning") < 0)
			return -1;
		if (!s->text.len && !s->sig.len)
			return 0;
		return xg_decoder_reasoning_block(d, s);
	}
	if (!strcmp(type, "message")) {
		jv content = xg_json_get_peek(item, "content");
		int i, n = xg_json_length_peek(content);

		for (i = 0; i < n; i++) {
			jv part = jv_array_get(jv_copy(content), i);
			const char *pt = xg_json_string_peek(part, "type");

			if (pt && !strcmp(pt, "refusal"))
				d->refusal = 1;
			jv_free(part);
		}
	}
	return 0;
}

static int responses_finish_peek(struct xg_provider_decoder *d, jv resp, const char *type)
{
	const char *reason = "stop";

	responses_usage_peek(d, resp);
	if (!strcmp(type, "response.incomplete")) {
		const char *why = xg_json_string_peek(xg_json_get_peek(resp, "incomplete_details"),
						      "reason");

		reason = why && !strcmp(why, "content_filter") ? "content_filter" : "length";
	} else if (d->refusal) {
		reason = "refusal";
	} else if (d->tool_calls) {
		reason = "tool_calls";
	}
	return xg_decoder_finish(d, reason);
}

static int responses_event(struct xg_provider_decoder *d, const struct xg_sse_event *ev)
{
	jv e = xg_decoder_parse(d, ev, "an event"), v;
	const char *type, *s, *id;
	struct xg_slot *slot;
	int rc = 0;

	if (!jv_is_valid(e))
		return -1;
	type = xg_decoder_type_peek(e, ev);
	id = xg_json_string_peek(e, "item_id");
	if (!strcmp(type, "response.output_text.delta")) {
		if ((s = xg_json_string_peek(e, "delta")))
			rc = xg_decoder_delta(d, "text", s, strlen(s));
	} else if (!strcmp(type, "response.refusal.delta")) {
		d->refusal = 1;
		if ((s = xg_json_string_peek(e, "delta")))
			rc = xg_decoder_delta(d, "text", s, strlen(s));
	} else if (!strcmp(type, "response.reasoning_summary_text.delta") ||
		   !strcmp(type, "response.reasoning_text.delta")) {
		if ((s = xg_json_string_peek(e, "delta"))) {
			if (id) {
				slot = xg_decoder_slot_key(d, id, 1);
				slot->kind = XG_SLOT_THINKING;
				rc = xg_decoder_addstr(d, &slot->text, s, "reasoning");
			}
			if (!rc)
				rc = xg_decoder_delta(d, "reasoning", s, strlen(s));
		}
	} else if (!strcmp(type, "response.output_item.added")) {
		rc = item_added_peek(d, xg_json_get_peek(e, "item"));
	} else if (!strcmp(type, "response.function_call_arguments.delta")) {
		if (id && (s = xg_json_string_peek(e, "delta"))) {
			slot = xg_decoder_slot_key(d, id, 1);
			slot->kind = XG_SLOT_TOOL;
			rc = xg_decoder_addstr(d, &slot->text, s, "tool call arguments");
		}
	} else if (!strcmp(type, "response.function_call_arguments.done")) {
		if (id && (s = xg_json_string_peek(e, "arguments"))) {
			slot = xg_decoder_slot_key(d, id, 1);
			slot->kind = XG_SLOT_TOOL;
			rc = set_buf(d, &slot->text, s, "tool call arguments");
		}
	} else if (!strcmp(type, "response.output_item.done")) {
		rc = item_done_peek(d, xg_json_get_peek(e, "item"));
	} else if (!strcmp(type, "response.completed") || !strcmp(type, "response.incomplete")) {
		rc = responses_finish_peek(d, xg_json_get_peek(e, "response"), type);
	} else if (!strcmp(type, "response.failed")) {
		v = xg_json_get_peek(xg_json_get_peek(e, "response"), "error");
		rc = xg_decoder_stream_error(d, jv_is_valid(v) && jv_get_kind(v) != JV_KIND_NULL ?
					     jv_copy(v) : jv_copy(e));
	} else if (!strcmp(type, "error")) {
		rc = xg_decoder_stream_error(d, jv_copy(e));
	}
	jv_free(e);
	return rc;
}

static int responses_eof(struct xg_provider_decoder *d)
{
	return -1;
}

const struct xg_wire xg_wire_openai_responses = {
	.name = "openai-responses",
	.path = "/responses",
	.key_header = "Authorization: Bearer ",
	.encode = {
		.list_key = "input",
		.no_role = "missing field role",
		.system = responses_system,
		.user = responses_user,
		.reasoning = responses_reasoning,
		.text = responses_text,
		.tool_call = responses_tool_call,
		.assistant = responses_assistant,
		.tool_result = responses_tool_result,
		.tool = responses_tool,
		.end = responses_end,
	},
	.event = responses_event,
	.eof = responses_eof,
};
