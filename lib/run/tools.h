#ifndef XG_RUN_TOOLS_H
#define XG_RUN_TOOLS_H
/*
 * Private to lib/run/ (and its test driver): the tools xg-run offers the
 * model (docs/tools.md is the reference).  The first part below is what
 * the loop uses, the second what the tool files share.  The tools know
 * nothing of the run: what a call needs comes in struct xg_tool_ctx.
 *
 *   bash        run a shell command in the workspace (bash.c)
 *   read        a text file with line numbers, a window at a time (files.c)
 *   write       replace or create a file, atomically (files.c)
 *   edit        replace unique pieces of a file, all or nothing (files.c)
 *   todo_write  the progress list, written as a todo record (todo.c)
 *   ask_user    a question for the --ask command, if any (ask_user.c)
 *
 * tools.c holds the table and the dispatch.  Beneath the tools, result.c
 * makes their results, proc.c runs the commands of bash and ask_user, and
 * workspace.c keeps the file tools' paths inside the workspace.
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
#include <sys/types.h>
#include "json.h"

/* ---- what the loop uses ---- */

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
 *
 * life is a pipe made at the first command and never closed: only this
 * process holds its write end, so its read end, which each command's
 * keeper watches, reaches end-of-file when the process ends, however it
 * ends (proc.c).
 */
#define XG_TOOL_MAX_PROCS 64
struct xg_tool_procs {
	volatile sig_atomic_t pgid[XG_TOOL_MAX_PROCS];
	volatile int life_state;	/* 0 none yet, 1 being made, 2 made, 3 failed */
	int life[2];
};

/*
 * Sends sig to every registered process group.  Async-signal-safe: a SIGINT
 * handler sets the abort flag first and then calls it, and the calls in
 * progress finish the job (TERM, the grace, KILL) and return results that
 * say they were interrupted.
 */
void xg_tool_procs_kill(struct xg_tool_procs *procs, int sig);

/*
 * The sandbox of bash (sandbox.c): when bwrap is set, bash's commands run
 * under it with the system read-only, a /tmp and a PID namespace of their
 * own, the network only when net is set, the workspace writable unless
 * read_only is set, and each directory of hide (canonical paths,
 * NULL-terminated; may be NULL) empty.  ask_user's command is the
 * person's own and is never sandboxed.
 */
struct xg_tool_sandbox {
	char *bwrap;			/* the program's path; NULL: no sandbox */
	int net;
	int read_only;
	char **hide;
};

/*
 * Looks for bwrap in PATH and tries it once: 1 with *bwrap its path (the
 * caller frees it), or 0 with *bwrap NULL and why saying what is missing
 * and what to install or enable.
 */
int xg_tool_sandbox_find(char **bwrap, char *why, size_t whylen);
/* Whether the sandbox can run here (the same look, for a caller that
 * only decides, such as a read-only profile choosing it when it can). */
int xg_tool_sandbox_available(void);

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
	const struct xg_tool_sandbox *sandbox;	/* bash's sandbox; NULL: none */
};

/* The tool table: an array of {name, description, parameters}, where
 * parameters is a JSON schema (type object). */
jv xg_tool_schemas(void);
/* Whether name is one of the tools. */
int xg_tool_exists(const char *name);

/* Runs the tool name with args (consumed) and returns its result object. */
jv xg_tool_run(const struct xg_tool_ctx *ctx, const char *name, jv args);

/* ---- between the tool files ---- */

/*
 * Each tool, as the table in tools.c calls it: args is a JSON object the
 * tool only looks at (xg_tool_run frees it), and the result is new.
 */
