/*
 * Compaction (design.md B4 and section 10, ADR-0067; man 1 xg-run,
 * COMPACTION): when the context a request would send comes near the
 * model's window, or the provider answers that it is too long, the older
 * part of the history is summarised by the run's own model and replaced by
 * that summary; the most recent part is kept as it was.
 *
 *   when      xg_run_compact_maybe before each request (the last request's
 *             input tokens plus a quarter of the bytes added since, against
 *             the window less the reserve), xg_run_compact_overflow when the
 *             loop is told of a context_overflow answer,
 *             xg_run_compact_alone for --compact
 *   the cut   find_cut: a budget of recent messages kept verbatim, cut
 *             before a user or assistant message, never between a tool
 *             call and its result
 *   the ask   summarise: the pack's system prompt and tools, the older
 *             messages and the variant's compaction section; its usage
 *             counts in the run's
 *   after it  a compaction entry in the conversation (the next run starts
 *             from it, as history.c loads it), a compaction record, and
 *             the history now the summary,
 *             the checkpoint when there is one, and the kept messages
 *
 *   the room  the summary request fits the window: when the older
 *             messages do not fit as they were, they go as one transcript
 *             instead, its middle left out (summary_request)
 *   the bound the request's own text is cut to a quarter of the window
 *             before its first request; a run whose compactions keep
 *             coming with no progress between them ends (stop_when_idle)
 *
 * The checkpoint is this run's alone: rendered once per compaction from the
 * request, the todo list of that moment and, in plan mode, the plan
 * instructions; placed right after the summary in r->messages, so every
 * later request carries the same bytes; never in the conversation, no
 * record, gone with the run.  A run that loads a summary gets none.
 *
 * The words sent (the instruction, the transcript, the checkpoint's text)
 * are prompt/compaction.c's; when and what to compact is decided here.
 */
#include "xg.h"
#include "run/internal.h"
#include "provider/provider.h"
#include "choices/choices.h"
#include "prompt/prompt.h"

/* The reserve when the catalog gives the model no output limit. */
#define RESERVE_FLOOR 8192
/* The reserve is at most this part of the window: a quarter. */
#define RESERVE_SHARE 4
/* The recent history kept verbatim: a tenth of the window, at most this. */
#define KEEP_MAX 20000
#define KEEP_SHARE 10
/* The request's text is cut to a quarter of the window, so the request,
 * the checkpoint that restates it and what compaction keeps all fit. */
#define REQUEST_SHARE 4
/* A summary request leaves a sixteenth of the window for the summary and
 * for what the wire adds around its messages, which bytes do not show. */
#define SUMMARY_SHARE 16
/* This many compactions in a row with no progress between them end the
 * run: a reply that only fills its context would otherwise go on to the
 * slice cap, summarising itself each time. */
#define IDLE_MAX 3

/* ---- sizes ---- */

static long long bytes_peek(jv v)
{
	return (long long)xg_json_dump_len_peek(v);
}

/* About four bytes a token: what a request adds before its usage is known. */
static long long tokens_of(long long bytes)
{
	return (bytes + 3) / 4;
}

/* A number of the model's catalog entry, -1 when it has none. */
static long long model_int(const struct run *r, const char *key)
{
	const char *id = xg_json_string_peek(r->model, "id");
	long long v;
	jv m;

	if (!r->have_catalog || !id)
		return -1;
	m = xg_catalog_model_peek(&r->choices.cat, id);
	if (!jv_is_valid(m) || xg_json_int_peek(m, key, &v) < 0)
		return -1;
	return v;
}

/* The context the next request would send, in tokens. */
static long long context_estimate(const struct run *r)
{
	int n = xg_json_length_peek(r->messages), i;
	const char *sys = xg_json_string_peek(r->pack, "system");
	long long b = 0;

	if (r->compact.sent > 0 && r->compact.last_input > 0 && r->compact.sent <= n) {
		for (i = r->compact.sent; i < n; i++) {
			jv m = jv_array_get(jv_copy(r->messages), i);

			b += bytes_peek(m);
			jv_free(m);
		}
		return r->compact.last_input + tokens_of(b);
	}
	b = (sys ? (long long)strlen(sys) : 0) + bytes_peek(r->tools) + bytes_peek(r->messages);
	return tokens_of(b);
}

