#ifndef XG_TOOLS_INTERNAL_H
#define XG_TOOLS_INTERNAL_H
/*
 * Private to lib/tools/: nothing outside the folder includes this header
 * (the test driver of the tools excepted).  The public entry is
 * tools/tools.h.
 *
 * The files, top down: a file calls only files below it.
 *
 *   profile.c   the subagent profiles: the tools each is offered
 *   tools.c     the table and the dispatch
 *   ask_user.c  the question for the --ask command
 *   bash.c      a shell command, its output kept and cut
 *   todo.c      the progress list
 *   files.c     read, write and edit
 *   workspace.c where the file tools' paths lead, and opening them there
 *   proc.c      the commands of bash and ask_user: started, fed, watched
 *   confine.c   the sandbox a run's bash gets: the setting, the writable
 *               folders, read-only for a bash that must not write
 *   sandbox.c   bash under bwrap: finding it, and its command line
 *   result.c    the result objects every tool returns
 *   gate.c      the jq filter that decides each call
 */
#include "tools/tools.h"


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
	XG_TOOL_PROC_ABORT,	/* killed because the run is being stopped */
	XG_TOOL_PROC_UNSET	/* the sandbox was not set up: the command never
				 * ran, and its output is bwrap's error */
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
	int setup;		/* bwrap's status (its read end), or -1 */
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
/* The same for bash: under ctx->sandbox when it has a bwrap.  Whether
 * the sandbox was set up is known once the wait is over: end is then
 * XG_TOOL_PROC_UNSET if it was not. */
int xg_tool_proc_start_sandboxed(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c,
				 const char *command, int stderr_too);
/* The descriptor bwrap writes its status on (--json-status-fd). */
#define XG_TOOL_SANDBOX_STATUS_FD 3
/* The bwrap command line that runs command in the sandbox sb with
 * workspace as its writable (or read-only) directory and cwd; new, freed
 * with xg_tool_sandbox_argv_free (sandbox.c). */
char **xg_tool_sandbox_argv(const struct xg_tool_sandbox *sb, const char *workspace,
			    const char *command);
void xg_tool_sandbox_argv_free(char **argv);
/* Feeds the input, hands the output to the sink and waits for the command
 * to end, killing its group past timeout_ms; then closes what it used. */
void xg_tool_proc_wait(const struct xg_tool_ctx *ctx, struct xg_tool_proc *c,
		       int64_t timeout_ms);

#endif
