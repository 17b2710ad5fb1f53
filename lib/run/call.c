/*
 * One provider call: the request built from the run so far, the reply
 * streamed into a struct turn (its text, its reasoning blocks, its tool
 * calls, its usage and how it finished), and the reply settled into the
 * next request, the conversation and the records.
 *
 * A retry drops what the failed attempt delivered and says so in a retry
 * record.  The first event of the first reply is also where run_start goes
 * out (xg_run_begin): the rest of the input, and with it the snapshot, is
 * joined first, and nothing has touched the tree yet, since no tool runs
 * before a reply asks for it.
 *
 * A side request (xg_run_side_call) is the same call made for something
 * else, compaction's summary or a goal's completion check: a request of
 * its own, whose reply is only read for its text and its usage, and which
 * settles nothing.
 */
#include "xg.h"
#include "run/internal.h"
#include "provider/provider.h"

void xg_run_begin(struct run *r)
{
	if (r->begun)
		return;
	xg_run_join_input(r, &r->signal);
	xg_run_write_start(r);
}

void xg_run_turn_init(struct turn *t, struct run *r)
{
	t->r = r;
	xg_buf_init(&t->text, 0);
	t->reasoning = jv_array();
	t->calls = jv_array();
	t->usage = jv_null();
	t->finish[0] = 0;
}

void xg_run_turn_release(struct turn *t)
{
	xg_buf_release(&t->text);
	jv_free(t->reasoning);
	jv_free(t->calls);
	jv_free(t->usage);
}

/* Empties t for the next reply, or for the next attempt at this one. */
static void turn_reset(struct turn *t)
{
	struct run *r = t->r;

	xg_run_turn_release(t);
	xg_run_turn_init(t, r);
}

/* Each event of the reply (consumed) as it streams; nonzero stops the
 * request: the rest of the input was bad, or a signal came. */
static int on_event(void *ctx, jv ev)
{
	struct turn *t = ctx;
	const char *type = xg_json_string_peek(ev, "type");
	const char *s;

	xg_run_begin(t->r);
	xg_run_watch_event(t->r);
	if (t->r->rc >= 0) {	/* the rest of the input was bad */
		jv_free(ev);
		return 1;
	}
	if (!type)
		type = "";
	if (!strcmp(type, "text") && (s = xg_json_string_peek(ev, "text"))) {
		xg_buf_addstr(&t->text, s);
		if (t->r->o->stream) {
			jv rec = xg_rec_new("text");

			xg_run_emit(t->r, xg_json_set(rec, "text", jv_string(s)));
		}
	} else if (!strcmp(type, "reasoning_block")) {
		jv b = jv_object();

		b = xg_json_set(b, "text", jv_copy(xg_json_get_peek(ev, "text")));
		if (xg_json_string_peek(ev, "signature"))
			b = xg_json_set(b, "signature", jv_copy(xg_json_get_peek(ev, "signature")));
		t->reasoning = jv_array_append(t->reasoning, b);
	} else if (!strcmp(type, "tool_call")) {
		jv c = jv_object();

		c = xg_json_set(c, "id", jv_copy(xg_json_get_peek(ev, "id")));
		c = xg_json_set(c, "name", jv_copy(xg_json_get_peek(ev, "name")));
		c = xg_json_set(c, "args", jv_copy(xg_json_get_peek(ev, "args")));
		if (jv_is_valid(xg_json_get_peek(ev, "bad_args")))
			c = xg_json_set(c, "bad_args", jv_copy(xg_json_get_peek(ev, "bad_args")));
		t->calls = jv_array_append(t->calls, c);
	} else if (!strcmp(type, "usage")) {
		jv_free(t->usage);
		t->usage = jv_copy(ev);
	} else if (!strcmp(type, "finish") && (s = xg_json_string_peek(ev, "reason"))) {
		snprintf(t->finish, sizeof(t->finish), "%s", s);
	}
	jv_free(ev);
	return t->r->signal != 0;
}

/* Each wait before a retry, as a retry record. */
static void on_retry(void *ctx, const struct xg_provider_retry *rr)
{
	struct turn *t = ctx;

	xg_run_begin(t->r);
	if (t->r->rc >= 0)
		xg_provider_abort(t->r->prov);
	xg_run_emit(t->r, xg_run_retry_record(rr, NULL));
	xg_run_watch_retry(t->r, rr->attempt, rr->of, rr->delay_ms);
	/* What the failed attempt delivered is dropped: the next starts over. */
	if (rr->partial)
		turn_reset(t);
}

