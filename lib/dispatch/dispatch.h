#ifndef XG_DISPATCH_H
#define XG_DISPATCH_H
/*
 * The dispatch subsystem, xg_dispatch_, xg_render_: the verbs xg runs itself
 * and the renderer that shows a run's records to a person.  Its one public
 * header.
 */
#include <stdio.h>
#include "json.h"

/*
 * The verbs xg runs itself (run, plan, resume): a request record fed to the
 * pipeline
 *
 *   xg-snapshot | xg-choices start | xg-prompt-compile | xg-run
 *
 * whose stages are found as xg finds any xg-FOO (exec.h).
 */

/* What "xg run", "xg plan" and "xg resume" were asked for. */
struct xg_dispatch_run {
	const char *text;		/* the request's text */
	const char *mode;		/* "normal" or "plan" */
	const char *conversation;	/* NULL: a new conversation */
	const char *account, *variant, *model, *effort;	/* NULL: unset */
	int json;			/* records even on a terminal */
	int dry_run;			/* print the pipeline, run nothing */
};

/* The longest text read from standard input for "xg run -". */
#define XG_DISPATCH_MAX_TEXT ((size_t)16 << 20)

/* The text read from fd to its end, less its trailing newlines (the caller
 * frees it); exit 65 when it is longer than XG_DISPATCH_MAX_TEXT or holds a
 * NUL byte, 74 when it cannot be read. */
char *xg_dispatch_read_text(int fd);

/*
 * The request record as one line without its newline (the caller frees
 * it): {"type":"request","text":...,"mode":...,"conversation"?,"account"?,
 * "variant"?,"model"?,"effort"?,"cwd":...}.  '$' and '\'' are written as
 * JSON escapes, so the line can stand inside single quotes in sh(1) and in
 * a Makefile alike and still parses to the same values.
 */
char *xg_dispatch_request(const struct xg_dispatch_run *o);

/*
 * Runs the pipeline for o (or prints it as one sh(1) command, for
 * --dry-run) and returns the exit status: xg-run's, or 70 when a stage
 * cannot be found or started.  On a terminal without --json the records
 * are rendered for a person (render.h); else xg-run writes them to
 * standard output itself.
 */
int xg_dispatch_run(const struct xg_dispatch_run *o);

/* "xg compact": execs xg-run --compact on the conversation, the newest
 * when it is NULL; returns only to die (65 when there is none). */
__attribute__((noreturn))
void xg_dispatch_compact(const char *conversation);

/* The id of the conversation written to last in $state/conversations (the
 * newest modification time; the greater id on a tie), or NULL when there
 * is none.  The caller frees it. */
char *xg_dispatch_newest_conversation(void);

/*
 * Rendering a run's records for a person (xg on a terminal, xg(1)): the
 * assistant's text as it streams (or whole, from its message), one line per
 * tool call with its outcome once its result is in, notices, retries, todo
 * progress and a plan's outcome, and a last status line from run_end.  Records it has nothing to say about
 * (snapshot, model, pack, usage, heartbeat, unknown types) are skipped.
 *
 * It is a function from records to text, kept apart from any terminal so a
 * test can drive it: xg_render_record_peek appends the text for one record to a
 * buffer.  Control characters other than newline and tab are dropped from
 * what the model and tools wrote, so a reply cannot drive the terminal.
 */

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
/* Appends the text for rec, which it only looks at, to out. */
void xg_render_record_peek(struct xg_render *r, jv rec, struct xg_buf *out);
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
