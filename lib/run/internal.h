#ifndef XG_RUN_INTERNAL_H
#define XG_RUN_INTERNAL_H
/*
 * Private to lib/run/: nothing outside the folder includes this header.
 * The public entry is run/run.h.
 *
 * What the files of the run share, part by part.  struct run is one run's
 * whole state.  The files, top down: a file calls only files below it.
 *
 *   loop.c      xg_run: the rounds, the tool calls, how the run ends, and
 *               what a context overflow means (compact, then once more)
 *   steer.c     the messages "xg say" sends, taken before each request
 *   settings.c  xg-run --settings: the policies below, and where each
 *               came from, without a run
 *   prepare.c   everything before the first request
 *   goal.c      a goal's tools offered, and the check of a completion claim
 *               asked (goal/goal.h says what they say)
 *   slice.c     work slices: the policy, each slice's evidence, the stop
 *               and report at a boundary, its checkpoint, the continuation
 *   compaction.c
 *               the older history summarised when the context fills, and
 *               the checkpoint that follows a summary in this run
 *   call.c      one provider call, and run_start at its first event
 *   stall.c     the stall watch: a thread that keeps the run's clock and
 *               its children's, stops what stalled and writes heartbeats
 *   heartbeat.c the heartbeat record, made from the watch's state
 *   signal.c    what SIGINT and SIGTERM stop (the tools, the provider
 *               call, the input, the children)
 *   child.c     the children followed: their records, clocks and ends
 *   subagent.c  spawn_subagent and wait_subagents: child runs, each an
 *               xg-run process
 *   input.c     the upstream records, and a snapshot taken when none came
 *   history.c   the conversation: loaded (from a compaction's summary
 *               on), and appended to
 *   summary.c   the run's own records (run_start, run_end, run.json) and
 *               its outcome (xg_run_fail)
 *   thread.c    the run's threads, which take no signal
 *   out.c       where every record goes; each record of the run's own is
 *               an event of the watch's clock (xg_run_emit)
 *
 * The tools and the gate are a room of their own (tools/tools.h), beneath
 * the run, knowing nothing of it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include "buf.h"
#include "conversation.h"
#include "json.h"
#include "rec.h"
#include "steer.h"
#include "thread.h"
#include "choices/choices.h"
#include "run/run.h"
#include "tools/tools.h"

/* ---- out.c: where the records go ---- */

/*
 * A run's records (man 5 xg-records): each record xg-run writes goes to
 * standard output and to $state/runs/ID/events.ndjson, appended as it is
 * written (xg_append_fd: an append the disk cuts short is taken back, so
 * the file holds whole records, those before its first failure);
 * runs/ID/run.json is the run's summary, replaced atomically.
 *
 * The output keeps going after a write error on one side so the other still
 * gets every record; the error is remembered (exit 74 at the end).
 */

struct xg_run_out {
	/* Held while a record is written: the stall watch's thread writes
	 * heartbeats while the loop writes the rest. */
	pthread_mutex_t lock;
	struct xg_rec_writer out;	/* standard output */
	int ev_fd;			/* events.ndjson, or -1: not opened, or
					   closed at its first failed append */
	struct xg_buf ev_line;		/* the line being appended to it */
	char *dir;			/* $state/runs/ID */
	char *live;			/* its live marker (runindex.h), or NULL */
	int live_fd;			/* held while the run goes on, or -1 */
	int write_error;		/* standard output failed */
};

void xg_run_out_init(struct xg_run_out *o, FILE *fp);
/* Creates $state/runs/ID and opens its events.ndjson; -1 after a message. */
int xg_run_out_open(struct xg_run_out *o, const char *id);
void xg_run_out_release(struct xg_run_out *o);

/* Writes one record of the run (consumed) to both places. */
void xg_run_out_write(struct xg_run_out *o, jv rec);
/* Passes a record the run does not consume to standard output, and a
 * notice to events.ndjson too. */
void xg_run_out_pass(struct xg_run_out *o, const struct xg_rec *rec);

/* Writes runs/ID/run.json (info consumed) atomically; -1 after a message. */
int xg_run_out_summary(struct xg_run_out *o, jv info);

