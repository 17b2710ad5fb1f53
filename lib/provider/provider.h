#ifndef XG_PROVIDER_H
#define XG_PROVIDER_H
/*
 * The provider subsystem, xg_provider_, xg_http_, xg_sse_: HTTP, SSE, and a
 * client for the model APIs with its retries and error classes.  Its one
 * public header; provider/internal.h is what the folder's files share, and
 * its top comment maps them.
 */
#include <stdbool.h>
#include <stdint.h>
#include "buf.h"
#include <stddef.h>
#include <signal.h>
#include "json.h"

/*
 * HTTP over one reused libcurl handle (design.md section 5).
 *
 * A client holds one easy handle inside one multi handle for the life of the
 * process, so a run's requests share a kept-alive connection.  TLS peer and
 * host verification stay on, libcurl reads the proxy environment
 * (http_proxy, https_proxy, no_proxy, ALL_PROXY) as usual, signals are not
 * used (CURLOPT_NOSIGNAL), redirects are not followed, and every request
 * says "User-Agent: xg/VERSION".
 *
 * A request that receives nothing for idle_ms (counted from its start and
 * reset by every byte of header or body) is aborted and reported as an idle
 * timeout.  A 2xx response whose Content-Type is text/event-stream is handed
 * to the body callback as it arrives; any other response is kept, up to
 * XG_HTTP_MAX_ERROR_BODY bytes, in resp->body for the caller to classify.
 *
 * Keys travel only in headers.  With trace set (XG_TRACE=1) libcurl's
 * verbose exchange goes to stderr with the values of credential headers
 * and every occurrence of the secret replaced by "<redacted>".
 */

#define XG_HTTP_MAX_ERROR_BODY ((size_t)64 << 10)

/* Called with each piece of a streamed body; nonzero aborts the transfer. */
typedef int (*xg_http_body_fn)(void *ctx, const char *p, size_t n);

struct xg_http_response {
	long status;			/* 0 when no response came */
	char content_type[128];
	int64_t retry_after_ms;		/* retry-after-ms or retry-after; -1 */
	int64_t reset_ms;		/* the longest rate-limit reset header; -1 */
	struct xg_buf body;		/* the body when it was not streamed */
	int streamed;			/* the body went to the callback */
	size_t bytes;			/* body bytes received */
	int curl_code;			/* CURLcode; 0 when the transfer completed */
	int idle_timeout;		/* aborted: nothing received for idle_ms */
	int aborted;			/* the body callback stopped it */
	int cancelled;			/* given up: wake_fd became readable */
	char error[256];		/* libcurl's words for curl_code */
	long os_errno;			/* the system's error of a failed connect; 0 */
	char primary_ip[64];		/* the address last connected to; "" when none */
	/* Timings, microseconds from the start of the transfer. */
	int64_t pretransfer_us;		/* the request is about to be sent */
	int64_t first_byte_us;		/* the first response byte came */
	long new_connections;		/* connections opened for this request */
};

struct xg_curl;

/* A piece of a request's body; a body is one or more, sent in order. */
struct xg_http_part {
	const char *p;
	size_t n;
};

struct xg_http {
	const struct xg_curl *curl;	/* libcurl (curl.h), from the first request */
	void *multi;		/* CURLM */
	void *easy;		/* CURL */
	long connect_ms;
	long idle_ms;
	int trace;
	const char *secret;	/* redacted from traces; not owned */
	struct xg_buf trace_tail[2];	/* the trace's body bytes held back, out
					 * and in, lest a secret be cut in two */
	int wake_fd;		/* once readable, the request in flight gives up
				 * (resp->cancelled); -1, the default, for none */
	/* The request in flight. */
	struct xg_http_response *resp;
	xg_http_body_fn body_fn;
	void *body_ctx;
	int64_t last_byte_ms;
	int checked_type;
	size_t body_len;
	const struct xg_http_part *parts;	/* the body of several parts */
	int nparts;
	size_t read_at;		/* how much of them libcurl has read */
	/* Called once, on the thread that posts, when a request's body has
	 * all been sent or its transfer ended without that: then clear. */
	void (*sent_fn)(void *arg);
	void *sent_arg;
	/* Called once, on the thread that posts, when the response's body
	 * has begun and the request's has all gone: libcurl will not read
	 * the request's body again, so its owner may free it.  Set for each
	 * post; cleared. */
	void (*answered_fn)(void *arg);
	void *answered_arg;
};

