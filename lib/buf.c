/*
 * The growable byte buffer with a ceiling (buf.h): bytes, strings and
 * formatted text added, bytes taken off its front, and its bytes given away.
 */
#include "xg.h"

char xg_buf_empty[1];

void xg_buf_init(struct xg_buf *b, size_t max)
{
	b->buf = xg_buf_empty;
	b->len = b->alloc = 0;
	b->max = max;
}

void xg_buf_release(struct xg_buf *b)
{
	if (b->alloc)
		free(b->buf);
	xg_buf_init(b, b->max);
}

char *xg_buf_detach(struct xg_buf *b, size_t *len)
{
	char *p;

	if (!b->alloc)
		xg_buf_grow(b, 0);
	p = b->buf;
	if (len)
		*len = b->len;
	xg_buf_init(b, b->max);
	return p;
}

void xg_buf_reset(struct xg_buf *b)
{
	xg_buf_setlen(b, 0);
}

int xg_buf_grow(struct xg_buf *b, size_t extra)
{
	size_t max = b->max ? b->max : SIZE_MAX - 1;
	size_t want;

	if (extra > max || b->len > max - extra)
		return -1;
	want = b->len + extra + 1;
	if (want <= b->alloc)
		return 0;
	if (want < b->alloc + b->alloc / 2)
		want = b->alloc + b->alloc / 2;
	if (want < 64)
		want = 64;
	if (want > max + 1)
		want = max + 1;
	if (!b->alloc) {
		b->buf = xg_malloc(want);
		b->buf[0] = '\0';
	} else {
		b->buf = xg_realloc(b->buf, want);
	}
	b->alloc = want;
	return 0;
}

int xg_buf_add(struct xg_buf *b, const void *data, size_t n)
{
	if (xg_buf_grow(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return 0;
}

int xg_buf_addstr(struct xg_buf *b, const char *s)
{
	return xg_buf_add(b, s, strlen(s));
}

int xg_buf_addch(struct xg_buf *b, int c)
{
	char ch = (char)c;

	return xg_buf_add(b, &ch, 1);
}

int xg_buf_addf(struct xg_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || xg_buf_grow(b, (size_t)n) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void xg_buf_setlen(struct xg_buf *b, size_t len)
{
	if (!b->alloc)
		return;
	if (len > b->len)
		len = b->len;
	b->len = len;
	b->buf[len] = '\0';
}

void xg_buf_consume(struct xg_buf *b, size_t n)
{
	if (n >= b->len) {
		xg_buf_setlen(b, 0);
		return;
	}
	memmove(b->buf, b->buf + n, b->len - n);
	xg_buf_setlen(b, b->len - n);
}
