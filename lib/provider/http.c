/*
 * HTTP: one libcurl easy handle inside one multi handle per client, reused
 * for every request so a run keeps its connection (provider.h states the
 * contract).
 *
 * In order: a response's set-up and the secret's redaction; the parsers
 * for Retry-After and the rate-limit reset headers; libcurl's callbacks,
 * for headers (the hints), for the body (streamed to the caller when it is
 * a 2xx event stream, kept up to a ceiling otherwise) and for the trace,
 * which hides credential headers; libcurl's global set-up, run once; and
 * xg_http_post, which drives one transfer with its idle timeout and its
 * wake descriptor.
 */
#include "xg.h"
#include <pthread.h>
#include <strings.h>
#include "curl.h"
#include "provider/provider.h"

void xg_http_response_init(struct xg_http_response *r)
{
	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	r->reset_ms = -1;
	xg_buf_init(&r->body, XG_HTTP_MAX_ERROR_BODY);
}

void xg_http_response_release(struct xg_http_response *r)
{
	xg_buf_release(&r->body);
}

void xg_http_redact(const char *s, size_t n, const char *secret, struct xg_buf *out)
{
	size_t k = secret ? strlen(secret) : 0;
	const char *end = s + n, *hit;
	struct xg_buf once = XG_BUF_INIT(0);

	while (k && s < end && (hit = memmem(s, (size_t)(end - s), secret, k))) {
		xg_buf_add(&once, s, (size_t)(hit - s));
		xg_buf_addstr(&once, XG_REDACTED);
		s = hit + k;
	}
	xg_buf_add(&once, s, (size_t)(end - s));
	/* Then the process's other secrets (redact.h). */
	xg_redact_mem(once.buf, once.len, out);
	explicit_bzero(once.buf, once.len);
	xg_buf_release(&once);
}

int64_t xg_http_parse_retry_after(const char *v, int64_t now_ms)
{
	const struct xg_curl *curl;
	char *end;
	double secs;
	time_t t;

	while (*v == ' ')
		v++;
	if (isdigit((unsigned char)*v)) {
		secs = strtod(v, &end);
		while (*end == ' ')
			end++;
		if (!*end && secs >= 0 && secs < 1e9)
			return (int64_t)(secs * 1000);
	}
	if (!(curl = xg_curl()))
		return -1;
	t = curl->getdate(v, NULL);
	if (t == (time_t)-1)
		return -1;
	return (int64_t)t * 1000 > now_ms ? (int64_t)t * 1000 - now_ms : 0;
}

int64_t xg_http_parse_reset(const char *v, int64_t now_ms)
{
	double total = 0, n;
	char *end;
	int64_t when;
	int parts = 0;

	while (*v == ' ')
		v++;
	if (!xg_clock_parse_rfc3339(v, &when))
		return when > now_ms ? when - now_ms : 0;
	/* Durations as OpenAI writes them: "644ms", "6s", "1m30s", "2h". */
	while (*v) {
		if (!isdigit((unsigned char)*v) && *v != '.')
			return -1;
		n = strtod(v, &end);
		v = end;
		if (!strncmp(v, "ms", 2)) {
			total += n;
			v += 2;
		} else if (*v == 's' || !*v) {
			total += n * 1000;
			v += *v ? 1 : 0;
		} else if (*v == 'm') {
			total += n * 60000;
			v++;
		} else if (*v == 'h') {
			total += n * 3600000;
			v++;
		} else {
			return -1;
		}
		parts++;
	}
	return parts ? (int64_t)total : -1;
}

static int header_is(const char *line, size_t n, const char *name, const char **val, size_t *vlen)
{
	size_t k = strlen(name);

	if (n <= k || line[k] != ':' || strncasecmp(line, name, k))
		return 0;
	*val = line + k + 1;
	*vlen = n - k - 1;
	while (*vlen && (**val == ' ' || **val == '\t')) {
		(*val)++;
		(*vlen)--;
	}
	while (*vlen && ((*val)[*vlen - 1] == '\r' || (*val)[*vlen - 1] == '\n' ||
			 (*val)[*vlen - 1] == ' '))
		(*vlen)--;
	return 1;
}

/* The length of a header line's name, the bytes before its colon; 0 when
 * it has no colon. */
static size_t header_name_len(const char *line, size_t n)
{
	const char *colon = memchr(line, ':', n);

	return colon ? (size_t)(colon - line) : 0;
}

