/*
 * What a run takes from standard input (dispatch.h): the whole text for
 * "xg run -", or the text piped to it besides its operand, read only when
 * that cannot wait on anyone, and the block that carries it in the request.
 */
#include "xg.h"
#include "dispatch/dispatch.h"
#include <poll.h>

static void drop_newlines(struct xg_buf *b)
{
	while (b->len && (b->buf[b->len - 1] == '\n' || b->buf[b->len - 1] == '\r'))
		xg_buf_setlen(b, b->len - 1);
}

char *xg_dispatch_read_text(int fd)
{
	struct xg_buf b = XG_BUF_INIT(XG_DISPATCH_MAX_TEXT);

	if (xg_read_fd(fd, &b) < 0) {
		if (errno == EFBIG)
			xg_die(XG_EX_DATAERR, "the text on standard input is longer than %zu "
			       "bytes", XG_DISPATCH_MAX_TEXT);
		xg_die_errno(XG_EX_IOERR, "cannot read standard input");
	}
	drop_newlines(&b);
	if (memchr(b.buf, '\0', b.len))
		xg_die(XG_EX_DATAERR, "the text on standard input holds a NUL byte");
	return xg_buf_detach(&b, NULL);
}

/* Whether fd has data or its end within ms milliseconds. */
static int ready_within(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int64_t end = xg_clock_ms() + ms;
	int n;

	for (;;) {
		int64_t left = end - xg_clock_ms();

		n = poll(&p, 1, left > 0 ? (int)left : 0);
		if (n >= 0 || errno != EINTR)
			return n > 0;
	}
}

/* Reads fd into b to its end or b's ceiling; 1 when there was more. */
static int read_capped(int fd, struct xg_buf *b)
{
	char more;

	while (b->len < b->max) {
		ssize_t n;

		xg_buf_grow(b, b->max - b->len < 65536 ? b->max - b->len : 65536);
		n = read(fd, b->buf + b->len, b->alloc - 1 - b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			xg_die_errno(XG_EX_IOERR, "cannot read standard input");
		if (n == 0)
			return 0;
		/* Read in place: the bytes are within b's allocation. */
		b->len += (size_t)n;
		b->buf[b->len] = '\0';
	}
	for (;;) {
		ssize_t n = read(fd, &more, 1);

		if (n < 0 && errno == EINTR)
			continue;
		return n > 0;
	}
}

/* The length of s[0..n) less a UTF-8 character that does not end in it. */
static size_t whole_characters(const char *s, size_t n)
{
	size_t lead = n, need;
	unsigned char c;

	while (lead && n - lead < 4 && ((unsigned char)s[lead - 1] & 0xc0) == 0x80)
		lead--;
	if (!lead)
		return n;
	c = (unsigned char)s[lead - 1];
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	return n - (lead - 1) < need ? lead - 1 : n;
}

char *xg_dispatch_read_piped(int fd, int *cut)
{
	struct xg_buf b = XG_BUF_INIT(XG_DISPATCH_MAX_PIPED);
	struct stat st;

	*cut = 0;
	if (fcntl(fd, F_GETFD) < 0 || isatty(fd) || fstat(fd, &st) < 0 || S_ISDIR(st.st_mode))
		return NULL;
	if (!S_ISREG(st.st_mode) && !ready_within(fd, XG_DISPATCH_PIPE_WAIT_MS)) {
		if (isatty(2))
			xg_warn("nothing came on standard input within %d ms; it is left unread",
				XG_DISPATCH_PIPE_WAIT_MS);
		return NULL;
	}
	if ((*cut = read_capped(fd, &b)))
		xg_buf_setlen(&b, whole_characters(b.buf, b.len));
	drop_newlines(&b);
	if (memchr(b.buf, '\0', b.len))
		xg_die(XG_EX_DATAERR, "standard input holds a NUL byte: only text is sent "
		       "with a request");
	if (!b.len) {
		xg_buf_release(&b);
		return NULL;
	}
	return xg_buf_detach(&b, NULL);
}

char *xg_dispatch_with_piped(const char *text, const char *piped, int cut)
{
	struct xg_buf b = XG_BUF_INIT(0);

	xg_buf_addstr(&b, text);
	xg_buf_addstr(&b, "\n\nStandard input, piped to xg with this request");
	if (cut)
		xg_buf_addf(&b, " (its first %zu bytes; the rest was not read)",
			    XG_DISPATCH_MAX_PIPED);
	xg_buf_addstr(&b, ":\n<stdin>\n");
	xg_buf_addstr(&b, piped);
	xg_buf_addstr(&b, "\n</stdin>");
	return xg_buf_detach(&b, NULL);
}
