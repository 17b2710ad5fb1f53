/*
 * The conversation of a run: its history loaded as provider messages, and
 * each message, tool result and model change appended as it is complete;
 * a conversation the run starts first gets its prompt's version.
 * A compaction entry (compaction.c writes it) restarts the history from
 * its summary and the messages it kept.
 */
#include "xg.h"
#include "run/internal.h"
#include "conversation.h"
#include "prompt/prompt.h"

/*
 * Appends entry (consumed) to the conversation; 0 or fails the run.  The
 * append's fsync runs while the run goes on (its next request is sent
 * meanwhile); the next append waits for it, failing as this one would
 * when it failed, and so does the run's end (xg_run_remembered).
 */
static int append(struct run *r, jv entry)
{
	int rc = xg_conv_append_async(r->conv, entry, &r->conv_sync);

	if (rc < 0 && errno == EWOULDBLOCK)
		return xg_run_fail(r, XG_EX_TEMPFAIL, "the conversation '%s' is locked", r->conv);
	if (rc < 0)
		return xg_run_fail(r, XG_EX_IOERR, "cannot append to the conversation '%s'", r->conv);
	return 0;
}

int xg_run_remember(struct run *r, jv entry)
{
	return append(r, xg_json_set(xg_redact_jv(entry), "run", jv_string(r->id)));
}

int xg_run_remembered(struct run *r)
{
	if (xg_conv_sync_wait(&r->conv_sync) < 0)
		return xg_run_fail(r, XG_EX_IOERR, "cannot append to the conversation '%s'", r->conv);
	return 0;
}

static int collect(jv entry, void *ctx)
{
	jv *all = ctx;

	*all = jv_array_append(*all, jv_copy(entry));
	return 0;
}

/* Results for calls that never got one (a run that ended mid-call), so the
 * history stays a valid exchange. */
static jv close_calls(jv msgs, jv *pending)
{
	jv_array_foreach(*pending, i, c) {
		jv m = jv_object();

		(void)i;
		m = xg_json_set(m, "role", jv_string("tool"));
		m = xg_json_set(m, "id", jv_copy(xg_json_get_peek(c, "id")));
		m = xg_json_set(m, "name", jv_copy(xg_json_get_peek(c, "name")));
		m = xg_json_set(m, "output", jv_string("not run: the run ended before this call"));
		m = xg_json_set(m, "ok", jv_false());
		msgs = jv_array_append(msgs, m);
		jv_free(c);
	}
	jv_free(*pending);
	*pending = jv_array();
	return msgs;
}

static jv without_id(jv pending, const char *id)
{
	jv out = jv_array();

	jv_array_foreach(pending, i, c) {
		const char *cid = xg_json_string_peek(c, "id");

		(void)i;
		if (cid && id && !strcmp(cid, id))
			jv_free(c);
		else
			out = jv_array_append(out, c);
	}
	jv_free(pending);
	return out;
}

/*
 * Says once that lines of the conversation were skipped.  A torn last line
 * is xg-choices start's to tell of, as it reads the conversation first;
 * a damaged line in the middle only a reader of the whole file sees.
 */
static void note_damage(struct run *r, const struct xg_conv_damage *d)
{
	jv n = xg_rec_new("notice");
	char *t;

	if (d->bad == 1)
		t = xg_asprintf("line %ld of conversation %s is not a JSON object (a damaged "
				"entry); it is skipped", d->first_bad, r->conv);
	else
		t = xg_asprintf("%ld lines of conversation %s, the first line %ld, are not JSON "
				"objects (damaged entries); they are skipped", d->bad, r->conv,
				d->first_bad);
	if (!xg_prog_records_shown())
		xg_warn("%s", t);
	n = xg_json_set(n, "from", jv_string(xg_progname));
	n = xg_json_set(n, "text", jv_string(t));
	free(t);
	xg_run_emit(r, n);
}