/* Sets up the client; connect_ms and idle_ms of 0 take 30 s and 300 s. */
void xg_http_init(struct xg_http *h, long connect_ms, long idle_ms);
/* libcurl's loading and global set-up, as a thread's function: a caller
 * that will send soon runs it early on a thread of its own (joined before
 * the process exits); the first request waits for it, and ends the
 * process with 70 when libcurl cannot be loaded. */
void *xg_http_warm(void *arg);
void xg_http_release(struct xg_http *h);

void xg_http_response_init(struct xg_http_response *r);
void xg_http_response_release(struct xg_http_response *r);

/*
 * POSTs the body, the nparts parts one after the other, to url with the
 * given "Name: value" header lines (NULL terminated).  One part goes from
 * where it is; several are read as they go out, so that a body made of a
 * large part kept from the last request and a few new bytes is never
 * copied whole.  The parts stay untouched until the post returns (or
 * answered_fn is called).  Returns 0 when an HTTP response arrived whole
 * (whatever its status), -1 on a transport failure, an idle timeout, an
 * abort by the callback or a readable wake_fd (resp says which).
 */
int xg_http_post(struct xg_http *h, const char *url, const char *const *headers,
		 const struct xg_http_part *parts, int nparts, xg_http_body_fn fn, void *ctx,
		 struct xg_http_response *resp);

/*
 * Parses a Retry-After value: delta seconds, or an HTTP date (compared with
 * now_ms, wall-clock milliseconds).  Returns milliseconds (0 for a date in
 * the past) or -1 when it is neither.
 */
int64_t xg_http_parse_retry_after(const char *v, int64_t now_ms);
/* Parses a rate-limit reset value: a duration such as "644ms", "6s",
 * "1m30s", plain seconds, or an RFC 3339 time.  Milliseconds or -1. */
int64_t xg_http_parse_reset(const char *v, int64_t now_ms);

/*
 * The parts of a URL that messages name: its host, with the port when
 * with_port and the URL gives one ("api.openai.com", "127.0.0.1:8080",
 * "[::1]:8080"; without the port an IPv6 address loses its brackets), and
 * the URL as it may be shown, without user info, query or fragment, which
 * can hold secrets.  Both allocated.
 */
char *xg_http_url_host(const char *url, int with_port);
char *xg_http_url_shown(const char *url);
/*
 * Whether host, an IP address (bracketed or not) or a name, is near: this
 * machine's or its own network's.  Loopback (127.0.0.0/8, ::1, localhost
 * and the names under it), this host (0.0.0.0, ::), private (10.0.0.0/8,
 * 172.16.0.0/12, 192.168.0.0/16, fc00::/7) and link-local (169.254.0.0/16,
 * fe80::/10); an IPv4-mapped IPv6 address counts as its IPv4 one.  Other
 * names are not near: they are judged by the address they resolve to.
 */
bool xg_http_address_is_local(const char *host);

/* Copies s to out (outlen bytes), replacing each occurrence of secret with
 * "<redacted>"; secret may be NULL or empty. */
void xg_http_redact(const char *s, size_t n, const char *secret, struct xg_buf *out);

/*
 * A server-sent-events parser to the WHATWG "event stream interpretation"
 * rules: lines end in LF, CRLF or CR; a line starting with ':' is a comment;
 * "field:value" drops one space after the colon; "data" lines of one event
 * join with LF; "event", "id" and "retry" are kept; other fields are ignored;
 * a blank line dispatches the event (none when no data line came); a UTF-8
 * BOM at the very start is skipped; an event not ended by a blank line when
 * the stream ends is dropped.
 *
 * Bytes are buffered until a line is complete, so feeding a stream whole,
 * one byte at a time or split anywhere (inside a CRLF pair, inside a UTF-8
 * character) gives the same events.
 *
 * Each event has a ceiling, XG_SSE_MAX_EVENT bytes by default: the data of
 * one event plus the line being read may not grow past it.  A bigger event
 * is an error (xg_sse_feed returns -1 with p->err set) and the parser stops;
 * nothing is allocated beyond the ceiling.
 *
 *   struct xg_sse p;
 *   xg_sse_init(&p, 0);
 *   while ((n = read(fd, b, sizeof(b))) > 0)
 *           if (xg_sse_feed(&p, b, n, on_event, ctx)) ...;
 *   xg_sse_finish(&p);
 *   xg_sse_release(&p);
 */

#define XG_SSE_MAX_EVENT ((size_t)16 << 20)

