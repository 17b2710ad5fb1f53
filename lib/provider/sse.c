/*
 * The server-sent-events parser (provider.h gives the rules it follows).
 * Bytes are cut into lines, each line is a comment or a field, and a blank
 * line dispatches the event built so far.  A UTF-8 BOM is skipped at the
 * very start only, a CR at the end of one feed may be half of a CRLF the
 * next feed ends, and every buffer stops at the event ceiling.
 */
#include "xg.h"
#include "provider/provider.h"

static const unsigned char bom_bytes[3] = { 0xef, 0xbb, 0xbf };

void xg_sse_init(struct xg_sse *p, size_t max_event)
{
	memset(p, 0, sizeof(*p));
	p->max_event = max_event ? max_event : XG_SSE_MAX_EVENT;
	xg_buf_init(&p->line, p->max_event);
	/* Each data line adds its value and an LF, and the last LF goes at
	 * dispatch: one byte of slack keeps the ceiling exact. */
	xg_buf_init(&p->data, p->max_event + 1);
	xg_buf_init(&p->type, p->max_event);
	xg_buf_init(&p->id, p->max_event);
	p->retry_ms = -1;
}

void xg_sse_release(struct xg_sse *p)
{
	xg_buf_release(&p->line);
	xg_buf_release(&p->data);
	xg_buf_release(&p->type);
	xg_buf_release(&p->id);
}

static int too_big(struct xg_sse *p)
{
	snprintf(p->err, sizeof(p->err), "event larger than %zu bytes", p->max_event);
	p->stopped = 1;
	return -1;
}

static int dispatch(struct xg_sse *p, xg_sse_fn fn, void *ctx)
{
	struct xg_sse_event ev;
	int rc;

	if (!p->data.len) {
		xg_buf_reset(&p->type);
		return 0;
	}
	xg_buf_setlen(&p->data, p->data.len - 1);
	ev.type = p->type.len ? p->type.buf : NULL;
	ev.data = p->data.buf;
	ev.data_len = p->data.len;
	ev.id = p->has_id ? p->id.buf : NULL;
	p->events++;
	rc = fn(ctx, &ev);
	xg_buf_reset(&p->data);
	xg_buf_reset(&p->type);
	if (rc)
		p->stopped = 1;
	return rc;
}

static int field_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && !memcmp(name, want, len);
}

/* One complete line, without its terminator. */
static int process_line(struct xg_sse *p, const char *s, size_t len,
			xg_sse_fn fn, void *ctx)
{
	const char *colon, *val;
	size_t namelen, vlen;

	if (!len)
		return dispatch(p, fn, ctx);
	if (s[0] == ':')
		return 0;
	colon = memchr(s, ':', len);
	if (colon) {
		namelen = (size_t)(colon - s);
		val = colon + 1;
		vlen = len - namelen - 1;
		if (vlen && *val == ' ') {
			val++;
			vlen--;
		}
	} else {
		namelen = len;
		val = s + len;
		vlen = 0;
	}
	if (field_is(s, namelen, "data")) {
		if (xg_buf_add(&p->data, val, vlen) < 0 || xg_buf_addch(&p->data, '\n') < 0)
			return too_big(p);
	} else if (field_is(s, namelen, "event")) {
		xg_buf_reset(&p->type);
		if (xg_buf_add(&p->type, val, vlen) < 0)
			return too_big(p);
	} else if (field_is(s, namelen, "id")) {
		if (!memchr(val, '\0', vlen)) {
			xg_buf_reset(&p->id);
			if (xg_buf_add(&p->id, val, vlen) < 0)
				return too_big(p);
			p->has_id = 1;
		}
	} else if (field_is(s, namelen, "retry")) {
		long ms = 0;
		size_t i;

		for (i = 0; i < vlen && isdigit((unsigned char)val[i]); i++)
			if (ms < 100000000)
				ms = ms * 10 + (val[i] - '0');
		if (vlen && i == vlen)
			p->retry_ms = ms;
	}
	return 0;
}

/* Skips a BOM at the very start of the stream; bytes that only looked like
 * its beginning go back to the line.  Returns how many bytes it used. */
static size_t skip_bom(struct xg_sse *p, const char *buf, size_t n)
{
	size_t i = 0;

	while (p->bom >= 0 && i < n) {
		if ((unsigned char)buf[i] != bom_bytes[p->bom]) {
			xg_buf_add(&p->line, bom_bytes, (size_t)p->bom);
			p->bom = -1;
			break;
		}
		i++;
		if (++p->bom == 3)
			p->bom = -1;
	}
	return i;
}

int xg_sse_feed(struct xg_sse *p, const char *buf, size_t n, xg_sse_fn fn, void *ctx)
{
	const char *s, *end = buf + n, *lf = NULL, *cr = NULL, *t;
	int rc;

	if (p->stopped)
		return -1;
	s = buf + skip_bom(p, buf, n);
	if (p->skip_lf && s < end) {
		if (*s == '\n')
			s++;
		p->skip_lf = 0;
	}
	while (s < end) {
		/* The next LF and the next CR are remembered between lines, so
		 * a stream that uses only one of them is still scanned once. */
		if (!lf || lf < s) {
			lf = memchr(s, '\n', (size_t)(end - s));
			if (!lf)
				lf = end;
		}
		if (!cr || cr < s) {
			cr = memchr(s, '\r', (size_t)(end - s));
			if (!cr)
				cr = end;
		}
		t = lf < cr ? lf : cr;
		if (t == end) {
			if (xg_buf_add(&p->line, s, (size_t)(end - s)) < 0)
				return too_big(p);
			break;
		}
		if (p->line.len) {
			if (xg_buf_add(&p->line, s, (size_t)(t - s)) < 0)
				return too_big(p);
			rc = process_line(p, p->line.buf, p->line.len, fn, ctx);
			xg_buf_reset(&p->line);
		} else {
			if ((size_t)(t - s) > p->max_event)
				return too_big(p);
			rc = process_line(p, s, (size_t)(t - s), fn, ctx);
		}
		if (rc)
			return rc;
		s = t + 1;
		if (*t == '\r') {
			if (s == end)
				p->skip_lf = 1;
			else if (*s == '\n')
				s++;
		}
	}
	return 0;
}

int xg_sse_finish(struct xg_sse *p)
{
	int tail = p->line.len || p->data.len || p->type.len || p->bom > 0;

	xg_buf_reset(&p->line);
	xg_buf_reset(&p->data);
	xg_buf_reset(&p->type);
	return tail;
}