/* Where compaction starts: the window less the reserve, -1 when the window
 * is unknown.  The reserve is the model's output limit (the floor when
 * there is none), at most a quarter of the window. */
static long long threshold(const struct run *r)
{
	long long w = model_int(r, "context_window"), out = model_int(r, "max_output_tokens");

	if (w <= 0)
		return -1;
	if (out <= 0)
		out = RESERVE_FLOOR;
	if (out > w / RESERVE_SHARE)
		out = w / RESERVE_SHARE;
	return w - out;
}

jv xg_run_compact_policy(void)
{
	jv v = jv_object();

	v = xg_json_set(v, "reserve", jv_string("max_output_tokens"));
	v = xg_json_set(v, "reserve_floor_tokens", jv_number(RESERVE_FLOOR));
	v = xg_json_set(v, "reserve_max_window_share", jv_number(1.0 / RESERVE_SHARE));
	v = xg_json_set(v, "keep_max_tokens", jv_number(KEEP_MAX));
	return xg_json_set(v, "keep_window_share", jv_number(1.0 / KEEP_SHARE));
}

static long long keep_budget(const struct run *r)
{
	long long w = model_int(r, "context_window");

	return w > 0 && w / KEEP_SHARE < KEEP_MAX ? w / KEEP_SHARE : KEEP_MAX;
}

int xg_run_compact_fit_request(struct run *r)
{
	static const char close_tag[] = "\n</stdin>";
	const char *text = xg_json_string_peek(r->request, "text");
	long long w = model_int(r, "context_window");
	size_t len, max, keep, tag = strlen(close_tag);
	struct xg_buf b = XG_BUF_INIT(0);
	char *why;
	jv n;

	if (w <= 0 || !text)
		return 0;
	/* A quarter of the window in tokens, at four bytes a token. */
	max = (size_t)(w / REQUEST_SHARE) * 4;
	len = strlen(text);
	if (len <= max)
		return 0;
	/* Room for the mark and a closing tag; a window too small for them
	 * still gets the mark. */
	keep = max > 200 ? xg_utf8_start(text, max - 200) : 0;
	xg_buf_add(&b, text, keep);
	xg_buf_addf(&b, "\n[cut here: the request is %zu bytes, more than a quarter of the "
		    "model's context window; only its first %zu are sent]", len, keep);
	/* What xg run piped keeps the block that holds it whole. */
	if (len >= tag && !strcmp(text + len - tag, close_tag))
		xg_buf_addstr(&b, close_tag);
	why = xg_asprintf("the request is longer than a quarter of the model's context window "
			  "(%lld tokens): only its first %zu bytes are sent", w, keep);
	r->request = xg_json_set(r->request, "text", jv_string(b.buf));
	xg_buf_release(&b);
	if (!xg_prog_records_shown())
		xg_warn("%s", why);
	n = xg_rec_new("notice");
	n = xg_json_set(n, "from", jv_string(xg_progname));
	xg_run_emit(r, xg_json_set(n, "text", jv_string(why)));
	free(why);
	return 0;
}

/*
 * The first message kept: the earliest cut whose messages from there on
 * fit the budget, made before a message that is not a tool result, so a
 * call and its results stay on one side.  Everything from the head up to
 * the cut is summarised; a cut at the head leaves nothing to summarise.
 */
static int find_cut(const struct run *r)
{
	int n = xg_json_length_peek(r->messages), i, cut = n;
	long long acc = 0, budget = keep_budget(r);

	for (i = n - 1; i >= r->compact.head; i--) {
		jv m = jv_array_get(jv_copy(r->messages), i);
		const char *role = xg_json_string_peek(m, "role");
		int boundary = !role || strcmp(role, "tool");

		acc += tokens_of(bytes_peek(m));
		jv_free(m);
		if (acc > budget)
			break;
		if (boundary)
			cut = i;
	}
	return cut;
}

