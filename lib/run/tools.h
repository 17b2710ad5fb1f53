#ifndef XG_RUN_TOOLS_H
#define XG_RUN_TOOLS_H
/*
 * The tools xg-run offers the model (docs/tools.md is the reference):
 *
 *   bash        run a shell command in the workspace
 *   read        a text file with line numbers, a window at a time
 *   write       replace or create a file, atomically
 *   edit        replace unique pieces of a file, atomically, all or nothing
 *   todo_write  the progress list the loop writes as a todo record
 *   ask_user    a question for the --ask command, if there is one
 *
 * xg_tool_schemas() is the table sent to a provider; xg_tool_run() runs one
 * call and always returns a result object
 *
 *   {"ok": bool, "output": "text for the model", ...}
 *
 * whose extra fields depend on the tool (exit_code, timed_out, truncated,
 * full_output_path, items, ...).  A tool's own failure (a file not found, an
 * edit refused, a command that exits 1) is a result with ok false and the
 * reason in output, never an exit: the model reads it and carries on.
 *
 * write and edit, and read too, refuse a path that resolves outside the
 * workspace once symlinks and ".." are followed, including a file that does
 * not exist yet under a symlinked directory.
 */
#include <signal.h>
#include <stdint.h>
#include "json.h"

/* The limits the model is told about. */
#define XG_TOOL_MAX_LINES 2000
#define XG_TOOL_MAX_BYTES (50 * 1024)
#define XG_TOOL_BASH_TIMEOUT_S 120
#define XG_TOOL_BASH_MAX_TIMEOUT_S 600
/* TERM, then this long for the process group to go, then KILL. */
#define XG_TOOL_KILL_GRACE_MS 2000
/* The saved full output of one bash call stops here. */
#define XG_TOOL_FULL_OUTPUT_MAX ((size_t)64 << 20)
/* Files edit and read take whole into memory (edit) or scan (read). */
#define XG_TOOL_EDIT_MAX_FILE ((size_t)64 << 20)
/* The answer of an --ask command, and the time it may take by default. */
#define XG_TOOL_ASK_MAX_ANSWER (64 * 1024)
#define XG_TOOL_ASK_TIMEOUT_S 600
#define XG_TOOL_TODO_MAX_ITEMS 100

/*
 * The process groups of the commands running now (bash, the ask command),
 * owned by the caller and shared by every call it makes, so a signal
 * handler can kill them all.  Zero-initialise it.
 */
#define XG_TOOL_MAX_PROCS 64
struct xg_tool_procs {
	volatile sig_atomic_t pgid[XG_TOOL_MAX_PROCS];
};

/*
 * Sends sig to every registered process group.  Async-signal-safe: a SIGINT
 * handler sets the abort flag first and then calls it, and the calls in
 * progress finish the job (TERM, the grace, KILL) and return results that
 * say they were interrupted.
 */
void xg_tool_kill_all(struct xg_tool_procs *procs, int sig);

struct xg_tool_ctx {
	const char *workspace;	/* the root the file tools stay inside; bash's cwd */
	const char *run_dir;	/* full bash output goes to run_dir/tool-output/;
				 * NULL: not saved */
	const char *call_id;	/* names the saved output file; may be NULL */
	const char *ask_command;	/* /bin/sh -c text answering ask_user; NULL: none */
	int ask_timeout_s;	/* 0: XG_TOOL_ASK_TIMEOUT_S */
	/* Environment variables the commands must not see (the providers'
	 * credential variables), NULL-terminated; may be NULL. */
	const char *const *env_drop;
	volatile sig_atomic_t *abort;	/* set nonzero to stop running tools; may be NULL */
	int64_t deadline_ms;	/* xg_clock_ms() time no tool runs past; 0: none */
	struct xg_tool_procs *procs;	/* may be NULL */
};

/* The tool table: an array of {name, description, parameters}, where
 * parameters is a JSON schema (type object). */
jv xg_tool_schemas(void);
/* Whether name is one of the tools. */
int xg_tool_exists(const char *name);

/* Runs the tool name with args (consumed) and returns its result object. */
jv xg_tool_run(const struct xg_tool_ctx *ctx, const char *name, jv args);

/*
 * Where path (relative to the workspace, or absolute) leads once every
 * symlink and ".." is followed, even when its last parts do not exist yet
 * (they will be created as plain directories, so ".." after them is
 * lexical).  Returns a new string with *inside set to whether it is the
 * workspace or under it, or NULL with errno set when it cannot be resolved
 * (ELOOP, EACCES, ...).
 */
char *xg_tool_resolve(const char *workspace, const char *path, int *inside);

#endif