/* The message a summary stands as at the head of the history. */
jv xg_run_summary_message(const char *summary)
{
	char *text = xg_asprintf("The earlier part of this conversation was compacted into the "
				 "summary below, which you wrote for yourself; the messages after "
				 "it are the most recent ones, as they were.\n\n<summary>\n%s\n"
				 "</summary>", summary);
	jv m = xg_json_set(jv_object(), "role", jv_string("user"));

	m = xg_json_set(m, "text", jv_string(text));
	free(text);
	return m;
}

/*
 * The history loaded so far after a compaction entry (both consumed): the
 * summary, then the messages it kept.
 */
static jv resume_after(struct run *r, jv messages, jv entry)
{
	const char *summary = xg_json_string_peek(entry, "summary");
	long long kept = 0;
	int n = xg_json_length_peek(messages);
	jv out;

	if (!summary || xg_json_int_peek(entry, "kept", &kept) < 0 || kept < 0) {
		jv_free(entry);
		return messages;
	}
	if (kept > n)
		kept = n;
	out = jv_array_append(jv_array(), xg_run_summary_message(summary));
	out = jv_array_concat(out, jv_array_slice(messages, n - (int)kept, n));
	r->compact.head = 1;
	jv_free(entry);
	return out;
}

/* The conversation's messages and tool results as provider messages. */
int xg_run_load_history(struct run *r)
{
	struct xg_conv_damage damage;
	jv all, pending;
	int n, i;

	r->messages = jv_array();
	if (r->conv_new)
		return 0;
	all = jv_array();
	pending = jv_array();
	if (xg_conv_scan_back_checked(r->conv, collect, &all, &damage) < 0 && errno != ENOENT) {
		jv_free(all);
		jv_free(pending);
		return xg_run_fail(r, XG_EX_IOERR, "cannot read the conversation '%s'", r->conv);
	}
	if (damage.bad)
		note_damage(r, &damage);
	n = jv_array_length(jv_copy(all));
	for (i = n - 1; i >= 0; i--) {
		jv e = jv_array_get(jv_copy(all), i), m;
		const char *type = xg_json_string_peek(e, "type");
		const char *role = xg_json_string_peek(e, "role");

		if (type && !strcmp(type, "message") && role &&
		    (!strcmp(role, "user") || !strcmp(role, "assistant"))) {
			r->messages = close_calls(r->messages, &pending);
			m = jv_object();
			m = xg_json_set(m, "role", jv_string(role));
			m = xg_json_set(m, "text", jv_copy(xg_json_get_peek(e, "text")));
			if (jv_is_valid(xg_json_get_peek(e, "reasoning")))
				m = xg_json_set(m, "reasoning", jv_copy(xg_json_get_peek(e, "reasoning")));
			if (jv_get_kind(xg_json_get_peek(e, "tool_calls")) == JV_KIND_ARRAY) {
				m = xg_json_set(m, "tool_calls",
						jv_copy(xg_json_get_peek(e, "tool_calls")));
				jv_free(pending);
				pending = jv_copy(xg_json_get_peek(e, "tool_calls"));
			}
			r->messages = jv_array_append(r->messages, m);
		} else if (type && !strcmp(type, "tool_result")) {
			m = jv_object();
			m = xg_json_set(m, "role", jv_string("tool"));
			m = xg_json_set(m, "id", jv_copy(xg_json_get_peek(e, "id")));
			m = xg_json_set(m, "name", jv_copy(xg_json_get_peek(e, "name")));
			m = xg_json_set(m, "output", jv_copy(xg_json_get_peek(e, "output")));
			m = xg_json_set(m, "ok", jv_copy(xg_json_get_peek(e, "ok")));
			pending = without_id(pending, xg_json_string_peek(e, "id"));
			r->messages = jv_array_append(r->messages, m);
		} else if (type && !strcmp(type, "compaction")) {
			/* From here on the history is the summary and what it kept. */
			r->messages = close_calls(r->messages, &pending);
			r->messages = resume_after(r, r->messages, jv_copy(e));
		}
		jv_free(e);
	}
	r->messages = close_calls(r->messages, &pending);
	jv_free(pending);
	jv_free(all);
	return 0;
}

