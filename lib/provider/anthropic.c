/*
 * Anthropic Messages.  Thinking blocks come back with their signature and
 * are sent back verbatim; tool input arrives as input_json_delta fragments
 * parsed at the block's end; message_delta carries cumulative usage; an
 * error inside the stream is "event: error".
 *
 * Prompt caching.  Every request of a run must be the previous one plus new
 * messages, byte for byte, so nothing already sent may change, and that
 * includes cache_control markers: a marker on "the newest block" would move
 * from block to block and rewrite what was sent.  A request may carry at
 * most four breakpoints, so markers that stay where they were put would run
 * out after a few turns.  Two markers that never change do the work:
 *
 *  - the stable prefix of the system prompt carries one (tools and system
 *    render before the messages, so it covers both), which later runs with
 *    the same pack read even when the dynamic rest of the prompt differs;
 *  - a top-level cache_control asks for automatic caching: the API puts the
 *    breakpoint on the last cacheable block of each request itself, so the
 *    breakpoint advances with the conversation while no message carries it.
 *
 * The next request's automatic breakpoint looks back about 20 blocks for
 * an entry written earlier; it finds the previous request's unless one turn
 * added more than that (ten or more parallel tool calls with their results),
 * and then that one request writes the conversation afresh (it still reads
 * tools and system through the first marker).  Two of the four breakpoints
 * stay unused: spending them on blocks would only help the first wide turns
 * of a conversation, because a marker once sent stays.  docs/providers.md
 * says what of Anthropic's documentation this rests on.
 */
#include "xg.h"
#include "provider/internal.h"

#define XG_ANTHROPIC_DEFAULT_MAX 8192

static jv text_block(const char *text, size_t len)
{
	jv b = xg_json_set(jv_object(), "type", jv_string("text"));

	return xg_json_set(b, "text", xg_json_string_bytes(text, len));
}

static jv ephemeral(void)
{
	return xg_json_set(jv_object(), "type", jv_string("ephemeral"));
}

static jv assistant_blocks(jv m)
{
	jv out = jv_array(), r = xg_json_get_peek(m, "reasoning");
	jv calls = xg_json_get_peek(m, "tool_calls");
	const char *text = xg_json_string_peek(m, "text");
	int i, n;

	n = jv_get_kind(r) == JV_KIND_ARRAY ? xg_json_length_peek(r) : 0;
	for (i = 0; i < n; i++) {
		jv b = jv_array_get(jv_copy(r), i), blk;
		const char *sig = xg_json_string_peek(b, "signature");
		const char *red = xg_json_string_peek(b, "redacted");
		const char *t = xg_json_string_peek(b, "text");

		if (red) {
			blk = xg_json_set(jv_object(), "type", jv_string("redacted_thinking"));
			out = jv_array_append(out, xg_json_set(blk, "data", jv_string(red)));
		} else if (sig && *sig) {
			/* A thinking block goes back only with its signature. */
			blk = xg_json_set(jv_object(), "type", jv_string("thinking"));
			blk = xg_json_set(blk, "thinking", jv_string(t ? t : ""));
			out = jv_array_append(out, xg_json_set(blk, "signature", jv_string(sig)));
		}
		jv_free(b);
	}
	if (text && *text)
		out = jv_array_append(out, text_block(text, strlen(text)));
	n = jv_get_kind(calls) == JV_KIND_ARRAY ? xg_json_length_peek(calls) : 0;
	for (i = 0; i < n; i++) {
		jv c = jv_array_get(jv_copy(calls), i), blk, args = xg_json_get_peek(c, "args");
		const char *id = xg_json_string_peek(c, "id"), *name = xg_json_string_peek(c, "name");

		blk = xg_json_set(jv_object(), "type", jv_string("tool_use"));
		blk = xg_json_set(blk, "id", jv_string(id ? id : ""));
		blk = xg_json_set(blk, "name", jv_string(name ? name : ""));
		blk = xg_json_set(blk, "input", jv_get_kind(args) == JV_KIND_OBJECT ?
				  jv_copy(args) : jv_object());
		out = jv_array_append(out, blk);
		jv_free(c);
	}
	return out;
}

/* Appends blocks as a message of role, merged into the last message when it
 * has the same role (the API wants roles to alternate). */
static jv add_message(jv msgs, const char *role, jv blocks)
{
	int n = xg_json_length_peek(msgs);
	jv last, content;
	int i, k;

	if (!xg_json_length_peek(blocks)) {
		jv_free(blocks);
		return msgs;
	}
	if (n > 0) {
		last = jv_array_get(jv_copy(msgs), n - 1);
		if (!strcmp(xg_json_string_peek(last, "role"), role)) {
			content = jv_copy(xg_json_get_peek(last, "content"));
			k = xg_json_length_peek(blocks);
			for (i = 0; i < k; i++)
				content = jv_array_append(content, jv_array_get(jv_copy(blocks), i));
			jv_free(blocks);
			last = xg_json_set(last, "content", content);
			return jv_array_set(msgs, n - 1, last);
		}
		jv_free(last);
	}
	last = xg_json_set(jv_object(), "role", jv_string(role));
	return jv_array_append(msgs, xg_json_set(last, "content", blocks));
}

