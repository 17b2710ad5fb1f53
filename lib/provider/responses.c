/*
 * OpenAI Responses.  Requests are stateless (store: false): the whole
 * conversation goes up each time, reasoning items travel back as their
 * encrypted content, and prompt_cache_key keeps a conversation's requests
 * on the same cache.  Function calls arrive as output items: the name and
 * call id in response.output_item.added, the arguments in deltas keyed by
 * the item's id.
 */
#include "xg.h"
#include "provider/internal.h"

static jv content_text(const char *type, const char *text)
{
	jv part = xg_json_set(jv_object(), "type", jv_string(type));

	return jv_array_append(jv_array(), xg_json_set(part, "text", jv_string(text)));
}

static jv assistant_items(jv items, jv m)
{
	jv r = xg_json_get_peek(m, "reasoning"), calls = xg_json_get_peek(m, "tool_calls");
	const char *text = xg_json_string_peek(m, "text");
	int i, n;

	n = jv_get_kind(r) == JV_KIND_ARRAY ? xg_json_length_peek(r) : 0;
	for (i = 0; i < n; i++) {
		jv b = jv_array_get(jv_copy(r), i), item;
		const char *sig = xg_json_string_peek(b, "signature");
		const char *t = xg_json_string_peek(b, "text");
		const char *id = xg_json_string_peek(b, "id");

		/* Without its encrypted content a reasoning item cannot be
		 * sent back statelessly; it is left out. */
		if (sig && *sig) {
			item = xg_json_set(jv_object(), "type", jv_string("reasoning"));
			if (id)
				item = xg_json_set(item, "id", jv_string(id));
			item = xg_json_set(item, "summary", t && *t ?
					   content_text("summary_text", t) : jv_array());
			item = xg_json_set(item, "encrypted_content", jv_string(sig));
			items = jv_array_append(items, item);
		}
		jv_free(b);
	}
	if (text && *text) {
		jv item = xg_json_set(jv_object(), "type", jv_string("message"));

		item = xg_json_set(item, "role", jv_string("assistant"));
		items = jv_array_append(items, xg_json_set(item, "content",
						content_text("output_text", text)));
	}
	n = jv_get_kind(calls) == JV_KIND_ARRAY ? xg_json_length_peek(calls) : 0;
	for (i = 0; i < n; i++) {
		jv c = jv_array_get(jv_copy(calls), i);
		jv item = xg_json_set(jv_object(), "type", jv_string("function_call"));
		const char *id = xg_json_string_peek(c, "id"), *name = xg_json_string_peek(c, "name");

		item = xg_json_set(item, "call_id", jv_string(id ? id : ""));
		item = xg_json_set(item, "name", jv_string(name ? name : ""));
		item = xg_json_set(item, "arguments", xg_wire_args_text(jv_copy(c)));
		items = jv_array_append(items, item);
		jv_free(c);
	}
	return items;
}