static int is_reset_header(const char *line, size_t n)
{
	size_t k = header_name_len(line, n);

	/* x-ratelimit-reset-requests, anthropic-ratelimit-tokens-reset, ... */
	return (k > 17 && !strncasecmp(line, "x-ratelimit-reset", 17)) ||
	       (k > 26 && !strncasecmp(line, "anthropic-ratelimit-", 20) &&
		!strncasecmp(line + k - 6, "-reset", 6));
}

/* Whether the request's body has all gone out. */
static int body_out(struct xg_http *h)
{
	curl_off_t up = 0;

	return h->curl->easy_getinfo(h->easy, CURLINFO_SIZE_UPLOAD_T, &up) == CURLE_OK &&
	       (size_t)up >= h->body_len;
}

/* The sent hook, once: when the body is all out (or, with all, anyway). */
static void check_sent(struct xg_http *h, int all)
{
	void (*fn)(void *) = h->sent_fn;

	if (!fn || (!all && !body_out(h)))
		return;
	h->sent_fn = NULL;
	fn(h->sent_arg);
}

/* The answered hook, once: the response's body has begun (libcurl sends
 * a request again only before any of its answer came) and the request's
 * body is all out (a server may answer early, while it still goes). */
static void check_answered(struct xg_http *h)
{
	void (*fn)(void *) = h->answered_fn;

	if (!fn || !body_out(h))
		return;
	h->answered_fn = NULL;
	fn(h->answered_arg);
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *ud)
{
	struct xg_http *h = ud;
	struct xg_http_response *r = h->resp;
	size_t n = size * nmemb, vlen;
	const char *val;
	char tmp[128];
	int64_t ms, now = xg_clock_wall_ms();

	h->last_byte_ms = xg_clock_ms();
	if (n >= 5 && !strncmp(line, "HTTP/", 5)) {
		/* A new response (after 100 Continue): forget the last one's. */
		r->content_type[0] = '\0';
		r->retry_after_ms = r->reset_ms = -1;
		return n;
	}
	if (header_is(line, n, "content-type", &val, &vlen)) {
		snprintf(r->content_type, sizeof(r->content_type), "%.*s", (int)vlen, val);
	} else if (header_is(line, n, "retry-after-ms", &val, &vlen)) {
		char *end;
		double v;

		snprintf(tmp, sizeof(tmp), "%.*s", (int)vlen, val);
		v = strtod(tmp, &end);
		if (end != tmp && !*end && v >= 0 && v < 1e12)
			r->retry_after_ms = (int64_t)v;
	} else if (header_is(line, n, "retry-after", &val, &vlen)) {
		snprintf(tmp, sizeof(tmp), "%.*s", (int)vlen, val);
		/* retry-after-ms, when both came, is the finer one. */
		if ((ms = xg_http_parse_retry_after(tmp, now)) >= 0 && r->retry_after_ms < 0)
			r->retry_after_ms = ms;
	} else if (is_reset_header(line, n)) {
		val = line + header_name_len(line, n) + 1;
		snprintf(tmp, sizeof(tmp), "%.*s", (int)(line + n - val), val);
		tmp[strcspn(tmp, "\r\n")] = '\0';
		if ((ms = xg_http_parse_reset(tmp, now)) > r->reset_ms)
			r->reset_ms = ms;
	}
	return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xg_http *h = ud;
	struct xg_http_response *r = h->resp;
	size_t n = size * nmemb, room;

	h->last_byte_ms = xg_clock_ms();
	/* The response's body has begun: the request is out as far as it
	 * will be.  Said before the body's first event reaches the caller,
	 * which can come in the same multi_perform as the request's last
	 * bytes, before the transfer loop looks again. */
	check_sent(h, 1);
	check_answered(h);
	if (!h->checked_type) {
		h->checked_type = 1;
		h->curl->easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &r->status);
		r->streamed = r->status / 100 == 2 && h->body_fn &&
			!strncasecmp(r->content_type, "text/event-stream", 17);
	}
	r->bytes += n;
	if (r->streamed) {
		if (h->body_fn(h->body_ctx, p, n)) {
			r->aborted = 1;
			return 0;
		}
		return n;
	}
	room = XG_HTTP_MAX_ERROR_BODY - r->body.len;
	xg_buf_add(&r->body, p, n < room ? n : room);
	return n;
}

static int name_has(const char *name, size_t k, const char *word)
{
	size_t w = strlen(word), i;

	for (i = 0; i + w <= k; i++)
		if (!strncasecmp(name + i, word, w))
			return 1;
	return 0;
}