struct run;
/* Writes one of the run's own records (consumed), held back until
 * run_start is out; each but a heartbeat is an event of the watch. */
void xg_run_emit(struct run *r, jv rec);
/* Something happened: the watch's clock starts again. */
void xg_run_watch_event(struct run *r);

/* ---- the run ---- */

struct xg_provider;
struct xg_gate;
struct xg_provider_retry;
struct xg_provider_error;
struct run_input;

/* One run's work slices (slice.c): the policy and the slice under way. */
struct run_slice {
	int off;			/* no boundary at all */
	int max_calls, max_slices;
	int64_t max_ms;
	int number;			/* the slice under way, from 1 */
	int calls;			/* its tool calls */
	int64_t t0;			/* when it began */
	int reporting;			/* its stop-and-report request is out */
	int fruitful;			/* a bash, edit or write in it succeeded */
	jv todo;			/* the todo list's items, null before one */
	jv files, commands;		/* its evidence */
};

/* What compaction.c keeps of a run (all zero at the start). */
struct run_compact {
	long long last_input;	/* input tokens the last request reported */
	int sent;		/* messages that request carried; 0: none sent */
	int head;		/* leading messages that are the summary and the
				 * checkpoint, not history */
	int count;		/* compactions in this run */
	int idle;		/* of them, those since the last progress: a
				 * successful bash, edit or write (slice.c) */
	int fresh;		/* compacted since the last request went out */
	jv todo;		/* the todo list the last checkpoint showed */
};

/* ---- the stall watch (stall.c) and the children (subagent.c) ---- */

/* The windows, from XG_STALL (man 1 xg-run, The stall watch). */
struct run_stall_policy {
	int64_t reply_ms;	/* no event for this long: stalled (15 min) */
	int64_t tool_ms;	/* inside one tool this long: stalled (30 min) */
	int64_t grace_ms;	/* a stopped child's SIGTERM to SIGKILL (5 min) */
	int64_t beat_ms;	/* between heartbeats (30 s) */
};

/* r->signal's value once the watch has ended the run as stalled. */
#define XG_RUN_STALLED (-1)

/* The tools a clock is inside. */
#define XG_RUN_WATCH_TOOLS 8
struct run_watch_tool {
	char id[64], name[32];
	char detail[96];	/* bash's command, cut; "" for others */
	int64_t t0;
};

/* The children a run may start, and how many run at once. */
#define XG_RUN_MAX_CHILDREN 16
#define XG_RUN_MAX_RUNNING 4
/* A child's reply, as wait_subagents returns it, is cut here. */
#define XG_RUN_CHILD_REPLY_MAX 4000

/* One child run, as its parent knows it (under the watch's lock). */
struct run_child {
	char name[33], profile[16];
	char *run, *conv, *events;	/* ids; its events.ndjson */
	volatile sig_atomic_t pid;	/* 0 once reaped */
	int fd;				/* events.ndjson, read so far; -1 */
	struct xg_buf line;		/* a line not yet whole */
	int64_t t0, last_event;
	struct run_watch_tool tools[XG_RUN_WATCH_TOOLS];
	int ntools;
	char phase[24];			/* its last heartbeat's, or "model" */
	int64_t term_at;		/* SIGTERM sent; 0 before */
	int killed;			/* SIGKILL sent */
	const char *stopped_by;		/* "stalled" or "parent", NULL */
	char why[160];			/* why the watch stopped it */
	int ended;			/* reaped, and its status known */
	int reported;			/* its subagent ended record written */
	int delivered;			/* returned by a wait_subagents */
	char *status, *stop, *reason, *reply;
	int exit;
};

struct run_watch {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* the thread's sleep, and the waits' */
	struct xg_thread thread;
	int running, stopping;
	int ending;			/* the run is over: no rule but the children's */
	struct run_stall_policy pol;
	int64_t t0, last_event, last_beat;
	struct run_watch_tool tools[XG_RUN_WATCH_TOOLS];
	int ntools;
	int request;			/* a model request is out */
	int heard;			/* it has delivered an event */
	int64_t request_t0;
	int retry_attempt, retry_of;
	int64_t retry_at;		/* the retry's wait ends then; 0: none */
	char why[200];			/* what stalled */
	struct run_child child[XG_RUN_MAX_CHILDREN];
	int nchildren;
};

