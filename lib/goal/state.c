/*
 * A goal's state (goal.h): read from the conversation's goal entries, the
 * newest "set" and those after it, oldest first; each entry holds the whole
 * state after its change, and the rounds' entries add the streaks the
 * brakes count.  A new entry goes in only when no other writer appended a
 * goal entry since the state was read (xg_goal_commit), so a person's
 * pause is never overwritten by a driver's round.  The driver's lock, and
 * the check of an objective.
 */
#include "xg.h"
#include "goal/goal.h"
#include "conversation.h"
#include <sys/file.h>

static int is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Collects the goal entries back to the newest set (newest first). */
static int collect(jv entry, void *ctx)
{
	jv *all = ctx;

	if (!is(xg_json_string_peek(entry, "type"), "goal"))
		return 0;
	*all = jv_array_append(*all, jv_copy(entry));
	return is(xg_json_string_peek(entry, "event"), "set");
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? xg_strdup(s) : NULL;
}

/* The run options an entry keeps: each field a string, or null. */
static void take_run(struct xg_goal *g, jv run)
{
	if (jv_get_kind(run) != JV_KIND_OBJECT)
		return;
	set_str(&g->model, xg_json_string_peek(run, "model"));
	set_str(&g->effort, xg_json_string_peek(run, "effort"));
	set_str(&g->account, xg_json_string_peek(run, "account"));
	set_str(&g->variant, xg_json_string_peek(run, "variant"));
}

static jv string_or_null(const char *s)
{
	return s ? jv_string(s) : jv_null();
}

/* Takes the snapshot fields of one entry. */
static void take_state(struct xg_goal *g, jv e)
{
	jv lim = xg_json_get_peek(e, "limits");
	const char *s;
	long long n;
	double d;

	if ((s = xg_json_string_peek(e, "objective")))
		set_str(&g->objective, s);
	if ((s = xg_json_string_peek(e, "status")))
		snprintf(g->status, sizeof(g->status), "%s", s);
	if (xg_json_int_peek(e, "rounds", &n) == 0)
		g->rounds = n;
	if (xg_json_number_peek(e, "elapsed_s", &d) == 0)
		g->elapsed_s = d;
	if (xg_json_int_peek(lim, "rounds", &n) == 0 && n > 0)
		g->max_rounds = n;
	if (xg_json_number_peek(lim, "hours", &d) == 0 && d > 0)
		g->max_hours = d;
	take_run(g, xg_json_get_peek(e, "options"));
}

/* What a round's entry adds: the streaks, the review, the wrap-up. */
static void take_round(struct xg_goal *g, jv e)
{
	const char *activity = xg_json_string_peek(e, "activity");
	const char *blocker = xg_json_string_peek(e, "blocker");
	bool wrap = false;

	g->edited = 0;
	g->idle_streak = is(activity, "none") ? g->idle_streak + 1 : 0;
	g->failed_streak = is(activity, "failed") ? g->failed_streak + 1 : 0;
	if (blocker && *blocker) {
		g->blocker_streak = xg_goal_same_blocker(g, blocker) ? g->blocker_streak + 1 : 1;
		set_str(&g->blocker, blocker);
	} else {
		g->blocker_streak = 0;
		set_str(&g->blocker, NULL);
	}
	set_str(&g->review, is(xg_json_string_peek(e, "verdict"), "continue")
				    ? xg_json_string_peek(e, "reason") : NULL);
	xg_json_bool_peek(e, "wrap_up", &wrap);
	g->wrapped = wrap;
}

/* A person's word starts the counts afresh. */
static void reset_streaks(struct xg_goal *g)
{
	g->idle_streak = g->failed_streak = g->blocker_streak = 0;
	set_str(&g->blocker, NULL);
	g->wrapped = 0;
}

