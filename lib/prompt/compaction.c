/*
 * What compaction sends the model (man 1 xg-run, COMPACTION), filled from
 * the pack's templates: the instruction that asks for a summary (the
 * "compaction" section, else ours), the older messages as one transcript
 * cut in the middle when they do not fit as they were, and the checkpoint
 * that follows a summary (the "checkpoint" section, else ours) with the
 * request, the todo list and the plan instructions.  When to compact and
 * what to keep is run/compaction.c's.
 */
#include "xg.h"
#include "prompt/prompt.h"

const char *xg_prompt_compaction_peek(jv pack)
{
	const char *instr = xg_json_string_peek(xg_json_get_peek(pack, "templates"), "compaction");

	return instr ? instr : "Summarise the conversation so far for yourself, to carry on the "
		"work from the summary alone: the request and the person's instructions, what "
		"was done and found, the current state, and what remains. Reply with the "
		"summary as plain text, and call no tool.";
}

/* Message m (borrowed) as transcript lines in b. */
static void transcript_add(struct xg_buf *b, jv m)
{
	const char *role = xg_json_string_peek(m, "role");
	const char *text = xg_json_string_peek(m, "text");
	jv calls = xg_json_get_peek(m, "tool_calls"), out = xg_json_get_peek(m, "output");
	bool ok = true;
	int i;

	if (role && !strcmp(role, "tool")) {
		const char *name = xg_json_string_peek(m, "name");

		xg_json_bool_peek(m, "ok", &ok);
		xg_buf_addf(b, "[tool result: %s%s]\n", name ? name : "", ok ? "" : ", failed");
		if (jv_get_kind(out) == JV_KIND_STRING)
			xg_buf_addstr(b, jv_string_value(out));
		else if (jv_is_valid(out))
			xg_json_dump(b, jv_copy(out));
		xg_buf_addstr(b, "\n\n");
		return;
	}
	xg_buf_addf(b, "[%s]\n%s\n", role ? role : "message", text ? text : "");
	for (i = 0; i < xg_json_length_peek(calls); i++) {
		jv c = jv_array_get(jv_copy(calls), i);
		const char *name = xg_json_string_peek(c, "name");

		xg_buf_addf(b, "[tool call: %s] ", name ? name : "");
		xg_json_dump(b, jv_copy(xg_json_get_peek(c, "args")));
		xg_buf_addstr(b, "\n");
		jv_free(c);
	}
	xg_buf_addstr(b, "\n");
}

/* The bytes text would take in a JSON request. */
static long long escaped_bytes(const char *text)
{
	jv s = jv_string(text);
	long long n = (long long)xg_json_dump_len_peek(s);

	jv_free(s);
	return n;
}

/* t (len bytes) cut to about raw bytes: its first quarter and its last
 * three quarters, the middle marked as left out. */
static char *head_and_tail(const char *t, size_t len, size_t raw)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t head = xg_utf8_start(t, raw / 4), tail = xg_utf8_start(t, len - (raw - raw / 4));

	if (tail < head)
		tail = head;
	xg_buf_add(&b, t, head);
	xg_buf_addf(&b, "\n\n[... %zu bytes of the conversation are left out here ...]\n\n",
		    tail - head);
	xg_buf_addstr(&b, t + tail);
	return xg_buf_detach(&b, NULL);
}

/*
 * The messages up to cut as the text of one user message that fits room
 * tokens: a transcript, its middle left out when it is longer.  The start
 * holds the request or the last summary, the end the newest work; the
 * middle is what a summary can best do without.  Escaping can make the text longer in the
 * request than in bytes, so the cut is measured as the request would
 * carry it, and made again shorter when it comes out over.
 */
char *xg_prompt_transcript_peek(jv messages, int cut, long long room)
{
	static const char intro[] = "The conversation so far, as a transcript: it is too long "
				    "for the context window as it was.\n\n";
	struct xg_buf b = XG_BUF_INIT(0);
	long long max = room * 4 - (long long)sizeof(intro) - 128, raw = max, e;
	char *t = NULL, *text;
	int i, tries;
	jv m;

	for (i = 0; i < cut; i++) {
		m = jv_array_get(jv_copy(messages), i);
		transcript_add(&b, m);
		jv_free(m);
	}
	if (max < 1024)
		max = raw = 1024;
	for (tries = 0; tries < 8; tries++) {
		free(t);
		t = (long long)b.len <= raw ? xg_strdup(b.buf) : head_and_tail(b.buf, b.len, (size_t)raw);
		if ((e = escaped_bytes(t)) <= max)
			break;
		raw = raw * max / e - 64;
		if (raw < 256)
			raw = 256;
	}
	xg_buf_release(&b);
	text = xg_asprintf("%s%s", intro, t);
	free(t);
	return text;
}

char *xg_prompt_todo_text(jv items)
{
	struct xg_buf b = XG_BUF_INIT(0);

	jv_array_foreach(items, i, it) {
		const char *c = xg_json_string_peek(it, "content");
		const char *st = xg_json_string_peek(it, "status");
		char mark = !st ? ' ' : !strcmp(st, "completed") ? 'x' :
			    !strcmp(st, "in_progress") ? '~' : ' ';

		(void)i;
		if (c)
			xg_buf_addf(&b, "%s[%c] %s", b.len ? "\n" : "", mark, c);
		jv_free(it);
	}
	jv_free(items);
	if (!b.len) {
		xg_buf_release(&b);
		return NULL;
	}
	return xg_buf_detach(&b, NULL);
}

char *xg_prompt_checkpoint_peek(jv pack, jv request, jv todo_items, const char *plan)
{
	const char *tmpl = xg_json_string_peek(xg_json_get_peek(pack, "templates"), "checkpoint");
	const char *req = xg_json_string_peek(request, "text");
	char *todo, *esc, *out;
	bool hidden = false;
	jv vars;

	todo = jv_get_kind(todo_items) == JV_KIND_ARRAY ? xg_prompt_todo_text(jv_copy(todo_items)) : NULL;
	if (!todo && !plan)
		return NULL;
	/* A person's request is data, escaped here; a hidden one (a goal's
	 * round) is the harness's own text, its data escaped already. */
	xg_json_bool_peek(request, "hidden", &hidden);
	esc = hidden ? xg_strdup(req ? req : "") : xg_prompt_escape_data(req ? req : "");
	vars = xg_json_set(jv_object(), "request", jv_string(esc));
	free(esc);
	vars = xg_json_set(vars, "todo", jv_string(todo ? todo : ""));
	vars = xg_json_set(vars, "plan", jv_string(plan ? plan : ""));
	if (!tmpl)
		tmpl = "Checkpoint after compaction; the work goes on. The request:\n"
		       "<request>\n{{request}}\n</request>\n{{?todo}}The todo list then:\n{{todo}}\n"
		       "{{/todo}}{{?plan}}The plan instructions:\n{{plan}}\n{{/plan}}"
		       "A later todo update supersedes this list.";
	out = xg_prompt_render_peek(tmpl, strlen(tmpl), vars);
	free(todo);
	jv_free(vars);
	return out;
}
