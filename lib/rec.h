#ifndef XG_REC_H
#define XG_REC_H
/*
 * Records: one JSON object per line (design.md section 3).
 *
 * The reader streams lines from a file descriptor: blank lines are skipped,
 * a CR before the LF is dropped, a last line without LF still counts.  A line
 * longer than the ceiling (XG_REC_MAX_LINE by default, XG_MAX_LINE in the
 * environment) or one that is not a JSON object is an error naming the line
 * number (exit 65 from xg_rec_next_or_die).
 *
 * A record keeps its raw bytes, CR included, so a program passes through
 * what it does not consume exactly as it came (xg_rec_pass).
 */
#include "buf.h"
#include "json.h"

#define XG_REC_MAX_LINE ((size_t)64 << 20)

struct xg_rec {
	jv v;			/* the object; owned by the record */
	const char *type;	/* borrowed from v; NULL when there is none */
	char *raw;		/* the line's bytes, without the LF */
	size_t rawlen;
	size_t lineno;		/* 1-based line number in the input */
};

struct xg_rec_reader {
	int fd;
	const char *name;	/* for messages: "standard input", a path */
	size_t max_line;
	size_t lineno;
	int eof;
	/* -1, or a descriptor that becomes readable to stop the reading:
	 * a read then fails with EINTR instead of waiting for input (a
	 * signal handler writes to a pipe, say). */
	int wake_fd;
	struct xg_buf in;	/* bytes read; those from start on are unread */
	size_t start;
	size_t scan;		/* how far in has been searched for LF */
	char err[256];		/* the last error, when next returned -1 */
	int code;		/* and its exit code: 65 bad data, 74 a read error */
};

void xg_rec_reader_init(struct xg_rec_reader *r, int fd, const char *name);
void xg_rec_reader_release(struct xg_rec_reader *r);
/* 1 and *rec filled, 0 at end of input, -1 with r->err and r->code set. */
int xg_rec_next(struct xg_rec_reader *r, struct xg_rec *rec);
/* As xg_rec_next, but an error is fatal: exit 65 (74 for a read error). */
int xg_rec_next_or_die(struct xg_rec_reader *r, struct xg_rec *rec);
void xg_rec_release(struct xg_rec *rec);
/* The ceiling from XG_MAX_LINE, or the default. */
size_t xg_rec_max_line(void);

/*
 * The writer: one compact line per record.  When the output is a pipe or a
 * terminal each record is flushed as it is written, so a downstream stage
 * sees it at once; to a file, stdio buffers.
 */
struct xg_rec_writer {
	FILE *fp;
	int flush_each;
	struct xg_buf line;
};

void xg_rec_writer_init(struct xg_rec_writer *w, FILE *fp);
void xg_rec_writer_release(struct xg_rec_writer *w);
/* Writes v (consumed) as one line; -1 on a write error. */
int xg_rec_write(struct xg_rec_writer *w, jv v);
/* Writes a read record's original bytes unchanged. */
int xg_rec_pass(struct xg_rec_writer *w, const struct xg_rec *rec);

/*
 * The body of a stage (xg-snapshot, xg-choices start, xg-prompt-compile):
 * every record read from r is passed on to w unchanged (w NULL: none is),
 * and fn is called with each record whose type is type (type NULL: every
 * record), after the record has gone out.  A record of the type named is
 * flushed before fn is called, so the stages downstream already hold it
 * while fn works; with type NULL the writer's own flushing holds.  When no record
 * of that type came (r NULL: no input), fn is called once at the end with
 * rec NULL.  fn returns 0 to go on, or a code that stops the reading and
 * that xg_rec_filter returns.  A record that cannot be read is fatal (exit
 * 65, or 74 for a read error), as with xg_rec_next_or_die; a write error
 * stops it with XG_EX_IOERR, not reported here: xg_prog_exit reports a
 * standard output that failed, once.
 */
typedef int (*xg_rec_filter_fn)(const struct xg_rec *rec, void *ctx);
int xg_rec_filter(struct xg_rec_reader *r, struct xg_rec_writer *w, const char *type,
		  xg_rec_filter_fn fn, void *ctx);

/* A new record {"type": type}. */
jv xg_rec_new(const char *type);

#endif
