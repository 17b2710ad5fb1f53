/*
 * Error classes: what went wrong with a request, sorted into the classes
 * docs/providers.md lists, each with whether it is worth a retry and the
 * exit code it ends a run with once retries are over.
 *
 * xg_provider_classify reads an HTTP status with an error body (or an error
 * object met inside a stream): first a code or type that names a class
 * outright, then the statuses that settle it, and only for a plain 400 the
 * phrases providers use when a body names no code.  xg_provider_error_set
 * is for errors the client meets itself (the network, a broken stream), and
 * xg_provider_error_event turns either into the error event a caller gets.
 */
#include "xg.h"
#include <strings.h>
#include "provider/internal.h"

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
	jv doc = len ? xg_json_parse(body, len) : jv_invalid();
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
	else if (len && !jv_is_valid(doc)) {
		/* Redacted before it is cut: a key across the cut would
		 * otherwise keep its first part. */
		struct xg_buf whole = XG_BUF_INIT(0);

		xg_http_redact(body, len, secret, &whole);
		xg_buf_addf(&text, ": %.*s", (int)(whole.len > 200 ? 200 : whole.len), whole.buf);
		xg_buf_release(&whole);
	}
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