static long effort_budget(const char *effort)
{
	if (!effort || !*effort || !strcmp(effort, "none"))
		return 0;
	if (!strcmp(effort, "minimal"))
		return 1024;
	if (!strcmp(effort, "low"))
		return 4096;
	if (!strcmp(effort, "medium"))
		return 10000;
	if (!strcmp(effort, "high"))
		return 24000;
	return 48000;		/* xhigh, max */
}

static int anthropic_encode(const struct xg_provider *p, jv req, jv *out, char *err, size_t errlen)
{
	const char *model = xg_json_string_peek(req, "model");
	const char *system = xg_json_string_peek(req, "system");
	jv body = jv_object(), msgs = jv_array(), src, tools;
	int64_t max_output = xg_wire_int(req, "max_output");
	long budget = effort_budget(xg_json_string_peek(req, "effort"));
	int i, n;

	if (!model) {
		snprintf(err, errlen, "request: missing field 'model'");
		goto fail;
	}
	if (max_output <= 0)
		max_output = XG_ANTHROPIC_DEFAULT_MAX;
	body = xg_json_set(body, "model", jv_string(model));
	body = xg_json_set(body, "max_tokens", jv_number((double)max_output));
	/* Automatic caching: see the top of this file. */
	body = xg_json_set(body, "cache_control", ephemeral());
	if (system && *system) {
		size_t len = strlen(system), stable = xg_wire_stable_len(req, system, len);
		jv blocks = jv_array();

		if (stable)
			blocks = jv_array_append(blocks, xg_json_set(text_block(system, stable),
						 "cache_control", ephemeral()));
		if (stable < len)
			blocks = jv_array_append(blocks, text_block(system + stable, len - stable));
		body = xg_json_set(body, "system", blocks);
	}
	src = xg_json_get_peek(req, "messages");
	n = jv_get_kind(src) == JV_KIND_ARRAY ? xg_json_length_peek(src) : 0;
	for (i = 0; i < n; i++) {
		jv m = jv_array_get(jv_copy(src), i);
		const char *role = xg_json_string_peek(m, "role");

		if (role && !strcmp(role, "user")) {
			const char *t = xg_json_string_peek(m, "text");

			msgs = add_message(msgs, "user", jv_array_append(jv_array(),
						text_block(t ? t : "", t ? strlen(t) : 0)));
		} else if (role && !strcmp(role, "assistant")) {
			msgs = add_message(msgs, "assistant", assistant_blocks(m));
		} else if (role && !strcmp(role, "tool")) {
			const char *id = xg_json_string_peek(m, "id");
			const char *o = xg_json_string_peek(m, "output");
			bool ok = true;
			jv blk;

			if (!id) {
				snprintf(err, errlen, "request: messages[%d]: missing field 'id'", i);
				jv_free(m);
				goto fail;
			}
			xg_json_bool_peek(m, "ok", &ok);
			blk = xg_json_set(jv_object(), "type", jv_string("tool_result"));
			blk = xg_json_set(blk, "tool_use_id", jv_string(id));
			blk = xg_json_set(blk, "content", jv_string(o ? o : ""));
			if (!ok)
				blk = xg_json_set(blk, "is_error", jv_true());
			msgs = add_message(msgs, "user", jv_array_append(jv_array(), blk));
		} else {
			snprintf(err, errlen, "request: messages[%d]: %s role%s%s%s", i,
				 role ? "unknown" : "missing field", role ? " '" : "",
				 role ? role : "", role ? "'" : "");
			jv_free(m);
			goto fail;
		}
		jv_free(m);
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
			fn = xg_json_set(fn, "input_schema", jv_is_valid(params) ? jv_copy(params) :
					 xg_json_set(jv_object(), "type", jv_string("object")));
			arr = jv_array_append(arr, fn);
			jv_free(t);
		}
		body = xg_json_set(body, "tools", arr);
	}
	/* The thinking budget must stay under max_tokens and at least 1024. */
	if (budget > max_output - 1024)
		budget = (long)max_output - 1024;
	if (budget >= 1024) {
		jv th = xg_json_set(jv_object(), "type", jv_string("enabled"));

		body = xg_json_set(body, "thinking", xg_json_set(th, "budget_tokens",
								 jv_number((double)budget)));
	}
	body = xg_json_set(body, "stream", jv_true());
	*out = body;
	return 0;
fail:
	jv_free(msgs);
	jv_free(body);
	return -1;
}

static const char *stop_reason(const char *r)
{
	if (!strcmp(r, "max_tokens") || !strcmp(r, "model_context_window_exceeded"))
		return "length";
	if (!strcmp(r, "tool_use"))
		return "tool_calls";
	if (!strcmp(r, "refusal"))
		return "refusal";
	return "stop";
}