struct run {
	const struct xg_run_opts *o;
	struct xg_run_out out;
	int64_t t0;
	char started[25];
	char *id, *conv, *cwd;
	char *account;		/* the account the provider's key is from */
	int conv_new;
	int conv_hold;		/* the run's hold on conv (xg_conv_hold), or -1 */
	struct xg_conv_sync conv_sync;	/* the last append's fsync under way */
	const char *env_set;	/* the variable xg_curl_env set, or NULL */
	const char *mode;

	/* The upstream records (input.c), and the rest of the input. */
	jv request, snapshot, model, pack;
	struct run_input *input;
	int cue;		/* XG_RUN_SENT_FD's descriptor, or -1 */

	/* What prepare.c sets up. */
	struct xg_thread warm_thread;		/* libcurl's set-up, started at once */
	int warm_running;
	struct xg_thread gate_thread;
	int gate_running;
	char *gate_err;
	struct xg_gate *gate;
	struct xg_choices choices;
	int have_catalog;
	struct xg_provider *prov;
	const char **env_drop;
	struct xg_tool_sandbox sandbox;	/* bash's (prepare.c); bwrap NULL: none */
	jv sandbox_rec;			/* run_start's "sandbox": what is in force */
	jv tools;		/* the tool table every request carries */
	long long stable;	/* bytes of the system prompt that never change */

	/* The first SIGINT or SIGTERM, 0 before one (signal.c). */
	volatile sig_atomic_t signal;
	/* The provider while a request is in flight, for the handler to abort. */
	struct xg_provider *volatile in_flight;
	struct xg_tool_procs procs;

	/* The run's own records until run_start is out (summary.c). */
	jv pending;
	int begun;

	/* The rounds. */
	jv messages;		/* the next request's messages */
	long long in, cached, output;
	int calls, requests;
	char *reply;
	struct run_slice slice;
	struct run_compact compact;

	/* The conversation's inbox for "xg say" (steer.c). */
	struct xg_steer steer;

	/* The conversation's goal while it has one (goal.c), else NULL. */
	struct run_goal *goal;

	/* The stall watch and the children (stall.c, subagent.c). */
	struct run_watch watch;

	/* The outcome, for run_end and run.json; rc is -1 while the run goes on.
	 * provider_error is the class of the provider error that failed it. */
	const char *status, *stop, *provider_error;
	char *reason;
	int rc;
};

static inline jv string_or_null(const char *s)
{
	return s ? jv_string(s) : jv_null();
}

/* ---- signal.c: what a signal stops ---- */

/* Catches SIGINT and SIGTERM for r, unless they are ignored. */
void xg_run_signals_catch(struct run *r);
/* Lets go of r: a signal from here on reaches no run. */
void xg_run_signals_release(void);

/* ---- stall.c: the stall watch ---- */

/* Parses an XG_STALL spec over the defaults; -1 with err set when part of
 * it is malformed (then pol holds the defaults). */
int xg_run_stall_parse(struct run_stall_policy *pol, const char *spec, char *err, size_t n);
/* The windows in force: XG_STALL, else config.json's "stall", else the
 * defaults; *from names which ("default" when the setting did not parse).
 * -1 with *problem (owned) saying what did not parse, else 0. */
int xg_run_stall_policy(struct run_stall_policy *pol, const char **from, char **problem);
/* Starts the watch's thread (a notice when XG_STALL is malformed). */
void xg_run_watch_start(struct run *r);
/* Ends every child (subagent.c), then stops the thread; idempotent. */
void xg_run_watch_stop(struct run *r);
/* The run goes inside a tool call (args only looked at), and out again. */
void xg_run_watch_tool_begin(struct run *r, const char *id, const char *name, jv args);
void xg_run_watch_tool_end(struct run *r, const char *id);
/* A model request goes out (1) or is over (0). */
void xg_run_watch_request(struct run *r, int out);
/* A retry's wait begins. */
void xg_run_watch_retry(struct run *r, int attempt, int of, long delay_ms);
/* Ends the run as stalled for why (under the watch's lock); 0 when a
 * signal or another stall came first. */
