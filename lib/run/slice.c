/*
 * Work slices (design.md B5, man 1 xg-run): a long reply is cut into
 * slices of at most so many tool calls or so many minutes, and continued in
 * place, in the same run and the same request prefix.
 *
 *   the policy        --work-slice or XG_WORK_SLICE: off, or key=value
 *                     pairs; a malformed one falls back to the defaults
 *                     with one notice
 *   the evidence      each tool call's result: the todo list, the files
 *                     written or edited, the commands and their exit codes,
 *                     whether a bash, edit or write succeeded
 *   the boundary      after a reply's tool calls, once the slice is full: a
 *                     user message asks the model to stop and report, and
 *                     the tool calls of that one reply are refused
 *   the checkpoint    after the report, written from the evidence, with a
 *                     notice; then either a continuation message naming the
 *                     next open todo item (a new slice: the counters and the
 *                     clock restart, the slice number does not), or the run
 *                     settles slice_complete
 *
 * The slice number only grows within a run: a repair or a continuation
 * never gives a fresh budget; only a person's next run does.
 */
#include "xg.h"
#include "run/internal.h"
#include "prompt/prompt.h"

#define SLICE_MAX_CALLS 320
#define SLICE_MAX_MINUTES 60
#define SLICE_MAX_SLICES 8

/* ---- the policy ---- */

static void policy_defaults(struct run_slice *s)
{
	s->off = 0;
	s->max_calls = SLICE_MAX_CALLS;
	s->max_ms = (int64_t)SLICE_MAX_MINUTES * 60000;
	s->max_slices = SLICE_MAX_SLICES;
}

static int whole_number(const char *v, long lo, long hi, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(v, &end, 10);
	return !errno && end != v && !*end && *out >= lo && *out <= hi;
}

/* One key=value pair of the policy into s; NULL, or what is wrong. */
static char *policy_pair(struct run_slice *s, const char *pair)
{
	const char *eq = strchr(pair, '=');
	char *key, *end;
	const char *v;
	double min;
	long n;

	if (!eq)
		return xg_asprintf("'%s' is not key=value", pair);
	key = xg_strndup(pair, (size_t)(eq - pair));
	v = eq + 1;
	if (!strcmp(key, "maxToolCalls") && whole_number(v, 1, 1000000, &n)) {
		s->max_calls = (int)n;
	} else if (!strcmp(key, "maxSlices") && whole_number(v, 1, 1000, &n)) {
		s->max_slices = (int)n;
	} else if (!strcmp(key, "maxMinutes")) {
		errno = 0;
		min = strtod(v, &end);
		if (errno || end == v || *end || !(min > 0) || min > 10000) {
			free(key);
			return xg_asprintf("maxMinutes wants a number of minutes above 0, not '%s'", v);
		}
		s->max_ms = (int64_t)(min * 60000 + 0.5);
		if (s->max_ms < 1)
			s->max_ms = 1;
	} else if (!strcmp(key, "maxToolCalls") || !strcmp(key, "maxSlices")) {
		free(key);
		return xg_asprintf("%.*s wants a whole number from 1, not '%s'",
				   (int)(eq - pair), pair, v);
	} else {
		end = xg_asprintf("'%s' is not a key (maxToolCalls, maxMinutes, maxSlices)", key);
		free(key);
		return end;
	}
	free(key);
	return NULL;
}

/* The policy text into s; NULL, or what is wrong (s then holds the
 * defaults). */
static char *policy_parse(struct run_slice *s, const char *text)
{
	char *copy, *pair, *save = NULL, *why = NULL;

	policy_defaults(s);
	if (!strcmp(text, "off")) {
		s->off = 1;
		return NULL;
	}
	copy = xg_strdup(text);
	for (pair = strtok_r(copy, ",", &save); pair && !why; pair = strtok_r(NULL, ",", &save))
		why = policy_pair(s, pair);
	free(copy);
	if (why)
		policy_defaults(s);
	return why;
}

