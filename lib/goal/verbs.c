/*
 * xg-goal's verbs (goal.h): set, get, edit, pause, resume and clear, each
 * on the conversation given or (all but set, which starts a new one) the
 * newest whose workspace is this directory.  Each change is decided on
 * the goal as read and appended only if no other writer came first
 * (xg_goal_commit), else read again and decided again.  set and resume
 * take the driver's lock before they change anything, and then drive.
 */
#include "xg.h"
#include "goal/internal.h"
#include "dispatch/dispatch.h"
#include "conversation.h"

#define TRIES 8

static int is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The conversation a verb other than set works on (owned), or NULL after
 * a message. */
static char *which(const struct xg_goal_opts *o)
{
	char *id;

	if (o->conversation)
		return xg_strdup(o->conversation);
	if ((id = xg_dispatch_newest_here()))
		return id;
	xg_error("no conversation has this directory as its workspace: name one with "
		 "--conversation");
	return NULL;
}

/*
 * A change: decide looks at the goal as read and returns 0 with *entry the
 * entry to append (jv_null(): nothing changes), or an exit code after a
 * message.  The entry that went in, or the goal's newest when nothing
 * changed, is written as a record.
 */
typedef int (*decide_fn)(const struct xg_goal_opts *o, const char *conv, struct xg_goal *g,
			 jv *entry);

static int change(const struct xg_goal_opts *o, const char *conv, decide_fn decide, FILE *out)
{
	struct xg_rec_writer w;
	struct xg_goal g;
	int i, rc = -1;
	jv e = jv_null();

	for (i = 0; i < TRIES && rc == -1; i++) {
		if ((rc = xg_goal_load(conv, &g)))
			break;
		if ((rc = decide(o, conv, &g, &e)) == 0) {
			if (jv_get_kind(e) == JV_KIND_NULL)
				e = jv_copy(g.last);
			else if ((rc = xg_goal_commit(conv, &g, jv_copy(e))))
			{
				jv_free(e);
				e = jv_null();
			}
		}
		xg_goal_release(&g);
	}
	if (rc == -1)
		rc = (xg_error("conversation '%s': its goal keeps changing", conv), XG_EX_TEMPFAIL);
	if (rc == 0 && jv_get_kind(e) == JV_KIND_OBJECT) {
		xg_rec_writer_init(&w, out);
		xg_rec_write(&w, xg_goal_record(conv, e));
		xg_rec_writer_release(&w);
	} else {
		jv_free(e);
	}
	return rc;
}

static int no_goal(const char *conv)
{
	xg_error("conversation '%s' has no goal; 'xg-goal set' sets one", conv);
	return XG_EX_FAIL;
}

static void set_status(struct xg_goal *g, const char *status)
{
	snprintf(g->status, sizeof(g->status), "%s", status);
}

/* ---- set ---- */

static int decide_set(const struct xg_goal_opts *o, const char *conv, struct xg_goal *g, jv *e)
{
	if (g->exists && !o->replace) {
		xg_error("conversation '%s' has a goal already (%s); --replace replaces it", conv,
			 g->status);
		return XG_EX_USAGE;
	}
	free(g->objective);
	g->objective = xg_strdup(o->objective);
	set_status(g, "active");
	g->rounds = 0;
	g->elapsed_s = 0;
	g->max_rounds = o->rounds > 0 ? o->rounds : XG_GOAL_ROUNDS_DEFAULT;
	g->max_hours = o->hours > 0 ? o->hours : XG_GOAL_HOURS_DEFAULT;
	xg_goal_release_run(g);
	xg_goal_take_opts(g, o);
	*e = xg_goal_entry(g, "set");
	return 0;
}

int xg_goal_set(const struct xg_goal_opts *o, FILE *out)
{
	char *conv = o->conversation ? xg_strdup(o->conversation) : xg_conv_new_id();
	int lock, rc;

	if ((lock = xg_goal_lock(conv)) < 0) {
		free(conv);
		return xg_exit_for_errno(errno);
	}
	rc = change(o, conv, decide_set, out);
	if (rc || o->no_run)
		close(lock);
	else
		rc = xg_goal_drive(o, conv, lock, out);
	free(conv);
	return rc;
}

/* ---- get ---- */

/* 95 -> "1m 35s", 7300 -> "2h 1m". */
static void span(double secs, char out[32])
{
	long long s = (long long)secs;

	if (s < 60)
		snprintf(out, 32, "%llds", s);
	else if (s < 3600)
		snprintf(out, 32, "%lldm %llds", s / 60, s % 60);
	else
		snprintf(out, 32, "%lldh %lldm", s / 3600, s % 3600 / 60);
}

/*
 * The goal record as one line for a person at a terminal:
 *   active  round 3 of 30  12m 5s of 8h  driver 4242  g1: write a.txt
 * the objective's first line, cut at 60 characters.
 */