int xg_run_watch_stall(struct run *r, const char *why);

/* ---- heartbeat.c ---- */

/* The heartbeat record of r at now (under the watch's lock). */
jv xg_run_heartbeat(struct run *r, int64_t now);
/* Whether every tool the run is inside is a subagent tool. */
int xg_run_watch_only_subagents(const struct run_watch *w);
/* A tool's age, for records: {"name", "id", "ms", "detail"?}. */
jv xg_run_watch_tool_peek(const struct run_watch_tool *t, int64_t now);

/* ---- subagent.c: the children ---- */


/* The two subagent tools' table entries (a top-level run's only). */
jv xg_run_subagent_schemas(void);
/* Whether name is one of them. */
int xg_run_subagent_tool(const char *name);
/* spawn_subagent and wait_subagents (args consumed): their results. */
jv xg_run_subagent_spawn(struct run *r, jv args);
jv xg_run_subagent_wait(struct run *r, jv args);
/*
 * One look at every child (under the watch's lock): what it wrote since,
 * its clock (stopped when it stalled: SIGTERM, SIGKILL after the grace),
 * whether it has ended, and then its subagent ended record.
 */
void xg_run_children_tick(struct run *r, int64_t now);
/* Whether the parent's own rule is paused (under the lock): some child is
 * running and each answers to its watch. */
int xg_run_children_answer(const struct run *r, int64_t now);
/* From a signal handler: SIGTERM to every child. */
void xg_run_children_signal(struct run *r, int sig);
/* The run is ending: every child still running is ended (SIGTERM, then
 * SIGKILL after a grace) and reaped, its ended record written. */
void xg_run_children_end(struct run *r);
void xg_run_children_release(struct run *r);

/* ---- thread.c ---- */

/* Starts a thread that takes no SIGINT or SIGTERM, so they reach the main
 * thread (and interrupt what it waits on); 0 or -1. */
int xg_run_thread_start(struct xg_thread *t, void *(*fn)(void *), void *arg);

/* ---- summary.c: the run's own records and its outcome ---- */

/* Ends the run as failed with exit code rc; the reason also goes to stderr.
 * Returns rc. */
__attribute__((format(printf, 3, 4)))
int xg_run_fail(struct run *r, int rc, const char *fmt, ...);
/* {"input", "cached_input", "output"} */
jv xg_run_usage(long long in, long long cached, long long out);
/* run_start and the first run.json, then the records held back. */
void xg_run_write_start(struct run *r);
void xg_run_write_end(struct run *r);
/* runs/ID/run.json; ended is NULL while the run goes on. */
void xg_run_write_summary(struct run *r, const char *ended);
/* The run's index line as it stands, with no end, into its live marker:
 * what xg-log lists when the run is killed before any run.json. */
void xg_run_keep_start(struct run *r);

/* ---- steer.c: the messages of "xg say" ---- */

/* Opens the conversation's inbox, with a notice when it cannot be. */
void xg_run_steer_open(struct run *r);
/* Before a request: the messages that came, each a steer record and the
 * person's message; 0, or r->rc when the conversation could not keep one. */
int xg_run_steer_take(struct run *r);
/* A reply asked for no tool: 1 when messages came (added: the run goes
 * round), 0 when none did and the inbox is closed, -1 when the
 * conversation could not keep one (the run has failed). */
int xg_run_steer_last_look(struct run *r);
/* The rounds are over: the inbox closed, and a message still in it added
 * to the conversation for its next run. */
void xg_run_steer_close(struct run *r);

/* ---- slice.c: work slices ---- */

/* What xg_run_slice_step tells the loop. */
enum { XG_RUN_SLICE_GO_ON, XG_RUN_SLICE_SEND, XG_RUN_SLICE_ENDED };

/* The policy in force into s: given (--work-slice), else XG_WORK_SLICE,
 * else the defaults; *from names which ("default" when the text did not
 * parse).  -1 with *problem (owned) saying what is wrong, else 0. */
int xg_run_slice_policy(struct run_slice *s, const char *given, const char **from,
			char **problem);
