/*
 * OpenAI Chat Completions, and the servers that speak it: llama.cpp's
 * server, Ollama, vLLM, OpenRouter.  The file fills in the kind's struct
 * xg_wire: first the encoder callbacks encode.c's walk calls, then the
 * stream's event handler.
 *
 * On the way out the dialect (the provider's, or guessed from the URL)
 * decides a few members: OpenAI's own API takes max_completion_tokens and
 * prompt_cache_key, OpenRouter its reasoning object.  On the way back the
 * servers differ, all handled here: reasoning arrives as
 * delta.reasoning_content (llama.cpp, vLLM) or delta.reasoning (Ollama,
 * OpenRouter); llama.cpp adds a "timings" object and gives error codes as
 * integers; tool-call ids need not start with "call_"; a call may come
 * whole in one chunk, several in one chunk, or in fragments keyed by
 * index; after an error inside the stream no [DONE] follows.
 *
 * A reply is complete once its finish_reason came, with or without the
 * [DONE] after it; every server sends one (llama.cpp and Ollama too).  A
 * [DONE] without it ends a reply that was cut short somewhere (a proxy
 * that closes the stream for the server, a server that gave up), so it is
 * a truncated stream, as one that stops before [DONE] is.
 */
#include "xg.h"
#include "provider/internal.h"

/* The encoder: the system prompt is the first message, an assistant
 * message carries its tool calls, and reasoning is not sent back. */

static void chat_system(struct xg_encode *e)
{
	jv m = xg_json_set(jv_object(), "role", jv_string("system"));

	e->list = jv_array_append(e->list, xg_json_set(m, "content", jv_copy(e->system_v)));
}

static void chat_user(struct xg_encode *e, const char *text)
{
	jv m = xg_json_set(jv_object(), "role", jv_string("user"));

	e->list = jv_array_append(e->list, xg_json_set(m, "content", jv_string(text)));
}

static jv chat_tool_call(const char *id, const char *name, jv args)
{
	jv fn = xg_json_set(jv_object(), "name", jv_string(name)), tc;

	fn = xg_json_set(fn, "arguments", xg_encode_args_text(args));
	tc = xg_json_set(jv_object(), "id", jv_string(id));
	tc = xg_json_set(tc, "type", jv_string("function"));
	return xg_json_set(tc, "function", fn);
}

static void chat_assistant(struct xg_encode *e, const char *text, jv calls)
{
	jv m = xg_json_set(jv_object(), "role", jv_string("assistant"));

	m = xg_json_set(m, "content", text && *text ? jv_string(text) : jv_null());
	if (xg_json_length_peek(calls) > 0)
		m = xg_json_set(m, "tool_calls", calls);
	else
		jv_free(calls);
	e->list = jv_array_append(e->list, m);
}

static void chat_tool_result(struct xg_encode *e, const char *id, const char *output, bool ok)
{
	jv m = xg_json_set(jv_object(), "role", jv_string("tool"));

	m = xg_json_set(m, "tool_call_id", jv_string(id));
	e->list = jv_array_append(e->list, xg_json_set(m, "content", jv_string(output)));
}

static jv chat_tool(const char *name, const char *description, jv parameters)
{
	jv fn = xg_json_set(jv_object(), "name", jv_string(name));

	if (description)
		fn = xg_json_set(fn, "description", jv_string(description));
	fn = xg_json_set(fn, "parameters", parameters);
	return xg_json_set(xg_json_set(jv_object(), "type", jv_string("function")), "function", fn);
}

static void chat_end(struct xg_encode *e)
{
	int is_openai = !strcmp(e->dialect, "openai");

	e->body = xg_json_set(e->body, "stream", jv_true());
	e->body = xg_json_set(e->body, "stream_options",
			      xg_json_set(jv_object(), "include_usage", jv_true()));
	if (e->max_output > 0)
		e->body = xg_json_set(e->body, is_openai ? "max_completion_tokens" : "max_tokens",
				      jv_number((double)e->max_output));
	if (e->effort && *e->effort) {
		if (!strcmp(e->dialect, "openrouter"))
			e->body = xg_json_set(e->body, "reasoning",
					      xg_json_set(jv_object(), "effort", jv_string(e->effort)));
		else
			e->body = xg_json_set(e->body, "reasoning_effort", jv_string(e->effort));
	}
	/* OpenAI's prompt cache groups requests by this key; the others cache
	 * the longest common prefix on their own and may reject the field. */
	if (e->cache_key && *e->cache_key && is_openai)
		e->body = xg_json_set(e->body, "prompt_cache_key", jv_string(e->cache_key));
}

/* The dialect a server speaks, by its URL, when the provider names none. */
static const char *chat_dialect(const char *url)
{
	if (strstr(url, "api.openai.com"))
		return "openai";
	if (strstr(url, "openrouter.ai"))
		return "openrouter";
	if (strstr(url, ":11434"))
		return "ollama";
	return "generic";
}

/* The decoder. */

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

static int chat_finish(struct xg_provider_decoder *d)
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

static int done_without_finish(struct xg_provider_decoder *d)
{
	d->failed = 1;
	xg_provider_error_set(&d->err, "truncated",
			      "the provider's stream ended with [DONE] but no finish_reason");
	return -1;
}

static int add_args_peek(struct xg_provider_decoder *d, struct xg_buf *b, jv v)
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

static int chat_tool_calls_peek(struct xg_provider_decoder *d, jv calls)
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
		rc = add_args_peek(d, &s->text, xg_json_get_peek(fn, "arguments"));
		jv_free(c);
	}
	return rc;
}

static void chat_usage_peek(struct xg_provider_decoder *d, jv chunk)
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
		return d->finish ? chat_finish(d) : done_without_finish(d);
	chunk = xg_decoder_parse(d, ev, "a chunk");
	if (!jv_is_valid(chunk))
		return -1;
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
		rc = chat_tool_calls_peek(d, v);
	if (!rc && (reason = xg_json_string_peek(choice, "finish_reason"))) {
		d->finish = chat_reason(reason);
		rc = emit_calls(d);
	}
	chat_usage_peek(d, chunk);
	jv_free(choice);
	jv_free(chunk);
	return rc;
}

/* Some servers end without [DONE] (or close before it); a stream that gave
 * its finish_reason is complete all the same, and one that did not is
 * truncated (decoder.c says so). */
static int chat_eof(struct xg_provider_decoder *d)
{
	if (!d->finish)
		return -1;
	return chat_finish(d);
}

const struct xg_wire xg_wire_openai_chat = {
	.name = "openai-chat",
	.path = "/chat/completions",
	.key_header = "Authorization: Bearer ",
	.guess_dialect = chat_dialect,
	.encode = {
		.list_key = "messages",
		.no_role = "missing field 'role'",
		.system = chat_system,
		.user = chat_user,
		.tool_call = chat_tool_call,
		.assistant = chat_assistant,
		.tool_result = chat_tool_result,
		.tool = chat_tool,
		.end = chat_end,
	},
	.event = chat_event,
	.eof = chat_eof,
};