/* ---- the summary request ---- */

static jv user_message(const char *text)
{
	jv m = xg_json_set(jv_object(), "role", jv_string("user"));

	return xg_json_set(m, "text", jv_string(text));
}

/* The most a summary request may take, in tokens: the window less a
 * sixteenth, which is left for the summary and the wire's framing; -1 when
 * the window is unknown. */
static long long summary_limit(const struct run *r)
{
	long long w = model_int(r, "context_window");

	return w > 0 ? w - w / SUMMARY_SHARE : -1;
}

/*
 * The summary request's size with the messages up to cut as they were, in
 * tokens.  When the last request reported its input, that count is truer
 * than bytes are (the provider tokenised it), so it is the start, less what
 * the summary leaves out of that request and plus what came after it;
 * otherwise it is the bytes of the whole at four a token.
 */
static long long summary_estimate(const struct run *r, int cut, const char *instr)
{
	const char *sys = xg_json_string_peek(r->pack, "system");
	long long t = tokens_of((long long)strlen(instr));
	int n = xg_json_length_peek(r->messages), sent = r->compact.sent, i;
	jv m;

	if (sent > 0 && r->compact.last_input > 0 && sent <= n) {
		t += r->compact.last_input;
		for (i = cut < sent ? cut : sent; i < (cut > sent ? cut : sent); i++) {
			m = jv_array_get(jv_copy(r->messages), i);
			t += (i < sent ? -1 : 1) * tokens_of(bytes_peek(m));
			jv_free(m);
		}
		return t;
	}
	m = jv_array_slice(jv_copy(r->messages), 0, cut);
	t += tokens_of((sys ? (long long)strlen(sys) : 0) + bytes_peek(r->tools) + bytes_peek(m));
	jv_free(m);
	return t;
}

/*
 * The request: what the run's requests hold (the system prompt, the tools,
 * the model and effort), so the provider's cache covers the older
 * messages, which are a prefix of the last request; then the instruction.
 * The tools stay because a history of tool calls needs them on some
 * providers; the instruction asks for text, and only text is read.
 *
 * A request never passes the window, or the provider refuses it: when the
 * older messages do not fit its room as they were, they go as one
 * transcript instead, cut in the middle to fit.  That loses the cache for
 * this one request, which is the price of being sent at all.
 */
static jv summary_request(const struct run *r, int cut)
{
	const char *instr = xg_prompt_compaction_peek(r->pack);
	const char *sys = xg_json_string_peek(r->pack, "system");
	long long limit = summary_limit(r), fixed;
	char *text;
	jv m;

	if (limit < 0 || summary_estimate(r, cut, instr) <= limit)
		return xg_run_request(r, jv_array_append(jv_array_slice(jv_copy(r->messages), 0, cut),
							 user_message(instr)));
	fixed = tokens_of((sys ? (long long)strlen(sys) : 0) + bytes_peek(r->tools) +
			  (long long)strlen(instr));
	text = xg_prompt_transcript_peek(r->messages, cut, limit - fixed);
	m = user_message(text);
	free(text);
	return xg_run_request(r, jv_array_append(JV_ARRAY(m), user_message(instr)));
}

/* The summary of messages up to cut in *out; 0, -1 when a signal stopped
 * it, or r->rc once the run failed.  Its events are the stall clock's, and
 * a run failed meanwhile stops it, as it stops the loop's own requests. */
static int summarise(struct run *r, int cut, char **out)
{
	struct xg_buf text = XG_BUF_INIT(0);
	struct xg_provider_error perr;
	size_t b, e;
	int rc;

	rc = xg_run_side_call(r, summary_request(r, cut), "compaction",
			      XG_RUN_SIDE_WATCHED | XG_RUN_SIDE_ENDS_WITH_RUN, &text, &perr);
	if (r->signal || rc == XG_PROVIDER_STOPPED || r->rc >= 0) {
		xg_buf_release(&text);
		return r->rc >= 0 ? r->rc : -1;
	}
	if (rc) {
		xg_buf_release(&text);
		return xg_run_provider_fail(r, rc, &perr, "compaction");
	}
	for (b = 0; b < text.len && isspace((unsigned char)text.buf[b]); b++)
		;
	for (e = text.len; e > b && isspace((unsigned char)text.buf[e - 1]); e--)
		;
	if (e == b) {
		xg_buf_release(&text);
		return xg_run_fail(r, XG_EX_UNAVAILABLE, "compaction: the model's reply held no summary");
	}
	*out = xg_strndup(text.buf + b, e - b);
	xg_buf_release(&text);
	return 0;
}

