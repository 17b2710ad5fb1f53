#ifndef XG_SSE_H
#define XG_SSE_H
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
#include <stddef.h>
#include "buf.h"

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

#endif