jv xg_run_retry_record(const struct xg_provider_retry *rr, const char *purpose)
{
	jv v = xg_rec_new("retry");

	v = xg_json_set(v, "provider", string_or_null(rr->provider));
	v = xg_json_set(v, "host", string_or_null(rr->host));
	v = xg_json_set(v, "attempt", jv_number(rr->attempt));
	v = xg_json_set(v, "of", jv_number(rr->of));
	v = xg_json_set(v, "delay_ms", jv_number((double)rr->delay_ms));
	v = xg_json_set(v, "reason", string_or_null(rr->reason));
	if (rr->message && *rr->message)
		v = xg_json_set(v, "message", jv_string(rr->message));
	v = xg_json_set(v, "partial", jv_bool(rr->partial));
	return purpose ? xg_json_set(v, "for", jv_string(purpose)) : v;
}

jv xg_run_request(const struct run *r, jv messages)
{
	jv q = jv_object();
	const char *name = xg_json_string_peek(r->model, "name");
	const char *id = xg_json_string_peek(r->model, "id");
	const char *effort = xg_json_string_peek(r->model, "effort");

	if (!name)
		name = strchr(id, '/') ? strchr(id, '/') + 1 : id;
	q = xg_json_set(q, "model", jv_string(name));
	q = xg_json_set(q, "system", jv_copy(xg_json_get_peek(r->pack, "system")));
	if (r->stable >= 0)
		q = xg_json_set(q, "system_stable", jv_number((double)r->stable));
	q = xg_json_set(q, "messages", messages);
	q = xg_json_set(q, "tools", jv_copy(r->tools));
	if (effort)
		q = xg_json_set(q, "effort", jv_string(effort));
	return xg_json_set(q, "cache_key", jv_string(r->conv));
}

void xg_run_count_usage_peek(struct run *r, jv u, const char *purpose)
{
	long long in = 0, cached = 0, out = 0;
	jv v;

	if (jv_get_kind(u) != JV_KIND_OBJECT)
		return;
	xg_json_int_peek(u, "input", &in);
	xg_json_int_peek(u, "cached_input", &cached);
	xg_json_int_peek(u, "output", &out);
	r->in += in;
	r->cached += cached;
	r->output += out;
	v = xg_rec_new("usage");
	v = xg_json_set(v, "input", jv_number((double)in));
	v = xg_json_set(v, "cached_input", jv_number((double)cached));
	v = xg_json_set(v, "output", jv_number((double)out));
	v = xg_json_set(v, "cumulative", xg_run_usage(r->in, r->cached, r->output));
	xg_run_emit(r, purpose ? xg_json_set(v, "for", jv_string(purpose)) : v);
}

int xg_run_provider_fail(struct run *r, int rc, const struct xg_provider_error *perr,
			 const char *purpose)
{
	r->provider_error = perr->class;
	return xg_run_fail(r, rc, "%s%sprovider '%s' (%s): %s: %s", purpose ? purpose : "",
			   purpose ? ": " : "", r->prov->name, r->prov->host,
			   perr->class ? perr->class : "error", perr->message);
}

/* The reply as an assistant message: in the request, the conversation and
 * the records. */
static int settle(struct run *r, struct turn *t)
{
	jv m = jv_object(), e;
	int has_calls = jv_array_length(jv_copy(t->calls)) > 0;

	m = xg_json_set(m, "role", jv_string("assistant"));
	m = xg_json_set(m, "text", xg_json_string_bytes(t->text.buf, t->text.len));
	if (jv_array_length(jv_copy(t->reasoning)))
		m = xg_json_set(m, "reasoning", jv_copy(t->reasoning));
	if (has_calls) {
		jv calls = jv_array();

		jv_array_foreach(t->calls, i, c) {
			(void)i;
			calls = jv_array_append(calls, jv_object_delete(c, jv_string("bad_args")));
		}
		m = xg_json_set(m, "tool_calls", calls);
	}
	r->messages = jv_array_append(r->messages, jv_copy(m));
	free(r->reply);
	r->reply = xg_strndup(t->text.buf, t->text.len);
	e = xg_rec_new("message");
	jv_object_foreach(m, k, v)
		e = jv_object_set(e, k, v);
	jv_free(m);
	e = xg_json_set(e, "model", jv_copy(xg_json_get_peek(r->model, "id")));
	e = xg_json_set(e, "effort", string_or_null(xg_json_string_peek(r->model, "effort")));
	if (t->finish[0])
		e = xg_json_set(e, "finish", jv_string(t->finish));
	xg_run_emit(r, jv_copy(e));
	return xg_run_remember(r, jv_object_delete(e, jv_string("finish")));
}

