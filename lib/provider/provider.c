/*
 * The client: encode a request for its wire kind, send it, decode the
 * stream, classify what went wrong, and retry what is worth retrying.
 */
#include "xg.h"
#include <poll.h>
#include <strings.h>
#include "provider/internal.h"

const struct xg_wire *xg_wire_find(const char *kind)
{
	static const struct xg_wire *const wires[] = {
		&xg_wire_openai_responses, &xg_wire_openai_chat, &xg_wire_anthropic
	};
	size_t i;

	if (!kind)
		return NULL;
	for (i = 0; i < sizeof(wires) / sizeof(wires[0]); i++)
		if (!strcmp(wires[i]->name, kind))
			return wires[i];
	return NULL;
}

int64_t xg_wire_int(jv obj, const char *key)
{
	long long v;

	return xg_json_int_peek(obj, key, &v) < 0 ? -1 : v;
}

size_t xg_wire_stable_len(jv req, const char *system, size_t len)
{
	int64_t n = xg_wire_int(req, "system_stable");

	if (n < 0 || (size_t)n >= len)
		return len;
	while (n > 0 && ((unsigned char)system[n] & 0xc0) == 0x80)
		n--;
	return (size_t)n;
}

jv xg_wire_args_text(jv call)
{
	jv args = xg_json_get_peek(call, "args"), s;

	if (jv_get_kind(args) == JV_KIND_STRING) {
		s = jv_copy(args);
	} else if (jv_get_kind(args) == JV_KIND_OBJECT) {
		s = jv_dump_string(jv_copy(args), 0);
	} else {
		s = jv_string("{}");
	}
	jv_free(call);
	return s;
}

/* The retry policy. */

void xg_provider_policy_default(struct xg_provider_policy *pol)
{
	pol->attempts = 8;
	pol->base_ms = 2000;
	pol->cap_ms = 60000;
	pol->idle_ms = 300000;
	pol->connect_ms = 30000;
}