/* Reads the policy (a notice when it is malformed) and starts slice 1. */
void xg_run_slice_begin(struct run *r);
/* Notes one tool call's result as the slice's evidence. */
void xg_run_slice_note_peek(struct run *r, const char *name, jv args, jv res);
/* Nonzero while the stop-and-report request is out: its calls are refused. */
int xg_run_slice_refusing(const struct run *r);
/* After a reply's ncalls tool calls have run: GO_ON, or SEND when a message was added for
 * the next request (the stop and report, or the next slice), or ENDED when
 * the run has settled (slice_complete, or failed). */
int xg_run_slice_step(struct run *r, int ncalls);
/* Once the rounds are over: a boundary the run ended inside gets its
 * checkpoint, a provider failure there settles slice_complete; then the
 * slices' state is released. */
void xg_run_slice_end(struct run *r);

/* ---- goal.c: a goal's tools and claim check ---- */

struct run_goal;
/* Offers get_goal and update_goal when the conversation has a goal. */
void xg_run_goal_prepare(struct run *r);
void xg_run_goal_release(struct run *r);
/* Whether name is a goal tool this run offers. */
int xg_run_goal_tool(const struct run *r, const char *name);
/* Runs a goal tool (args consumed); its result. */
jv xg_run_goal_call(struct run *r, const char *name, jv args);
/* Once the reply has ended (completed, or slice_complete): checks a
 * completion claim made in it, writing the goal_check record. */
void xg_run_goal_settle(struct run *r);

/* ---- input.c: the upstream records ---- */

/* Reads standard input (or takes the operand) until a request, a model and
 * a pack are held; 0 or fails the run. */
int xg_run_read_input(struct run *r);
/* Once the first request is out: closes the cue, and reads the rest of
 * the input and takes a missing snapshot, on a thread; nothing once the
 * run has begun (its input joined, it goes on without them). */
void xg_run_start_input(struct run *r);
/* Closes the cue, joins that thread (or reads the rest now), passes the
 * records read meanwhile and fails the run if the rest was bad; returns r->rc.  Once
 * *stop is set it waits no more for standard input: a thread still
 * reading it is left behind, and the run goes on without its snapshot. */
int xg_run_join_input(struct run *r, volatile sig_atomic_t *stop);
/* Releases what the input holds (not a thread left behind). */
void xg_run_input_release(struct run *r);
/* For a signal handler: stops a snapshot being taken. */
void xg_run_input_abort(void);

/* ---- history.c: the conversation ---- */

/* Appends entry (consumed) to the conversation; 0 or fails the run. */
int xg_run_remember(struct run *r, jv entry);
/* Waits for the last append's fsync: 0, or fails the run (74). */
int xg_run_remembered(struct run *r);
/* The conversation's messages and tool results as provider messages, in
 * r->messages; 0 or fails the run. */
int xg_run_load_history(struct run *r);
/* The message a summary stands as at the head of the history (new). */
jv xg_run_summary_message(const char *summary);
/* Pins a conversation the run starts to its pack's version; 0 or fails
 * the run. */
int xg_run_note_version(struct run *r);
/* Records a model other than the conversation's last; 0 or fails the run. */
int xg_run_note_model_change(struct run *r);
/* Adds a user message to the request, the conversation and the records;
 * kind may be NULL. */
int xg_run_add_user_message(struct run *r, const char *text, const char *kind);
/* The same for the request's own text, with its kind and, when the
 * request says so, marked hidden. */
int xg_run_add_request_message(struct run *r);

/* ---- compaction.c: the older history summarised ---- */


/* When compaction starts and what it keeps, as a settings record shows
 * it: the reserve is the model's output limit, with its floor and its
 * ceiling (a share of the window), and the recent history kept verbatim. */
jv xg_run_compact_policy(void);

/* Before the request's message is added: cuts the request's text to its
 * share of the model's window, with a notice; 0, never fails. */
int xg_run_compact_fit_request(struct run *r);
/* Before a request: compacts first when the context it would send passes
 * the model's window less the reserve; 0, or r->rc once compacting failed
 * the run or ended it for compacting without progress. */
int xg_run_compact_maybe(struct run *r);
/* After a failed request: 1 when it was a context overflow and the history
 * is now compacted, so the request is worth sending once more; 0 when not
 * (it fails as it is); r->rc when compacting failed or ended the run, -1
 * when a signal stopped it. */
