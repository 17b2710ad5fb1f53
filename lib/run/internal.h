#ifndef XG_RUN_INTERNAL_H
#define XG_RUN_INTERNAL_H
/*
 * Private to lib/run/: nothing outside the folder includes this header.
 * The state a run's files share: the run itself, its records, the gates and
 * the tools.
 */
#include <stdio.h>
#include "json.h"
#include "rec.h"
#include <signal.h>
#include <stdint.h>
#include <pthread.h>
#include "choices/choices.h"
#include "run/run.h"

/*
 * A run's records (man 5 xg-records): each record xg-run writes goes to
 * standard output and to $state/runs/ID/events.ndjson, flushed as it is
 * written; runs/ID/run.json is the run's summary, replaced atomically.
 *
 * The output keeps going after a write error on one side so the other still
 * gets every record; the error is remembered (exit 74 at the end).
 */

struct xg_run_out {
	struct xg_rec_writer out;	/* standard output */
	struct xg_rec_writer ev;	/* events.ndjson; fp NULL until opened */
	char *dir;			/* $state/runs/ID */
	int write_error;		/* standard output failed */
};

void xg_run_out_init(struct xg_run_out *o, FILE *fp);
/* Creates $state/runs/ID and opens its events.ndjson; -1 after a message. */
int xg_run_out_open(struct xg_run_out *o, const char *id);
void xg_run_out_release(struct xg_run_out *o);

/* Writes one record of the run (consumed) to both places. */
void xg_run_out_write(struct xg_run_out *o, jv rec);
/* Passes a record the run does not consume to standard output only. */
void xg_run_out_pass(struct xg_run_out *o, const struct xg_rec *rec);

/* Writes runs/ID/run.json (info consumed) atomically; -1 after a message. */
int xg_run_out_summary(struct xg_run_out *o, jv info);

/*
 * The tool gate: a jq filter, compiled once with libjq, that decides each
 * tool call before it runs (docs/tools.md).  Its input is the tool_call
 * record {"type":"tool_call","id":ID,"name":NAME,"args":{...}}, and its
 * first output decides:
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

/*
 * Shared between tools.c and tools-files.c; not for the loop, which uses
 * run/tools.h.
 */

struct xg_tool_ctx;

/* {"ok": ok, "output": output}; consumes output. */
jv xg_tool_result(int ok, jv output);
/* A result with ok false and a formatted output. */
__attribute__((format(printf, 1, 2)))
jv xg_tool_fail(const char *fmt, ...);

/* mkdir -p of path's parent directory, quietly (errno set): the caller
 * reports. */
int xg_tool_mkdir_parents(const char *path);

/* The file tools; args is borrowed. */
jv xg_tool_read(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_write(const struct xg_tool_ctx *ctx, jv args);
jv xg_tool_edit(const struct xg_tool_ctx *ctx, jv args);

/*
 * What the files of the agent loop share (loop.c, input.c, history.c,
 * summary.c); private to lib/run: the public entry is run/loop.h.
 *
 * struct run is one run's whole state.  loop.c drives it; input.c reads
 * the upstream records and takes a missing snapshot; history.c loads the
 * conversation so far and appends to it; summary.c writes the run's own
 * records (run_start, run_end) and runs/ID/run.json.
 */

struct xg_provider;
struct xg_gate;
struct run_input;

struct run {
	const struct xg_run_opts *o;
	struct xg_run_out out;
	int64_t t0;
	char started[25];
	char *id, *conv, *cwd;
	int conv_new;
	jv request, snapshot, model, pack;
	struct run_input *input;	/* standard input and the snapshot (input.c) */
	pthread_t warm_thread;		/* libcurl's set-up, started at once */
	int warm_running;
	pthread_t gate_thread;
	int gate_running;
	char *gate_err;
	jv pending;		/* the run's records until run_start is out */
	int begun;
	const char *mode;
	struct xg_choices choices;
	int have_catalog;
	struct xg_provider *prov;
	const char **env_drop;
	struct xg_gate *gate;
	struct xg_tool_procs procs;
	jv messages, tools;
	long long stable;	/* bytes of the system prompt that never change */
	long long in, cached, output;
	int calls, requests;
	char *reply;
	const char *status, *stop;
	char *reason;
	int rc;
};

static inline jv string_or_null(const char *s)
{
	return s ? jv_string(s) : jv_null();
}

/* loop.c */

/* Ends the run as failed with exit code rc; the reason also goes to stderr.
 * Returns rc. */
__attribute__((format(printf, 3, 4)))
int xg_run_fail(struct run *r, int rc, const char *fmt, ...);
/* Starts a thread that takes no SIGINT or SIGTERM, so they reach the main
 * thread (and interrupt what it waits on); 0 or -1. */
int xg_run_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
/* Writes one of the run's own records (consumed), held back until
 * run_start is out. */
void xg_run_emit(struct run *r, jv rec);

/* input.c: the upstream records */

/* Reads standard input (or takes the operand) until a request, a model and
 * a pack are held; 0 or fails the run. */
int xg_run_read_input(struct run *r);
/* Once the workspace is known: reads the rest of the input and takes a
 * missing snapshot, on a thread. */
void xg_run_start_input(struct run *r);
/* Joins that thread (or reads the rest now), passes the records read
 * meanwhile and fails the run if the rest was bad; returns r->rc.  Once
 * *stop is set it waits no more for standard input: a thread still
 * reading it is left behind, and the run goes on without its snapshot. */
int xg_run_join_input(struct run *r, volatile sig_atomic_t *stop);
/* Releases what the input holds (not a thread left behind). */
void xg_run_input_release(struct run *r);
/* For a signal handler: stops a snapshot being taken. */
void xg_run_input_abort(void);

/* history.c: the conversation */

/* Appends entry (consumed) to the conversation; 0 or fails the run. */
int xg_run_remember(struct run *r, jv entry);
/* The conversation's messages and tool results as provider messages, in
 * r->messages; 0 or fails the run. */
int xg_run_load_history(struct run *r);
/* Records a model other than the conversation's last; 0 or fails the run. */
int xg_run_note_model_change(struct run *r);
/* Adds a user message to the request, the conversation and the records;
 * kind may be NULL. */
int xg_run_add_user_message(struct run *r, const char *text, const char *kind);

/* summary.c: the run's own records */

/* {"input", "cached_input", "output"} */
jv xg_run_usage(long long in, long long cached, long long out);
void xg_run_write_start(struct run *r);
void xg_run_write_end(struct run *r);
/* runs/ID/run.json; ended is NULL while the run goes on. */
void xg_run_write_summary(struct run *r, const char *ended);

#endif
