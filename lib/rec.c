/*
 * Records, one JSON object per line (rec.h): the streaming reader with
 * its ceiling on a line, and the writer that flushes each record whole.
 */
#include "xg.h"
#include <poll.h>

size_t xg_rec_max_line(void)
{
	const char *s = getenv("XG_MAX_LINE");
	unsigned long long n;
	char *end;

	if (!s || !*s)
		return XG_REC_MAX_LINE;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || n == 0)
		xg_die(XG_EX_CONFIG, "XG_MAX_LINE '%s' is not a positive number of bytes", s);
	/* jv parses at most INT_MAX bytes. */
	return n > INT_MAX ? INT_MAX : (size_t)n;
}

void xg_rec_reader_init(struct xg_rec_reader *r, int fd, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->wake_fd = -1;
	r->name = name;
	r->max_line = xg_rec_max_line();
	/* A line plus CR LF and one byte that shows it is too long. */
	xg_buf_init(&r->in, r->max_line + 3);
}

void xg_rec_reader_release(struct xg_rec_reader *r)
{
	xg_buf_release(&r->in);
}

void xg_rec_release(struct xg_rec *rec)
{
	jv_free(rec->v);
	free(rec->raw);
	memset(rec, 0, sizeof(*rec));
	rec->v = jv_invalid();
}

/* Reads more bytes after what is buffered; moves the unread part to the
 * front first so the buffer never holds more than one line's worth. */
static int fill(struct xg_rec_reader *r)
{
	size_t room;
	ssize_t n;

	if (r->start > 0) {
		memmove(r->in.buf, r->in.buf + r->start, r->in.len - r->start);
		xg_buf_setlen(&r->in, r->in.len - r->start);
		r->scan -= r->start;
		r->start = 0;
	}
	room = r->in.max - r->in.len;
	if (room > 65536)
		room = 65536;
	if (xg_buf_grow(&r->in, room) < 0)
		return -1;
	if (r->wake_fd >= 0) {
		struct pollfd p[2] = { { r->fd, POLLIN, 0 }, { r->wake_fd, POLLIN, 0 } };

		while (poll(p, 2, -1) < 0)
			if (errno != EINTR)
				return -1;
		if (p[1].revents) {
			errno = EINTR;
			return -1;
		}
	}
	do
		n = read(r->fd, r->in.buf + r->in.len, room);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		r->eof = 1;
	r->in.len += (size_t)n;
	r->in.buf[r->in.len] = '\0';
	return 0;
}

static int parse_line(struct xg_rec_reader *r, struct xg_rec *rec, char *line, size_t len,
		      size_t cr)
{
	jv v;

	rec->lineno = r->lineno;
	r->code = XG_EX_DATAERR;
	v = xg_json_parse(line, len);
	if (!jv_is_valid(v)) {
		char *msg = xg_json_parse_error(v);
		snprintf(r->err, sizeof(r->err), "%s: line %zu: not JSON: %s",
			 r->name, r->lineno, msg);
		free(msg);
		return -1;
	}
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		snprintf(r->err, sizeof(r->err), "%s: line %zu: a record must be a JSON object, found %s",
			 r->name, r->lineno, xg_json_kind_peek(v));
		jv_free(v);
		return -1;
	}
	rec->v = v;
	rec->type = xg_json_string_peek(v, "type");
	rec->raw = xg_memdup(line, len + cr);
	rec->rawlen = len + cr;
	return 1;
}

static int too_long(struct xg_rec_reader *r, size_t lineno)
{
	r->code = XG_EX_DATAERR;
	snprintf(r->err, sizeof(r->err),
		 "%s: line %zu is longer than the limit of %zu bytes (XG_MAX_LINE)",
		 r->name, lineno, r->max_line);
	return -1;
}

static int blank(const char *p, size_t n)
{
	while (n > 0 && (*p == ' ' || *p == '\t'))
		p++, n--;
	return n == 0;
}

int xg_rec_next(struct xg_rec_reader *r, struct xg_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->v = jv_invalid();
	for (;;) {
		char *line = r->in.buf + r->start;
		char *nl = memchr(r->in.buf + r->scan, '\n', r->in.len - r->scan);
		size_t len, taken, cr;

		if (!nl && !r->eof) {
			r->scan = r->in.len;
			/* The line so far, less a CR that may precede LF. */
			if (r->in.len - r->start > r->max_line + 1)
				return too_long(r, r->lineno + 1);
			if (fill(r) < 0) {
				r->code = XG_EX_IOERR;
				snprintf(r->err, sizeof(r->err), "cannot read %s: %s",
					 r->name, strerror(errno));
				return -1;
			}
			continue;
		}
		if (!nl && r->in.len == r->start)
			return 0;
		len = nl ? (size_t)(nl - line) : r->in.len - r->start;
		taken = nl ? len + 1 : len;
		r->lineno++;
		r->start += taken;
		r->scan = r->start;
		/* A CR before the LF is not part of the JSON, but it is part of
		 * the bytes a pass-through keeps. */
		cr = len > 0 && line[len - 1] == '\r';
		if (len - cr > r->max_line)
			return too_long(r, r->lineno);
		if (blank(line, len - cr))
			continue;
		return parse_line(r, rec, line, len - cr, cr);
	}
}

int xg_rec_next_or_die(struct xg_rec_reader *r, struct xg_rec *rec)
{
	int rc = xg_rec_next(r, rec);

	if (rc < 0)
		xg_die(r->code, "%s", r->err);
	return rc;
}

void xg_rec_writer_init(struct xg_rec_writer *w, FILE *fp)
{
	struct stat st;

	w->fp = fp;
	w->flush_each = 1;
	if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode))
		w->flush_each = 0;
	xg_buf_init(&w->line, 0);
}

void xg_rec_writer_release(struct xg_rec_writer *w)
{
	xg_buf_release(&w->line);
}

static int put_line(struct xg_rec_writer *w, const char *p, size_t n)
{
	if (fwrite(p, 1, n, w->fp) != n || putc('\n', w->fp) == EOF)
		return -1;
	if (w->flush_each && fflush(w->fp) == EOF)
		return -1;
	return 0;
}

int xg_rec_write(struct xg_rec_writer *w, jv v)
{
	xg_buf_reset(&w->line);
	xg_json_dump(&w->line, v);
	return put_line(w, w->line.buf, w->line.len);
}

int xg_rec_pass(struct xg_rec_writer *w, const struct xg_rec *rec)
{
	return put_line(w, rec->raw, rec->rawlen);
}

jv xg_rec_new(const char *type)
{
	return xg_json_set(jv_object(), "type", jv_string(type));
}

int xg_rec_filter(struct xg_rec_reader *r, struct xg_rec_writer *w, const char *type,
		  xg_rec_filter_fn fn, void *ctx)
{
	struct xg_rec rec;
	int seen = 0, rc = 0;

	while (rc == 0 && r && xg_rec_next_or_die(r, &rec) > 0) {
		int match = !type || (rec.type && !strcmp(rec.type, type));

		if (w && (xg_rec_pass(w, &rec) < 0 || (type && match && fflush(w->fp) == EOF)))
			rc = XG_EX_IOERR;
		else if (match && (seen = 1))
			rc = fn(&rec, ctx);
		xg_rec_release(&rec);
	}
	if (rc == 0 && !seen)
		rc = fn(NULL, ctx);
	return rc;
}
