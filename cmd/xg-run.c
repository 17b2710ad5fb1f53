/*
 * xg-run: the agent loop.  Reads the request (an operand, or the records
 * of the pipeline), talks to the model, runs its tool calls, and writes the
 * run's records.
 */
#include "xg.h"
#include "conversation.h"
#include "prompt/prompt.h"
#include "run/run.h"
#include <sys/prctl.h>

static const char *const usage[] = {
	"xg-run [-v] [--stream] [--conversation id] [--model model] [--effort effort] "
	"[--account name] [--variant ref] [--mode mode] [--ask command] [--gate filter] "
	"[--work-slice policy] [--sandbox[=mode]] [--profile name] [--parent run] [--run-id id] "
	"[request]",
	"xg-run --compact --conversation id [-v] [--model model] [--effort effort] "
	"[--account name] [--variant ref]",
	"xg-run --settings [--work-slice policy]",
	NULL
};

enum { OPT_STREAM = 1, OPT_CONV, OPT_MODEL, OPT_EFFORT, OPT_ACCOUNT, OPT_VARIANT,
       OPT_MODE, OPT_ASK, OPT_GATE, OPT_SLICE, OPT_COMPACT, OPT_PROFILE, OPT_PARENT,
       OPT_RUN_ID, OPT_SANDBOX, OPT_SETTINGS };

static const struct xg_option options[] = {
	{ 'v', 'v', "verbose", NULL, "say on stderr which upstream records were computed" },
	{ OPT_STREAM, 0, "stream", NULL, "write text records as the reply streams" },
	{ OPT_CONV, 0, "conversation", "id", "continue (or start) this conversation" },
	{ OPT_MODEL, 0, "model", "model", "run on this model (PROVIDER/MODEL)" },
	{ OPT_EFFORT, 0, "effort", "effort", "the reasoning effort" },
	{ OPT_ACCOUNT, 0, "account", "name", "the account whose choices and keys to use" },
	{ OPT_VARIANT, 0, "variant", "ref", "the prompt variant, NAME or NAME@VERSION" },
	{ OPT_MODE, 0, "mode", "mode", "the mode: normal, plan, or another mode name" },
	{ OPT_ASK, 0, "ask", "command", "a command that answers ask_user questions" },
	{ OPT_GATE, 0, "gate", "filter", "a jq filter that allows or refuses each tool call" },
	{ OPT_SLICE, 0, "work-slice", "policy", "off, or maxToolCalls=N,maxMinutes=M,maxSlices=K" },
	{ OPT_COMPACT, 0, "compact", NULL, "compact the conversation now; no request" },
	{ OPT_SETTINGS, 0, "settings", NULL, "print the policies in force and where each came from; no run" },
	{ OPT_SANDBOX, 0, "sandbox", "[=mode]", "run bash in the sandbox: on, net (with the network) or off" },
	{ OPT_PROFILE, 0, "profile", "name", "offer only the tools of a profile: explore, worker" },
	{ OPT_PARENT, 0, "parent", "run", "run as a subagent of this run" },
	{ OPT_RUN_ID, 0, "run-id", "id", "the run's id, instead of a new one" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-run", "Run the agent loop on a request.", usage, options
};

int main(int argc, char **argv)
{
	struct xg_opts o;
	struct xg_run_opts ro = { 0 };
	const char *arg;
	int id, rc, settings = 0;

	xg_prog_init("xg-run");
	xg_prog_undumpable();
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case 'v': ro.verbose = 1; break;
		case OPT_STREAM: ro.stream = 1; break;
		case OPT_CONV: ro.conversation = arg; break;
		case OPT_MODEL: ro.model = arg; break;
		case OPT_EFFORT: ro.effort = arg; break;
		case OPT_ACCOUNT: ro.account = arg; break;
		case OPT_VARIANT: ro.variant = arg; break;
		case OPT_MODE: ro.mode = arg; break;
		case OPT_ASK: ro.ask = arg; break;
		case OPT_GATE: ro.gate = arg; break;
		case OPT_SLICE: ro.work_slice = arg; break;
		case OPT_COMPACT: ro.compact = 1; break;
		case OPT_PROFILE: ro.profile = arg; break;
		case OPT_PARENT: ro.parent = arg; break;
		case OPT_RUN_ID: ro.run_id = arg; break;
		case OPT_SANDBOX: ro.sandbox = arg ? arg : "on"; break;
		case OPT_SETTINGS: settings = 1; break;
		}
	}
	if (settings && (o.nargs || ro.compact))
		xg_usage_error(&cmd, "--settings takes no request and no --compact");
	if (settings) {
		rc = xg_run_settings(&ro, stdout);
		xg_opt_release(&o);
		return xg_prog_exit(rc);
	}
	if (o.nargs > 1)
		xg_usage_error(&cmd, "give the request as one operand (quote it)");
	if (ro.conversation && !xg_conv_id_valid(ro.conversation))
		xg_usage_error(&cmd, "'%s' " XG_CONV_ID_BAD, ro.conversation);
	if (ro.profile && strcmp(ro.profile, "explore") && strcmp(ro.profile, "worker"))
		xg_usage_error(&cmd, "--profile is explore or worker, not '%s'", ro.profile);
	if ((ro.parent && !xg_conv_id_valid(ro.parent)) || (ro.run_id && !xg_conv_id_valid(ro.run_id)))
		xg_usage_error(&cmd, "'%s' " XG_CONV_ID_BAD, ro.run_id && !xg_conv_id_valid(ro.run_id) ?
			       ro.run_id : ro.parent);
	if (ro.mode && !xg_conv_mode_valid(ro.mode))
		xg_usage_error(&cmd, "'%s' " XG_CONV_MODE_BAD, ro.mode);
	if (ro.sandbox && strcmp(ro.sandbox, "on") && strcmp(ro.sandbox, "net") &&
	    strcmp(ro.sandbox, "off"))
		xg_usage_error(&cmd, "--sandbox takes on, net or off, not '%s'", ro.sandbox);
	if (ro.compact && (o.nargs || !ro.conversation))
		xg_usage_error(&cmd, "--compact takes --conversation and no request");
	if (o.nargs == 1 && strcmp(o.args[0], "-"))
		ro.text = o.args[0];
	else if (!ro.compact)
		ro.read_stdin = (o.nargs == 1) || xg_stdin_readable();
	rc = xg_run(&ro, stdout);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
