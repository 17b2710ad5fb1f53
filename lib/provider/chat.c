/*
 * OpenAI Chat Completions, and the servers that speak it: llama.cpp's
 * server, Ollama, vLLM, OpenRouter.  Their differences, all handled here:
 * reasoning arrives as delta.reasoning_content (llama.cpp, vLLM) or
 * delta.reasoning (Ollama, OpenRouter); llama.cpp adds a "timings" object
 * and gives error codes as integers; tool-call ids need not start with
 * "call_"; a call may come whole in one chunk, several in one chunk, or in
 * fragments keyed by index; after an error inside the stream no [DONE]
 * follows.
 */
#include "xg.h"
#include "provider/internal.h"

static jv chat_message(jv m, int i, char *err, size_t errlen)
{
	const char *role = xg_json_string_peek(m, "role");
	const char *text = xg_json_string_peek(m, "text");
	jv out = jv_object(), calls, tc;
	int n, k;

	if (!role) {
		snprintf(err, errlen, "request: messages[%d]: missing field 'role'", i);
		jv_free(out);
		return jv_invalid();
	}
	if (!strcmp(role, "user")) {
		out = xg_json_set(out, "role", jv_string("user"));
		out = xg_json_set(out, "content", jv_string(text ? text : ""));
	} else if (!strcmp(role, "assistant")) {
		out = xg_json_set(out, "role", jv_string("assistant"));
		out = xg_json_set(out, "content", text && *text ? jv_string(text) : jv_null());
		calls = xg_json_get_peek(m, "tool_calls");
		n = xg_json_length_peek(calls);
		if (jv_get_kind(calls) == JV_KIND_ARRAY && n > 0) {
			jv arr = jv_array();

			for (k = 0; k < n; k++) {
				jv c = jv_array_get(jv_copy(calls), k), fn = jv_object();

				fn = xg_json_set(fn, "name", jv_string(xg_json_string_peek(c, "name") ?
								       xg_json_string_peek(c, "name") : ""));
				fn = xg_json_set(fn, "arguments", xg_wire_args_text(jv_copy(c)));
				tc = jv_object();
				tc = xg_json_set(tc, "id", jv_string(xg_json_string_peek(c, "id") ?
								    xg_json_string_peek(c, "id") : ""));
				tc = xg_json_set(tc, "type", jv_string("function"));
				tc = xg_json_set(tc, "function", fn);
				arr = jv_array_append(arr, tc);
				jv_free(c);
			}
			out = xg_json_set(out, "tool_calls", arr);
		}
	} else if (!strcmp(role, "tool")) {
		const char *id = xg_json_string_peek(m, "id");
		const char *output = xg_json_string_peek(m, "output");

		if (!id) {
			snprintf(err, errlen, "request: messages[%d]: missing field 'id'", i);
			jv_free(out);
			return jv_invalid();
		}
		out = xg_json_set(out, "role", jv_string("tool"));
		out = xg_json_set(out, "tool_call_id", jv_string(id));
		out = xg_json_set(out, "content", jv_string(output ? output : ""));
	} else {
		snprintf(err, errlen, "request: messages[%d]: unknown role '%s'", i, role);
		jv_free(out);
		return jv_invalid();
	}
	return out;
}

