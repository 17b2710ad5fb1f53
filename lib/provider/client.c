/*
 * The client: a provider opened from its catalog object, and a call on it.
 *
 * A call (xg_provider_stream) makes attempts until one finishes, the
 * callback stops it, or an error ends it: each attempt posts the request's
 * body, encoded again when the last attempt let it go (the encoding is the
 * same bytes each time), with a fresh decoder feeding the callback, and
 * what came of it (a finished stream, a transport failure, an error
 * response) is sorted into one of the three outcomes below.  After a failed
 * attempt retry.c decides whether another one follows.  xg_provider_abort,
 * safe in a signal handler, makes the call in flight give up.
 */
#include "xg.h"
#include <malloc.h>
#include <strings.h>
#include "provider/internal.h"

/* What one attempt came to. */
enum attempt {
	ATTEMPT_FINISHED,	/* its finish event was delivered */
	ATTEMPT_FAILED,		/* the error says why; a retry may follow */
	ATTEMPT_STOPPED		/* the callback stopped the request */
};

/* What messages name of the provider's base URL (its first n bytes). */
static void set_where(struct xg_provider *p, const char *base, size_t n, const char *key)
{
	struct xg_buf redacted = XG_BUF_INIT(0);
	char *trimmed = xg_strndup(base, n), *shown = xg_http_url_shown(trimmed);

	p->host = xg_http_url_host(trimmed, 1);
	p->hostname = xg_http_url_host(trimmed, 0);
	/* A key in the base URL's path is as secret as one in a header. */
	xg_http_redact(shown, strlen(shown), key, &redacted);
	p->shown_url = xg_buf_detach(&redacted, NULL);
	free(trimmed);
	free(shown);
}

struct xg_provider *xg_provider_new(jv config, const char *key, char *err, size_t errlen)
{
	const char *kind = xg_json_string_peek(config, "kind");
	const char *base = xg_json_string_peek(config, "base_url");
	const char *dialect = xg_json_string_peek(config, "dialect");
	const char *name = xg_json_string_peek(config, "name");
	const char *trace = getenv("XG_TRACE");
	const struct xg_wire *w = xg_wire_find(kind);
	struct xg_provider *p;
	size_t n;

	if (!w) {
		snprintf(err, errlen, "provider: unknown kind '%s'", kind ? kind : "");
		jv_free(config);
		return NULL;
	}
	if (!base || !*base) {
		snprintf(err, errlen, "provider: missing field 'base_url'");
		jv_free(config);
		return NULL;
	}
	p = xg_calloc(1, sizeof(*p));
	xg_buf_init(&p->dumped.bytes, 0);
	p->wire = w;
	p->config = config;
	n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	p->url = xg_asprintf("%.*s%s", (int)n, base, w->path);
	p->name = name && *name ? name : w->name;
	set_where(p, base, n, key);
	p->key = key && *key ? xg_strdup(key) : NULL;
	if (dialect && *dialect)
		p->dialect = dialect;
	else
		p->dialect = w->guess_dialect ? w->guess_dialect(base) : "";
	xg_provider_policy_from_env(&p->policy);
	xg_http_init(&p->http, p->policy.connect_ms, p->policy.idle_ms);
	p->http.trace = trace && *trace && strcmp(trace, "0");
	p->http.secret = p->key;
	xg_redact_add(p->key);
	p->rng = (uint64_t)xg_clock_wall_ms() ^ ((uint64_t)getpid() << 32);
	if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		p->wake[0] = p->wake[1] = -1;
	p->http.wake_fd = p->wake[0];
	xg_http_response_init(&p->last);
	return p;
}

void xg_provider_free(struct xg_provider *p)
{
	if (!p)
		return;
	xg_http_release(&p->http);
	xg_http_response_release(&p->last);
	if (p->wake[0] >= 0) {
		close(p->wake[0]);
		close(p->wake[1]);
	}
	jv_free(p->config);
	xg_provider_dumped_free(p);
	if (p->key)
		explicit_bzero(p->key, strlen(p->key));
	free(p->key);
	free(p->url);
	free(p->host);
	free(p->hostname);
	free(p->shown_url);
	free(p);
}