static int responses_encode(const struct xg_provider *p, jv req, jv *out, char *err, size_t errlen)
{
	const char *model = xg_json_string_peek(req, "model");
	const char *system = xg_json_string_peek(req, "system");
	const char *effort = xg_json_string_peek(req, "effort");
	const char *cache_key = xg_json_string_peek(req, "cache_key");
	jv body = jv_object(), items = jv_array(), src, tools;
	int64_t max_output = xg_wire_int(req, "max_output");
	int i, n;

	if (!model) {
		snprintf(err, errlen, "request: missing field 'model'");
		goto fail;
	}
	body = xg_json_set(body, "model", jv_string(model));
	if (system && *system)
		body = xg_json_set(body, "instructions", jv_string(system));
	src = xg_json_get_peek(req, "messages");
	n = jv_get_kind(src) == JV_KIND_ARRAY ? xg_json_length_peek(src) : 0;
	for (i = 0; i < n; i++) {
		jv m = jv_array_get(jv_copy(src), i), item;
		const char *role = xg_json_string_peek(m, "role");

		if (role && !strcmp(role, "user")) {
			const char *t = xg_json_string_peek(m, "text");

			item = xg_json_set(jv_object(), "role", jv_string("user"));
			items = jv_array_append(items, xg_json_set(item, "content",
						content_text("input_text", t ? t : "")));
		} else if (role && !strcmp(role, "assistant")) {
			items = assistant_items(items, m);
		} else if (role && !strcmp(role, "tool")) {
			const char *id = xg_json_string_peek(m, "id");
			const char *o = xg_json_string_peek(m, "output");

			if (!id) {
				snprintf(err, errlen, "request: messages[%d]: missing field 'id'", i);
				jv_free(m);
				goto fail;
			}
			item = xg_json_set(jv_object(), "type", jv_string("function_call_output"));
			item = xg_json_set(item, "call_id", jv_string(id));
			items = jv_array_append(items, xg_json_set(item, "output", jv_string(o ? o : "")));
		} else {
			snprintf(err, errlen, "request: messages[%d]: %s role%s%s%s", i,
				 role ? "unknown" : "missing field", role ? " '" : "",
				 role ? role : "", role ? "'" : "");
			jv_free(m);
			goto fail;
		}
		jv_free(m);
	}
	body = xg_json_set(body, "input", items);
	items = jv_invalid();
	tools = xg_json_get_peek(req, "tools");
	n = jv_get_kind(tools) == JV_KIND_ARRAY ? xg_json_length_peek(tools) : 0;
	if (n > 0) {
		jv arr = jv_array();

		for (i = 0; i < n; i++) {
			jv t = jv_array_get(jv_copy(tools), i);
			jv fn = xg_json_set(jv_object(), "type", jv_string("function"));
			jv params = xg_json_get_peek(t, "parameters");

			fn = xg_json_set(fn, "name", jv_string(xg_json_string_peek(t, "name") ?
							       xg_json_string_peek(t, "name") : ""));
			if (xg_json_string_peek(t, "description"))
				fn = xg_json_set(fn, "description",
						 jv_string(xg_json_string_peek(t, "description")));
			fn = xg_json_set(fn, "parameters", jv_is_valid(params) ? jv_copy(params) :
					 xg_json_set(jv_object(), "type", jv_string("object")));
			fn = xg_json_set(fn, "strict", jv_false());
			arr = jv_array_append(arr, fn);
			jv_free(t);
		}
		body = xg_json_set(body, "tools", arr);
	}
	body = xg_json_set(body, "stream", jv_true());
	body = xg_json_set(body, "store", jv_false());
	if (max_output > 0)
		body = xg_json_set(body, "max_output_tokens", jv_number((double)max_output));
	if (effort && *effort) {
		jv r = xg_json_set(jv_object(), "effort", jv_string(effort));

		body = xg_json_set(body, "reasoning", xg_json_set(r, "summary", jv_string("auto")));
		body = xg_json_set(body, "include",
				   jv_array_append(jv_array(), jv_string("reasoning.encrypted_content")));
	}
	if (cache_key && *cache_key)
		body = xg_json_set(body, "prompt_cache_key", jv_string(cache_key));
	*out = body;
	return 0;
fail:
	jv_free(items);
	jv_free(body);
	return -1;
}

static void responses_usage(struct xg_provider_decoder *d, jv resp)
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

static int item_done(struct xg_provider_decoder *d, jv item)
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

static int responses_end(struct xg_provider_decoder *d, jv resp, const char *type)
{
	const char *reason = "stop";

	responses_usage(d, resp);
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
	jv e = jv_parse_sized(ev->data, (int)ev->data_len), v;
	const char *type, *s, *id;
	struct xg_slot *slot;
	int rc = 0;

	if (jv_get_kind(e) != JV_KIND_OBJECT) {
		jv_free(e);
		d->failed = 1;
		xg_provider_error_set(&d->err, "protocol", "provider stream: an event is not a JSON object");
		return -1;
	}
	type = xg_json_string_peek(e, "type");
	if (!type)
		type = ev->type ? ev->type : "";
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
		v = xg_json_get_peek(e, "item");
		s = xg_json_string_peek(v, "type");
		if (s && !strcmp(s, "function_call") && xg_json_string_peek(v, "id")) {
			slot = xg_decoder_slot_key(d, xg_json_string_peek(v, "id"), 1);
			slot->kind = XG_SLOT_TOOL;
			xg_decoder_slot_set(&slot->id, xg_json_string_peek(v, "call_id"));
			xg_decoder_slot_set(&slot->name, xg_json_string_peek(v, "name"));
			rc = set_buf(d, &slot->text, xg_json_string_peek(v, "arguments"),
				     "tool call arguments");
		}
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
		rc = item_done(d, xg_json_get_peek(e, "item"));
	} else if (!strcmp(type, "response.completed") || !strcmp(type, "response.incomplete")) {
		rc = responses_end(d, xg_json_get_peek(e, "response"), type);
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
	"openai-responses", "/responses", responses_encode, responses_event, responses_eof
};