static void notice(struct run *r, const char *text)
{
	jv rec = xg_rec_new("notice");

	rec = xg_json_set(rec, "from", jv_string("xg-run"));
	xg_run_emit(r, xg_json_set(rec, "text", jv_string(text)));
}

/* The evidence of a new slice, and its clock. */
static void slice_open(struct run_slice *s)
{
	s->number++;
	s->calls = 0;
	s->t0 = xg_clock_ms();
	s->reporting = 0;
	s->fruitful = 0;
	jv_free(s->files);
	jv_free(s->commands);
	s->files = jv_array();
	s->commands = jv_array();
}

int xg_run_slice_policy(struct run_slice *s, const char *given, const char **from,
			char **problem)
{
	const char *text = given;
	char *why;

	*from = "--work-slice";
	if (!text) {
		*from = "XG_WORK_SLICE";
		text = getenv("XG_WORK_SLICE");
	}
	*problem = NULL;
	if (!text || !*text) {
		*from = "default";
		policy_defaults(s);
	} else if ((why = policy_parse(s, text))) {
		*problem = xg_asprintf("%s: %s; the default work slices apply "
				       "(maxToolCalls=%d,maxMinutes=%d,maxSlices=%d)",
				       *from, why, SLICE_MAX_CALLS, SLICE_MAX_MINUTES,
				       SLICE_MAX_SLICES);
		*from = "default";
		free(why);
	}
	return *problem ? -1 : 0;
}

void xg_run_slice_begin(struct run *r)
{
	struct run_slice *s = &r->slice;
	const char *from;
	char *msg;

	s->todo = jv_null();
	s->files = s->commands = jv_null();
	if (xg_run_slice_policy(s, r->o->work_slice, &from, &msg) < 0) {
		notice(r, msg);
		free(msg);
	}
	slice_open(s);
}

/* ---- the evidence ---- */

/* What counts as work: a subagent's brief and its results too. */
static int is_work_tool(const char *name)
{
	return !strcmp(name, "bash") || !strcmp(name, "edit") || !strcmp(name, "write") ||
	       !strcmp(name, "spawn_subagent") || !strcmp(name, "wait_subagents");
}

static jv add_unique(jv list, const char *s)
{
	jv_array_foreach(list, i, v) {
		int same = !strcmp(jv_string_value(v), s);

		(void)i;
		jv_free(v);
		if (same)
			return list;
	}
	return jv_array_append(list, jv_string(s));
}

void xg_run_slice_note_peek(struct run *r, const char *name, jv args, jv res)
{
	struct run_slice *s = &r->slice;
	const char *path = xg_json_string_peek(args, "path");
	const char *command = xg_json_string_peek(args, "command");
	jv items = xg_json_get_peek(res, "items");
	bool ok = false;

	if (s->reporting)
		return;
	s->calls++;
	xg_json_bool_peek(res, "ok", &ok);
	if (jv_is_valid(xg_json_get_peek(res, "refused")))
		return;
	/* Work done is what counts as progress for compaction too: a run that
	 * only compacts between such calls is not getting anywhere. */
	if (ok && is_work_tool(name)) {
		s->fruitful = 1;
		r->compact.idle = 0;
	}
	if (!strcmp(name, "todo_write") && ok && jv_get_kind(items) == JV_KIND_ARRAY) {
		jv_free(s->todo);
		s->todo = jv_copy(items);
	}
	if (ok && path && (!strcmp(name, "write") || !strcmp(name, "edit")))
		s->files = add_unique(s->files, path);
	if (command && !strcmp(name, "bash")) {
		jv c = xg_json_set(jv_object(), "command", jv_string(command));

		c = xg_json_set(c, "exit_code", jv_is_valid(xg_json_get_peek(res, "exit_code"))
				? jv_copy(xg_json_get_peek(res, "exit_code")) : jv_null());
		s->commands = jv_array_append(s->commands, c);
	}
}

int xg_run_slice_refusing(const struct run *r)
{
	return r->slice.reporting;
}