struct xg_sse_event {
	const char *type;	/* the "event" field; NULL when none (a "message") */
	const char *data;	/* NUL-terminated; data_len bytes */
	size_t data_len;
	const char *id;		/* the last event id seen; NULL when none */
};

/* Called for each event; a nonzero return stops the parser and is
 * returned by xg_sse_feed. */
typedef int (*xg_sse_fn)(void *ctx, const struct xg_sse_event *ev);

struct xg_sse {
	size_t max_event;
	struct xg_buf line;	/* a line not yet complete */
	struct xg_buf data;
	struct xg_buf type;
	struct xg_buf id;
	int has_id;
	int skip_lf;		/* the last line ended in CR: drop a next LF */
	int bom;		/* BOM bytes matched so far; 3 or -1 when settled */
	int stopped;		/* an error or the callback stopped the parser */
	long retry_ms;		/* the last "retry" field, or -1 */
	size_t events;		/* events dispatched */
	char err[128];
};

/* max_event 0 means XG_SSE_MAX_EVENT. */
void xg_sse_init(struct xg_sse *p, size_t max_event);
void xg_sse_release(struct xg_sse *p);
/* Feeds n bytes; 0, or -1 past the ceiling (p->err), or the callback's
 * nonzero value.  Once stopped, further feeds return -1 and do nothing. */
int xg_sse_feed(struct xg_sse *p, const char *buf, size_t n, xg_sse_fn fn, void *ctx);
/* Ends the stream: drops an unterminated event.  Returns 1 when there was
 * such a tail (a partial line or an event without its blank line), else 0. */
int xg_sse_finish(struct xg_sse *p);

/*
 * Model providers: one interface over three wire kinds (design.md section 5;
 * docs/providers.md is the guide).
 *
 *   openai-responses    POST {base_url}/responses
 *   openai-chat         POST {base_url}/chat/completions  (also llama.cpp's
 *                       server, Ollama, vLLM and OpenRouter: "dialect")
 *   anthropic-messages  POST {base_url}/messages
 *
 * The provider is a JSON object (from the catalog):
 *   {"kind": "openai-chat", "base_url": "http://127.0.0.1:8080/v1",
 *    "dialect": "llama.cpp", "headers": {"X-Title": "xg"},
 *    "name": "llamacpp"}
 * and the key is passed apart from it, so a provider object can be printed.
 * "name" is what messages call it (the catalog's name; the kind's when
 * absent).
 *
 * A request is a JSON object:
 *   {"model": "gpt-5", "system": "...", "system_stable": 1200,
 *    "messages": [{"role": "user", "text": "..."},
 *                 {"role": "assistant", "text": "...",
 *                  "reasoning": [{"text": "...", "signature": "..."}],
 *                  "tool_calls": [{"id": "...", "name": "...", "args": {}}]},
 *                 {"role": "tool", "id": "...", "name": "...",
 *                  "output": "...", "ok": true}],
 *    "tools": [{"name": "...", "description": "...", "parameters": {}}],
 *    "effort": "low", "max_output": 8192, "cache_key": "conversation id"}
 * (system_stable: the bytes of system that stay the same from request to
 * request, for the cache hints; all of it when absent).
 *
 * Events come back as JSON objects, in this order for one attempt:
 *   {"type":"text","text":DELTA}  {"type":"reasoning","text":DELTA}
 *   {"type":"reasoning_block","text":ALL,"signature":S}   (to send back)
 *   {"type":"tool_call","id":I,"name":N,"args":OBJECT}    (complete)
 *   {"type":"usage","input":N,"cached_input":N,"cache_write":N,
 *    "output":N,"reasoning":N}
 *   {"type":"finish","reason":"stop|tool_calls|length|content_filter|refusal"}
 * or, instead of finish, {"type":"error","class":C,"message":M,"status":N,
 * "transient":B,"exit":N} once retries are over.  A tool call whose
 * arguments are not a JSON object gets "args":{} and "bad_args":RAW.
 */

/* The retry policy; XG_RETRY="attempts=N,base=MS,cap=MS,idle=MS,connect=MS,
 * budget=MS" (or "off") changes it; a duration may end in ms, s or m.  See
 * man 7 xg.  The budget bounds the whole wait of one request: from the
 * start of its first attempt (or of the first after one that brought
 * events), the attempts (their idle timeouts included) and the waits
 * between them take no longer than budget_ms, so a silent server is given
 * up within it; a server's retry-after past what is left of it ends the
 * request at once (exit 75).  Two failures are the exception: a
 * connection refused by a near address (xg_http_address_is_local), and a
 * host name that does not resolve.  Neither mends itself within minutes,
 * so each gets at most XG_PROVIDER_NEAR_RETRIES retries (never more than
 * attempts), waiting base_ms and then twice that, but no more than 250 ms
 * and 500 ms (nor than cap_ms). */