static int chat_encode(const struct xg_provider *p, jv req, jv *out, char *err, size_t errlen)
{
	const char *model = xg_json_string_peek(req, "model");
	const char *system = xg_json_string_peek(req, "system");
	const char *effort = xg_json_string_peek(req, "effort");
	const char *cache_key = xg_json_string_peek(req, "cache_key");
	const char *dialect = p ? p->dialect : "openai";
	int is_openai = !strcmp(dialect, "openai");
	jv body = jv_object(), msgs = jv_array(), src, tools, m;
	int64_t max_output = xg_wire_int(req, "max_output");
	int i, n;

	if (!model) {
		snprintf(err, errlen, "request: missing field 'model'");
		goto fail;
	}
	body = xg_json_set(body, "model", jv_string(model));
	if (system && *system) {
		m = xg_json_set(jv_object(), "role", jv_string("system"));
		msgs = jv_array_append(msgs, xg_json_set(m, "content", jv_string(system)));
	}
	src = xg_json_get_peek(req, "messages");
	n = jv_get_kind(src) == JV_KIND_ARRAY ? xg_json_length_peek(src) : 0;
	for (i = 0; i < n; i++) {
		jv msg = jv_array_get(jv_copy(src), i);

		m = chat_message(msg, i, err, errlen);
		jv_free(msg);
		if (!jv_is_valid(m))
			goto fail;
		msgs = jv_array_append(msgs, m);
	}
	body = xg_json_set(body, "messages", msgs);
	msgs = jv_invalid();
	tools = xg_json_get_peek(req, "tools");
	n = jv_get_kind(tools) == JV_KIND_ARRAY ? xg_json_length_peek(tools) : 0;
	if (n > 0) {
		jv arr = jv_array();

		for (i = 0; i < n; i++) {
			jv t = jv_array_get(jv_copy(tools), i), fn = jv_object();
			jv params = xg_json_get_peek(t, "parameters");

			fn = xg_json_set(fn, "name", jv_string(xg_json_string_peek(t, "name") ?
							       xg_json_string_peek(t, "name") : ""));
			if (xg_json_string_peek(t, "description"))
				fn = xg_json_set(fn, "description",
						 jv_string(xg_json_string_peek(t, "description")));
			fn = xg_json_set(fn, "parameters", jv_is_valid(params) ? jv_copy(params) :
					 xg_json_set(jv_object(), "type", jv_string("object")));
			arr = jv_array_append(arr, xg_json_set(xg_json_set(jv_object(), "type",
						jv_string("function")), "function", fn));
			jv_free(t);
		}
		body = xg_json_set(body, "tools", arr);
	}
	body = xg_json_set(body, "stream", jv_true());
	body = xg_json_set(body, "stream_options",
			   xg_json_set(jv_object(), "include_usage", jv_true()));
	if (max_output > 0)
		body = xg_json_set(body, is_openai ? "max_completion_tokens" : "max_tokens",
				   jv_number((double)max_output));
	if (effort && *effort) {
		if (!strcmp(dialect, "openrouter"))
			body = xg_json_set(body, "reasoning",
					   xg_json_set(jv_object(), "effort", jv_string(effort)));
		else
			body = xg_json_set(body, "reasoning_effort", jv_string(effort));
	}
	/* OpenAI's prompt cache groups requests by this key; the others cache
	 * the longest common prefix on their own and may reject the field. */
	if (cache_key && *cache_key && is_openai)
		body = xg_json_set(body, "prompt_cache_key", jv_string(cache_key));
	*out = body;
	return 0;
fail:
	jv_free(msgs);
	jv_free(body);
	return -1;
}

static const char *chat_reason(const char *r)
{
	if (!strcmp(r, "length"))
		return "length";
	if (!strcmp(r, "tool_calls") || !strcmp(r, "function_call"))
		return "tool_calls";
	if (!strcmp(r, "content_filter"))
		return "content_filter";
	return "stop";
}

static int emit_calls(struct xg_provider_decoder *d)
{
	size_t i;

	for (i = 0; i < d->nslots; i++)
		if (d->slots[i].kind == XG_SLOT_TOOL && xg_decoder_tool_call(d, &d->slots[i]) < 0)
			return -1;
	return 0;
}

static int chat_end(struct xg_provider_decoder *d)
{
	const char *reason = d->finish ? d->finish : "stop";

	if (emit_calls(d) < 0)
		return -1;
	if (d->refusal)
		reason = "refusal";
	else if (d->tool_calls && !strcmp(reason, "stop"))
		reason = "tool_calls";
	return xg_decoder_finish(d, reason);
}

static int add_text_or_json(struct xg_provider_decoder *d, struct xg_buf *b, jv v)
{
	jv text;
	int rc;

	if (jv_get_kind(v) == JV_KIND_STRING)
		return xg_decoder_add(d, b, jv_string_value(v),
				      (size_t)jv_string_length_bytes(jv_copy(v)), "tool call arguments");
	if (jv_get_kind(v) != JV_KIND_OBJECT)
		return 0;
	text = jv_dump_string(jv_copy(v), 0);
	rc = xg_decoder_add(d, b, jv_string_value(text),
			    (size_t)jv_string_length_bytes(jv_copy(text)), "tool call arguments");
	jv_free(text);
	return rc;
}

static int chat_tool_calls(struct xg_provider_decoder *d, jv calls)
{
	int i, n = xg_json_length_peek(calls), rc = 0;

	for (i = 0; i < n && !rc; i++) {
		jv c = jv_array_get(jv_copy(calls), i);
		jv fn = xg_json_get_peek(c, "function");
		const char *id = xg_json_string_peek(c, "id");
		const char *name = xg_json_string_peek(fn, "name");
		long long index = i;
		struct xg_slot *s;

		xg_json_int_peek(c, "index", &index);
		s = xg_decoder_slot_index(d, (long)index, 0);
		/* A new id at a known index is a new call (servers that number
		 * every call 0). */
		if (!s || s->done || (id && *id && s->id && strcmp(s->id, id))) {
			s = xg_decoder_slot_new(d);
			s->index = (long)index;
			s->kind = XG_SLOT_TOOL;
		}
		if (id && *id)
			xg_decoder_slot_set(&s->id, id);
		if (name && *name)
			xg_decoder_slot_set(&s->name, name);
		rc = add_text_or_json(d, &s->text, xg_json_get_peek(fn, "arguments"));
		jv_free(c);
	}
	return rc;
}