static void anthropic_usage(struct xg_provider_decoder *d, jv u)
{
	long long v;

	if (jv_get_kind(u) != JV_KIND_OBJECT)
		return;
	d->usage.have = 1;
	/* message_delta repeats the counters cumulatively: the last wins. */
	if (!xg_json_int_peek(u, "input_tokens", &v))
		d->usage.raw_input = v;
	if (!xg_json_int_peek(u, "cache_read_input_tokens", &v))
		d->usage.cached_input = v;
	if (!xg_json_int_peek(u, "cache_creation_input_tokens", &v))
		d->usage.cache_write = v;
	if (!xg_json_int_peek(u, "output_tokens", &v))
		d->usage.output = v;
	d->usage.input = d->usage.raw_input + d->usage.cached_input + d->usage.cache_write;
}

static int block_start(struct xg_provider_decoder *d, long index, jv b)
{
	const char *type = xg_json_string_peek(b, "type");
	struct xg_slot *s;
	const char *v;
	int rc = 0;

	if (!type)
		return 0;
	s = xg_decoder_slot_new(d);
	s->index = index;
	if (!strcmp(type, "tool_use")) {
		s->kind = XG_SLOT_TOOL;
		xg_decoder_slot_set(&s->id, xg_json_string_peek(b, "id"));
		xg_decoder_slot_set(&s->name, xg_json_string_peek(b, "name"));
	} else if (!strcmp(type, "thinking")) {
		s->kind = XG_SLOT_THINKING;
		if ((v = xg_json_string_peek(b, "thinking")))
			rc = xg_decoder_addstr(d, &s->text, v, "a thinking block");
		if (!rc && (v = xg_json_string_peek(b, "signature")))
			rc = xg_decoder_addstr(d, &s->sig, v, "a thinking signature");
	} else if (!strcmp(type, "redacted_thinking")) {
		s->kind = XG_SLOT_REDACTED;
		if ((v = xg_json_string_peek(b, "data")))
			rc = xg_decoder_addstr(d, &s->sig, v, "a redacted thinking block");
	} else {
		s->kind = XG_SLOT_TEXT;
	}
	return rc;
}

static int block_delta(struct xg_provider_decoder *d, struct xg_slot *s, jv delta)
{
	const char *type = xg_json_string_peek(delta, "type"), *v;

	if (!type)
		return 0;
	if (!strcmp(type, "text_delta") && (v = xg_json_string_peek(delta, "text")))
		return xg_decoder_delta(d, "text", v, strlen(v));
	if (!strcmp(type, "thinking_delta") && (v = xg_json_string_peek(delta, "thinking"))) {
		if (s && xg_decoder_addstr(d, &s->text, v, "a thinking block") < 0)
			return -1;
		return xg_decoder_delta(d, "reasoning", v, strlen(v));
	}
	if (!s)
		return 0;
	if (!strcmp(type, "signature_delta") && (v = xg_json_string_peek(delta, "signature")))
		return xg_decoder_addstr(d, &s->sig, v, "a thinking signature");
	if (!strcmp(type, "input_json_delta") && (v = xg_json_string_peek(delta, "partial_json")))
		return xg_decoder_addstr(d, &s->text, v, "tool call arguments");
	return 0;
}

static int anthropic_event(struct xg_provider_decoder *d, const struct xg_sse_event *ev)
{
	jv e = jv_parse_sized(ev->data, (int)ev->data_len);
	const char *type;
	long long index = -1;
	struct xg_slot *s;
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
	xg_json_int_peek(e, "index", &index);
	if (!strcmp(type, "message_start")) {
		anthropic_usage(d, xg_json_get_peek(xg_json_get_peek(e, "message"), "usage"));
	} else if (!strcmp(type, "content_block_start")) {
		rc = block_start(d, (long)index, xg_json_get_peek(e, "content_block"));
	} else if (!strcmp(type, "content_block_delta")) {
		s = xg_decoder_slot_index(d, (long)index, 0);
		rc = block_delta(d, s, xg_json_get_peek(e, "delta"));
	} else if (!strcmp(type, "content_block_stop")) {
		s = xg_decoder_slot_index(d, (long)index, 0);
		if (s && s->kind == XG_SLOT_TOOL)
			rc = xg_decoder_tool_call(d, s);
		else if (s && (s->kind == XG_SLOT_THINKING || s->kind == XG_SLOT_REDACTED))
			rc = xg_decoder_reasoning_block(d, s);
	} else if (!strcmp(type, "message_delta")) {
		const char *r = xg_json_string_peek(xg_json_get_peek(e, "delta"), "stop_reason");

		if (r)
			d->finish = stop_reason(r);
		anthropic_usage(d, xg_json_get_peek(e, "usage"));
	} else if (!strcmp(type, "message_stop")) {
		rc = xg_decoder_finish(d, d->finish ? d->finish : "stop");
	} else if (!strcmp(type, "error")) {
		rc = xg_decoder_stream_error(d, jv_copy(e));
	}
	jv_free(e);
	return rc;
}

static int anthropic_eof(struct xg_provider_decoder *d)
{
	return -1;
}

const struct xg_wire xg_wire_anthropic = {
	"anthropic-messages", "/messages", anthropic_encode, anthropic_event, anthropic_eof
};
