/*
 * The decoder: one response's SSE bytes in, events out.
 *
 * The common part lives here: the SSE parser feeding the kind's event
 * handler (through its struct xg_wire, never by name), the end of a
 * stream, and the helpers the kinds deliver with: deltas, tool calls and
 * reasoning blocks assembled in slots, usage and finish, errors met in the
 * stream, and the ceiling on what a slot may grow to.  How each kind's
 * events read is in chat.c, responses.c and anthropic.c.
 */
#include "xg.h"
#include "provider/internal.h"

static int on_sse(void *ctx, const struct xg_sse_event *ev)
{
	struct xg_provider_decoder *d = ctx;

	if (d->done || d->failed || d->stopped)
		return 0;
	if (d->wire->event(d, ev) < 0)
		return 1;
	return 0;
}

struct xg_provider_decoder *xg_decoder_new(const struct xg_wire *w, const char *secret,
					   int (*emit)(void *ctx, jv ev), void *ctx)
{
	struct xg_provider_decoder *d = xg_calloc(1, sizeof(*d));

	d->wire = w;
	d->secret = secret;
	d->emit = emit;
	d->ctx = ctx;
	xg_sse_init(&d->sse, 0);
	return d;
}

void xg_provider_decoder_free(struct xg_provider_decoder *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nslots; i++) {
		free(d->slots[i].key);
		free(d->slots[i].id);
		free(d->slots[i].name);
		xg_buf_release(&d->slots[i].text);
		xg_buf_release(&d->slots[i].sig);
	}
	free(d->slots);
	xg_sse_release(&d->sse);
	free(d);
}

void xg_provider_decoder_set_max(struct xg_provider_decoder *d, size_t max)
{
	xg_sse_release(&d->sse);
	xg_sse_init(&d->sse, max);
}

int xg_provider_decoder_feed(struct xg_provider_decoder *d, const char *p, size_t n)
{
	if (d->stopped || d->failed)
		return -1;
	if (xg_sse_feed(&d->sse, p, n, on_sse, d) < 0 && !d->stopped && !d->failed) {
		d->failed = 1;
		xg_provider_error_set(&d->err, "protocol", "provider stream: %s", d->sse.err);
		d->err.transient = 0;
	}
	return d->stopped || d->failed ? -1 : 0;
}

int xg_provider_decoder_finish(struct xg_provider_decoder *d, struct xg_provider_error *err)
{
	int tail = xg_sse_finish(&d->sse);

	if (d->failed) {
		*err = d->err;
		return -1;
	}
	if (d->stopped)
		return -1;
	if (d->done)
		return 0;
	if (d->wire->eof(d) == 0 && d->done)
		return 0;
	if (d->failed) {
		*err = d->err;
		return -1;
	}
	xg_provider_error_set(err, "truncated", "the provider's stream ended before its final event%s",
			      tail ? " (in the middle of an event)" : "");
	return -1;
}

size_t xg_provider_decoder_sse_events(const struct xg_provider_decoder *d)
{
	return d->sse.events;
}

size_t xg_provider_decoder_delivered(const struct xg_provider_decoder *d)
{
	return d->delivered;
}

int xg_decoder_emit(struct xg_provider_decoder *d, jv ev)
{
	if (d->stopped) {
		jv_free(ev);
		return -1;
	}
	d->delivered++;
	if (d->emit(d->ctx, ev)) {
		d->stopped = 1;
		return -1;
	}
	return 0;
}

int xg_decoder_delta(struct xg_provider_decoder *d, const char *type, const char *s, size_t n)
{
	jv ev;

	if (!n)
		return 0;
	ev = xg_rec_new(type);
	ev = xg_json_set(ev, "text", xg_json_string_bytes(s, n));
	return xg_decoder_emit(d, ev);
}

int xg_decoder_tool_call(struct xg_provider_decoder *d, struct xg_slot *s)
{
	jv ev, args;
	char fallback[32];

	if (s->done)
		return 0;
	s->done = 1;
	ev = xg_rec_new("tool_call");
	if (!s->id || !*s->id) {
		/* Some servers leave the id out; the result still needs one. */
		snprintf(fallback, sizeof(fallback), "call_%d", d->tool_calls);
		xg_decoder_slot_set(&s->id, fallback);
	}
	ev = xg_json_set(ev, "id", jv_string(s->id));
	ev = xg_json_set(ev, "name", jv_string(s->name ? s->name : ""));
	args = s->text.len ? xg_json_parse(s->text.buf, s->text.len) : jv_object();
	if (jv_get_kind(args) == JV_KIND_OBJECT) {
		ev = xg_json_set(ev, "args", args);
	} else {
		jv_free(args);
		ev = xg_json_set(ev, "args", jv_object());
		ev = xg_json_set(ev, "bad_args", xg_json_string_bytes(s->text.buf, s->text.len));
	}
	d->tool_calls++;
	return xg_decoder_emit(d, ev);
}

