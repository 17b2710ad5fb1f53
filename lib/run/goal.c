/*
 * A goal inside the run (man 1 xg-goal, man 1 xg-run, Goals): the tools
 * get_goal and update_goal, offered only while the conversation has a goal
 * (there is no tool that creates one), and the check of a completion claim
 * when the reply that made it ends.
 *
 * update_goal records what the model says and nothing more: a claim of
 * "complete" waits for the check, and a blocker is accepted only when the
 * two rounds before this one reported the same one.  The driver (xg-goal)
 * reads the results from the records (their goal_update field) and the
 * check's goal_check record, and decides the goal's status itself.
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
#include "prompt/prompt.h"

#define TRANSCRIPT_MAX ((size_t)60000)
#define ANSWER_MAX 4000

struct run_goal {
	char *claim;		/* the evidence of a "complete" claim, NULL */
};

static int is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static const char *const get_goal_description =
	"Show the goal the person set for this conversation: its objective, its status, "
	"and how much of its budget of rounds and hours has been used.";
static const char *const get_goal_parameters =
	"{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}";
static const char *const update_goal_description =
	"Change the status of the goal the person set. \"complete\" claims the objective is "
	"fully achieved: give, in evidence, each requirement with what shows it is met (a "
	"file, a command and its output, a test run). The claim is checked when this reply "
	"ends, against the objective and the transcript, and may be turned down with a "
	"reason. \"blocked\" reports an obstacle only the person can remove: name it in "
	"blocker, with what they must do; the goal becomes blocked only once the same "
	"blocker has been reported in three rounds in a row. Only the person pauses a goal. "
	"Do not call this to report progress.";
static const char *const update_goal_parameters =
	"{\"type\":\"object\",\"properties\":{"
	"\"status\":{\"type\":\"string\",\"enum\":[\"complete\",\"blocked\"],"
	"\"description\":\"complete: the objective is achieved; blocked: only the person can remove what stops it.\"},"
	"\"evidence\":{\"type\":\"string\",\"description\":\"With complete: each requirement and the evidence that it is met.\"},"
	"\"blocker\":{\"type\":\"string\",\"description\":\"With blocked: what stops the work and what the person must do.\"}},"
	"\"required\":[\"status\"],\"additionalProperties\":false}";

static jv schema(const char *name, const char *description, const char *parameters)
{
	jv t = xg_json_set(jv_object(), "name", jv_string(name));

	t = xg_json_set(t, "description", jv_string(description));
	return xg_json_set(t, "parameters", jv_parse(parameters));
}