#define XG_PROVIDER_NEAR_RETRIES 2

struct xg_provider_policy {
	int attempts;		/* retries after the first try: 8 */
	long base_ms;		/* the first backoff: 2000, doubled each time */
	long cap_ms;		/* no wait is longer: 60000 */
	long idle_ms;		/* a stream silent this long fails: 300000 */
	long connect_ms;	/* connect timeout: 30000 */
	long budget_ms;		/* all the retries of a request: 240000 */
};

void xg_provider_policy_default(struct xg_provider_policy *pol);
/* Applies a spec; -1 with err set when part of it is malformed (the rest
 * still applies). */
int xg_provider_policy_parse(struct xg_provider_policy *pol, const char *spec,
			     char *err, size_t errlen);
/* The defaults with XG_RETRY applied; a malformed value is warned about. */
void xg_provider_policy_from_env(struct xg_provider_policy *pol);
/*
 * The wait before retry number attempt (1-based): base doubled each time,
 * with jitter (80-120%), or the server's hint when there is one (hint_ms
 * >= 0); never more than cap_ms.  *rng is the jitter's state.
 */
long xg_provider_retry_delay(const struct xg_provider_policy *pol, int attempt,
			     int64_t hint_ms, uint64_t *rng);
/* The shortest and the longest wait xg_provider_retry_delay may give
 * retry number attempt without a hint: its jitter's bounds. */
void xg_provider_retry_range(const struct xg_provider_policy *pol, int attempt,
			     long *lo, long *hi);

/* An error, classified (docs/providers.md lists the classes). */
struct xg_provider_error {
	const char *class;	/* "rate_limit", ...; NULL when no error */
	int transient;		/* worth a retry */
	int exit_code;		/* XG_EX_* once retries are over */
	long status;		/* the HTTP status, 0 when none */
	int64_t retry_after_ms;	/* the server's hint, -1 when none */
	int refused_near;	/* a near address refused the connection, or the
				 * host did not resolve: the few quick retries of
				 * the policy's exception */
	char message[512];	/* keys redacted */
};

/*
 * Classifies an HTTP status with its headers' hint and the error body (a
 * JSON text, or anything); status 200 classifies an error object met inside
 * a stream.  The message is taken from the body, redacted of secret.
 */
void xg_provider_classify(struct xg_provider_error *e, long status, const char *body,
			  size_t len, int64_t hint_ms, const char *secret);
/* Sets e to class with the given message (for network and stream errors). */
__attribute__((format(printf, 3, 4)))
void xg_provider_error_set(struct xg_provider_error *e, const char *class, const char *fmt, ...);
/* The error as an event record {"type":"error",...}. */
jv xg_provider_error_event(const struct xg_provider_error *e);

/* A wait before a retry, reported before it starts. */
struct xg_provider_retry {
	const char *provider;	/* the provider's name, and its host (and */
	const char *host;	/* port), as struct xg_provider has them */
	int attempt;		/* 1 for the first retry */
	int of;			/* the most retries there will be */
	long delay_ms;
	const char *reason;	/* the error's class */
	const char *message;
	int partial;		/* the failed attempt had delivered events: the
				 * caller drops them, the next attempt starts over */
};

struct xg_provider_callbacks {
	/* Each event (consumed); nonzero stops the request. */
	int (*on_event)(void *ctx, jv ev);
	/* Each wait before a retry; may be NULL. */
	void (*on_retry)(void *ctx, const struct xg_provider_retry *r);
	void *ctx;
};

struct xg_wire;
struct xg_provider_decoder;