/* The contents of the todo items whose status is (or, with not, is not)
 * completed. */
static jv todo_items(const struct run_slice *s, int done)
{
	jv out = jv_array();

	if (jv_get_kind(s->todo) != JV_KIND_ARRAY)
		return out;
	jv_array_foreach(s->todo, i, it) {
		const char *st = xg_json_string_peek(it, "status");
		const char *content = xg_json_string_peek(it, "content");

		(void)i;
		if (content && st && !strcmp(st, "completed") == !!done)
			out = jv_array_append(out, jv_string(content));
		jv_free(it);
	}
	return out;
}

/* The next open item: the one in progress, else the first pending; NULL
 * when none (borrowed from s->todo). */
static const char *next_item(const struct run_slice *s)
{
	const char *first = NULL;
	int i, n = xg_json_length_peek(s->todo);

	for (i = 0; i < n; i++) {
		jv it = jv_array_get(jv_copy(s->todo), i);
		const char *st = xg_json_string_peek(it, "status");
		const char *content = xg_json_string_peek(it, "content");

		jv_free(it);	/* s->todo still holds it */
		if (!st || !content || !strcmp(st, "completed"))
			continue;
		if (!strcmp(st, "in_progress"))
			return content;
		if (!first)
			first = content;
	}
	return first;
}

/* ---- the boundary ---- */

/* A template of the pack filled with one value, or fallback. */
static char *render(const struct run *r, const char *name, const char *key,
		    const char *value, const char *fallback)
{
	jv tmpl = xg_json_get_peek(xg_json_get_peek(r->pack, "templates"), name);
	jv vars = jv_object();
	char *out;

	if (value)
		vars = xg_json_set(vars, key, jv_string(value));
	if (jv_get_kind(tmpl) == JV_KIND_STRING)
		out = xg_prompt_render_peek(jv_string_value(tmpl),
					    (size_t)jv_string_length_bytes(jv_copy(tmpl)), vars);
	else
		out = xg_strdup(fallback);
	jv_free(vars);
	return out;
}

/* The limit the slice reached, in words. */
static char *limit_words(const struct run_slice *s)
{
	if (s->calls >= s->max_calls)
		return xg_asprintf("%d tool calls", s->calls);
	return xg_asprintf("%.4g minutes", (double)s->max_ms / 60000);
}

/* The slice is full: the message that asks for the report. */
static int ask_report(struct run *r)
{
	char *limit = limit_words(&r->slice), *text;
	int rc;

	text = render(r, "slice-end", "limit", limit,
		      "This work slice has reached its limit. Call no tool in this reply: "
		      "calls are refused until the next slice. Report briefly what this "
		      "slice did, what is still open, and what comes next.");
	free(limit);
	rc = xg_run_add_user_message(r, text, "slice-end");
	free(text);
	if (!rc)
		r->slice.reporting = 1;
	return rc;
}

/* Why the run goes no further after this slice: its outcome word and the
 * reason in words, or NULL when it continues. */
static const char *stop_reason(const struct run *r, const char **words)
{
	const struct run_slice *s = &r->slice;
	jv open;
	int all_done;

	if (r->signal) {
		*words = "the run was interrupted";
		return "aborted";
	}
	if (r->rc >= 0) {
		*words = "the report request failed";
		return "provider_failure";
	}
	if (!strcmp(r->mode, "plan")) {
		*words = "a plan-mode reply is not continued";
		return "plan_mode";
	}
	if (!s->fruitful) {
		*words = "the slice ran no successful bash, edit or write";
		return "fruitless";
	}
	open = todo_items(s, 0);
	all_done = xg_json_length_peek(s->todo) > 0 && xg_json_length_peek(open) == 0;
	jv_free(open);
	if (all_done) {
		*words = "every todo item is done";
		return "all_done";
	}
	if (s->number >= s->max_slices) {
		*words = "the run reached its last work slice";
		return "slice_cap";
	}
	return NULL;
}

