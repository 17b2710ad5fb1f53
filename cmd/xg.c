/*
 * xg: the dispatcher.  "xg run TEXT", "xg plan TEXT" and "xg resume
 * [CONVERSATION] TEXT" run the pipeline of a run; "xg FOO ARGS" runs
 * "xg-FOO ARGS", as git runs its commands; "xg commands" lists what can be
 * run.
 */
#include "xg.h"
#include "choices/choices.h"
#include "conversation.h"
#include "dispatch/dispatch.h"
#include "exec.h"

static const char *const usage[] = {
	"xg run [--json] [--dry-run] [--model id] [--effort effort] [--account name]"
		" [--variant ref] [--conversation id] text",
	"xg plan [--json] [--dry-run] [--model id] [--effort effort] [--account name]"
		" [--variant ref] [--conversation id] text",
	"xg resume [--json] [--dry-run] [--model id] [--effort effort] [--account name]"
		" [--variant ref] [conversation] text",
	"xg compact [conversation]",
	"xg commands",
	"xg command [argument ...]",
	NULL
};

enum { OPT_ACCOUNT = 1, OPT_CONVERSATION, OPT_DRY_RUN, OPT_EFFORT, OPT_JSON, OPT_MODEL,
       OPT_VARIANT };

static const struct xg_option options[] = {
	{ OPT_ACCOUNT, 0, "account", "name", "run on this account" },
	{ OPT_CONVERSATION, 0, "conversation", "id", "go on with this conversation" },
	{ OPT_DRY_RUN, 0, "dry-run", NULL, "print the pipeline as a shell command; run nothing" },
	{ OPT_EFFORT, 0, "effort", "effort", "the reasoning effort" },
	{ OPT_JSON, 0, "json", NULL, "write the records, even to a terminal" },
	{ OPT_MODEL, 0, "model", "id", "the model, PROVIDER/MODEL" },
	{ OPT_VARIANT, 0, "variant", "ref", "the prompt variant, NAME or NAME@VERSION" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg", "Run an agent on a request, or the xg program named by command (xg-command).",
	usage, options
};

static int run_verb(const char *verb, int argc, char **argv)
{
	struct xg_dispatch_run r = { 0 };
	struct xg_opts o;
	const char *arg;
	char *text, *newest = NULL;
	int id, rc, resume = !strcmp(verb, "resume");

	r.mode = strcmp(verb, "plan") ? "normal" : "plan";
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_ACCOUNT: r.account = arg; break;
		case OPT_CONVERSATION: r.conversation = arg; break;
		case OPT_DRY_RUN: r.dry_run = 1; break;
		case OPT_EFFORT: r.effort = arg; break;
		case OPT_JSON: r.json = 1; break;
		case OPT_MODEL: r.model = arg; break;
		case OPT_VARIANT: r.variant = arg; break;
		}
	}
	if (o.nargs < 1 || o.nargs > 1 + resume)
		xg_usage_error(&cmd, "'%s' takes %s", verb,
			       resume ? "a text, after an optional conversation" : "one text");
	if (resume && o.nargs == 2) {
		if (r.conversation)
			xg_usage_error(&cmd, "name the conversation once");
		r.conversation = o.args[0];
	}
	if (r.conversation && !xg_conv_id_valid(r.conversation))
		xg_usage_error(&cmd, "'%s' " XG_CONV_ID_BAD, r.conversation);
	if (r.account && !xg_account_name_valid(r.account))
		xg_usage_error(&cmd, "'%s' " XG_ACCOUNT_NAME_BAD, r.account);
	if (resume && !r.conversation) {
		if (!(newest = xg_dispatch_newest_conversation()))
			xg_die(XG_EX_DATAERR, "there is no conversation to resume");
		r.conversation = newest;
	} else if (resume && !xg_conv_exists(r.conversation)) {
		xg_die(XG_EX_DATAERR, "there is no conversation '%s'", r.conversation);
	}
	text = strcmp(o.args[o.nargs - 1], "-") ? xg_strdup(o.args[o.nargs - 1])
						 : xg_dispatch_read_text(0);
	if (!*text)
		xg_usage_error(&cmd, "the text is empty");
	r.text = text;
	rc = xg_dispatch_run(&r);
	free(text);
	free(newest);
	xg_opt_release(&o);
	return rc;
}

int main(int argc, char **argv)
{
	const char *name;
	char *path;

	xg_prog_init("xg");
	if (argc < 2)
		xg_usage_error(&cmd, "a command is needed; 'xg commands' lists them");
	name = argv[1];
	if (!strcmp(name, "run") || !strcmp(name, "plan") || !strcmp(name, "resume"))
		return xg_prog_exit(run_verb(name, argc - 1, argv + 1));
	if (name[0] == '-') {
		/* Options of xg itself come before the command. */
		struct xg_opts o;
		const char *arg;

		xg_opt_init(&o, &cmd, 2, argv);
		while (xg_opt_next(&o, &arg) != -1)
			;
		xg_opt_release(&o);
		xg_usage_error(&cmd, "'%s' is for run, plan and resume", name);
	}
	if (!strcmp(name, "compact") && argc > 3)
		xg_usage_error(&cmd, "'compact' takes one conversation at most");
	if (!strcmp(name, "compact"))
		xg_dispatch_compact(argc == 3 ? argv[2] : NULL);
	if (!strcmp(name, "commands")) {
		static const char *const verbs[] = { "commands", "compact", "plan", "resume", "run",
						     NULL };
		xg_exec_list(stdout, verbs);
		return xg_prog_exit(0);
	}
	path = xg_exec_find(name);
	if (!path)
		xg_usage_error(&cmd, "'%s' is not an xg command; 'xg commands' lists them", name);
	argv[1] = path;
	xg_exec(path, argv + 1);
	xg_die_errno(XG_EX_SOFTWARE, "cannot run '%s'", path);
}
