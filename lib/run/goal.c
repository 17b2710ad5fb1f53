/*
 * A goal inside the run (man 1 xg-goal, man 1 xg-run, Goals): the tools
 * get_goal and update_goal (goal/tools.c says what they answer), offered
 * only while the conversation has a goal (there is no tool that creates
 * one), and the check of a completion claim when the reply that made it
 * ends.
 *
 * The driver (xg-goal) reads the tools' results from the records (their
 * goal_update field) and the check's goal_check record, and decides the
 * goal's status itself.
 *
 * The check is one request of the run's model with a fresh context: its
 * own system prompt (the pack's completion-check template), no tools, low
 * effort when the model has efforts, holding the objective, the claim and
 * a clipped transcript of the goal's rounds.  Its answer is one line,
 * "done: ..." or "continue: ...", read strictly.  No template, a failed
 * request or an unreadable answer accepts the claim with a notice saying
 * why; XG_COMPLETION_CHECK=off accepts every claim unchecked.  A signal
 * during the check leaves the claim unsettled, and the run interrupted.
 */
#include "xg.h"
#include "run/internal.h"
#include "goal/goal.h"
#include "provider/provider.h"

#define ANSWER_MAX 4000

struct run_goal {
	char *claim;		/* the evidence of a "complete" claim, NULL */
};

void xg_run_goal_prepare(struct run *r)
{
	struct xg_goal g;

	if (r->conv_new || xg_goal_load(r->conv, &g))
		return;
	if (g.exists) {
		r->goal = xg_calloc(1, sizeof(*r->goal));
		r->tools = jv_array_concat(r->tools, xg_goal_tool_schemas());
	}
	xg_goal_release(&g);
}

void xg_run_goal_release(struct run *r)
{
	if (!r->goal)
		return;
	free(r->goal->claim);
	free(r->goal);
	r->goal = NULL;
}

int xg_run_goal_tool(const struct run *r, const char *name)
{
	return r->goal && xg_goal_tool(name);
}

jv xg_run_goal_call(struct run *r, const char *name, jv args)
{
	long long round = 0;

	xg_json_int_peek(xg_json_get_peek(r->request, "goal"), "round", &round);
	return xg_goal_tool_call(r->conv, round, name, args, &r->goal->claim);
}

/* ---- the check ---- */

static void notice(struct run *r, const char *text)
{
	jv rec = xg_rec_new("notice");

	rec = xg_json_set(rec, "from", jv_string("xg-run"));
	xg_run_emit(r, xg_json_set(rec, "text", jv_string(text)));
}

/* Asks the model; the verdict, or NULL with *why saying why the claim is
 * accepted unchecked.  -1 when a signal stopped it.  The check comes once
 * the reply has ended, the run's outcome set: only a signal stops it, and
 * its events are none of the stall clock's (the records it writes are). */
static int ask(struct run *r, const char *system, const char **verdict, char **reason, char **why)
{
	struct xg_buf text = XG_BUF_INIT(ANSWER_MAX);
	struct xg_provider_error perr;
	int rc;

	rc = xg_run_side_call(r, xg_goal_check_request_peek(r->conv, r->model, system,
							    r->goal->claim),
			      "completion check", 0, &text, &perr);
	if (r->signal || rc == XG_PROVIDER_STOPPED) {
		xg_buf_release(&text);
		return -1;
	}
	if (rc)
		*why = xg_asprintf("the completion check failed (provider '%s': %s: %s)",
				   r->prov->name, perr.class ? perr.class : "error", perr.message);
	else if (xg_goal_check_answer(text.buf, verdict, reason) < 0)
		*why = xg_strdup("the completion check's answer could not be read as "
				 "\"done: ...\" or \"continue: ...\"");
	xg_buf_release(&text);
	return 0;
}

void xg_run_goal_settle(struct run *r)
{
	const char *env = getenv("XG_COMPLETION_CHECK");
	const char *system = xg_json_string_peek(xg_json_get_peek(r->pack, "templates"),
						 "completion-check");
	const char *verdict = NULL;
	char *reason = NULL, *why = NULL;
	jv rec;

	if (!r->goal || !r->goal->claim || r->signal)
		return;
	if (env && !strcmp(env, "off"))
		why = xg_strdup("XG_COMPLETION_CHECK=off: the claim is accepted unchecked");
	else if (!system)
		why = xg_strdup("the variant has no completion-check text: the claim is accepted "
				"unchecked");
	else if (ask(r, system, &verdict, &reason, &why) < 0)
		return;
	rec = xg_rec_new("goal_check");
	rec = xg_json_set(rec, "claim", jv_string(r->goal->claim));
	rec = xg_json_set(rec, "checked", jv_bool(verdict != NULL));
	rec = xg_json_set(rec, "verdict", verdict ? jv_string(verdict) : jv_null());
	rec = xg_json_set(rec, "reason", jv_string(reason ? reason : why));
	rec = xg_json_set(rec, "accepted", jv_bool(!verdict || !strcmp(verdict, "done")));
	if (why) {
		char *t = xg_asprintf("%s; the goal's completion claim is accepted", why);

		notice(r, t);
		free(t);
	}
	xg_run_emit(r, rec);
	free(reason);
	free(why);
	free(r->goal->claim);
	r->goal->claim = NULL;
}