/* The checkpoint of the slice, from its evidence, and its notice. */
static void write_checkpoint(struct run *r, const char *outcome, const char *words)
{
	struct run_slice *s = &r->slice;
	const char *next = next_item(s);
	jv rec = xg_rec_new("checkpoint");
	char *msg;

	rec = xg_json_set(rec, "kind", jv_string("slice"));
	rec = xg_json_set(rec, "slice", jv_number(s->number));
	rec = xg_json_set(rec, "tool_calls", jv_number(s->calls));
	rec = xg_json_set(rec, "ms", jv_number((double)(xg_clock_ms() - s->t0)));
	rec = xg_json_set(rec, "done", todo_items(s, 1));
	rec = xg_json_set(rec, "next", todo_items(s, 0));
	rec = xg_json_set(rec, "files", jv_copy(s->files));
	rec = xg_json_set(rec, "commands", jv_copy(s->commands));
	rec = xg_json_set(rec, "outcome", jv_string(outcome ? outcome : "continue"));
	if (words)
		rec = xg_json_set(rec, "reason", jv_string(words));
	xg_run_emit(r, rec);
	if (!outcome)
		msg = next ? xg_asprintf("work slice %d ended after %d tool calls; slice %d "
					 "continues with: %s", s->number, s->calls,
					 s->number + 1, next)
			   : xg_asprintf("work slice %d ended after %d tool calls; slice %d "
					 "continues", s->number, s->calls, s->number + 1);
	else
		msg = xg_asprintf("work slice %d ended after %d tool calls; the run stops "
				  "here (%s): continue it with a message of your own",
				  s->number, s->calls, words);
	notice(r, msg);
	free(msg);
}

/* The slice is over and the report is in: its checkpoint, then the next
 * slice or the end of the run. */
static int close_slice(struct run *r)
{
	struct run_slice *s = &r->slice;
	const char *words = NULL, *outcome = stop_reason(r, &words);
	char *text;
	int rc;

	write_checkpoint(r, outcome, words);
	s->reporting = 0;
	if (outcome) {
		if (r->signal)
			return XG_RUN_SLICE_ENDED;	/* the signal settles it */
		if (r->rc < 0)
			r->rc = XG_EX_FAIL;
		r->status = "slice_complete";
		text = r->reason ? xg_asprintf("%s: %s", words, r->reason) : xg_strdup(words);
		free(r->reason);
		r->reason = text;
		return XG_RUN_SLICE_ENDED;
	}
	text = render(r, "slice-continue", "next", next_item(s),
		      "This reply continues in a new work slice, in place. Carry on from "
		      "your next open todo item.");
	rc = xg_run_add_user_message(r, text, "slice-continue");
	free(text);
	slice_open(s);
	return rc ? XG_RUN_SLICE_ENDED : XG_RUN_SLICE_SEND;
}

int xg_run_slice_step(struct run *r, int ncalls)
{
	struct run_slice *s = &r->slice;

	if (s->off || r->signal)
		return XG_RUN_SLICE_GO_ON;
	if (s->reporting)
		return close_slice(r);
	/* A reply that asked for no tool ends the run as it would anyway. */
	if (!ncalls || (s->calls < s->max_calls && xg_clock_ms() - s->t0 < s->max_ms))
		return XG_RUN_SLICE_GO_ON;
	return ask_report(r) ? XG_RUN_SLICE_ENDED : XG_RUN_SLICE_SEND;
}

void xg_run_slice_end(struct run *r)
{
	struct run_slice *s = &r->slice;

	/* The run ended inside a boundary: a provider failure, or a signal. */
	if (s->reporting && r->status && !strcmp(r->status, "failed") && !r->signal)
		close_slice(r);
	else if (s->reporting)
		write_checkpoint(r, "aborted", "the run was interrupted");
	s->reporting = 0;
	jv_free(s->todo);
	jv_free(s->files);
	jv_free(s->commands);
	s->todo = s->files = s->commands = jv_null();
}
