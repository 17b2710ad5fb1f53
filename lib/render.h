#ifndef XG_RENDER_H
#define XG_RENDER_H
/*
 * Rendering a run's records for a person (xg on a terminal, xg(1)): the
 * assistant's text as it streams (or whole, from its message), one line per
 * tool call with its outcome once its result is in, notices, retries, todo
 * progress and a plan's outcome, and a last status line from run_end.  Records it has nothing to say about
 * (snapshot, model, pack, usage, heartbeat, unknown types) are skipped.
 *
 * It is a function from records to text, kept apart from any terminal so a
 * test can drive it: xg_render_record appends the text for one record to a
 * buffer.  Control characters other than newline and tab are dropped from
 * what the model and tools wrote, so a reply cannot drive the terminal.
 */
#include "json.h"

struct xg_buf;

struct xg_render {
	int color;		/* ANSI bold and dim */
	int at_bol;		/* the text so far ends a line (or is empty) */
	int streamed;		/* text deltas were shown for the current message */
	int replied;		/* some assistant text was shown */
	int ended;		/* run_end was seen */
	jv calls;		/* tool_call records by id, waiting for results */
	char *conversation;	/* from run_start */
};

void xg_render_init(struct xg_render *r, int color);
void xg_render_release(struct xg_render *r);
/* Appends the text for rec (borrowed) to out. */
void xg_render_record(struct xg_render *r, jv rec, struct xg_buf *out);
/* Appends what the end of the records calls for: calls that never got a
 * result, and a line when no run_end came. */
void xg_render_finish(struct xg_render *r, struct xg_buf *out);

/*
 * Reads records from fd and writes their rendering to fp, flushing after
 * each record, until the end of the input.  A line that is not a record
 * is reported on standard error and the rest of the input read and
 * dropped, so the writer never blocks.  0, or -1 on a write error to fp.
 */
int xg_render_stream(int fd, const char *name, FILE *fp, int color);

#endif
