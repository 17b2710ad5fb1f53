/*
 * xg-goal: a person's long-running objective on a conversation.  set
 * records it and drives rounds of xg-run until it settles; get, edit,
 * pause, resume and clear work on the goal of the conversation given, or
 * of the newest one of this directory.
 */
#include "xg.h"
#include "conversation.h"
#include "goal/goal.h"

#define RUN_OPTIONS "[--model model] [--effort effort] [--account name] [--variant ref] " \
	"[--ask command] [--gate filter] [--work-slice policy] [--stream] [-v]"

static const char *const usage[] = {
	"xg-goal set [--conversation id] [--rounds n] [--hours h] [--replace] [--no-run] "
	RUN_OPTIONS " objective",
	"xg-goal get [--conversation id] [--json]",
	"xg-goal edit [--conversation id] objective",
	"xg-goal pause [--conversation id]",
	"xg-goal resume [--conversation id] [--rounds n] [--hours h] " RUN_OPTIONS,
	"xg-goal clear [--conversation id]",
	NULL
};

enum { OPT_CONV = 1, OPT_ROUNDS, OPT_HOURS, OPT_REPLACE, OPT_NO_RUN, OPT_MODEL, OPT_EFFORT,
       OPT_ACCOUNT, OPT_VARIANT, OPT_ASK, OPT_GATE, OPT_SLICE, OPT_STREAM, OPT_JSON };

static const struct xg_option options[] = {
	{ OPT_CONV, 0, "conversation", "id", "the goal of this conversation" },
	{ OPT_ROUNDS, 0, "rounds", "n", "set, resume: the cap on rounds (default 30)" },
	{ OPT_HOURS, 0, "hours", "h", "set, resume: the cap on hours of work (default 8)" },
	{ OPT_REPLACE, 0, "replace", NULL, "set: replace the goal the conversation has" },
	{ OPT_NO_RUN, 0, "no-run", NULL, "set: record the goal only; run no round" },
	{ OPT_JSON, 0, "json", NULL, "get: the record, even on a terminal" },
	{ OPT_MODEL, 0, "model", "model", "xg-run's --model" },
	{ OPT_EFFORT, 0, "effort", "effort", "xg-run's --effort" },
	{ OPT_ACCOUNT, 0, "account", "name", "xg-run's --account" },
	{ OPT_VARIANT, 0, "variant", "ref", "xg-run's --variant" },
	{ OPT_ASK, 0, "ask", "command", "xg-run's --ask" },
	{ OPT_GATE, 0, "gate", "filter", "xg-run's --gate" },
	{ OPT_SLICE, 0, "work-slice", "policy", "xg-run's --work-slice" },
	{ OPT_STREAM, 0, "stream", NULL, "xg-run's --stream" },
	{ 'v', 'v', "verbose", NULL, "xg-run's -v" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-goal", "Set a goal on a conversation and drive rounds of xg-run until it settles.",
	usage, options
};

static int v_set(struct xg_opts *o, void *ctx) { (void)o; return xg_goal_set(ctx, stdout); }
static int v_get(struct xg_opts *o, void *ctx) { (void)o; return xg_goal_get(ctx, stdout); }
static int v_edit(struct xg_opts *o, void *ctx) { (void)o; return xg_goal_edit(ctx, stdout); }
static int v_pause(struct xg_opts *o, void *ctx) { (void)o; return xg_goal_pause(ctx, stdout); }
static int v_resume(struct xg_opts *o, void *ctx) { (void)o; return xg_goal_resume(ctx, stdout); }
static int v_clear(struct xg_opts *o, void *ctx) { (void)o; return xg_goal_clear(ctx, stdout); }

static const struct xg_verb verbs[] = {
	{ "set", 1, 1, v_set },
	{ "get", 0, 0, v_get },
	{ "edit", 1, 1, v_edit },
	{ "pause", 0, 0, v_pause },
	{ "resume", 0, 0, v_resume },
	{ "clear", 0, 0, v_clear },
	{ 0 }
};

static double hours_of(const char *arg)
{
	char *end;
	double h = strtod(arg, &end);

	if (!*arg || *end || !(h > 0) || h > 10000)
		xg_usage_error(&cmd, "--hours: '%s' is not a number of hours above 0", arg);
	return h;
}

int main(int argc, char **argv)
{
	struct xg_goal_opts g = { 0 };
	struct xg_opts o;
	const struct xg_verb *verb;
	const char *arg, *bad;
	int id, rc;

	xg_prog_init("xg-goal");
	xg_prog_undumpable();
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_CONV: g.conversation = arg; break;
		case OPT_ROUNDS:
			g.rounds = (long long)xg_opt_number(&cmd, "--rounds", arg, 0);
			if (g.rounds < 1 || g.rounds > 100000)
				xg_usage_error(&cmd, "--rounds: '%s' is not from 1 to 100000", arg);
			break;
		case OPT_HOURS: g.hours = hours_of(arg); break;
		case OPT_REPLACE: g.replace = 1; break;
		case OPT_NO_RUN: g.no_run = 1; break;
		case OPT_JSON: g.json = 1; break;
		case OPT_MODEL: g.model = arg; break;
		case OPT_EFFORT: g.effort = arg; break;
		case OPT_ACCOUNT: g.account = arg; break;
		case OPT_VARIANT: g.variant = arg; break;
		case OPT_ASK: g.ask = arg; break;
		case OPT_GATE: g.gate = arg; break;
		case OPT_SLICE: g.work_slice = arg; break;
		case OPT_STREAM: g.stream = 1; break;
		case 'v': g.verbose = 1; break;
		}
	}
	verb = xg_opt_verb(&o, verbs);
	if (g.conversation && !xg_conv_id_valid(g.conversation))
		xg_usage_error(&cmd, "'%s' " XG_CONV_ID_BAD, g.conversation);
	if (o.nargs > 1 && strcmp(o.args[0], "set") && strcmp(o.args[0], "edit"))
		xg_usage_error(&cmd, "'%s' takes no operand", o.args[0]);
	if (o.nargs > 1) {
		g.objective = o.args[1];
		if ((bad = xg_goal_objective_problem(g.objective)))
			xg_usage_error(&cmd, "%s", bad);
	}
	rc = verb->run(&o, &g);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