void xg_provider_abort(struct xg_provider *p)
{
	int saved = errno;

	p->aborted = 1;
	p->policy.attempts = 0;
	p->http.idle_ms = 1;
	if (p->wake[1] >= 0) {
		ssize_t n = write(p->wake[1], "!", 1);

		(void)n;	/* a full pipe (EAGAIN) holds a byte already */
	}
	errno = saved;
}

/* The header lines of a request; the caller frees them with
 * free_headers. */
static char **request_headers(struct xg_provider *p)
{
	char **h = xg_calloc(16, sizeof(*h));
	jv extra = xg_json_get_peek(p->config, "headers");
	int n = 0;

	h[n++] = xg_strdup("Content-Type: application/json");
	h[n++] = xg_strdup("Accept: text/event-stream");
	/* No "Expect: 100-continue" round trip before a large body. */
	h[n++] = xg_strdup("Expect:");
	if (p->wire->header)
		h[n++] = xg_strdup(p->wire->header);
	if (p->key)
		h[n++] = xg_asprintf("%s%s", p->wire->key_header, p->key);
	if (jv_get_kind(extra) == JV_KIND_OBJECT) {
		jv keys = jv_keys(jv_copy(extra));
		int i, k = xg_json_length_peek(keys);

		for (i = 0; i < k && n < 15; i++) {
			jv name = jv_array_get(jv_copy(keys), i);
			const char *val = xg_json_string_peek(extra, jv_string_value(name));

			if (val)
				h[n++] = xg_asprintf("%s: %s", jv_string_value(name), val);
			jv_free(name);
		}
		jv_free(keys);
	}
	return h;
}

/* The key travels in a header: its copies are wiped before they go. */
static void free_headers(char **h)
{
	for (size_t i = 0; h[i]; i++) {
		explicit_bzero(h[i], strlen(h[i]));
		free(h[i]);
	}
	free(h);
}

static int feed_decoder(void *ctx, const char *buf, size_t n)
{
	return xg_provider_decoder_feed(ctx, buf, n) < 0;
}

/*
 * Whether the connection was refused by a near address (this machine's or
 * its network's): the address libcurl tried, or, when it tells none, the
 * base URL's host as written.
 */
static bool refused_near(const struct xg_provider *p, const struct xg_http_response *r)
{
	if (r->curl_code != 7 || r->os_errno != ECONNREFUSED)	/* CURLE_COULDNT_CONNECT */
		return false;
	return xg_http_address_is_local(r->primary_ip[0] ? r->primary_ip : p->hostname);
}

/* The error of a transfer that ended without a whole response. */
static void transfer_error(const struct xg_provider *p, const struct xg_provider_decoder *d,
			   const struct xg_http_response *r, struct xg_provider_error *e)
{
	if (d->failed)
		*e = d->err;
	else if (r->cancelled)
		xg_provider_error_set(e, "timeout", "the request was aborted");
	else if (r->idle_timeout)
		xg_provider_error_set(e, "timeout", "no bytes from the provider for %ld ms",
				      p->http.idle_ms);
	else if (refused_near(p, r)) {
		xg_provider_error_set(e, "network", "%s refused the connection: is the server running?",
				      p->shown_url);
		e->refused_near = 1;
	} else if (r->curl_code == 6 || r->curl_code == 5) {
		/* CURLE_COULDNT_RESOLVE_HOST, _PROXY: no network, or a name
		 * misspelt; either way not a matter of minutes. */
		xg_provider_error_set(e, "network", "cannot resolve the host of %s (%s): is there "
				      "a network?", p->shown_url, r->error);
		e->refused_near = 1;
	} else
		xg_provider_error_set(e, r->curl_code == 60 || r->curl_code == 35 ? "tls" : "network",
				      "%s", r->error);
}

