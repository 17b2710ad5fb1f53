#ifndef XG_DISPATCH_H
#define XG_DISPATCH_H
/*
 * The dispatch subsystem, xg_dispatch_, xg_render_: the verbs xg runs itself
 * and the renderer that shows a run's records to a person.  Its one public
 * header.
 *
 * The files, top down: a file calls only files below it.
 *
 *   verbs.c   the verbs: run, plan and resume read their command line;
 *             help, version, commands
 *   run.c     the request, the pipeline of a run, its shell form, its output
 *   goal.c    xg goal: xg-goal, its records rendered on a terminal
 *   input.c   what a run takes from standard input besides its operands
 *   compact.c xg compact: xg-run --compact on a conversation
 *   say.c     xg say: a message to the run that holds a conversation
 *   resume.c  the conversations of this directory
 *   render.c  the records as a person reads them, and the reply they tell
 *   row.c     the phase row under the rendered records
 *   settings.c a settings record as a table (xg-run --settings)
 */
#include <stdio.h>
#include "json.h"
#include "opt.h"

/*
 * xg's own verbs, as a table in cmd/xg.c: each gets the table, its own
 * entry and its arguments from the verb on (argv[0] is the verb), and
 * returns the exit status.  Every other command runs xg-COMMAND.
 */
struct xg_dispatch_verb;
struct xg_dispatch_cli {
	const struct xg_command *cmd;		/* xg's usage and options */
	const struct xg_dispatch_verb *verbs;	/* ends with an all-zero entry */
};
struct xg_dispatch_verb {
	const char *name;
	const char *summary;	/* what "xg help VERB" says it does */
	int (*run)(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
		   int argc, char **argv);
};

/* The entry of verbs named name, or NULL. */
const struct xg_dispatch_verb *xg_dispatch_verb_find(const struct xg_dispatch_verb *verbs,
						     const char *name);

/* The ids of the options of run, plan and resume, for cmd/xg.c's table. */
enum {
	XG_DISPATCH_OPT_ACCOUNT = 1, XG_DISPATCH_OPT_ASK, XG_DISPATCH_OPT_CONVERSATION,
	XG_DISPATCH_OPT_DRY_RUN, XG_DISPATCH_OPT_EFFORT, XG_DISPATCH_OPT_GATE,
	XG_DISPATCH_OPT_JSON, XG_DISPATCH_OPT_MODEL, XG_DISPATCH_OPT_REPLY,
	XG_DISPATCH_OPT_VARIANT, XG_DISPATCH_OPT_QUIET, XG_DISPATCH_OPT_SANDBOX
};

/* The verbs: run, plan and resume (one function, by v->name), help,
 * version, commands. */
int xg_dispatch_run_verb(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			 int argc, char **argv);
int xg_dispatch_help(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
		     int argc, char **argv);
int xg_dispatch_version(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			int argc, char **argv);
__attribute__((noreturn))
int xg_dispatch_compact_verb(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			     int argc, char **argv);
int xg_dispatch_commands(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			 int argc, char **argv);
/* "xg say [--conversation ID | --run ID] [TEXT]" (say.c). */
int xg_dispatch_say_verb(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			 int argc, char **argv);
/* "xg goal [--json] VERB ...": xg-goal, rendered on a terminal (goal.c). */
int xg_dispatch_goal_verb(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			  int argc, char **argv);

/*
 * The verbs xg runs itself (run, plan, resume): a request record fed to what
 * is, in effect, the pipeline
 *
 *   xg-snapshot | xg-choices start | xg-prompt-compile | xg-run
 *
 * whose stages are found as xg finds any xg-FOO (exec.h).  xg starts xg-run
 * alone, which takes the other steps itself; --dry-run prints the four.
 */

/* What "xg run", "xg plan" and "xg resume" were asked for. */
struct xg_dispatch_run {
	const char *text;		/* the request's text */
	const char *mode;		/* "normal" or "plan" */
	const char *conversation;	/* NULL: a new conversation */
	const char *account, *variant, *model, *effort;	/* NULL: unset */
	const char *gate, *ask;		/* xg-run's --gate and --ask; NULL: unset */
	const char *sandbox;		/* xg-run's --sandbox value; NULL: unset */
	const char *reply;		/* --reply: the file for the reply; NULL: none */
	const char *notice;		/* a notice record's text to send first; NULL: none */
	int json;			/* records even on a terminal */
	int quiet;			/* no phase row */
	int dry_run;			/* print the pipeline, run nothing */
};

