/*
 * Anthropic Messages.  The file fills in the kind's struct xg_wire: first
 * the encoder callbacks encode.c's walk calls, then the stream's event
 * handler.  The system prompt and the tools go apart from the messages,
 * which alternate between user and assistant (tool results are the user's)
 * and hold blocks.  Thinking blocks come back with their signature and are
 * sent back verbatim; tool input arrives as input_json_delta fragments
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
 * of a conversation, because a marker once sent stays.  docs/internals/providers.md
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

/* The encoder. */

static void anthropic_begin(struct xg_encode *e)
{
	if (e->max_output <= 0)
		e->max_output = XG_ANTHROPIC_DEFAULT_MAX;
	e->body = xg_json_set(e->body, "max_tokens", jv_number((double)e->max_output));
	/* Automatic caching: see the top of this file. */
	e->body = xg_json_set(e->body, "cache_control", ephemeral());
}

/* The system prompt's stable prefix carries the one fixed marker. */
static void anthropic_system(struct xg_encode *e)
{
	size_t len = e->system_len, stable = e->system_stable;
	jv blocks = jv_array();

	if (stable)
		blocks = jv_array_append(blocks, xg_json_set(text_block(e->system, stable),
							     "cache_control", ephemeral()));
	if (stable < len)
		blocks = jv_array_append(blocks, text_block(e->system + stable, len - stable));
	e->body = xg_json_set(e->body, "system", blocks);
}

static void anthropic_user(struct xg_encode *e, const char *text)
{
	e->list = add_message(e->list, "user",
			      jv_array_append(jv_array(), text_block(text, strlen(text))));
}

/* A thinking block goes back only with its signature; a redacted one as
 * it came. */
static jv anthropic_reasoning(const struct xg_encode_reasoning *b)
{
	jv blk;

	if (b->redacted) {
		blk = xg_json_set(jv_object(), "type", jv_string("redacted_thinking"));
		return xg_json_set(blk, "data", jv_string(b->redacted));
	}
	if (!b->signature || !*b->signature)
		return jv_invalid();
	blk = xg_json_set(jv_object(), "type", jv_string("thinking"));
	blk = xg_json_set(blk, "thinking", jv_string(b->text ? b->text : ""));
	return xg_json_set(blk, "signature", jv_string(b->signature));
}

static jv anthropic_text(const char *text)
{
	return text_block(text, strlen(text));
}

static jv anthropic_tool_call(const char *id, const char *name, jv args)
{
	jv blk = xg_json_set(jv_object(), "type", jv_string("tool_use"));

	blk = xg_json_set(blk, "id", jv_string(id));
	blk = xg_json_set(blk, "name", jv_string(name));
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		args = jv_object();
	}
	return xg_json_set(blk, "input", args);
}

static void anthropic_assistant(struct xg_encode *e, const char *text, jv blocks)
{
	e->list = add_message(e->list, "assistant", blocks);
}

static void anthropic_tool_result(struct xg_encode *e, const char *id, const char *output,
				  bool ok)
{
	jv blk = xg_json_set(jv_object(), "type", jv_string("tool_result"));

	blk = xg_json_set(blk, "tool_use_id", jv_string(id));
	blk = xg_json_set(blk, "content", jv_string(output));
	if (!ok)
		blk = xg_json_set(blk, "is_error", jv_true());
	e->list = add_message(e->list, "user", jv_array_append(jv_array(), blk));
}

static jv anthropic_tool(const char *name, const char *description, jv parameters)
{
	jv fn = xg_json_set(jv_object(), "name", jv_string(name));

	if (description)
		fn = xg_json_set(fn, "description", jv_string(description));
	return xg_json_set(fn, "input_schema", parameters);
}

/* The thinking budget must stay under max_tokens and at least 1024. */
static void anthropic_end(struct xg_encode *e)
{
	long budget = effort_budget(e->effort);

	if (budget > e->max_output - 1024)
		budget = (long)e->max_output - 1024;
	if (budget >= 1024) {
		jv th = xg_json_set(jv_object(), "type", jv_string("enabled"));

		e->body = xg_json_set(e->body, "thinking", xg_json_set(th, "budget_tokens",
								       jv_number((double)budget)));
	}
	e->body = xg_json_set(e->body, "stream", jv_true());
}

/* The decoder. */

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

static void anthropic_usage_peek(struct xg_provider_decoder *d, jv u)
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

static int block_start_peek(struct xg_provider_decoder *d, long index, jv b)
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

static int block_delta_peek(struct xg_provider_decoder *d, struct xg_slot *s, jv delta)
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
	jv e = xg_decoder_parse(d, ev, "an event");
	const char *type;
	long long index = -1;
	struct xg_slot *s;
	int rc = 0;

	if (!jv_is_valid(e))
		return -1;
	type = xg_decoder_type_peek(e, ev);
	xg_json_int_peek(e, "index", &index);
	if (!strcmp(type, "message_start")) {
		anthropic_usage_peek(d, xg_json_get_peek(xg_json_get_peek(e, "message"), "usage"));
	} else if (!strcmp(type, "content_block_start")) {
		rc = block_start_peek(d, (long)index, xg_json_get_peek(e, "content_block"));
	} else if (!strcmp(type, "content_block_delta")) {
		s = xg_decoder_slot_index(d, (long)index, 0);
		rc = block_delta_peek(d, s, xg_json_get_peek(e, "delta"));
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
		anthropic_usage_peek(d, xg_json_get_peek(e, "usage"));
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
	.name = "anthropic-messages",
	.path = "/messages",
	.header = "anthropic-version: 2023-06-01",
	.key_header = "x-api-key: ",
	.encode = {
		.list_key = "messages",
		.no_role = "missing field role",
		.begin = anthropic_begin,
		.system = anthropic_system,
		.user = anthropic_user,
		.reasoning = anthropic_reasoning,
		.text = anthropic_text,
		.tool_call = anthropic_tool_call,
		.assistant = anthropic_assistant,
		.tool_result = anthropic_tool_result,
		.tool = anthropic_tool,
		.end = anthropic_end,
	},
	.event = anthropic_event,
	.eof = anthropic_eof,
};
