#ifndef XG_HTTP_H
#define XG_HTTP_H
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
#include <stdint.h>
#include "buf.h"

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
	/* Timings, microseconds from the start of the transfer. */
	int64_t pretransfer_us;		/* the request is about to be sent */
	int64_t first_byte_us;		/* the first response byte came */
	long new_connections;		/* connections opened for this request */
};

struct xg_http {
	void *multi;		/* CURLM */
	void *easy;		/* CURL */
	long connect_ms;
	long idle_ms;
	int trace;
	const char *secret;	/* redacted from traces; not owned */
	int wake_fd;		/* once readable, the request in flight gives up
				 * (resp->cancelled); -1, the default, for none */
	/* The request in flight. */
	struct xg_http_response *resp;
	xg_http_body_fn body_fn;
	void *body_ctx;
	int64_t last_byte_ms;
	int checked_type;
};

/* Sets up the client; connect_ms and idle_ms of 0 take 30 s and 300 s. */
void xg_http_init(struct xg_http *h, long connect_ms, long idle_ms);
/* libcurl's global set-up, as a thread's function: a caller that will
 * send soon runs it early on a thread of its own (joined before the
 * process exits); xg_http_init waits for it. */
void *xg_http_warm(void *arg);
void xg_http_release(struct xg_http *h);

void xg_http_response_init(struct xg_http_response *r);
void xg_http_response_release(struct xg_http_response *r);

/*
 * POSTs body to url with the given "Name: value" header lines (NULL
 * terminated).  Returns 0 when an HTTP response arrived whole (whatever its
 * status), -1 on a transport failure, an idle timeout, an abort by the
 * callback or a readable wake_fd (resp says which).
 */
int xg_http_post(struct xg_http *h, const char *url, const char *const *headers,
		 const char *body, size_t len, xg_http_body_fn fn, void *ctx,
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

/* Copies s to out (outlen bytes), replacing each occurrence of secret with
 * "<redacted>"; secret may be NULL or empty. */
void xg_http_redact(const char *s, size_t n, const char *secret, struct xg_buf *out);

#endif