jv xg_tool_bash_peek(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_read_peek(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_write_peek(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_edit_peek(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_todo_write_peek(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_ask_user_peek(const struct xg_tool_ctx *ctx, jv args);

/* The result objects (result.c): {"ok": ok, "output": output}, consuming
 * output; and one with ok false and a formatted output. */
jv xg_tool_result(int ok, jv output);
__attribute__((format(printf, 1, 2)))
jv xg_tool_fail(const char *fmt, ...);

/*
 * Where the file tools' paths lead (workspace.c).
 *
 * Where path (relative to the workspace, or absolute) leads once every
 * symlink and ".." is followed, even when its last parts do not exist yet
 * (they will be created as plain directories, so ".." after them is
 * lexical).  Returns a new string with *inside set to whether it is the
 * workspace or under it, or NULL with errno set when it cannot be resolved
 * (ELOOP, EACCES, ...).
 */
char *xg_tool_workspace_resolve(const char *workspace, const char *path, int *inside);
/*
 * The path argument of the file tool named tool, resolved: a new string,
 * or NULL with *err set to the result to return when it is missing,
 * unresolvable or outside the workspace.  *shown points into it at the
 * path to name in messages: relative to the workspace when inside it.
 */
char *xg_tool_workspace_path_peek(const struct xg_tool_ctx *ctx, const char *tool,
				  jv args, const char **shown, jv *err);

/*
 * The file tools open only through these, which take resolved from
 * xg_tool_workspace_path_peek and follow no symlink on the way from the
 * workspace, so a directory swapped for a symlink after the check is an
 * error, not a way out.  xg_tool_workspace_open opens resolved with flags
 * (open(2)'s); xg_tool_workspace_dir opens the directory that holds it
 * (O_PATH, for the *at calls), making it and its parents first when create
 * is set, and points *base into resolved at its last component.  Both
 * return a descriptor, or -1 with errno set.
 */
int xg_tool_workspace_open(const struct xg_tool_ctx *ctx, const char *resolved, int flags);
int xg_tool_workspace_dir(const struct xg_tool_ctx *ctx, const char *resolved, int create,
			  const char **base);

/* mkdir -p of path's parent directory, quietly (errno set): the caller
 * reports (files.c). */
int xg_tool_mkdir_parents(const char *path);

/*
 * A command a tool runs (proc.c): /bin/sh -c in a session of its own, its
 * standard output and error read as they come and handed to a sink, its
 * standard input fed from memory or /dev/null, and the whole process group
 * killed at a timeout, the run's deadline or an abort.
 */

enum xg_tool_proc_end {
	XG_TOOL_PROC_EXIT,	/* it ended by itself: see status */
	XG_TOOL_PROC_TIMEOUT,	/* killed at the call's timeout */
	XG_TOOL_PROC_DEADLINE,	/* killed at the run's deadline */
	XG_TOOL_PROC_ABORT	/* killed because the run is being stopped */
};

struct xg_tool_proc {
	pid_t pid;
	int out;		/* the merged output, or -1 once at its end */
	int in;			/* the command's stdin (a socket), or -1 */
	const char *in_data;	/* what the command reads on its stdin */
	size_t in_len, in_off;
	int pidfd;		/* readable when the shell ends, or -1 (old kernels) */
	int status;		/* as waitpid gives it */
	int reaped;
	enum xg_tool_proc_end end;
	/* Called with each piece of output. */
	void (*sink)(void *data, const char *p, size_t n);
	void *sink_data;
};

/* Whether the run is stopping the tools (ctx->abort set): then no
 * command starts. */
int xg_tool_proc_aborted(const struct xg_tool_ctx *ctx);
/*
 * Starts command in the workspace with the environment less
 * ctx->env_drop.  The caller sets sink, sink_data and, with with_input,
 * in_data and in_len; stderr_too merges standard error into the output
 * (else it is ours).  Returns 0, or -1 with errno set.
 */
int xg_tool_proc_start(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c,
		       const char *command, int with_input, int stderr_too);
/* The same for bash: under ctx->sandbox when it has a bwrap. */
int xg_tool_proc_start_sandboxed(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c,
				 const char *command, int stderr_too);
/* The bwrap command line that runs command in the sandbox sb with
 * workspace as its writable (or read-only) directory and cwd; the array is
 * new, its strings borrowed (sandbox.c). */
char **xg_tool_sandbox_argv(const struct xg_tool_sandbox *sb, const char *workspace,
			    const char *command);
/* Feeds the input, hands the output to the sink and waits for the command
 * to end, killing its group past timeout_ms; then closes what it used. */
void xg_tool_proc_wait(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c,
		       int64_t timeout_ms);

#endif