/*
 * A conversation this run starts keeps the variant version of its pack
 * (xg-config(5)): a variant_change, its first entry, as xg-prompt-compile
 * appends at the first compile for a conversation it is given.  None was
 * given it here (the run makes the id), so the pin is made here, whether
 * the pack came or was compiled, and only once the run goes ahead: a run
 * that fails before its request leaves no conversation.  It is appended as
 * the messages are, its fsync on the way while the request goes out.
 */
int xg_run_note_version(struct run *r)
{
	const char *name = xg_json_string_peek(r->pack, "variant");
	const char *version = xg_json_string_peek(r->pack, "version");
	int asked = r->o->variant || xg_json_string_peek(r->request, "variant");
	char why[512], *ref;
	int rc;
	jv e;

	if (!r->conv_new || !name || !version)
		return 0;
	/* Why it could not be goes with the run's failure. */
	ref = xg_asprintf("%s@%s", name, version);
	xg_error_keep(why, sizeof(why));
	rc = xg_variant_change(NULL, ref, asked ? "requested" : "first compile", &e);
	xg_error_keep(NULL, 0);
	if (rc)
		rc = xg_run_fail(r, rc, "cannot keep %s for the conversation '%s'%s%s", ref,
				 r->conv, *why ? ": " : "", why);
	free(ref);
	return rc ? rc : append(r, e);
}

/* A model other than the conversation's last is a model change, recorded
 * (xg-choices has written its own fallback already). */
int xg_run_note_model_change(struct run *r)
{
	jv last, e;
	const char *id = xg_json_string_peek(r->model, "id");
	const char *src = xg_json_string_peek(r->model, "source");
	const char *was;
	int rc = 0;

	if (r->conv_new)
		return 0;
	last = xg_conv_last_model(r->conv, NULL);
	was = xg_json_string_peek(last, "id");
	if (was && id && strcmp(was, id) && !(src && !strcmp(src, "fallback"))) {
		e = xg_rec_new("model_change");
		e = xg_json_set(e, "from", jv_string(was));
		e = xg_json_set(e, "to", jv_string(id));
		e = xg_json_set(e, "effort", string_or_null(xg_json_string_peek(r->model, "effort")));
		e = xg_json_set(e, "reason", jv_string(src && !strcmp(src, "flag") ? "selected" : src ? src : "selected"));
		rc = xg_run_remember(r, jv_copy(e));
		xg_run_emit(r, e);
	}
	jv_free(last);
	return rc;
}

static int add_user(struct run *r, const char *text, const char *kind, int hidden)
{
	jv m = jv_object(), e, rec;

	m = xg_json_set(m, "role", jv_string("user"));
	m = xg_json_set(m, "text", jv_string(text));
	r->messages = jv_array_append(r->messages, m);
	e = xg_rec_new("message");
	e = xg_json_set(e, "role", jv_string("user"));
	e = xg_json_set(e, "text", jv_string(text));
	if (kind)
		e = xg_json_set(e, "kind", jv_string(kind));
	/* Kept and replayed like any message, so the next request is this one
	 * plus new items; shown to no person (xg-records(5)). */
	if (hidden)
		e = xg_json_set(e, "hidden", jv_true());
	rec = jv_copy(e);
	xg_run_emit(r, rec);
	return xg_run_remember(r, e);
}

/* Adds a user message to the request, the conversation and the records. */
int xg_run_add_user_message(struct run *r, const char *text, const char *kind)
{
	return add_user(r, text, kind, 0);
}

int xg_run_add_request_message(struct run *r)
{
	bool hidden = false;

	xg_json_bool_peek(r->request, "hidden", &hidden);
	return add_user(r, xg_json_string_peek(r->request, "text"),
			xg_json_string_peek(r->request, "kind"), hidden);
}