struct xg_provider {
	const struct xg_wire *wire;
	jv config;
	char *url;
	char *key;
	/* What messages name: the provider's name (borrowed from config, or
	 * the kind's), the base URL's host with its port ("127.0.0.1:8080"),
	 * its host alone, and the base URL as it may be shown
	 * (xg_http_url_shown). */
	const char *name;
	char *host;
	char *hostname;
	char *shown_url;
	const char *dialect;	/* borrowed from config, or a guess */
	struct xg_provider_policy policy;
	struct xg_http http;
	uint64_t rng;
	/* Set by xg_provider_abort, from a signal handler. */
	volatile sig_atomic_t aborted;
	/* A pipe (close-on-exec, non-blocking): xg_provider_abort writes a
	 * byte, and a retry wait and the transfer's poll watch the read end,
	 * so they wake whenever the signal comes; -1 when none could be made
	 * (then a signal just before a wait starts does not shorten it). */
	int wake[2];
	/* When the request's first attempt started (xg_clock_ms), or the
	 * first after one that brought events: where the retry budget counts
	 * from. */
	int64_t first_fail_ms;
	/* The last request's walk (encode.c), so that the next, which is it
	 * plus new messages, walks only those: the request without its
	 * messages and tools, its messages, how many, and the body and the
	 * list as they stood before and after the messages. */
	struct {
		jv head, src, body, list;
		int n;
	} walked;
	/* The last body's list as written: its items, and their bytes, item
	 * i ending at ends[i] (encode.c).  Its first lead items are the
	 * kind's own, before the messages (Chat's system message): no bytes
	 * are kept of them, which would hold the whole system prompt a second
	 * time for as long as the run lasts; they are written from their
	 * values each time, as the other kinds write their system prompt. */
	struct {
		jv items;
		struct xg_buf bytes;
		size_t *ends;
		int n, alloc, lead;
		int known;	/* of them, how many the next list begins
				 * with for certain (items then let go) */
	} dumped;
	/* Figures from the last attempt, for tests and benchmarks. */
	int64_t last_encode_us;
	struct xg_http_response last;
};

/*
 * Makes the request in flight give up at once: the transfer stops, a retry
 * wait is cut short (whenever the call comes, even as the wait begins), and
 * no further attempt is made.  It is for good: later requests on p give up
 * as soon as they start.  Safe to call from a signal handler (it writes one
 * byte to p->wake[1] and sets flags, keeping errno).
 */
void xg_provider_abort(struct xg_provider *p);

/* A provider client, or NULL with err set (unknown kind, no base_url). */
struct xg_provider *xg_provider_new(jv config, const char *key, char *err, size_t errlen);
void xg_provider_free(struct xg_provider *p);

/* The request body as it goes on the wire; -1 with err set when the
 * request is malformed (names the field).  Consumes request. */
int xg_provider_encode(struct xg_provider *p, jv request, struct xg_buf *body,
		       char *err, size_t errlen);

/* xg_provider_stream's outcome when the callback stopped the request
 * before its end: neither a finish nor an error event, and no exit code. */
enum { XG_PROVIDER_STOPPED = -1 };

/*
 * Sends request (consumed) and streams its events to cb, retrying
 * transient failures under p->policy.  Returns 0 after a finish event, or
 * the exit code of the final error (also delivered as an error event and
 * left in *err when err is not NULL), or XG_PROVIDER_STOPPED when the
 * callback stopped the request before its end.
 */
int xg_provider_stream(struct xg_provider *p, jv request,
		       const struct xg_provider_callbacks *cb, struct xg_provider_error *err);

/*
 * A decoder turns one response's SSE bytes into events, for the client and
 * for tests that replay recorded streams.  kind is a wire kind's name.
 */
struct xg_provider_decoder *xg_provider_decoder_new(const char *kind,
		int (*emit)(void *ctx, jv ev), void *ctx);
void xg_provider_decoder_free(struct xg_provider_decoder *d);
/*
 * Sets the ceiling (XG_SSE_MAX_EVENT when never set) on each SSE event and
 * on each tool call's arguments, thinking block and signature being
 * assembled; before the first feed.  Past it the stream fails with a
 * protocol error that is not transient.
 */
void xg_provider_decoder_set_max(struct xg_provider_decoder *d, size_t max);
/* 0, or -1 once the stream failed or the callback stopped it. */
int xg_provider_decoder_feed(struct xg_provider_decoder *d, const char *p, size_t n);
/*
 * Ends the stream.  Returns 0 when it ended properly (its finish event was
 * delivered), else -1 with *err set: an error inside the stream, or
 * "truncated" when the final event never came.
 */
int xg_provider_decoder_finish(struct xg_provider_decoder *d, struct xg_provider_error *err);
/* How many SSE events and events were seen; for tests. */
size_t xg_provider_decoder_sse_events(const struct xg_provider_decoder *d);
size_t xg_provider_decoder_delivered(const struct xg_provider_decoder *d);

#endif