/* The longest text read from standard input for "xg run -". */
#define XG_DISPATCH_MAX_TEXT ((size_t)16 << 20)

/* The text read from fd to its end, less its trailing newlines (the caller
 * frees it); exit 65 when it is longer than XG_DISPATCH_MAX_TEXT or holds a
 * NUL byte, 74 when it cannot be read. */
char *xg_dispatch_read_text(int fd);

/*
 * Text piped to a run on standard input besides its operand ("cat build.log
 * | xg run 'why does this fail?'"), read only when that cannot wait on
 * anyone: standard input is open, not a terminal, and a regular file, or
 * else (a pipe, a socket, a device) has data or its end within
 * XG_DISPATCH_PIPE_WAIT_MS.  Then it is read to its end or to
 * XG_DISPATCH_MAX_PIPED bytes, whichever comes first; *cut says the cap was
 * reached (the text then ends before the cap on a whole UTF-8 character).
 * NULL when nothing is read or it is empty; trailing newlines are dropped.
 * Exit 65 when it holds a NUL byte, 74 when it cannot be read.
 */
#define XG_DISPATCH_PIPE_WAIT_MS 500
#define XG_DISPATCH_MAX_PIPED ((size_t)1 << 20)
char *xg_dispatch_read_piped(int fd, int *cut);

/* text followed by the piped text in a delimited block saying where it came
 * from (and, when cut, that it was); the caller frees it. */
char *xg_dispatch_with_piped(const char *text, const char *piped, int cut);

/*
 * The records fed to the pipeline, one a line with a newline after each
 * (the caller frees them): a notice first when o->notice is set, then the
 * request, {"type":"request","text":...,"mode":...,"conversation"?,
 * "account"?,"variant"?,"model"?,"effort"?,"cwd":...}.  '$', '\'' and '%'
 * are written as JSON escapes, so a line can stand inside single quotes in
 * sh(1), a Makefile and a crontab alike and still parses to the same
 * values.
 */
char *xg_dispatch_input(const struct xg_dispatch_run *o);

/*
 * Runs xg-run for o (or prints the pipeline as one sh(1) command, for
 * --dry-run) and returns the exit status: xg-run's, or 70 when xg-run
 * (for --dry-run, any stage) cannot be found or started, or 74 when the
 * reply file cannot be written.
 * On a terminal without --json the records are rendered for a person
 * (below); else they go to standard output as xg-run writes them.
 */
int xg_dispatch_run(const struct xg_dispatch_run *o);

/*
 * The conversations whose workspace is the current directory: those whose
 * header's "cwd" names it (after realpath(3) of both), newest first (the
 * newest modification time; the greater id on a tie).
 */
/* The newest one's id, or NULL when there is none (the caller frees it). */
char *xg_dispatch_newest_here(void);
/* Writes up to max of them to fp, one a line: the id, the time of the last
 * write (local, YYYY-MM-DD HH:MM) and the first line of the first request,
 * separated by tabs.  Returns how many were written. */
int xg_dispatch_list_here(FILE *fp, int max);
/* Whether word names a conversation: one that exists, a run, or a word
 * shaped as xg_conv_new_id makes them (YYYYMMDD-HHMMSS-xxxxxxxx). */
int xg_dispatch_is_conversation_id(const char *word);
/*
 * The conversation id names (the caller frees it): id itself when the
 * conversation exists, else the conversation of the run id names (its
 * run.json's).  When there is neither: NULL, or, when must is set, exit 65
 * with a message saying where each kind is listed.  Exit 2 for an id that
 * is no id, 65 for a run that made no conversation.
 */
char *xg_dispatch_conversation_of(const char *id, int must);

/*
 * The reply of a run as its records tell it: each assistant message's text
 * replaces *reply as it comes, then run_end's reply when it is a non-empty
 * string.  rec is only looked at; *reply is the caller's to free.
 */
void xg_dispatch_reply_peek(jv rec, char **reply);
/* "xg compact": execs xg-run --compact on the conversation, when it is
 * NULL the newest whose workspace is this directory (xg resume's); returns
 * only to die (65 when there is none). */
__attribute__((noreturn))
void xg_dispatch_compact(const char *conversation);

