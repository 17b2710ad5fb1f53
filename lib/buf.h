#ifndef XG_BUF_H
#define XG_BUF_H
/*
 * A growable byte buffer with a ceiling (git's strbuf, curl's maximum size).
 * buf is always NUL-terminated, so it can be used as a C string when the
 * content has no NUL.  Growing past max is refused: the add functions return
 * -1 and leave the buffer as it was, and the caller reports the limit.
 * Memory errors exit 70 (see alloc.h).
 *
 *   struct xg_buf b = XG_BUF_INIT(1 << 20);
 *   if (xg_buf_add(&b, data, n) < 0) ...;
 *   xg_buf_release(&b);
 */
struct xg_buf {
	char *buf;
	size_t len;
	size_t alloc;
	size_t max;	/* the most bytes len may reach; 0 means SIZE_MAX */
};

extern char xg_buf_empty[];
#define XG_BUF_INIT(maxbytes) { xg_buf_empty, 0, 0, (maxbytes) }

void xg_buf_init(struct xg_buf *b, size_t max);
void xg_buf_release(struct xg_buf *b);
/* Hands the bytes to the caller (who frees them) and resets the buffer. */
char *xg_buf_detach(struct xg_buf *b, size_t *len);
void xg_buf_reset(struct xg_buf *b);
/* Makes room for extra more bytes; -1 past the ceiling. */
int xg_buf_grow(struct xg_buf *b, size_t extra);
int xg_buf_add(struct xg_buf *b, const void *data, size_t n);
int xg_buf_addstr(struct xg_buf *b, const char *s);
int xg_buf_addch(struct xg_buf *b, int c);
__attribute__((format(printf, 2, 3)))
int xg_buf_addf(struct xg_buf *b, const char *fmt, ...);
void xg_buf_setlen(struct xg_buf *b, size_t len);
/* Removes n bytes from the front. */
void xg_buf_consume(struct xg_buf *b, size_t n);

#endif