static int parse_ms(const char *s, size_t n, long *out)
{
	long v = 0;
	size_t i;

	if (!n || n > 9)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int xg_provider_policy_parse(struct xg_provider_policy *pol, const char *spec,
			     char *err, size_t errlen)
{
	const char *p = spec, *end, *eq;
	int rc = 0;
	long v;

	if (!strcmp(spec, "off") || !strcmp(spec, "0")) {
		pol->attempts = 0;
		return 0;
	}
	while (*p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (end == p) {
			/* an empty item, as in "a=1,,b=2" */
		} else if (!eq || parse_ms(eq + 1, (size_t)(end - eq - 1), &v) < 0) {
			if (!rc)
				snprintf(err, errlen, "XG_RETRY: '%.*s' is not name=number",
					 (int)(end - p), p);
			rc = -1;
		} else if ((size_t)(eq - p) == 8 && !memcmp(p, "attempts", 8) && v <= 100) {
			pol->attempts = (int)v;
		} else if ((size_t)(eq - p) == 4 && !memcmp(p, "base", 4)) {
			pol->base_ms = v;
		} else if ((size_t)(eq - p) == 3 && !memcmp(p, "cap", 3)) {
			pol->cap_ms = v;
		} else if ((size_t)(eq - p) == 4 && !memcmp(p, "idle", 4) && v > 0) {
			pol->idle_ms = v;
		} else if ((size_t)(eq - p) == 7 && !memcmp(p, "connect", 7) && v > 0) {
			pol->connect_ms = v;
		} else {
			if (!rc)
				snprintf(err, errlen, "XG_RETRY: unknown or out-of-range '%.*s'",
					 (int)(end - p), p);
			rc = -1;
		}
		p = *end ? end + 1 : end;
	}
	return rc;
}

void xg_provider_policy_from_env(struct xg_provider_policy *pol)
{
	const char *spec = getenv("XG_RETRY");
	char err[160];

	xg_provider_policy_default(pol);
	if (spec && *spec && xg_provider_policy_parse(pol, spec, err, sizeof(err)) < 0)
		xg_warn("%s; ignoring that part", err);
}

static uint64_t next_random(uint64_t *s)
{
	/* xorshift64*: plenty for jitter. */
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

long xg_provider_retry_delay(const struct xg_provider_policy *pol, int attempt,
			     int64_t hint_ms, uint64_t *rng)
{
	double d;
	int i;

	if (hint_ms >= 0) {
		d = (double)hint_ms;
	} else {
		d = (double)pol->base_ms;
		for (i = 1; i < attempt && d < (double)pol->cap_ms; i++)
			d *= 2;
		/* 80% to 120%, so clients that failed together spread out. */
		d *= 0.8 + 0.4 * ((double)(next_random(rng) >> 11) / 9007199254740992.0);
	}
	if (d > (double)pol->cap_ms)
		d = (double)pol->cap_ms;
	return (long)d;
}

/* Errors. */

static const struct {
	const char *class;
	int transient;
	int exit_code;
} classes[] = {
	{ "rate_limit", 1, XG_EX_TEMPFAIL },
	{ "overloaded", 1, XG_EX_UNAVAILABLE },
	{ "server", 1, XG_EX_UNAVAILABLE },
	{ "network", 1, XG_EX_UNAVAILABLE },
	{ "timeout", 1, XG_EX_UNAVAILABLE },
	{ "truncated", 1, XG_EX_UNAVAILABLE },
	{ "protocol", 1, XG_EX_UNAVAILABLE },
	{ "tls", 0, XG_EX_UNAVAILABLE },
	{ "usage_limit", 0, XG_EX_TEMPFAIL },
	{ "context_overflow", 0, XG_EX_DATAERR },
	{ "auth", 0, XG_EX_NOPERM },
	{ "not_found", 0, XG_EX_CONFIG },
	{ "bad_request", 0, XG_EX_SOFTWARE },
	{ "request", 0, XG_EX_DATAERR },
};

static void set_class(struct xg_provider_error *e, const char *class)
{
	size_t i;

	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(classes[i].class, class)) {
			e->class = classes[i].class;
			e->transient = classes[i].transient;
			e->exit_code = classes[i].exit_code;
			return;
		}
	e->class = "server";
	e->transient = 1;
	e->exit_code = XG_EX_UNAVAILABLE;
}

void xg_provider_error_set(struct xg_provider_error *e, const char *class, const char *fmt, ...)
{
	va_list ap;

	memset(e, 0, sizeof(*e));
	e->retry_after_ms = -1;
	set_class(e, class);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

/*
 * The phrases providers use when a body has no code or type to go by; each
 * is matched whole, never a loose word, so a message that merely mentions
 * a context window or a usage policy is classed by its status.
 */
static const char *const context_phrases[] = {
	"prompt is too long",				/* Anthropic */
	"input length and `max_tokens` exceed context limit",	/* Anthropic */
	"maximum context length is",			/* OpenAI, vLLM, OpenRouter */
	"exceeds the context window of this model",	/* OpenAI Responses */
	"the request exceeds the available context size",	/* llama.cpp */
	NULL
};

static const char *const usage_phrases[] = {
	"you exceeded your current quota",		/* OpenAI */
	"credit balance is too low",			/* Anthropic */
	"reached your specified api usage limits",	/* Anthropic */
	NULL
};

static int says(const char *msg, const char *const *phrases)
{
	for (; msg && *phrases; phrases++)
		if (strcasestr(msg, *phrases))
			return 1;
	return 0;
}

static int is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

/* The error's code or type when it names a class outright (an overflow,
 * a quota, a bad key, a rate limit, an overload); else NULL. */
static const char *class_of_code(const char *type, const char *code)
{
	if (is(code, "context_length_exceeded") || is(type, "exceed_context_size_error") ||
	    is(code, "exceed_context_size_error") || is(code, "string_above_max_length"))
		return "context_overflow";
	if (is(type, "authentication_error") || is(type, "permission_error") ||
	    is(code, "invalid_api_key"))
		return "auth";
	if (is(code, "insufficient_quota") || is(type, "insufficient_quota") ||
	    is(type, "billing_error"))
		return "usage_limit";
	if (is(type, "rate_limit_error") || is(code, "rate_limit_exceeded") ||
	    is(type, "rate_limit_exceeded"))
		return "rate_limit";
	if (is(type, "overloaded_error") || is(code, "server_is_overloaded") || is(code, "slow_down"))
		return "overloaded";
	return NULL;
}

/* A generic server error says less than a status such as 429 or 503. */
static int is_server_error(const char *type, const char *code)
{
	return is(type, "api_error") || is(type, "server_error") || is(code, "server_error") ||
	       is(code, "internal_error");
}

/* Codes and types that name a class first, then the statuses that settle
 * it, then a generic server error's type, and only for a plain 400 (or an
 * error inside a stream) the known phrases. */
static const char *pick_class(long status, const char *type, const char *code, const char *msg)
{
	const char *class = class_of_code(type, code);

	if (class)
		return class;
	if (status == 401 || status == 403)
		return "auth";
	if (status == 402)
		return "usage_limit";
	if (status == 413)
		return "context_overflow";
	if (status == 429)
		return "rate_limit";
	if (status == 529 || status == 503)
		return "overloaded";
	if (status == 408)
		return "timeout";
	if (status >= 500)
		return "server";
	if (status == 404)
		return "not_found";
	if (is_server_error(type, code))
		return "server";
	if (says(msg, context_phrases))
		return "context_overflow";
	if (says(msg, usage_phrases))
		return "usage_limit";
	if (status >= 400)
		return "bad_request";
	return "server";
}

void xg_provider_classify(struct xg_provider_error *e, long status, const char *body,
			  size_t len, int64_t hint_ms, const char *secret)
{
	jv doc = len ? jv_parse_sized(body, (int)len) : jv_invalid();
	jv eo = doc, v;
	const char *type = NULL, *code = NULL, *msg = NULL;
	char codebuf[32];
	long long icode;
	struct xg_buf text = XG_BUF_INIT(0), red = XG_BUF_INIT(0);
	int in_stream = status / 100 == 2;

	v = xg_json_get_peek(doc, "error");
	if (jv_get_kind(v) == JV_KIND_OBJECT)
		eo = v;
	else if (jv_get_kind(v) == JV_KIND_STRING)
		msg = jv_string_value(v);	/* Ollama: {"error": "..."} */
	type = xg_json_string_peek(eo, "type");
	code = xg_json_string_peek(eo, "code");
	if (!msg)
		msg = xg_json_string_peek(eo, "message");
	if (!code && !xg_json_int_peek(eo, "code", &icode)) {
		/* llama.cpp numbers its errors like HTTP statuses. */
		snprintf(codebuf, sizeof(codebuf), "%lld", icode);
		code = codebuf;
		if (status / 100 == 2 && icode >= 400 && icode < 600)
			status = (long)icode;
	}
	if (is(type, "error"))
		type = NULL;	/* Responses' {"type":"error", "code":...} */
	memset(e, 0, sizeof(*e));
	set_class(e, pick_class(status, type, code, msg));
	e->status = status;
	e->retry_after_ms = hint_ms;
	if (!in_stream)
		xg_buf_addf(&text, "HTTP %ld", status);
	else
		xg_buf_addstr(&text, "error in the stream");
	if (msg && *msg)
		xg_buf_addf(&text, ": %s", msg);
	else if (type || code)
		xg_buf_addf(&text, ": %s", code ? code : type);
	else if (len && !jv_is_valid(doc))
		xg_buf_addf(&text, ": %.*s", (int)(len > 200 ? 200 : len), body);
	xg_http_redact(text.buf, text.len, secret, &red);
	snprintf(e->message, sizeof(e->message), "%s", red.buf);
	/* Control characters from a body stay out of one-line messages. */
	for (char *c = e->message; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	xg_buf_release(&text);
	xg_buf_release(&red);
	jv_free(doc);
}

jv xg_provider_error_event(const struct xg_provider_error *e)
{
	jv ev = xg_rec_new("error");

	ev = xg_json_set(ev, "class", jv_string(e->class ? e->class : "server"));
	ev = xg_json_set(ev, "message", xg_json_string_bytes(e->message, strlen(e->message)));
	if (e->status)
		ev = xg_json_set(ev, "status", jv_number((double)e->status));
	ev = xg_json_set(ev, "transient", jv_bool(e->transient));
	return xg_json_set(ev, "exit", jv_number(e->exit_code));
}

/* The client. */

static const char *guess_dialect(const struct xg_wire *w, const char *url)
{
	if (w != &xg_wire_openai_chat)
		return "";
	if (strstr(url, "api.openai.com"))
		return "openai";
	if (strstr(url, "openrouter.ai"))
		return "openrouter";
	if (strstr(url, ":11434"))
		return "ollama";
	return "generic";
}

struct xg_provider *xg_provider_new(jv config, const char *key, char *err, size_t errlen)
{
	const char *kind = xg_json_string_peek(config, "kind");
	const char *base = xg_json_string_peek(config, "base_url");
	const char *dialect = xg_json_string_peek(config, "dialect");
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
	p->wire = w;
	p->config = config;
	n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	p->url = xg_asprintf("%.*s%s", (int)n, base, w->path);
	p->key = key && *key ? xg_strdup(key) : NULL;
	p->dialect = dialect && *dialect ? dialect : guess_dialect(w, base);
	xg_provider_policy_from_env(&p->policy);
	xg_http_init(&p->http, p->policy.connect_ms, p->policy.idle_ms);
	p->http.trace = trace && *trace && strcmp(trace, "0");
	p->http.secret = p->key;
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
	if (p->key)
		explicit_bzero(p->key, strlen(p->key));
	free(p->key);
	free(p->url);
	free(p);
}

int xg_provider_encode(struct xg_provider *p, jv request, struct xg_buf *body,
		       char *err, size_t errlen)
{
	jv out;
	int rc;

	if (jv_get_kind(request) != JV_KIND_OBJECT) {
		snprintf(err, errlen, "request: not a JSON object");
		jv_free(request);
		return -1;
	}
	rc = p->wire->encode(p, request, &out, err, errlen);
	jv_free(request);
	if (rc < 0)
		return -1;
	return xg_json_dump(body, out);
}

/* The header lines of a request; the caller frees each and the array. */
static char **request_headers(struct xg_provider *p)
{
	char **h = xg_calloc(16, sizeof(*h));
	jv extra = xg_json_get_peek(p->config, "headers");
	int n = 0;

	h[n++] = xg_strdup("Content-Type: application/json");
	h[n++] = xg_strdup("Accept: text/event-stream");
	/* No "Expect: 100-continue" round trip before a large body. */
	h[n++] = xg_strdup("Expect:");
	if (p->wire == &xg_wire_anthropic) {
		h[n++] = xg_strdup("anthropic-version: 2023-06-01");
		if (p->key)
			h[n++] = xg_asprintf("x-api-key: %s", p->key);
	} else if (p->key) {
		h[n++] = xg_asprintf("Authorization: Bearer %s", p->key);
	}
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

/*
 * Waits ms before a retry, or less once the request is aborted.  Checking
 * the flag and then sleeping would sleep out the whole wait when the signal
 * came between the two; the wait is a poll on the wake pipe instead, which
 * the abort's byte makes readable whenever it came.  The byte stays in the
 * pipe: an abort is for good.
 */
static void wait_ms(struct xg_provider *p, long ms)
{
	struct pollfd pfd = { p->wake[0], POLLIN, 0 };
	int64_t end = xg_clock_ms() + ms, left;

	while (!p->aborted && (left = end - xg_clock_ms()) > 0)
		if (poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left) > 0)
			break;
}

/* What one attempt came to: 0 for success, -1 with e set, -2 stopped. */
static int one_attempt(struct xg_provider *p, const char *const *headers, struct xg_buf *body,
		       const struct xg_provider_callbacks *cb, struct xg_provider_error *e,
		       size_t *delivered)
{
	struct xg_provider_decoder *d = xg_provider_decoder_new(p->wire->name, cb->on_event, cb->ctx);
	struct xg_http_response *r = &p->last;
	int rc;

	d->secret = p->key;
	d->dialect = p->dialect;
	xg_http_response_release(r);
	xg_http_response_init(r);
	rc = xg_http_post(&p->http, p->url, headers, body->buf, body->len, feed_decoder, d, r);
	*delivered = d->delivered;
	if (d->stopped) {
		rc = -2;
	} else if (d->done && !d->failed) {
		rc = 0;	/* whatever happened after the final event */
	} else if (rc < 0 && d->failed) {
		*e = d->err;
	} else if (rc < 0 && r->cancelled) {
		xg_provider_error_set(e, "timeout", "the request was aborted");
	} else if (rc < 0 && r->idle_timeout) {
		xg_provider_error_set(e, "timeout", "no bytes from the provider for %ld ms",
				      p->http.idle_ms);
	} else if (rc < 0) {
		xg_provider_error_set(e, r->curl_code == 60 || r->curl_code == 35 ? "tls" : "network",
				      "%s", r->error);
	} else if (r->streamed || (r->status / 100 == 2 && !r->bytes &&
				    !strncasecmp(r->content_type, "text/event-stream", 17))) {
		rc = xg_provider_decoder_finish(d, e);
	} else if (r->status / 100 == 2) {
		jv doc = jv_parse_sized(r->body.buf, (int)r->body.len);

		if (jv_is_valid(xg_json_get_peek(doc, "error")))
			xg_provider_classify(e, 200, r->body.buf, r->body.len, -1, p->key);
		else
			xg_provider_error_set(e, "protocol", "the provider answered with '%s', not an event stream",
					      r->content_type[0] ? r->content_type : "no content type");
		jv_free(doc);
		rc = -1;
	} else {
		int64_t hint = r->retry_after_ms;

		if (hint < 0 && r->status == 429)
			hint = r->reset_ms;
		xg_provider_classify(e, r->status, r->body.buf, r->body.len, hint, p->key);
		rc = -1;
	}
	xg_provider_decoder_free(d);
	return rc;
}

int xg_provider_stream(struct xg_provider *p, jv request,
		       const struct xg_provider_callbacks *cb, struct xg_provider_error *err)
{
	struct xg_buf body = XG_BUF_INIT(0);
	struct xg_provider_error e;
	struct xg_provider_retry rr;
	char msg[256];
	char **headers;
	struct timespec a, b;
	size_t delivered;
	int attempt, rc;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (xg_provider_encode(p, request, &body, msg, sizeof(msg)) < 0) {
		xg_provider_error_set(&e, "request", "%s", msg);
		goto failed;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	p->last_encode_us = (b.tv_sec - a.tv_sec) * 1000000LL + (b.tv_nsec - a.tv_nsec) / 1000;
	headers = request_headers(p);
	p->http.idle_ms = p->policy.idle_ms;
	p->http.connect_ms = p->policy.connect_ms;
	for (attempt = 0;; attempt++) {
		if (p->aborted) {
			xg_provider_error_set(&e, "timeout", "the request was aborted");
			rc = -1;
			break;
		}
		rc = one_attempt(p, (const char *const *)headers, &body, cb, &e, &delivered);
		if (rc == 0 || rc == -2)
			break;
		if (!e.transient || attempt >= p->policy.attempts)
			break;
		rr.attempt = attempt + 1;
		rr.of = p->policy.attempts;
		rr.delay_ms = xg_provider_retry_delay(&p->policy, attempt + 1, e.retry_after_ms, &p->rng);
		rr.reason = e.class;
		rr.message = e.message;
		rr.partial = delivered > 0;
		if (cb->on_retry)
			cb->on_retry(cb->ctx, &rr);
		wait_ms(p, rr.delay_ms);
		if (p->aborted)
			break;
	}
	free_headers(headers);
	xg_buf_release(&body);
	if (rc == 0)
		return 0;
	if (rc == -2)
		return -1;
failed:
	xg_buf_release(&body);
	if (err)
		*err = e;
	/* The request is over either way: the exit code stands even when the
	 * callback would stop here. */
	cb->on_event(cb->ctx, xg_provider_error_event(&e));
	return e.exit_code;
}