/* Credential headers: the usual names, and any whose name speaks of a key,
 * a token or a secret (x-goog-api-key, x-auth-token, ...). */
static int sensitive_header(const char *line, size_t n)
{
	size_t k = header_name_len(line, n);

	return name_has(line, k, "authorization") || name_has(line, k, "cookie") ||
	       name_has(line, k, "key") || name_has(line, k, "token") ||
	       name_has(line, k, "secret") || name_has(line, k, "auth");
}

/* Writes the trace lines of p[0..n) with prefix; headers lose the values
 * of credential headers, and the rest, unless it is already, its secrets. */
static void trace_lines(struct xg_http *h, const char *prefix, const char *p, size_t n,
			int headers, int redacted)
{
	struct xg_buf out = XG_BUF_INIT(0);
	const char *end = p + n, *nl;

	while (p < end) {
		size_t len;

		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len && p[len - 1] == '\r')
			len--;
		xg_buf_addf(&out, "%s: trace: %s ", xg_progname, prefix);
		if (headers && sensitive_header(p, len)) {
			const char *colon = memchr(p, ':', len);

			xg_buf_add(&out, p, (size_t)(colon - p));
			xg_buf_addstr(&out, ": " XG_REDACTED);
		} else if (redacted) {
			xg_buf_add(&out, p, len);
		} else {
			xg_http_redact(p, len, h->secret, &out);
		}
		xg_buf_addch(&out, '\n');
		p = nl ? nl + 1 : end;
	}
	fwrite(out.buf, 1, out.len, stderr);
	xg_buf_release(&out);
}

/*
 * A body's bytes for the trace, redacted.  A secret may run across
 * libcurl's chunks, so the last (longest secret - 1) bytes wait in the
 * direction's tail for the next chunk, or for the end (last).
 */
static void trace_data(struct xg_http *h, int dir, const char *data, size_t size, int last)
{
	struct xg_buf *t = &h->trace_tail[dir], shown = XG_BUF_INIT(0);
	size_t k = xg_redact_longest(), keep = last || k < 2 ? 0 : k - 1, pos = 0, at, len, cut;

	if (size)
		xg_buf_add(t, data, size);
	if (t->len <= keep)
		return;
	cut = t->len - keep;
	/* Every secret starting before cut lies whole in the tail. */
	while (pos < cut && (at = pos + xg_redact_find(t->buf + pos, t->len - pos, &len)) < cut) {
		xg_buf_add(&shown, t->buf + pos, at - pos);
		xg_buf_addstr(&shown, XG_REDACTED);
		pos = at + len;
	}
	if (pos < cut) {
		xg_buf_add(&shown, t->buf + pos, cut - pos);
		pos = cut;
	}
	explicit_bzero(t->buf, pos);
	xg_buf_consume(t, pos);
	trace_lines(h, dir ? "<<" : ">>", shown.buf, shown.len, 0, 1);
	xg_buf_release(&shown);
}

static int on_debug(CURL *e, curl_infotype type, char *data, size_t size, void *ud)
{
	struct xg_http *h = ud;

	switch (type) {
	case CURLINFO_TEXT: trace_lines(h, "*", data, size, 0, 0); break;
	case CURLINFO_HEADER_IN: trace_lines(h, "<", data, size, 1, 0); break;
	case CURLINFO_HEADER_OUT: trace_lines(h, ">", data, size, 1, 0); break;
	case CURLINFO_DATA_IN: trace_data(h, 1, data, size, 0); break;
	case CURLINFO_DATA_OUT: trace_data(h, 0, data, size, 0); break;
	default: break;
	}
	return 0;
}

/*
 * libcurl's loading and global set-up (it starts OpenSSL: some 6 ms in
 * all, curl.h) happen once, on whichever thread comes first; a caller that
 * knows it will send a request soon starts them early on a thread of its
 * own (xg_http_warm).
 */
void *xg_http_warm(void *arg)
{
	xg_curl();
	return arg;
}

void xg_http_init(struct xg_http *h, long connect_ms, long idle_ms)
{
	memset(h, 0, sizeof(*h));
	h->connect_ms = connect_ms ? connect_ms : 30000;
	h->idle_ms = idle_ms ? idle_ms : 300000;
	h->wake_fd = -1;
	xg_buf_init(&h->trace_tail[0], 0);
	xg_buf_init(&h->trace_tail[1], 0);
}