/* The error of a whole response that was not an event stream: an error
 * status, or a 2xx with an error object or something else in its body. */
static void response_error(const struct xg_provider *p, const struct xg_http_response *r,
			   struct xg_provider_error *e)
{
	int64_t hint = r->retry_after_ms;
	jv doc;

	if (r->status / 100 != 2) {
		if (hint < 0 && r->status == 429)
			hint = r->reset_ms;
		xg_provider_classify(e, r->status, r->body.buf, r->body.len, hint, p->key);
		return;
	}
	doc = xg_json_parse(r->body.buf, r->body.len);
	if (jv_is_valid(xg_json_get_peek(doc, "error")))
		xg_provider_classify(e, 200, r->body.buf, r->body.len, -1, p->key);
	else
		xg_provider_error_set(e, "protocol", "the provider answered with '%s', not an event stream",
				      r->content_type[0] ? r->content_type : "no content type");
	jv_free(doc);
}

/* A response that is an event stream, even an empty one. */
static bool is_stream(const struct xg_http_response *r)
{
	return r->streamed || (r->status / 100 == 2 && !r->bytes &&
			       !strncasecmp(r->content_type, "text/event-stream", 17));
}

/*
 * A request's body: the bytes made for it, and, once the messages the
 * last request kept as bytes (encode.c) are many, a hole in them where
 * those go, sent from where they are kept: a long run's requests are
 * mostly its history, which copied whole into new memory at every round
 * made each round cost more than the one before.  Below SPLIT_MIN the
 * body is one piece, sent from where it is.
 */
struct body {
	struct xg_buf own;
	size_t hole;		/* where p->dumped.bytes go; SIZE_MAX: nowhere */
};
#define SPLIT_MIN (64 * 1024)

/*
 * The body is let go once the answer has begun: a reply can stream for
 * minutes, and the request may be the largest thing the process holds.
 * The heap's free pages go back to the system with it, so that many runs
 * waiting at once cost each only what the rest of the run needs.  (The
 * kept bytes stay: the next request begins with them.)
 */
static void let_body_go(void *arg)
{
	struct body *b = arg;

	xg_buf_release(&b->own);
	malloc_trim(0);
}

/* One attempt; e is set when it failed, *delivered to how many events it
 * delivered.  body may be released on the way. */
static enum attempt one_attempt(struct xg_provider *p, const char *const *headers,
				struct body *body, const struct xg_provider_callbacks *cb,
				struct xg_provider_error *e, size_t *delivered)
{
	struct xg_provider_decoder *d = xg_decoder_new(p->wire, p->key, cb->on_event, cb->ctx);
	struct xg_http_response *r = &p->last;
	enum attempt rc = ATTEMPT_FAILED;
	struct xg_http_part parts[3] = { { body->own.buf, body->own.len } };
	int sent, n = 1;

	if (body->hole != SIZE_MAX) {
		parts[0].n = body->hole;
		parts[1].p = p->dumped.bytes.buf;
		parts[1].n = p->dumped.bytes.len;
		parts[2].p = body->own.buf + body->hole;
		parts[2].n = body->own.len - body->hole;
		n = 3;
	}
	xg_http_response_release(r);
	xg_http_response_init(r);
	p->http.answered_fn = let_body_go;
	p->http.answered_arg = body;
	sent = xg_http_post(&p->http, p->url, headers, parts, n, feed_decoder, d, r);
	*delivered = d->delivered;
	if (d->stopped)
		rc = ATTEMPT_STOPPED;
	else if (d->done && !d->failed)
		rc = ATTEMPT_FINISHED;	/* whatever happened after the final event */
	else if (sent < 0)
		transfer_error(p, d, r, e);
	else if (is_stream(r))
		rc = xg_provider_decoder_finish(d, e) == 0 ? ATTEMPT_FINISHED : ATTEMPT_FAILED;
	else
		response_error(p, r, e);
	xg_provider_decoder_free(d);
	return rc;
}