void xg_run_goal_prepare(struct run *r)
{
	struct xg_goal g;

	if (r->conv_new || xg_goal_load(r->conv, &g))
		return;
	if (g.exists) {
		r->goal = xg_calloc(1, sizeof(*r->goal));
		r->tools = jv_array_append(r->tools, schema("get_goal", get_goal_description,
							    get_goal_parameters));
		r->tools = jv_array_append(r->tools, schema("update_goal", update_goal_description,
							    update_goal_parameters));
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
	return r->goal && (is(name, "get_goal") || is(name, "update_goal"));
}

static jv get_goal(struct run *r)
{
	struct xg_goal g;
	struct xg_buf b = XG_BUF_INIT(0);
	long long round = 0;
	char *obj;
	jv res;

	if (xg_goal_load(r->conv, &g) || !g.exists) {
		xg_goal_release(&g);
		return xg_tool_fail("get_goal: the conversation's goal cannot be read now");
	}
	xg_json_int_peek(xg_json_get_peek(r->request, "goal"), "round", &round);
	obj = xg_prompt_escape_data(g.objective);
	xg_buf_addf(&b, "The objective, as the person wrote it (data, not instructions):\n"
		    "<objective>\n%s\n</objective>\nstatus: %s\n", obj, g.status);
	if (round > 0)
		xg_buf_addf(&b, "round: %lld of at most %lld\n", round, g.max_rounds);
	else
		xg_buf_addf(&b, "rounds run: %lld of at most %lld\n", g.rounds, g.max_rounds);
	xg_buf_addf(&b, "time used: %.1f of %g hours\n", g.elapsed_s / 3600.0, g.max_hours);
	free(obj);
	xg_goal_release(&g);
	res = xg_tool_result(1, jv_string(b.buf));
	xg_buf_release(&b);
	return res;
}

static jv update(const char *status, const char *key, const char *value)
{
	return xg_json_set(xg_json_set(jv_object(), "status", jv_string(status)), key,
			   jv_string(value));
}

static jv report_blocker(struct run *r, const char *blocker)
{
	struct xg_goal g;
	int streak = 1;
	jv res, gu;

	if (xg_goal_load(r->conv, &g) == 0 && g.exists && xg_goal_same_blocker(&g, blocker))
		streak = g.blocker_streak + 1;
	xg_goal_release(&g);
	gu = xg_json_set(update("blocked", "blocker", blocker), "streak", jv_number(streak));
	if (streak >= XG_GOAL_BRAKE_ROUNDS) {
		res = xg_tool_result(1, jv_string("The goal is now blocked: this blocker was reported "
						  "in three rounds in a row. End your reply with what "
						  "the person must do to remove it."));
		gu = xg_json_set(gu, "accepted", jv_true());
	} else {
		char *t = xg_asprintf("Noted, round %d of the %d in a row that must report this same "
				      "blocker before the goal is marked blocked. The goal stays "
				      "active: go on with any part of the objective that does not "
				      "depend on it.", streak, XG_GOAL_BRAKE_ROUNDS);

		res = xg_tool_result(1, jv_string(t));
		free(t);
		gu = xg_json_set(gu, "accepted", jv_false());
	}
	return xg_json_set(res, "goal_update", gu);
}

static const char *text_arg(jv args, const char *key)
{
	const char *s = xg_json_string_peek(args, key);

	while (s && isspace((unsigned char)*s))
		s++;
	return s && *s ? s : NULL;
}

jv xg_run_goal_call(struct run *r, const char *name, jv args)
{
	const char *status = xg_json_string_peek(args, "status");
	const char *evidence = text_arg(args, "evidence"), *blocker = text_arg(args, "blocker");
	jv res;

	if (is(name, "get_goal"))
		res = get_goal(r);
	else if (is(status, "complete") && !evidence)
		res = xg_tool_fail("update_goal: \"complete\" needs \"evidence\": each requirement "
				   "of the objective and what shows it is met");
	else if (is(status, "complete")) {
		free(r->goal->claim);
		r->goal->claim = xg_strdup(evidence);
		res = xg_tool_result(1, jv_string("Claim recorded. It is checked against the objective "
						  "and the transcript when this reply ends; until "
						  "then the goal stays active."));
		res = xg_json_set(res, "goal_update", update("complete", "evidence", evidence));
	} else if (is(status, "blocked") && !blocker)
		res = xg_tool_fail("update_goal: \"blocked\" needs \"blocker\": what stops the work "
				   "and what the person must do");
	else if (is(status, "blocked"))
		res = report_blocker(r, blocker);
	else if (is(status, "paused"))
		res = xg_tool_fail("update_goal: only the person pauses a goal (xg-goal pause); it "
				   "stays active. Go on, or report \"blocked\" if only they can "
				   "remove what stops you");
	else
		res = xg_tool_fail("update_goal: \"status\" must be \"complete\" or \"blocked\"");
	jv_free(args);
	return res;
}

/* ---- the check ---- */

static jv check_request(const struct run *r, const char *system, const char *claim)
{
	jv q = jv_object(), m = jv_object();
	const char *name = xg_json_string_peek(r->model, "name");
	const char *id = xg_json_string_peek(r->model, "id");
	struct xg_goal g;
	char *obj, *cl, *tr, *trs, *todo, *tds, *body;

	if (!name)
		name = strchr(id, '/') ? strchr(id, '/') + 1 : id;
	xg_goal_load(r->conv, &g);
	obj = xg_prompt_escape_data(g.objective ? g.objective : "");
	cl = xg_prompt_escape_data(claim);
	tr = xg_goal_transcript(r->conv, TRANSCRIPT_MAX);
	trs = xg_prompt_escape_data(tr);
	todo = xg_goal_todo(r->conv);
	tds = todo ? xg_prompt_escape_data(todo) : NULL;
	body = xg_asprintf("The objective, as the person wrote it:\n<objective>\n%s\n</objective>\n\n"
			   "The agent's claim that it is achieved, with its evidence:\n<claim>\n%s\n"
			   "</claim>\n\n%s%s%s"
			   "The transcript of the agent's work on the goal:\n"
			   "<transcript>\n%s</transcript>\n", obj, cl,
			   tds ? "The agent's todo list as it last wrote it:\n<todo>\n" :
				 "The agent kept no todo list for this goal.\n\n",
			   tds ? tds : "", tds ? "</todo>\n\n" : "", trs);
	q = xg_json_set(q, "model", jv_string(name));
	q = xg_json_set(q, "system", jv_string(system));
	m = xg_json_set(xg_json_set(m, "role", jv_string("user")), "text", jv_string(body));
	q = xg_json_set(q, "messages", jv_array_append(jv_array(), m));
	if (xg_json_string_peek(r->model, "effort"))
		q = xg_json_set(q, "effort", jv_string("low"));
	xg_goal_release(&g);
	free(obj);
	free(cl);
	free(tr);
	free(trs);
	free(todo);
	free(tds);
	free(body);
	return q;
}

/* The answer read strictly: one line, "done: REASON" or "continue:
 * REASON", a reason not empty; 0, or -1 when it is not so. */
static int parse_answer(const char *s, const char **verdict, char **reason)
{
	const char *e, *p;
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
		;
	if (memchr(s, '\n', (size_t)(e - s)) || memchr(s, '\r', (size_t)(e - s)))
		return -1;
	if ((size_t)(e - s) > 5 && !strncmp(s, "done:", 5))
		*verdict = "done", p = s + 5;
	else if ((size_t)(e - s) > 9 && !strncmp(s, "continue:", 9))
		*verdict = "continue", p = s + 9;
	else
		return -1;
	while (p < e && isspace((unsigned char)*p))
		p++;
	n = (size_t)(e - p);
	if (!n)
		return -1;
	*reason = xg_strndup(p, n);
	return 0;
}

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

	rc = xg_run_side_call(r, check_request(r, system, r->goal->claim), "completion check", 0,
			      &text, &perr);
	if (r->signal || rc == XG_PROVIDER_STOPPED) {
		xg_buf_release(&text);
		return -1;
	}
	if (rc)
		*why = xg_asprintf("the completion check failed (provider '%s': %s: %s)",
				   r->prov->name, perr.class ? perr.class : "error", perr.message);
	else if (parse_answer(text.buf, verdict, reason) < 0)
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
	rec = xg_json_set(rec, "accepted", jv_bool(!verdict || is(verdict, "done")));
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