/* The handles, made at the first request: until then libcurl may still be
 * loading on the thread that warms it, and nothing need wait for it. */
static void set_up(struct xg_http *h)
{
	if (h->curl)
		return;
	if (!(h->curl = xg_curl()))
		xg_die(XG_EX_SOFTWARE, "%s", xg_curl_error());
	h->multi = h->curl->multi_init();
	h->easy = h->curl->easy_init();
	if (!h->multi || !h->easy)
		xg_die(XG_EX_SOFTWARE, "cannot set up libcurl");
}

void xg_http_release(struct xg_http *h)
{
	if (h->easy)
		h->curl->easy_cleanup(h->easy);
	if (h->multi)
		h->curl->multi_cleanup(h->multi);
	if (h->curl)
		h->curl->global_cleanup();
	xg_buf_release(&h->trace_tail[0]);
	xg_buf_release(&h->trace_tail[1]);
	memset(h, 0, sizeof(*h));
}

/* The body's next bytes, from its parts, for libcurl. */
static size_t on_read(char *to, size_t size, size_t nmemb, void *arg)
{
	struct xg_http *h = arg;
	size_t room = size * nmemb, done = 0, at = h->read_at, n;
	int i;

	for (i = 0; i < h->nparts && done < room; i++) {
		if (at >= h->parts[i].n) {
			at -= h->parts[i].n;
			continue;
		}
		n = h->parts[i].n - at;
		if (n > room - done)
			n = room - done;
		memcpy(to + done, h->parts[i].p + at, n);
		done += n;
		at = 0;
	}
	h->read_at += done;
	return done;
}

/* Back to an offset of the body, when libcurl sends it again (on a new
 * connection, the kept one having closed). */
static int on_seek(void *arg, curl_off_t offset, int origin)
{
	struct xg_http *h = arg;

	if (origin != SEEK_SET || offset < 0 || (size_t)offset > h->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	h->read_at = (size_t)offset;
	return CURL_SEEKFUNC_OK;
}

static void set_options(struct xg_http *h, const char *url, struct curl_slist *hdrs)
{
	CURL *e = h->easy;

	/* Options are set afresh each time: the handle (and its connection
	 * cache in the multi handle) is what is reused. */
	h->curl->easy_reset(e);
	h->curl->easy_setopt(e, CURLOPT_URL, url);
	h->curl->easy_setopt(e, CURLOPT_POST, 1L);
	if (h->nparts == 1) {
		h->curl->easy_setopt(e, CURLOPT_POSTFIELDS, h->parts[0].p);
	} else {
		h->read_at = 0;
		h->curl->easy_setopt(e, CURLOPT_READFUNCTION, on_read);
		h->curl->easy_setopt(e, CURLOPT_READDATA, h);
		h->curl->easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
		h->curl->easy_setopt(e, CURLOPT_SEEKDATA, h);
		/* libcurl's smallest: what it copies the parts through. */
		h->curl->easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
	}
	h->curl->easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)h->body_len);
	h->curl->easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	h->curl->easy_setopt(e, CURLOPT_USERAGENT, "xg/" XG_VERSION);
	h->curl->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	h->curl->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
	h->curl->easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	h->curl->easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	h->curl->easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	h->curl->easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	h->curl->easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	/* A stream's events are a few hundred bytes each: 4 KiB reads them
	 * as they come, where libcurl's 16 KiB would sit mostly empty for
	 * the whole run. */
	h->curl->easy_setopt(e, CURLOPT_BUFFERSIZE, 4096L);
	h->curl->easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	h->curl->easy_setopt(e, CURLOPT_HEADERDATA, h);
	h->curl->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	h->curl->easy_setopt(e, CURLOPT_WRITEDATA, h);
	if (h->trace) {
		h->curl->easy_setopt(e, CURLOPT_VERBOSE, 1L);
		h->curl->easy_setopt(e, CURLOPT_DEBUGFUNCTION, on_debug);
		h->curl->easy_setopt(e, CURLOPT_DEBUGDATA, h);
	}
}

/* What libcurl knows of the transfer once it is over: its timings, the
 * connections it opened, and where it connected (or failed to). */
