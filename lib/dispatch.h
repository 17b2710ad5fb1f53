#ifndef XG_DISPATCH_H
#define XG_DISPATCH_H
/*
 * How "xg FOO ARGS" finds and runs "xg-FOO ARGS" (as git runs git-FOO): the
 * directory of the running xg first, so an installed or built tree uses its
 * own programs, then PATH.  And the verbs xg runs itself (run, plan, resume):
 * a request record fed to the pipeline
 *
 *   xg-snapshot | xg-choices start | xg-prompt-compile | xg-run
 *
 * whose stages are found the same way.
 */
#include <stdio.h>

/* The path of xg-name to run, or NULL when there is none (the caller
 * frees it).  name must be a plain word: no '/', not empty. */
char *xg_dispatch_find(const char *name);
/* The same, looking only in PATH (what a shell would run). */
char *xg_dispatch_find_in_path(const char *name);
/* Replaces the process with xg-name; returns only on failure, with errno. */
int xg_dispatch_exec(const char *path, char **argv);
/* The verbs given (NULL-terminated, may be NULL) and the xg-* programs
 * found, sorted and without duplicates, one per line on fp. */
void xg_dispatch_list(FILE *fp, const char *const *verbs);

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

/* The id of the conversation written to last in $state/conversations (the
 * newest modification time; the greater id on a tie), or NULL when there
 * is none.  The caller frees it. */
char *xg_dispatch_newest_conversation(void);

#endif