int xg_decoder_reasoning_block(struct xg_provider_decoder *d, struct xg_slot *s)
{
	jv ev;

	if (s->done)
		return 0;
	s->done = 1;
	ev = xg_rec_new("reasoning_block");
	if (s->kind == XG_SLOT_REDACTED) {
		ev = xg_json_set(ev, "redacted", xg_json_string_bytes(s->sig.buf, s->sig.len));
		return xg_decoder_emit(d, ev);
	}
	ev = xg_json_set(ev, "text", xg_json_string_bytes(s->text.buf, s->text.len));
	if (s->sig.len)
		ev = xg_json_set(ev, "signature", xg_json_string_bytes(s->sig.buf, s->sig.len));
	if (s->key)
		ev = xg_json_set(ev, "id", jv_string(s->key));
	return xg_decoder_emit(d, ev);
}

int xg_decoder_finish(struct xg_provider_decoder *d, const char *reason)
{
	jv ev;

	if (d->usage.have) {
		ev = xg_rec_new("usage");
		ev = xg_json_set(ev, "input", jv_number((double)d->usage.input));
		ev = xg_json_set(ev, "cached_input", jv_number((double)d->usage.cached_input));
		ev = xg_json_set(ev, "cache_write", jv_number((double)d->usage.cache_write));
		ev = xg_json_set(ev, "output", jv_number((double)d->usage.output));
		ev = xg_json_set(ev, "reasoning", jv_number((double)d->usage.reasoning));
		if (xg_decoder_emit(d, ev) < 0)
			return -1;
	}
	d->done = 1;
	ev = xg_json_set(xg_rec_new("finish"), "reason", jv_string(reason));
	return xg_decoder_emit(d, ev);
}

int xg_decoder_stream_error(struct xg_provider_decoder *d, jv errobj)
{
	jv text = jv_dump_string(errobj, 0);

	d->failed = 1;
	xg_provider_classify(&d->err, 200, jv_string_value(text),
			     (size_t)jv_string_length_bytes(jv_copy(text)), -1, d->secret);
	jv_free(text);
	return -1;
}

jv xg_decoder_parse(struct xg_provider_decoder *d, const struct xg_sse_event *ev,
		    const char *what)
{
	jv e = xg_json_parse(ev->data, ev->data_len);

	if (jv_get_kind(e) == JV_KIND_OBJECT)
		return e;
	jv_free(e);
	d->failed = 1;
	xg_provider_error_set(&d->err, "protocol", "provider stream: %s is not a JSON object", what);
	return jv_invalid();
}

const char *xg_decoder_type_peek(jv e, const struct xg_sse_event *ev)
{
	const char *type = xg_json_string_peek(e, "type");

	if (type)
		return type;
	return ev->type ? ev->type : "";
}

int xg_decoder_add(struct xg_provider_decoder *d, struct xg_buf *b, const char *s, size_t n,
		   const char *what)
{
	if (xg_buf_add(b, s, n) == 0)
		return 0;
	/* Past the ceiling is the stream's fault, and asking again would
	 * only meet it again: not transient, as for an event too large. */
	d->failed = 1;
	xg_provider_error_set(&d->err, "protocol", "provider stream: %s larger than %zu bytes",
			      what, b->max);
	d->err.transient = 0;
	return -1;
}

int xg_decoder_addstr(struct xg_provider_decoder *d, struct xg_buf *b, const char *s,
		      const char *what)
{
	return xg_decoder_add(d, b, s, strlen(s), what);
}

struct xg_slot *xg_decoder_slot_new(struct xg_provider_decoder *d)
{
	struct xg_slot *s;

	XG_ALLOC_GROW(d->slots, d->nslots + 1, d->aslots);
	s = &d->slots[d->nslots++];
	memset(s, 0, sizeof(*s));
	s->index = -1;
	/* Arguments and thinking share the event ceiling. */
	xg_buf_init(&s->text, d->sse.max_event);
	xg_buf_init(&s->sig, d->sse.max_event);
	return s;
}

struct xg_slot *xg_decoder_slot_index(struct xg_provider_decoder *d, long index, int create)
{
	size_t i;
	struct xg_slot *s;

	/* The newest slot with that index wins: a server that reuses index 0
	 * for each of several calls opens a new slot per call. */
	for (i = d->nslots; i-- > 0;)
		if (!d->slots[i].key && d->slots[i].index == index)
			return &d->slots[i];
	if (!create)
		return NULL;
	s = xg_decoder_slot_new(d);
	s->index = index;
	return s;
}

struct xg_slot *xg_decoder_slot_key(struct xg_provider_decoder *d, const char *key, int create)
{
	size_t i;
	struct xg_slot *s;

	for (i = 0; i < d->nslots; i++)
		if (d->slots[i].key && !strcmp(d->slots[i].key, key))
			return &d->slots[i];
	if (!create)
		return NULL;
	s = xg_decoder_slot_new(d);
	s->key = xg_strdup(key);
	return s;
}

void xg_decoder_slot_set(char **field, const char *value)
{
	free(*field);
	*field = value ? xg_strdup(value) : NULL;
}