static void fill_info(struct xg_http *h, struct xg_http_response *r)
{
	curl_off_t t;
	long n;
	char *ip = NULL;

	if (!h->curl->easy_getinfo(h->easy, CURLINFO_PRETRANSFER_TIME_T, &t))
		r->pretransfer_us = t;
	if (!h->curl->easy_getinfo(h->easy, CURLINFO_STARTTRANSFER_TIME_T, &t))
		r->first_byte_us = t;
	if (!h->curl->easy_getinfo(h->easy, CURLINFO_NUM_CONNECTS, &n))
		r->new_connections = n;
	if (!r->status)
		h->curl->easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &r->status);
	if (!h->curl->easy_getinfo(h->easy, CURLINFO_OS_ERRNO, &n))
		r->os_errno = n;
	if (!h->curl->easy_getinfo(h->easy, CURLINFO_PRIMARY_IP, &ip) && ip)
		snprintf(r->primary_ip, sizeof(r->primary_ip), "%s", ip);
}

/* Drives the transfer set up on h to its end: 0 when a response came
 * whole, -1 with resp saying why not. */
static int transfer(struct xg_http *h, struct xg_http_response *resp)
{
	struct curl_waitfd wake = { h->wake_fd, CURL_WAIT_POLLIN, 0 };
	CURLMsg *msg;
	int running = 1, left;
	int64_t idle;
	CURLcode done = CURLE_OK;

	h->last_byte_ms = xg_clock_ms();
	for (;;) {
		if (h->curl->multi_perform(h->multi, &running) != CURLM_OK) {
			snprintf(resp->error, sizeof(resp->error), "libcurl's multi interface failed");
			resp->curl_code = -1;
			return -1;
		}
		if (!running)
			break;
		check_sent(h, 0);
		idle = xg_clock_ms() - h->last_byte_ms;
		if (idle >= h->idle_ms) {
			resp->idle_timeout = 1;
			snprintf(resp->error, sizeof(resp->error), "no bytes received for %ld ms", h->idle_ms);
			return -1;
		}
		idle = h->idle_ms - idle;
		/* The wake pipe is polled with the transfer's sockets, so a
		 * signal at any moment, even just before the poll, ends it. */
		wake.revents = 0;
		h->curl->multi_poll(h->multi, &wake, wake.fd >= 0, idle > 1000 ? 1000 : (int)idle, NULL);
		if (wake.revents) {
			resp->cancelled = 1;
			snprintf(resp->error, sizeof(resp->error), "the request was aborted");
			return -1;
		}
	}
	while ((msg = h->curl->multi_info_read(h->multi, &left)))
		if (msg->msg == CURLMSG_DONE)
			done = msg->data.result;
	resp->curl_code = (int)done;
	if (done == CURLE_OK)
		return 0;
	if (done == CURLE_WRITE_ERROR && resp->aborted)
		snprintf(resp->error, sizeof(resp->error), "stopped by the reader");
	else
		snprintf(resp->error, sizeof(resp->error), "%s", h->curl->easy_strerror(done));
	return -1;
}

int xg_http_post(struct xg_http *h, const char *url, const char *const *headers,
		 const struct xg_http_part *parts, int nparts, xg_http_body_fn fn, void *ctx,
		 struct xg_http_response *resp)
{
	struct curl_slist *hdrs = NULL, *tmp;
	int rc, i;

	set_up(h);
	for (; headers && *headers; headers++) {
		tmp = h->curl->slist_append(hdrs, *headers);
		if (!tmp)
			xg_die(XG_EX_SOFTWARE, "out of memory");
		hdrs = tmp;
	}
	h->resp = resp;
	h->body_fn = fn;
	h->body_ctx = ctx;
	h->checked_type = 0;
	h->parts = parts;
	h->nparts = nparts;
	for (h->body_len = 0, i = 0; i < nparts; i++)
		h->body_len += parts[i].n;
	set_options(h, url, hdrs);
	h->curl->multi_add_handle(h->multi, h->easy);
	rc = transfer(h, resp);
	check_sent(h, 1);
	h->answered_fn = NULL;
	if (h->trace) {
		trace_data(h, 0, NULL, 0, 1);
		trace_data(h, 1, NULL, 0, 1);
	}
	fill_info(h, resp);
	h->curl->multi_remove_handle(h->multi, h->easy);
	/* The key is in these lines: wipe them before they go back. */
	for (tmp = hdrs; tmp; tmp = tmp->next)
		explicit_bzero(tmp->data, strlen(tmp->data));
	h->curl->slist_free_all(hdrs);
	h->resp = NULL;
	h->parts = NULL;
	h->nparts = 0;
	return rc;
}