static void chat_usage(struct xg_provider_decoder *d, jv chunk)
{
	jv u = xg_json_get_peek(chunk, "usage"), t = xg_json_get_peek(chunk, "timings");
	long long v;

	if (jv_get_kind(u) == JV_KIND_OBJECT) {
		d->usage.have = 1;
		if (!xg_json_int_peek(u, "prompt_tokens", &v))
			d->usage.input = v;
		if (!xg_json_int_peek(u, "completion_tokens", &v))
			d->usage.output = v;
		if (!xg_json_int_peek(xg_json_get_peek(u, "prompt_tokens_details"), "cached_tokens", &v))
			d->usage.cached_input = v;
		if (!xg_json_int_peek(xg_json_get_peek(u, "completion_tokens_details"),
				      "reasoning_tokens", &v))
			d->usage.reasoning = v;
	} else if (jv_get_kind(t) == JV_KIND_OBJECT && d->usage.have != 1) {
		/* llama.cpp: prompt_n tokens were evaluated, cache_n came from
		 * its cache, predicted_n were generated. */
		long long prompt = 0, cache = 0, predicted = 0;

		xg_json_int_peek(t, "prompt_n", &prompt);
		xg_json_int_peek(t, "cache_n", &cache);
		xg_json_int_peek(t, "predicted_n", &predicted);
		d->usage.have = 2;
		d->usage.input = prompt + cache;
		d->usage.cached_input = cache;
		d->usage.output = predicted;
	}
}

static int chat_event(struct xg_provider_decoder *d, const struct xg_sse_event *ev)
{
	jv chunk, choices, choice, delta, v;
	const char *s, *reason;
	int rc = 0;

	if (ev->data_len == 6 && !memcmp(ev->data, "[DONE]", 6))
		return chat_end(d);
	chunk = jv_parse_sized(ev->data, (int)ev->data_len);
	if (jv_get_kind(chunk) != JV_KIND_OBJECT) {
		jv_free(chunk);
		d->failed = 1;
		xg_provider_error_set(&d->err, "protocol", "provider stream: a chunk is not a JSON object");
		return -1;
	}
	v = xg_json_get_peek(chunk, "error");
	if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_NULL) {
		rc = xg_decoder_stream_error(d, jv_copy(chunk));
		jv_free(chunk);
		return rc;
	}
	choices = xg_json_get_peek(chunk, "choices");
	choice = jv_get_kind(choices) == JV_KIND_ARRAY && xg_json_length_peek(choices) > 0 ?
		jv_array_get(jv_copy(choices), 0) : jv_null();
	delta = xg_json_get_peek(choice, "delta");
	if ((s = xg_json_string_peek(delta, "reasoning_content")) ||
	    (s = xg_json_string_peek(delta, "reasoning")))
		rc = xg_decoder_delta(d, "reasoning", s, strlen(s));
	if (!rc && (s = xg_json_string_peek(delta, "content")))
		rc = xg_decoder_delta(d, "text", s, strlen(s));
	if (!rc && (s = xg_json_string_peek(delta, "refusal")) && *s) {
		d->refusal = 1;
		rc = xg_decoder_delta(d, "text", s, strlen(s));
	}
	v = xg_json_get_peek(delta, "tool_calls");
	if (!rc && jv_get_kind(v) == JV_KIND_ARRAY)
		rc = chat_tool_calls(d, v);
	if (!rc && (reason = xg_json_string_peek(choice, "finish_reason"))) {
		d->finish = chat_reason(reason);
		rc = emit_calls(d);
	}
	chat_usage(d, chunk);
	jv_free(choice);
	jv_free(chunk);
	return rc;
}

/* Some servers end without [DONE] (or close before it); a stream that gave
 * its finish_reason is complete all the same. */
static int chat_eof(struct xg_provider_decoder *d)
{
	if (!d->finish)
		return -1;
	return chat_end(d);
}

const struct xg_wire xg_wire_openai_chat = {
	"openai-chat", "/chat/completions", chat_encode, chat_event, chat_eof
};
