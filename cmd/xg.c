/*
 * xg: the dispatcher.  "xg run TEXT", "xg plan TEXT" and "xg resume
 * [CONVERSATION] TEXT" run the pipeline of a run, "xg compact" shortens a
 * conversation, "xg goal" runs xg-goal for a person, "xg say" sends a
 * message to a run that is going on; "xg FOO ARGS" runs
 * "xg-FOO ARGS", as git runs its commands; "xg commands" lists what can be
 * run, "xg help" tells of it.
 */
#include "xg.h"
#include "dispatch/dispatch.h"
#include "prompt/prompt.h"
#include "exec.h"

#define RUN_OPTIONS "[--json] [--quiet] [--dry-run] [--model id] [--effort effort] [--account name]" \
	" [--variant ref]"
#define RUN_LAST "[--gate filter] [--ask command] [--sandbox[=mode]] [-o file]"

static const char *const usage[] = {
	"xg run " RUN_OPTIONS " [--conversation id] " RUN_LAST " text",
	"xg plan " RUN_OPTIONS " [--conversation id] " RUN_LAST " text",
	"xg resume " RUN_OPTIONS " " RUN_LAST " [conversation] text",
	"xg resume",
	"xg compact [conversation]",
	"xg say [--conversation id | --run id] [text]",
	"xg goal [--json] verb [argument ...]",
	"xg skills [--json]",
	"xg commands",
	"xg help [command]",
	"xg version",
	"xg command [argument ...]",
	NULL
};

static const struct xg_option options[] = {
	{ XG_DISPATCH_OPT_ACCOUNT, 0, "account", "name", "run on this account" },
	{ XG_DISPATCH_OPT_ASK, 0, "ask", "command", "xg-run's --ask: what answers ask_user" },
	{ XG_DISPATCH_OPT_CONVERSATION, 0, "conversation", "id", "go on with this conversation" },
	{ XG_DISPATCH_OPT_DRY_RUN, 0, "dry-run", NULL,
	  "print the pipeline as a shell command; run nothing" },
	{ XG_DISPATCH_OPT_EFFORT, 0, "effort", "effort", "the reasoning effort" },
	{ XG_DISPATCH_OPT_GATE, 0, "gate", "filter", "xg-run's --gate: a jq filter on tool calls" },
	{ XG_DISPATCH_OPT_JSON, 0, "json", NULL, "write the records, even to a terminal" },
	{ XG_DISPATCH_OPT_MODEL, 0, "model", "id", "the model, PROVIDER/MODEL" },
	{ XG_DISPATCH_OPT_QUIET, 'q', "quiet", NULL, "no phase row on a terminal" },
	{ XG_DISPATCH_OPT_REPLY, 'o', "reply", "file", "write the final reply alone to file" },
	{ XG_DISPATCH_OPT_SANDBOX, 0, "sandbox", "[=mode]", "xg-run's --sandbox: bash under bwrap" },
	{ XG_DISPATCH_OPT_VARIANT, 0, "variant", "ref", "the prompt variant, NAME or NAME@VERSION" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg", "Run an agent on a request, or the xg program named by command (xg-command).",
	usage, options
};

/* xg skills: the skills of this directory (lib/prompt). */
static int skills(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
		  int argc, char **argv)
{
	(void)cli;
	(void)v;
	return xg_prompt_skills_main(argc, argv);
}

/* xg's own verbs; any other command is a program, xg-COMMAND. */
static const struct xg_dispatch_verb verbs[] = {
	{ "commands", "List the commands: xg's own and the xg programs found.",
	  xg_dispatch_commands },
	{ "compact", "Compact a conversation now: its older history becomes a summary.",
	  xg_dispatch_compact_verb },
	{ "goal", "Set, show or drive a goal: xg-goal, shown for a person on a terminal.",
	  xg_dispatch_goal_verb },
	{ "help", "Print the usage of xg, or of one of its commands.", xg_dispatch_help },
	{ "plan", "Ask an agent for a plan: a run in plan mode, which changes nothing.",
	  xg_dispatch_run_verb },
	{ "resume", "Go on with a conversation of this directory, or list them.",
	  xg_dispatch_run_verb },
	{ "run", "Run an agent on a request.", xg_dispatch_run_verb },
	{ "say", "Send a message to the run that holds a conversation.", xg_dispatch_say_verb },
	{ "skills", "List the skills of this directory: name, where from, description.",
	  skills },
	{ "version", "Print the version.", xg_dispatch_version },
	{ 0 }
};

int main(int argc, char **argv)
{
	const struct xg_dispatch_cli cli = { &cmd, verbs };
	const struct xg_dispatch_verb *verb;
	char *path;

	xg_prog_init("xg");
	xg_prog_undumpable();
	if (argc < 2)
		xg_usage_error(&cmd, "a command is needed; 'xg commands' lists them");
	if ((verb = xg_dispatch_verb_find(verbs, argv[1])))
		return xg_prog_exit(verb->run(&cli, verb, argc - 1, argv + 1));
	if (argv[1][0] == '-') {
		/* Options of xg itself (--help, --version) come before the
		 * command. */
		struct xg_opts o;
		const char *arg;

		xg_opt_init(&o, &cmd, 2, argv);
		while (xg_opt_next(&o, &arg) != -1)
			;
		xg_opt_release(&o);
		xg_usage_error(&cmd, "'%s' is for run, plan and resume", argv[1]);
	}
	path = xg_exec_find(argv[1]);
	if (!path)
		xg_usage_error(&cmd, "'%s' is not an xg command; 'xg commands' lists them", argv[1]);
	argv[1] = path;
	xg_exec(path, argv + 1);
	xg_die_errno(XG_EX_SOFTWARE, "cannot run '%s'", path);
}