/* ---- the checkpoint ---- */

/* The items of the newest todo_write that succeeded (owned), or null. */
static jv latest_todo(jv msgs)
{
	jv ok = jv_object(), found = jv_null();
	int i;

	for (i = xg_json_length_peek(msgs) - 1; i >= 0 && jv_get_kind(found) == JV_KIND_NULL; i--) {
		jv m = jv_array_get(jv_copy(msgs), i), calls = xg_json_get_peek(m, "tool_calls");
		const char *role = xg_json_string_peek(m, "role"), *name = xg_json_string_peek(m, "name");
		const char *id = xg_json_string_peek(m, "id");
		bool good = false;
		int k;

		if (role && !strcmp(role, "tool") && name && !strcmp(name, "todo_write") && id &&
		    xg_json_bool_peek(m, "ok", &good) == 0 && good)
			ok = xg_json_set(ok, id, jv_true());
		for (k = xg_json_length_peek(calls) - 1; k >= 0 && jv_get_kind(found) == JV_KIND_NULL; k--) {
			jv c = jv_array_get(jv_copy(calls), k);
			const char *cn = xg_json_string_peek(c, "name"), *cid = xg_json_string_peek(c, "id");
			jv items = xg_json_get_peek(xg_json_get_peek(c, "args"), "items");

			if (cn && !strcmp(cn, "todo_write") && cid &&
			    jv_is_valid(xg_json_get_peek(ok, cid)) && jv_get_kind(items) == JV_KIND_ARRAY) {
				jv_free(found);
				found = jv_copy(items);
			}
			jv_free(c);
		}
		jv_free(m);
	}
	jv_free(ok);
	return found;
}

/* In plan mode, the plan instructions: the dynamic rest of the system
 * prompt after its stable prefix. */
static const char *plan_text_peek(const struct run *r)
{
	const char *sys = xg_json_string_peek(r->pack, "system");

	if (strcmp(r->mode, "plan") || !sys || r->stable < 0 || (size_t)r->stable + 2 > strlen(sys))
		return NULL;
	return sys + r->stable + 2;
}

/* The checkpoint's text for this compaction, or NULL when it found no todo
 * list and no plan. */
static char *checkpoint_text(struct run *r)
{
	jv items = latest_todo(r->messages);

	if (jv_get_kind(items) == JV_KIND_ARRAY) {
		xg_run_compact_release(r);
		r->compact.todo = items;
	} else {
		jv_free(items);
	}
	return xg_prompt_checkpoint_peek(r->pack, r->request, r->compact.todo, plan_text_peek(r));
}

/* ---- compacting ---- */

/*
 * Compacts the history now: 0 once it is the summary, the checkpoint and
 * the kept messages; 1 when there is nothing to summarise; else as
 * summarise.
 */
