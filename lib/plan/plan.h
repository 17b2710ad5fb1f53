#ifndef XG_PLAN_H
#define XG_PLAN_H
/*
 * Plan replies (design.md B9, ADR-0077): what a reply in plan mode
 * concluded.
 *
 *   plan_ready  one complete, non-empty <proposed_plan> block
 *   blocked     one complete, non-empty <plan_blocked> block
 *   no_plan     no outcome tag at all, and some text
 *   invalid     anything else; problems[] says why
 *
 * Only tags outside code count: a fenced code block (CommonMark's backtick
 * and tilde fences) or an inline code span makes the tags in it text, so a
 * reply may quote the format without declaring an outcome.  A reply with
 * CR LF line ends classifies exactly as the same reply with LF, and the
 * block's text comes out with LF.  Bytes that are not UTF-8 are classified
 * as bytes; xg_plan_record() makes every string valid UTF-8.
 *
 *   struct xg_plan_result r;
 *   if (xg_plan_classify(reply, len, &r) < 0) ...;
 *   xg_rec_write(&w, xg_plan_record(&r));
 *   xg_plan_result_release(&r);
 *
 * The room is one file:
 *
 *   plan.c      the classifier, the record, and the reply read for it
 */
#include <stddef.h>
#include <jv.h>

struct xg_buf;
struct xg_rec_reader;
struct xg_rec_writer;

enum xg_plan_outcome {
	XG_PLAN_READY,
	XG_PLAN_NO_PLAN,
	XG_PLAN_BLOCKED,
	XG_PLAN_INVALID
};

/*
 * The exit statuses of xg-classify-plan --status, one per outcome; they are
 * a documented contract (xg-classify-plan(1)), outside the XG_EX_* table
 * because they report a result, not a failure.
 */
enum {
	XG_PLAN_EXIT_READY = 0,
	XG_PLAN_EXIT_NO_PLAN = 10,
	XG_PLAN_EXIT_BLOCKED = 11,
	XG_PLAN_EXIT_INVALID = 12
};

/*
 * Why a reply is invalid.  The codes are stable (scripts match on them);
 * the messages are sentences for a person and may change.
 *
 *   empty_reply           the reply is empty or only white space
 *   unbalanced_tag        a tag opens a block that never closes, closes a
 *                         block that was not open, or opens a block inside
 *                         another
 *   empty_block           a complete block holds only white space
 *   duplicate_block       more than one complete block of the same kind
 *   conflicting_blocks    both a <proposed_plan> and a <plan_blocked> block
 *   legacy_clarification  a <plan_clarification> tag (no longer accepted)
 */
#define XG_PLAN_EMPTY_REPLY "empty_reply"
#define XG_PLAN_UNBALANCED_TAG "unbalanced_tag"
#define XG_PLAN_EMPTY_BLOCK "empty_block"
#define XG_PLAN_DUPLICATE_BLOCK "duplicate_block"
#define XG_PLAN_CONFLICTING_BLOCKS "conflicting_blocks"
#define XG_PLAN_LEGACY_CLARIFICATION "legacy_clarification"

struct xg_plan_problem {
	const char *code;	/* one of the XG_PLAN_* codes above */
	char *message;		/* a sentence, ASCII */
	size_t line;		/* the reply's line at fault (1-based), or 0 */
};

struct xg_plan_result {
	enum xg_plan_outcome outcome;
	/* For plan_ready and blocked: the block's inner text as written, less
	 * the blank lines around it, with LF line ends; NULL otherwise.  It is
	 * not copied: it points into the reply given to xg_plan_classify (or,
	 * when that had CR LF, into an LF copy the result owns), so it lives
	 * while both do.  Not NUL-terminated; it may hold NUL bytes. */
	const char *text;
	size_t textlen;
	char *owned;
	struct xg_plan_problem *problems;	/* in the order of the reply */
	size_t nproblems;
	size_t alloc;
};

/* Classifies reply (len bytes, NULs allowed) into *out, which the caller
 * releases with xg_plan_result_release.  Returns 0, or -1 after a message
 * when pcre2 failed (an internal error; *out is then empty). */
int xg_plan_classify(const char *reply, size_t len, struct xg_plan_result *out);
void xg_plan_result_release(struct xg_plan_result *r);

/* "plan_ready", "no_plan", "blocked" or "invalid". */
const char *xg_plan_outcome_name(enum xg_plan_outcome outcome);
/* The --status exit code of an outcome. */
int xg_plan_exit_status(enum xg_plan_outcome outcome);

/* The plan record: {"type":"plan","outcome":...,"plan"|"blocked":...,
 * "problems":[{"code","message","line"?}]}.  Only looks at r. */
jv xg_plan_record(const struct xg_plan_result *r);

/* Appends the same record as one compact line, byte for byte what
 * xg_json_dump(b, xg_plan_record(r)) writes, without building the jv: for a
 * reply of many megabytes it is an order of magnitude faster.  b must have
 * no ceiling: escaping can make the text six times as long. */
void xg_plan_record_line(struct xg_buf *b, const struct xg_plan_result *r);
/* Writes that line as a record through w; -1 on a write error. */
int xg_plan_write(struct xg_rec_writer *w, const struct xg_plan_result *r);

/*
 * Input for xg-classify-plan and anything like it.
 *
 * xg_plan_read_reply reads all of fd into b (appending); more than max
 * bytes is exit 65, a read error exit 74; name is for messages.
 *
 * xg_plan_records_reply reads records from r, passes each through to w
 * (unless w is NULL) and sets reply to the reply to classify: the last
 * run_end's "reply", or, when there is no run_end, the last "text" of a
 * message whose "role" is "assistant".  A missing or null field is an empty
 * reply; any other non-string is exit 65 naming the line and field, and so
 * are records with no such reply at all.  Returns the line of the record
 * the reply came from.
 */
void xg_plan_read_reply(int fd, const char *name, struct xg_buf *b, size_t max);
size_t xg_plan_records_reply(struct xg_rec_reader *r, struct xg_rec_writer *w,
			     struct xg_buf *reply);

#endif
