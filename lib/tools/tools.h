#ifndef XG_TOOLS_H
#define XG_TOOLS_H
/*
 * The tools subsystem, xg_tool_ and xg_gate_: the tools xg-run offers the
 * model and the gate that decides each call (docs/tools.md is the
 * reference, docs/internals/tools.md the reasons).  Its one public header;
 * what the files share is in tools/internal.h.  The tools know nothing of
 * the run: what a call needs comes in struct xg_tool_ctx.
 *
 *   bash        run a shell command in the workspace
 *   read        a text file with line numbers, a window at a time
 *   write       replace or create a file, atomically
 *   edit        replace unique pieces of a file, all or nothing
 *   todo_write  the progress list, written as a todo record
 *   ask_user    a question for the --ask command, if any
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
 * keeper is this process's end of a socket made at the first command and
 * never closed; at its other end is the keeper (proc.c), one process for
 * all the commands, which learns each command's group through it and
 * kills the groups still alive when it reaches end-of-file: when this
 * process ends, however it ends.
 */
#define XG_TOOL_MAX_PROCS 64
struct xg_tool_procs {
	volatile sig_atomic_t pgid[XG_TOOL_MAX_PROCS];
	volatile int keeper_state;	/* 0 none yet, 1 being made, 2 made, 3 failed */
	int keeper;
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
 * under it with no capability (root's included), the system read-only, a
 * /tmp and a PID namespace of their own, the network only when net is set
 * (without it, no socket of the host's either), the workspace writable
 * unless read_only is set, each directory of writable writable too, and
 * each directory of hide empty, and each of show, beneath one of them,
 * there again read-only (all canonical paths, NULL-terminated; may be
 * NULL): the person's skills, which the model reads.  ask_user's command
 * is the person's own and is never sandboxed.
 */
struct xg_tool_sandbox {
	char *bwrap;			/* the program's path; NULL: no sandbox */
	int userns;			/* in a user namespace of its own */
	int net;
	int read_only;
	char **writable;
	char **hide;
	char **show;
};

/*
 * Looks for bwrap in PATH and tries it once: 1 with *bwrap its path (the
 * caller frees it) and *userns whether it can make a user namespace, or 0
 * with *bwrap NULL and why saying what is missing and what to install or
 * enable.
 */
int xg_tool_sandbox_find(char **bwrap, int *userns, char *why, size_t whylen);
/* Whether the sandbox can run here (the same look, for a caller that
 * only decides, such as a read-only profile choosing it when it can). */
int xg_tool_sandbox_available(void);

/*
 * The sandbox a run's bash gets (confine.c): the setting, given (--sandbox,
 * or NULL), else XG_SANDBOX, else config.json's "sandbox"; the writable
 * folders from XG_SANDBOX_WRITABLE, else config.json.  A bash that must
 * not write (read_only: plan mode, a read-only profile) gets the sandbox
 * whenever it can run, the workspace read-only.  Fills *sb, and always
 * *rec (what run_start says is in force) and *notices (notice records for
 * the caller to write, in order).  0, with msg saying why the sandbox
 * cannot run when read_only and sb->bwrap is NULL; or an exit code (78:
 * a sandbox asked for cannot be had, or the setting is wrong) with msg
 * saying why, for the caller to report.
 */
int xg_tool_sandbox_pick(struct xg_tool_sandbox *sb, const char *given, int read_only,
			 jv *rec, jv *notices, char *msg, size_t n);
/* Frees what a pick put in sb, and empties it. */
void xg_tool_sandbox_release(struct xg_tool_sandbox *sb);

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

/*
 * The subagent profiles (profile.c): the tools a child run of a profile is
 * offered.  An unknown profile, or none, offers every tool.
 */
/* The tools a profile offers (NULL: unknown profile): a table of names,
 * NULL-terminated; *read_only says whether it changes nothing. */
const char *const *xg_tool_profile_tools(const char *profile, int *read_only);
/* Whether profile lets tool run (profile NULL: every tool); bash only in a
 * read-only sandbox for explore. */
int xg_tool_profile_allows(const char *profile, const char *tool, int sandboxed);
/* Whether profile is a read-only one (explore). */
int xg_tool_profile_read_only(const char *profile);
/* The tool table for a run of profile (NULL: all tools). */
jv xg_tool_profile_schemas(const char *profile, int sandboxed);
/* The words a child's system prompt says of its profile, or NULL. */
const char *xg_tool_profile_what(const char *profile);

/* The tool table: an array of {name, description, parameters}, where
 * parameters is a JSON schema (type object). */
jv xg_tool_schemas(void);
/* Whether name is one of the tools. */
int xg_tool_exists(const char *name);

/* Runs the tool name with args (consumed) and returns its result object. */
jv xg_tool_run(const struct xg_tool_ctx *ctx, const char *name, jv args);

/* The result objects (result.c): {"ok": ok, "output": output}, consuming
 * output; and one with ok false and a formatted output. */
jv xg_tool_result(int ok, jv output);
__attribute__((format(printf, 1, 2)))
jv xg_tool_fail(const char *fmt, ...);

/* ---- the gate (gate.c) ---- */

/*
 * A jq filter, compiled once with libjq, that decides each tool call before
 * it runs.  Its input is the tool_call record
 * {"type":"tool_call","id":ID,"name":NAME,"args":{...}}, and its first
 * output decides:
 *
 *   true      the call runs
 *   false     refused, with XG_GATE_DEFAULT_REASON as the reason
 *   a string  refused, with the string as the reason the model sees
 *
 * Anything else (no output, another kind of value) or a jq error is a
 * refusal whose reason says what went wrong: a gate that fails closes.
 * A filter that does not compile is a configuration error (exit 78 at the
 * caller) with jq's own message.
 */
struct xg_gate;

#define XG_GATE_DEFAULT_REASON "the tool gate refused this call"

/*
 * Plan mode's rule as a filter: write and edit are refused, everything else
 * is allowed.  The loop evaluates it before the user's --gate, and the first
 * refusal wins.
 */
#define XG_GATE_PLAN \
	"if .name == \"write\" or .name == \"edit\" then " \
	"\"plan mode: \\(.name) is not available while planning; read, " \
	"investigate and propose the plan instead\" else true end"

/*
 * The same decision as XG_GATE_PLAN without jq: compiling any jq filter
 * costs tens of milliseconds with libjq 1.6 (its builtins are compiled each
 * time), which plan mode need not pay.  Consumes call; 1 to allow, 0 to deny
 * with *reason set (the caller frees it).
 */
int xg_gate_plan_check(jv call, char **reason);

/* The gate for filter, or NULL with *err set to jq's message (a new string
 * the caller frees). */
struct xg_gate *xg_gate_new(const char *filter, char **err);
void xg_gate_free(struct xg_gate *g);

/*
 * Decides the call (the tool_call record, consumed): 1 to allow, 0 to deny
 * with *reason set to a new string the caller frees.
 */
int xg_gate_check(struct xg_gate *g, jv call, char **reason);

/* The decision as a value, {"allow":true} or {"allow":false,"reason":R};
 * consumes call.  A NULL gate is plan mode's built-in rule. */
jv xg_gate_decide(struct xg_gate *g, jv call);

/* The tool_call record {type, id, name, args} (args consumed). */
jv xg_gate_call(const char *id, const char *name, jv args);

#endif