/* Sends the request and streams the reply into t. */
static int stream(struct run *r, struct turn *t, struct xg_provider_error *perr)
{
	struct xg_provider_callbacks cb = { on_event, on_retry, t };
	int rc;

	r->requests++;
	xg_run_watch_request(r, 1);
	r->in_flight = r->prov;
	__sync_synchronize();
	/* A signal that came before the provider was in reach still aborts
	 * it: the abort is for good, so no retry wait can outlast it. */
	if (r->signal)
		xg_provider_abort(r->prov);
	rc = xg_provider_stream(r->prov, xg_run_request(r, jv_copy(r->messages)), &cb, perr);
	r->in_flight = NULL;
	xg_run_watch_request(r, 0);
	xg_run_begin(r);
	return rc;
}

/* ---- side requests ---- */

/* A side request's reply as it streams. */
struct side {
	struct run *r;
	const char *purpose;
	int flags;
	struct xg_buf *text;
	jv usage;
};

/* Only the text is read: a tool call in the reply is not run.  As with the
 * loop's replies, the first event writes run_start: a summary can be the
 * run's first request (a check, which follows a reply, never is). */
static int side_on_event(void *ctx, jv ev)
{
	struct side *s = ctx;
	const char *type = xg_json_string_peek(ev, "type"), *t;

	xg_run_begin(s->r);
	if (s->flags & XG_RUN_SIDE_WATCHED)
		xg_run_watch_event(s->r);
	if ((s->flags & XG_RUN_SIDE_ENDS_WITH_RUN) && s->r->rc >= 0) {
		jv_free(ev);
		return 1;
	}
	if (type && !strcmp(type, "text") && (t = xg_json_string_peek(ev, "text")))
		xg_buf_addstr(s->text, t);
	else if (type && !strcmp(type, "usage")) {
		jv_free(s->usage);
		s->usage = jv_copy(ev);
	}
	jv_free(ev);
	return s->r->signal != 0;
}

static void side_on_retry(void *ctx, const struct xg_provider_retry *rr)
{
	struct side *s = ctx;

	xg_run_begin(s->r);
	if ((s->flags & XG_RUN_SIDE_ENDS_WITH_RUN) && s->r->rc >= 0)
		xg_provider_abort(s->r->prov);
	xg_run_emit(s->r, xg_run_retry_record(rr, s->purpose));
	if (rr->partial)
		xg_buf_setlen(s->text, 0);
}

int xg_run_side_call(struct run *r, jv request, const char *purpose, int flags,
		     struct xg_buf *text, struct xg_provider_error *perr)
{
	struct side s = { r, purpose, flags, text, jv_null() };
	struct xg_provider_callbacks cb = { side_on_event, side_on_retry, &s };
	int rc;

	memset(perr, 0, sizeof(*perr));
	r->requests++;
	r->in_flight = r->prov;
	if (r->signal)
		xg_provider_abort(r->prov);
	rc = xg_provider_stream(r->prov, request, &cb, perr);
	r->in_flight = NULL;
	xg_run_begin(r);
	xg_run_count_usage_peek(r, s.usage, purpose);
	jv_free(s.usage);
	return rc;
}

int xg_run_call(struct run *r, struct turn *t, struct xg_provider_error *perr)
{
	int rc;

	turn_reset(t);
	memset(perr, 0, sizeof(*perr));
	rc = stream(r, t, perr);
	xg_run_count_usage_peek(r, t->usage, NULL);
	return rc;
}

int xg_run_settle(struct run *r, struct turn *t, int rc, const struct xg_provider_error *perr)
{
	if (r->signal || rc == -1 || r->rc >= 0)
		return r->rc >= 0 ? r->rc : -1;
	if (rc)
		return xg_run_provider_fail(r, rc, perr, NULL);
	return settle(r, t);
}