int xg_goal_load(const char *conv, struct xg_goal *g)
{
	jv all;
	int n, i;

	memset(g, 0, sizeof(*g));
	g->last = jv_null();
	g->max_rounds = XG_GOAL_ROUNDS_DEFAULT;
	g->max_hours = XG_GOAL_HOURS_DEFAULT;
	if (!xg_conv_exists(conv))
		return 0;
	all = jv_array();
	if (xg_conv_scan_back(conv, collect, &all, NULL) < 0) {
		jv_free(all);
		return xg_exit_for_errno(errno);
	}
	n = jv_array_length(jv_copy(all));
	for (i = n - 1; i >= 0; i--) {
		jv e = jv_array_get(jv_copy(all), i);
		const char *ev = xg_json_string_peek(e, "event");

		if (is(ev, "set")) {
			g->exists = 1;
			g->rounds = 0;
			g->elapsed_s = 0;
			g->edited = 0;
			set_str(&g->review, NULL);
			reset_streaks(g);
		}
		if (!g->exists) {
			jv_free(e);
			continue;
		}
		take_state(g, e);
		if (is(ev, "edit")) {
			g->edited = 1;
			reset_streaks(g);
		} else if (is(ev, "resume")) {
			reset_streaks(g);
		} else if (is(ev, "round")) {
			take_round(g, e);
		} else if (is(ev, "clear")) {
			g->exists = 0;
		}
		jv_free(g->last);
		g->last = e;
	}
	jv_free(all);
	if (g->exists && (!g->objective || !g->status[0])) {
		xg_goal_release(g);
		return xg_error("conversation '%s': its goal entries name no objective or status",
				conv), XG_EX_DATAERR;
	}
	return 0;
}

void xg_goal_release_run(struct xg_goal *g)
{
	set_str(&g->model, NULL);
	set_str(&g->effort, NULL);
	set_str(&g->account, NULL);
	set_str(&g->variant, NULL);
}

void xg_goal_take_opts(struct xg_goal *g, const struct xg_goal_opts *o)
{
	if (o->model)
		set_str(&g->model, o->model);
	if (o->effort)
		set_str(&g->effort, o->effort);
	if (o->account)
		set_str(&g->account, o->account);
	if (o->variant)
		set_str(&g->variant, o->variant);
}

struct xg_goal_opts xg_goal_opts_for_round(const struct xg_goal_opts *o, const struct xg_goal *g)
{
	struct xg_goal_opts r = *o;

	r.model = o->model ? o->model : g->model;
	r.effort = o->effort ? o->effort : g->effort;
	r.account = o->account ? o->account : g->account;
	r.variant = o->variant ? o->variant : g->variant;
	return r;
}

void xg_goal_release(struct xg_goal *g)
{
	free(g->objective);
	free(g->blocker);
	free(g->review);
	free(g->model);
	free(g->effort);
	free(g->account);
	free(g->variant);
	jv_free(g->last);
	memset(g, 0, sizeof(*g));
	g->last = jv_null();
}

/* s with case folded (ASCII) and each run of white space one space, trimmed
 * (owned). */
static char *words(const char *s)
{
	struct xg_buf b = XG_BUF_INIT(0);
	int space = 0;

	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			space = b.len > 0;
			continue;
		}
		if (space)
			xg_buf_addch(&b, ' ');
		space = 0;
		xg_buf_addch(&b, tolower((unsigned char)*s));
	}
	return xg_buf_detach(&b, NULL);
}

/* Blockers compare with case and runs of white space ignored. */
static int same_words(const char *a, const char *b)
{
	char *x = words(a), *y = words(b);
	int same = !strcmp(x, y);

	free(x);
	free(y);
	return same;
}

int xg_goal_same_blocker(const struct xg_goal *g, const char *blocker)
{
	return g->blocker && blocker && same_words(g->blocker, blocker);
}