static void status_line(jv rec, FILE *out)
{
	const char *status = xg_json_string_peek(rec, "status");
	const char *objective = xg_json_string_peek(rec, "objective");
	jv limits = xg_json_get_peek(rec, "limits");
	long long rounds = 0, max = 0, driver = 0;
	double elapsed = 0, hours = 0;
	size_t n = objective ? strcspn(objective, "\r\n") : 0;
	char took[32];

	xg_json_int_peek(rec, "rounds", &rounds);
	xg_json_number_peek(rec, "elapsed_s", &elapsed);
	xg_json_int_peek(limits, "rounds", &max);
	xg_json_number_peek(limits, "hours", &hours);
	span(elapsed, took);
	fprintf(out, "%s  round %lld of %lld  %s of %gh  ", status ? status : "?", rounds, max, took,
		hours);
	if (xg_json_int_peek(rec, "driver", &driver) == 0)
		fprintf(out, "driver %lld  ", driver);
	else
		fputs("no driver  ", out);
	if (n > 60)
		n = xg_utf8_start(objective, 60);
	fprintf(out, "%s: %.*s%s\n", xg_json_string_peek(rec, "conversation"), (int)n,
		objective ? objective : "", n < strlen(objective ? objective : "") ? "..." : "");
}

int xg_goal_get(const struct xg_goal_opts *o, FILE *out)
{
	struct xg_rec_writer w;
	struct xg_goal g;
	char *conv = which(o);
	long driver;
	jv rec;
	int rc;

	if (!conv)
		return XG_EX_FAIL;
	if ((rc = xg_goal_load(conv, &g)) == 0 && !g.exists)
		rc = no_goal(conv);
	if (rc == 0) {
		driver = xg_goal_driver(conv);
		rec = xg_goal_record(conv, jv_copy(g.last));
		/* Active with nothing driving it: its driver is gone. */
		if (is(g.status, "active") && !driver)
			rec = xg_json_set(rec, "status", jv_string("paused"));
		rec = xg_json_set(rec, "driver", driver > 0 ? jv_number((double)driver) : jv_null());
		if (!o->json && isatty(fileno(out))) {
			status_line(rec, out);
			jv_free(rec);
		} else {
			xg_rec_writer_init(&w, out);
			xg_rec_write(&w, rec);
			xg_rec_writer_release(&w);
		}
	}
	xg_goal_release(&g);
	free(conv);
	return rc;
}

/* ---- edit, pause, clear ---- */

static int decide_edit(const struct xg_goal_opts *o, const char *conv, struct xg_goal *g, jv *e)
{
	if (!g->exists)
		return no_goal(conv);
	free(g->objective);
	g->objective = xg_strdup(o->objective);
	/* The new objective is not achieved yet: it waits for a resume. */
	if (is(g->status, "complete"))
		set_status(g, "paused");
	*e = xg_goal_entry(g, "edit");
	return 0;
}

static int decide_pause(const struct xg_goal_opts *o, const char *conv, struct xg_goal *g, jv *e)
{
	(void)o;
	if (!g->exists)
		return no_goal(conv);
	if (!is(g->status, "active") && !is(g->status, "budget_limited")) {
		xg_warn("the goal of conversation '%s' is %s: nothing to pause", conv, g->status);
		return 0;
	}
	set_status(g, "paused");
	*e = xg_goal_entry(g, "pause");
	return 0;
}

static int decide_clear(const struct xg_goal_opts *o, const char *conv, struct xg_goal *g, jv *e)
{
	(void)o;
	if (!g->exists)
		return no_goal(conv);
	*e = xg_goal_entry(g, "clear");
	return 0;
}

static int simple(const struct xg_goal_opts *o, decide_fn decide, FILE *out)
{
	char *conv = which(o);
	int rc;

	if (!conv)
		return XG_EX_FAIL;
	rc = change(o, conv, decide, out);
	free(conv);
	return rc;
}

int xg_goal_edit(const struct xg_goal_opts *o, FILE *out)
{
	return simple(o, decide_edit, out);
}

int xg_goal_pause(const struct xg_goal_opts *o, FILE *out)
{
	return simple(o, decide_pause, out);
}

int xg_goal_clear(const struct xg_goal_opts *o, FILE *out)
{
	return simple(o, decide_clear, out);
}

/* ---- resume ---- */

static int decide_resume(const struct xg_goal_opts *o, const char *conv, struct xg_goal *g, jv *e)
{
	if (!g->exists)
		return no_goal(conv);
	if (is(g->status, "complete")) {
		xg_warn("the goal of conversation '%s' is complete: nothing to resume", conv);
		return 0;
	}
	if (o->rounds > 0)
		g->max_rounds = o->rounds;
	if (o->hours > 0)
		g->max_hours = o->hours;
	if (g->rounds >= g->max_rounds || g->elapsed_s >= g->max_hours * 3600.0) {
		xg_error("the goal of conversation '%s' has used its budget (%lld of %lld rounds, "
			 "%.0f s of %g hours): give it more with --rounds or --hours",
			 conv, g->rounds, g->max_rounds, g->elapsed_s, g->max_hours);
		return XG_EX_FAIL;
	}
	set_status(g, "active");
	xg_goal_take_opts(g, o);
	*e = xg_goal_entry(g, "resume");
	return 0;
}

int xg_goal_resume(const struct xg_goal_opts *o, FILE *out)
{
	char *conv = which(o);
	struct xg_goal g;
	int lock, rc;

	if (!conv)
		return XG_EX_FAIL;
	if ((lock = xg_goal_lock(conv)) < 0) {
		free(conv);
		return xg_exit_for_errno(errno);
	}
	rc = change(o, conv, decide_resume, out);
	if (rc == 0 && xg_goal_load(conv, &g) == 0) {
		if (g.exists && is(g.status, "active"))
		{
			rc = xg_goal_drive(o, conv, lock, out);
			lock = -1;
		}
		xg_goal_release(&g);
	}
	if (lock >= 0)
		close(lock);
	free(conv);
	return rc;
}