/* A key that reached the history in spite of everything still does not
 * leave: the kept bytes had it replaced as they were written (encode.c),
 * and the body's own bytes have it here, on each side of the hole. */
static void redact_body(struct body *body)
{
	if (body->hole == SIZE_MAX) {
		xg_redact_buf(&body->own);
		return;
	}
	body->hole = xg_redact_buf_range(&body->own, 0, body->hole);
	xg_redact_buf_range(&body->own, body->hole, body->own.len);
}

/* Encodes request (consumed) into body, timing it for p->last_encode_us;
 * -1 with e set when the request is malformed. */
static int encode_timed(struct xg_provider *p, jv request, struct body *body,
			struct xg_provider_error *e)
{
	struct timespec a, b;
	char msg[256] = "";
	int split = p->dumped.bytes.len >= SPLIT_MIN;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (xg_provider_encode_split(p, request, &body->own, split ? &body->hole : NULL,
				     msg, sizeof(msg)) < 0) {
		xg_provider_error_set(e, "request", "%s", msg);
		return -1;
	}
	if (!split)
		body->hole = SIZE_MAX;
	redact_body(body);
	clock_gettime(CLOCK_MONOTONIC, &b);
	p->last_encode_us = (b.tv_sec - a.tv_sec) * 1000000LL + (b.tv_nsec - a.tv_nsec) / 1000;
	return 0;
}

/* Attempts until one finishes, the callback stops the request, or retry.c
 * gives up (e then holds the last error).  body holds the request
 * encoded; an attempt that let it go has it encoded again for the next. */
static enum attempt attempts(struct xg_provider *p, jv request, struct body *body,
			     const struct xg_provider_callbacks *cb, struct xg_provider_error *e)
{
	char **headers = request_headers(p);
	enum attempt rc;
	size_t delivered;
	int attempt;

	/* The first attempt's silence counts inside the budget too. */
	p->http.idle_ms = p->policy.idle_ms < p->policy.budget_ms ? p->policy.idle_ms
								  : p->policy.budget_ms;
	p->http.connect_ms = p->policy.connect_ms;
	p->first_fail_ms = xg_clock_ms();
	for (attempt = 0;; attempt++) {
		if (p->aborted) {
			xg_provider_error_set(e, "timeout", "the request was aborted");
			rc = ATTEMPT_FAILED;
			break;
		}
		if (!body->own.alloc && encode_timed(p, jv_copy(request), body, e) < 0) {
			rc = ATTEMPT_FAILED;
			break;
		}
		rc = one_attempt(p, (const char *const *)headers, body, cb, e, &delivered);
		/* An attempt that brought events was progress: the budget
		 * counts afresh from its end. */
		if (delivered)
			p->first_fail_ms = xg_clock_ms();
		if (rc != ATTEMPT_FAILED || !xg_provider_retry_wait(p, attempt, e, delivered, cb))
			break;
	}
	free_headers(headers);
	return rc;
}

int xg_provider_stream(struct xg_provider *p, jv request,
		       const struct xg_provider_callbacks *cb, struct xg_provider_error *err)
{
	struct body body = { XG_BUF_INIT(0), SIZE_MAX };
	struct xg_provider_error e;
	enum attempt rc = ATTEMPT_FAILED;

	if (encode_timed(p, jv_copy(request), &body, &e) == 0)
		rc = attempts(p, request, &body, cb, &e);
	jv_free(request);
	xg_buf_release(&body.own);
	if (rc == ATTEMPT_FINISHED)
		return 0;
	if (rc == ATTEMPT_STOPPED)
		return XG_PROVIDER_STOPPED;
	if (err)
		*err = e;
	/* The request is over either way: the exit code stands even when the
	 * callback would stop here. */
	cb->on_event(cb->ctx, xg_provider_error_event(&e));
	return e.exit_code;
}