jv xg_goal_entry(const struct xg_goal *g, const char *event)
{
	jv e = xg_rec_new("goal"), lim = jv_object(), run = jv_object();

	e = xg_json_set(e, "event", jv_string(event));
	e = xg_json_set(e, "objective", jv_string(g->objective ? g->objective : ""));
	e = xg_json_set(e, "status", jv_string(g->status));
	e = xg_json_set(e, "rounds", jv_number((double)g->rounds));
	e = xg_json_set(e, "elapsed_s", jv_number((double)(long long)(g->elapsed_s * 1000) / 1000));
	lim = xg_json_set(lim, "rounds", jv_number((double)g->max_rounds));
	lim = xg_json_set(lim, "hours", jv_number(g->max_hours));
	e = xg_json_set(e, "limits", lim);
	run = xg_json_set(run, "model", string_or_null(g->model));
	run = xg_json_set(run, "effort", string_or_null(g->effort));
	run = xg_json_set(run, "account", string_or_null(g->account));
	run = xg_json_set(run, "variant", string_or_null(g->variant));
	return xg_json_set(e, "options", run);
}

/* Under the conversation's lock: whether its newest goal entry is still
 * the one the decision was made on. */
struct still {
	jv last;
	int changed;
};

static int newest_goal(jv entry, void *ctx)
{
	jv *found = ctx;

	if (!is(xg_json_string_peek(entry, "type"), "goal"))
		return 0;
	*found = jv_copy(entry);
	return 1;
}

static int still_same(const char *conv, void *ctx)
{
	struct still *s = ctx;
	jv now = jv_null();
	int same;

	if (xg_conv_scan_back(conv, newest_goal, &now, NULL) < 0 && errno != ENOENT) {
		jv_free(now);
		return -1;
	}
	same = jv_equal(now, jv_copy(s->last));
	s->changed = !same;
	return same;
}

int xg_goal_commit(const char *conv, const struct xg_goal *g, jv entry)
{
	struct still s = { g->last, 0 };
	int rc = xg_conv_append_if(conv, entry, still_same, &s);

	if (rc == 0)
		return 0;
	if (rc == 1 && s.changed)
		return -1;
	if (rc < 0 && errno == EWOULDBLOCK)
		return XG_EX_TEMPFAIL;
	return rc == 1 ? XG_EX_SOFTWARE : XG_EX_IOERR;
}

jv xg_goal_record(const char *conv, jv entry)
{
	entry = jv_object_delete(entry, jv_string("at"));
	return xg_json_set(entry, "conversation", jv_string(conv));
}

static char *lock_path(const char *conv)
{
	char *rel = xg_asprintf("conversations/%s.goal.lock", conv);
	char *path = xg_path_state(rel);

	free(rel);
	return path;
}

long xg_goal_driver(const char *conv)
{
	char *path = lock_path(conv);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	long pid = 0;

	free(path);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		pid = errno == EWOULDBLOCK ? xg_lock_holder(fd) : 0;
		if (errno == EWOULDBLOCK && pid <= 0)
			pid = -1;	/* held, by a process we cannot name */
	} else {
		flock(fd, LOCK_UN);
	}
	close(fd);
	return pid;
}

int xg_goal_lock(const char *conv)
{
	char *dir = xg_path_state("conversations"), *path = lock_path(conv);
	int fd = -1;

	if (xg_mkdir_p(dir, 0700) == 0)
		fd = xg_lock_file_mode(path, O_RDWR | O_CREAT, 0600, xg_lock_timeout_ms());
	if (fd < 0 && errno == EWOULDBLOCK)
		xg_error("the goal of conversation '%s' has a driver already (above); "
			 "'xg-goal pause' stops it after its round", conv);
	free(dir);
	free(path);
	if (fd < 0)
		errno = errno ? errno : EIO;
	return fd;
}

const char *xg_goal_objective_problem(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0;
	int blank = 1;

	if (!s)
		return "the objective is missing";
	for (; *p; chars++) {
		int n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 :
			(*p & 0xF8) == 0xF0 ? 4 : 0;
		int i;

		if (!n)
			return "the objective is not valid UTF-8";
		for (i = 1; i < n; i++)
			if ((p[i] & 0xC0) != 0x80)
				return "the objective is not valid UTF-8";
		if (!isspace(*p))
			blank = 0;
		p += n;
	}
	if (blank)
		return "the objective is empty";
	if (chars > XG_GOAL_OBJECTIVE_MAX)
		return "the objective is longer than 4000 characters";
	return NULL;
}