int xg_run_compact_overflow(struct run *r, const struct xg_provider_error *e);
/* After a request's reply: notes what it reported (usage borrowed). */
void xg_run_compact_note_peek(struct run *r, jv usage);
/* The whole of an xg-run --compact run, once prepared: the conversation
 * compacted now; returns r->rc. */
int xg_run_compact_alone(struct run *r);
void xg_run_compact_release(struct run *r);

/* ---- prepare.c: before the first request ---- */

/* The threads that load libcurl and compile the gate, first thing: the
 * run's first request waits for libcurl's loading, and nothing else. */
void xg_run_prepare_start(struct run *r);
/* Then the run's directory, the input, the model, the provider, the pack
 * and the gate, with records going to fp; 0 or fails the run. */
int xg_run_prepare(struct run *r, FILE *fp);
/* Joins the threads xg_run_prepare_start started, however far the run got. */
void xg_run_prepare_join(struct run *r);

/* ---- call.c: one provider call ---- */

/* What one reply brought. */
struct turn {
	struct run *r;
	struct xg_buf text;
	jv reasoning;		/* reasoning blocks to send back */
	jv calls;		/* {id, name, args, bad_args?} */
	jv usage;
	char finish[32];	/* the reason the reply ended, "" when none came */
};

void xg_run_turn_init(struct turn *t, struct run *r);
void xg_run_turn_release(struct turn *t);
/*
 * Sends the next request (all of the run so far) and streams its reply
 * into t, counting its usage.  Returns 0, the provider's exit code with
 * *perr saying what went wrong (the loop decides what an overflow means),
 * or -1 when it was stopped.
 */
int xg_run_call(struct run *r, struct turn *t, struct xg_provider_error *perr);
/*
 * What xg_run_call returned, rc, made the call's end: 0 once the reply is
 * settled in the messages, the conversation and the records; otherwise
 * the loop ends: r->rc when the run failed (the provider's error in
 * *perr), -1 when it was stopped.
 */
int xg_run_settle(struct run *r, struct turn *t, int rc, const struct xg_provider_error *perr);
/* Writes run_start once the rest of the input is in (a signal cuts the
 * wait short), and the records held back until then; once. */
void xg_run_begin(struct run *r);

/*
 * A side request: request (consumed) sent for purpose (the retry and
 * usage records' "for"), its reply's text added to text (the caller's, with
 * its ceiling; a retry after a partial attempt empties it), its usage
 * counted in the run's, its error in *perr.  No tool runs, nothing settles,
 * and the stall watch is not told a model request is out.  Returns what
 * xg_provider_stream did: 0, an exit code, or XG_PROVIDER_STOPPED when a
 * signal (or the flags' failed run) stopped it.  Flags:
 *   XG_RUN_SIDE_WATCHED        each event starts the stall clock again
 *   XG_RUN_SIDE_ENDS_WITH_RUN  a run failed meanwhile (r->rc set, as when
 *                              the rest of the input was bad) stops it
 */
enum { XG_RUN_SIDE_WATCHED = 1, XG_RUN_SIDE_ENDS_WITH_RUN = 2 };
int xg_run_side_call(struct run *r, jv request, const char *purpose, int flags,
		     struct xg_buf *text, struct xg_provider_error *perr);

/*
 * What every request of the run shares, for the loop's calls and for the
 * side requests alike, each with "for" set to what it was for (NULL: the
 * loop's own):
 *   xg_run_request         the request for messages (consumed): the pack's
 *                          system prompt, the tools, the model and effort
 *   xg_run_count_usage_peek  adds a reply's usage to the run's and writes
 *                          the usage record
 *   xg_run_retry_record    the retry record for a wait before a retry
 *   xg_run_provider_fail   fails the run with the provider's error, named
 *                          by the provider and its host
 */
jv xg_run_request(const struct run *r, jv messages);
void xg_run_count_usage_peek(struct run *r, jv usage, const char *purpose);
jv xg_run_retry_record(const struct xg_provider_retry *rr, const char *purpose);
int xg_run_provider_fail(struct run *r, int rc, const struct xg_provider_error *perr,
			 const char *purpose);

#endif
