/*
 * The goal's rounds as text for the completion check (goal.h): the
 * conversation's entries since the goal's newest "set", oldest first, as
 * labelled blocks (the person's messages, the agent's replies, each tool
 * call with its arguments and each result with its outcome).  Hidden
 * messages (a round's continuation text) are left out: the check reads
 * the work, not the harness's words.  The harness's other messages (a
 * slice's end or continuation, a plan's repair: a user message with a
 * kind) are labelled as the harness's, never as the person's.  Each block
 * is clipped, and when the whole passes the ceiling the oldest blocks go,
 * with a line saying so.
 *
 * The goal's todo list, for the check too: the items of the newest
 * todo_write call that succeeded since the goal was set.
 */
#include "xg.h"
#include "goal/goal.h"
#include "prompt/prompt.h"
#include "conversation.h"

#define MESSAGE_MAX 4000
#define OUTPUT_MAX 1500
#define ARGS_MAX 1000

static int is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static int collect(jv entry, void *ctx)
{
	jv *all = ctx;

	if (is(xg_json_string_peek(entry, "type"), "goal") &&
	    is(xg_json_string_peek(entry, "event"), "set"))
		return 1;
	*all = jv_array_append(*all, jv_copy(entry));
	return 0;
}

/* Appends s, cut at max bytes (on a character boundary) with a mark. */
static void add_clipped(struct xg_buf *b, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max) {
		xg_buf_add(b, s, n);
		return;
	}
	max = xg_utf8_start(s, max);
	xg_buf_add(b, s, max);
	xg_buf_addf(b, " [... %zu more bytes]", n - max);
}

/* The calls (consumed), one a line. */
static void add_calls(struct xg_buf *b, jv calls)
{
	jv_array_foreach(calls, i, c) {
		const char *name = xg_json_string_peek(c, "name");
		struct xg_buf args = XG_BUF_INIT(0);

		(void)i;
		xg_json_dump(&args, jv_copy(xg_json_get_peek(c, "args")));
		xg_buf_addf(b, "[tool call %s] ", name ? name : "?");
		add_clipped(b, args.buf, ARGS_MAX);
		xg_buf_addch(b, '\n');
		xg_buf_release(&args);
		jv_free(c);
	}
	jv_free(calls);
}

/* One entry (only looked at) as a block; none for those the check has no
 * use for. */
static void add_entry(struct xg_buf *b, jv e)
{
	const char *type = xg_json_string_peek(e, "type");
	const char *role = xg_json_string_peek(e, "role");
	const char *text = xg_json_string_peek(e, "text");
	bool hidden = false;

	if (is(type, "message") && (is(role, "user") || is(role, "assistant"))) {
		xg_json_bool_peek(e, "hidden", &hidden);
		if (hidden)
			return;
		if (text && *text) {
			xg_buf_addstr(b, is(role, "assistant") ? "[agent] " :
					 xg_json_string_peek(e, "kind") ? "[harness] " : "[person] ");
			add_clipped(b, text, MESSAGE_MAX);
			xg_buf_addch(b, '\n');
		}
		if (jv_get_kind(xg_json_get_peek(e, "tool_calls")) == JV_KIND_ARRAY)
			add_calls(b, jv_copy(xg_json_get_peek(e, "tool_calls")));
	} else if (is(type, "tool_result")) {
		const char *name = xg_json_string_peek(e, "name");
		const char *out = xg_json_string_peek(e, "output");
		bool ok = false;

		xg_json_bool_peek(e, "ok", &ok);
		xg_buf_addf(b, "[tool result %s, %s] ", name ? name : "?", ok ? "ok" : "failed");
		add_clipped(b, out ? out : "", OUTPUT_MAX);
		xg_buf_addch(b, '\n');
	} else if (is(type, "compaction")) {
		const char *sum = xg_json_string_peek(e, "summary");

		xg_buf_addstr(b, "[summary of earlier work] ");
		add_clipped(b, sum ? sum : "", MESSAGE_MAX);
		xg_buf_addch(b, '\n');
	}
}

char *xg_goal_transcript(const char *conv, size_t max)
{
	jv all = jv_array();
	struct xg_buf out = XG_BUF_INIT(0), blk = XG_BUF_INIT(0);
	int n, i, dropped = 0;
	size_t total = 0;
	char **blocks;

	if (xg_conv_exists(conv) && xg_conv_scan_back(conv, collect, &all, NULL) < 0) {
		jv_free(all);
		return xg_strdup("");
	}
	/* Newest first: keep blocks while they fit. */
	n = jv_array_length(jv_copy(all));
	blocks = xg_calloc((size_t)n + 1, sizeof(*blocks));
	for (i = 0; i < n; i++) {
		jv e = jv_array_get(jv_copy(all), i);

		xg_buf_reset(&blk);
		add_entry(&blk, e);
		jv_free(e);
		if (!blk.len)
			continue;
		if (total + blk.len > max) {
			dropped = n - i;
			break;
		}
		total += blk.len;
		blocks[i] = xg_strndup(blk.buf, blk.len);
	}
	if (dropped)
		xg_buf_addstr(&out, "[earlier entries left out: the transcript is clipped to its "
				    "newest part]\n");
	for (i = n - 1; i >= 0; i--) {
		if (blocks[i])
			xg_buf_addstr(&out, blocks[i]);
		free(blocks[i]);
	}
	free(blocks);
	xg_buf_release(&blk);
	jv_free(all);
	return xg_buf_detach(&out, NULL);
}

/* The newest todo_write call in entries (newest first, only looked at)
 * whose result was ok: its items as text, or NULL. */
static char *todo_of(jv all)
{
	jv ok = jv_object(), found = jv_null();
	int i, k, n = xg_json_length_peek(all);

	for (i = 0; i < n && jv_get_kind(found) == JV_KIND_NULL; i++) {
		jv e = jv_array_get(jv_copy(all), i), calls = xg_json_get_peek(e, "tool_calls");
		const char *type = xg_json_string_peek(e, "type"), *id = xg_json_string_peek(e, "id");
		bool good = false;

		if (is(type, "tool_result") && is(xg_json_string_peek(e, "name"), "todo_write") && id &&
		    xg_json_bool_peek(e, "ok", &good) == 0 && good)
			ok = xg_json_set(ok, id, jv_true());
		for (k = xg_json_length_peek(calls) - 1; k >= 0 && jv_get_kind(found) == JV_KIND_NULL; k--) {
			jv c = jv_array_get(jv_copy(calls), k);
			const char *cid = xg_json_string_peek(c, "id");
			jv items = xg_json_get_peek(xg_json_get_peek(c, "args"), "items");

			if (is(xg_json_string_peek(c, "name"), "todo_write") && cid &&
			    jv_is_valid(xg_json_get_peek(ok, cid)) && jv_get_kind(items) == JV_KIND_ARRAY)
				found = jv_copy(items);
			jv_free(c);
		}
		jv_free(e);
	}
	jv_free(ok);
	if (jv_get_kind(found) != JV_KIND_ARRAY) {
		jv_free(found);
		return NULL;
	}
	return xg_prompt_todo_text(found);
}

char *xg_goal_todo(const char *conv)
{
	jv all = jv_array();
	char *s;

	if (!xg_conv_exists(conv) || xg_conv_scan_back(conv, collect, &all, NULL) < 0) {
		jv_free(all);
		return NULL;
	}
	s = todo_of(all);
	jv_free(all);
	return s;
}