/*
 * "xg say": hands text to the run that holds the conversation (when NULL,
 * the one run goes on, when run is not NULL, else the newest whose
 * workspace is this directory).  The exit status: 0 once it is handed
 * over, 69 when no run holds the conversation (or not that run) and
 * nothing was written, 65 when the text is too long, 75 when the inbox
 * stays locked or full, 74 for an I/O error.
 */
int xg_dispatch_say(const char *conversation, const char *run, const char *text);

/*
 * Rendering a run's records for a person (xg on a terminal, xg(1)): the
 * assistant's text as it streams (or whole, from its message), one line per
 * tool call with its outcome once its result is in, notices, retries, todo
 * progress, a plan's outcome, a goal's changes, and a last status line from run_end.  Records it has nothing to say about
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
	int plain;		/* the lines on standard error of a run in a pipe:
				 * the assistant's text is left out (it is the
				 * output) */
	int quiet;		/* failures alone: a run_end or goal that did not
				 * succeed, a missing run_end */
	int at_bol;		/* the text so far ends a line (or is empty) */
	int streamed;		/* text deltas were shown for the current message */
	int replied;		/* some assistant text was shown */
	int ended;		/* run_end was seen */
	jv calls;		/* tool_call records by id, waiting for results */
	char *conversation;	/* from run_start */
	char *reply;		/* the run's reply so far (xg_dispatch_reply_peek) */
	char *plan;		/* a plan_ready plan record's plan, or NULL */
	int sent_fd;		/* for the row, xg_render_row_watch's; -1: none */
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
 * dropped, so the writer never blocks.  When reply is not NULL, *reply is
 * the run's reply at the end (NULL when it had none; the caller frees it).
 * 0, or -1 on a write error to fp.
 */
int xg_render_stream(int fd, const char *name, FILE *fp, int color, char **reply);
/* The same with r, which the caller made (xg_render_init, then plain and
 * quiet as it wants them) and reads and releases after, and the phase row
 * (row.c) on row when it is not NULL. */
int xg_render_stream_live(int fd, const char *name, struct xg_render *r, FILE *fp,
			  FILE *row);

/*
 * Where xg shows a run's records (xg(1), Output): rendered on a terminal;
 * in a pipe, the reply alone on standard output and plain lines on
 * standard error; or, with --json, the records on standard output as they
 * come, with what went wrong said once on standard error.
 */
enum xg_render_mode { XG_RENDER_TERMINAL, XG_RENDER_PLAIN, XG_RENDER_JSON };
struct xg_render_out {
	enum xg_render_mode mode;
	const char *name;	/* what the records come from, for messages */
	int color;		/* on a terminal: bold and dim */
	FILE *row;		/* on a terminal: the phase row's, or NULL */
	int sent_fd;		/* for the row: ends once the first request is
				 * out (the pipeline's cue_fd), or -1 */
	int quiet;		/* in a pipe: standard error for failures alone */
	int plan;		/* in a pipe: the plan, when there is one, is the output */
};
/* Shows the records read from fd to its end as how says.  When reply is not
 * NULL, *reply is the run's reply (NULL when it had none; the caller frees
 * it).  0, or -1 on a write error to standard output. */
int xg_render_output(int fd, const struct xg_render_out *how, char **reply);

/*
 * The phase row (xg(1)): one line on a terminal, replaced in place, naming
 * what the run is inside while nothing else is shown.  A thread redraws
 * it; the renderer brackets each record's output with begin (writing: it
 * will write, so the row is cleared first) and end (the record, which it
 * only looks at, moves the row; at_bol: the output ends a line, so the
 * row may be drawn).
 */
struct xg_render_row;
struct xg_render_row *xg_render_row_new(FILE *fp, int color);
void xg_render_row_free(struct xg_render_row *w);
/* Until fd (only looked at) has its end, the run has not sent its first
 * request: the row names the start, not the wait for the model. */
void xg_render_row_watch(struct xg_render_row *w, int fd);
void xg_render_row_begin(struct xg_render_row *w, int writing);
void xg_render_row_end(struct xg_render_row *w, jv rec, int at_bol);
/* The row's text at now (xg_clock_ms), for the tests. */
void xg_render_row_text(struct xg_render_row *w, int64_t now, struct xg_buf *b);

/* A settings record (only looked at) as a table on a terminal: one row a
 * policy, what it is and where it came from (settings.c). */
void xg_render_settings_peek(FILE *out, jv rec);

#endif