static int compact(struct run *r, const char *why, long long before)
{
	int n = xg_json_length_peek(r->messages), cut = find_cut(r), rc;
	char *summary = NULL, *cp = NULL;
	jv e, rec, msgs;

	if (cut <= r->compact.head)
		return 1;
	if ((rc = summarise(r, cut, &summary)))
		return rc;
	e = xg_rec_new("compaction");
	e = xg_json_set(e, "summary", jv_string(summary));
	e = xg_json_set(e, "kept", jv_number(n - cut));
	e = xg_json_set(e, "tokens_before", jv_number((double)before));
	e = xg_json_set(e, "reason", jv_string(why));
	if ((rc = xg_run_remember(r, e))) {
		free(summary);
		return rc;
	}
	rec = xg_rec_new("compaction");
	rec = xg_json_set(rec, "reason", jv_string(why));
	rec = xg_json_set(rec, "tokens_before", jv_number((double)before));
	rec = xg_json_set(rec, "summarised", jv_number(cut - r->compact.head));
	rec = xg_json_set(rec, "kept", jv_number(n - cut));
	rec = xg_json_set(rec, "summary_bytes", jv_number((double)strlen(summary)));
	xg_run_emit(r, rec);
	if (!r->o->compact)
		cp = checkpoint_text(r);
	msgs = jv_array_append(jv_array(), xg_run_summary_message(summary));
	if (cp)
		msgs = jv_array_append(msgs, user_message(cp));
	r->compact.head = cp ? 2 : 1;
	msgs = jv_array_concat(msgs, jv_array_slice(jv_copy(r->messages), cut, n));
	jv_free(r->messages);
	r->messages = msgs;
	r->compact.count++;
	r->compact.idle++;
	r->compact.fresh = 1;
	r->compact.sent = 0;
	r->compact.last_input = 0;
	free(r->reply);
	r->reply = summary;
	free(cp);
	return 0;
}

/*
 * After a compaction: ends the run once IDLE_MAX of them came with no
 * progress between them, interrupted with stop "compaction_loop"; 0 while
 * it may go on.  The last compaction is kept, so the next run on the
 * conversation starts from its summary, not from the full context.
 */
static int stop_when_idle(struct run *r)
{
	if (r->compact.idle < IDLE_MAX)
		return 0;
	r->status = "interrupted";
	r->stop = "compaction_loop";
	free(r->reason);
	r->reason = xg_asprintf("%d compactions in a row with no successful bash, edit or write "
				"between them", IDLE_MAX);
	r->rc = XG_EX_FAIL;
	return r->rc;
}

int xg_run_compact_maybe(struct run *r)
{
	long long at = threshold(r), est;
	int rc;

	/* Once compacted, the next request goes out before another try, so a
	 * history that cannot shrink does not loop. */
	if (at < 0 || r->compact.fresh)
		return 0;
	est = context_estimate(r);
	if (est <= at)
		return 0;
	if ((rc = compact(r, "context", est)) < 0)
		return -1;
	if (r->rc >= 0)
		return r->rc;
	return rc == 0 ? stop_when_idle(r) : 0;
}

int xg_run_compact_overflow(struct run *r, const struct xg_provider_error *e)
{
	int rc;

	if (!e->class || strcmp(e->class, "context_overflow"))
		return 0;
	rc = compact(r, "overflow", context_estimate(r));
	if (rc == 1)
		return 0;
	if (rc)
		return r->rc >= 0 ? r->rc : -1;
	return stop_when_idle(r) ? r->rc : 1;
}

void xg_run_compact_note_peek(struct run *r, jv usage)
{
	long long in = 0;

	r->compact.fresh = 0;
	r->compact.sent = xg_json_length_peek(r->messages);
	r->compact.last_input = xg_json_int_peek(usage, "input", &in) == 0 ? in : 0;
}

int xg_run_compact_alone(struct run *r)
{
	int rc;

	if (r->conv_new)
		return xg_run_fail(r, XG_EX_DATAERR, "there is no conversation '%s' to compact", r->conv);
	if (xg_run_load_history(r))
		return r->rc;
	rc = compact(r, "requested", context_estimate(r));
	if (rc == 1) {
		jv n = xg_rec_new("notice");

		n = xg_json_set(n, "from", jv_string(xg_progname));
		xg_run_emit(r, xg_json_set(n, "text", jv_string("nothing to compact: the "
			    "conversation's messages fit in what compaction keeps")));
	} else if (rc) {
		return r->rc >= 0 ? r->rc : -1;
	}
	r->status = "completed";
	r->rc = 0;
	return 0;
}

/* todo starts zeroed, which is no jv to free: only a list is one. */
void xg_run_compact_release(struct run *r)
{
	if (jv_get_kind(r->compact.todo) == JV_KIND_ARRAY)
		jv_free(r->compact.todo);
	r->compact.todo = jv_null();
}
