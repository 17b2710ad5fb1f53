/*
 * xg-choices: the model catalog, accounts and their keys, saved model
 * choices, and the start model of a conversation.
 */
#include "xg.h"
#include "choices/choices.h"

static const char *const usage[] = {
	"xg-choices models [--account name] [--probe provider] [--json]",
	"xg-choices accounts [--json]",
	"xg-choices auth [--account name] [--remove] provider",
	"xg-choices set [--account name] [--mode mode] --model id [--effort effort]",
	"xg-choices get [--account name] [--mode mode] [--json]",
	"xg-choices resolve [-v] [--account name] [--mode mode]",
	"xg-choices start [-v] [--account name] [--mode mode] [--model id] [--effort effort] "
		"[--conversation id]",
	NULL
};

enum { OPT_ACCOUNT = 1, OPT_CONVERSATION, OPT_EFFORT, OPT_JSON, OPT_MODE, OPT_MODEL, OPT_PROBE,
	OPT_REMOVE, OPT_VERBOSE };

static const struct xg_option options[] = {
	{ OPT_ACCOUNT, 0, "account", "name", "use this account (else XG_ACCOUNT, the account file, default)" },
	{ OPT_CONVERSATION, 0, "conversation", "id", "start: the conversation to resume" },
	{ OPT_EFFORT, 0, "effort", "effort", "the effort to save, or to start at" },
	{ OPT_JSON, 0, "json", NULL, "models, get, accounts: records even on a terminal" },
	{ OPT_MODE, 0, "mode", "mode", "normal or plan; default normal (get: every mode)" },
	{ OPT_MODEL, 0, "model", "id", "a model, PROVIDER/MODEL" },
	{ OPT_PROBE, 0, "probe", "provider", "models: list the models provider's server serves" },
	{ OPT_REMOVE, 0, "remove", NULL, "auth: remove the provider's stored key" },
	{ OPT_VERBOSE, 'v', "verbose", NULL, "say which saved choices were skipped and why" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-choices", "Pick the model a conversation runs on; keep an account's model choices.",
	usage, options
};

struct args {
	struct xg_choices_want want;
	const char *probe;
	int remove, verbose, json;
	char *account;		/* NULL for start, which finds one per request */
	struct xg_rec_writer w;
};

static int models(struct xg_opts *o, void *ctx)
{
	struct args *a = ctx;

	return a->probe ? xg_catalog_probe(a->account, a->probe, &a->w)
			: xg_catalog_write_models(a->account, &a->w);
}

static int accounts(struct xg_opts *o, void *ctx)
{
	struct args *a = ctx;

	return xg_account_write_list(a->account, &a->w);
}

static int auth(struct xg_opts *o, void *ctx)
{
	struct args *a = ctx;

	return xg_account_auth(a->account, o->args[1], a->remove);
}

static int set(struct xg_opts *o, void *ctx)
{
	struct args *a = ctx;

	if (!a->want.model)
		xg_usage_error(&cmd, "'set' needs --model");
	return xg_choices_set(a->account, a->want.mode, a->want.model, a->want.effort);
}

static int get(struct xg_opts *o, void *ctx)
{
	struct args *a = ctx;

	return xg_choices_write_saved(a->account, a->want.mode, &a->w);
}

static int resolve(struct xg_opts *o, void *ctx)
{
	struct args *a = ctx;

	return xg_choices_write_resolved(a->account, a->want.mode, a->verbose, &a->w);
}

static int start(struct xg_opts *o, void *ctx)
{
	struct args *a = ctx;

	return xg_choices_filter(&a->want, a->verbose, xg_stdin_readable() ? 0 : -1, &a->w);
}

static const struct xg_verb verbs[] = {
	{ "models", 0, 0, models },
	{ "accounts", 0, 0, accounts },
	{ "auth", 1, 1, auth },
	{ "set", 0, 0, set },
	{ "get", 0, 0, get },
	{ "resolve", 0, 0, resolve },
	{ "start", 0, 0, start },
	{ 0 }
};

int main(int argc, char **argv)
{
	struct args a = { 0 };
	struct xg_choices_view view;
	struct xg_opts o;
	const char *arg;
	char *bad;
	int id, rc = 0;

	xg_prog_init("xg-choices");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_ACCOUNT: a.want.account = arg; break;
		case OPT_CONVERSATION: a.want.conversation = arg; break;
		case OPT_EFFORT: a.want.effort = arg; break;
		case OPT_JSON: a.json = 1; break;
		case OPT_MODE: a.want.mode = arg; break;
		case OPT_MODEL: a.want.model = arg; break;
		case OPT_PROBE: a.probe = arg; break;
		case OPT_REMOVE: a.remove = 1; break;
		case OPT_VERBOSE: a.verbose = 1; break;
		}
	}
	/* Options and account come before the verb: a bad one is named first. */
	if (o.nargs > 0 && (bad = xg_choices_misused(&a.want, o.args[0], a.probe, a.remove)))
		xg_usage_error(&cmd, "%s", bad);
	if (o.nargs > 0 && strcmp(o.args[0], "start"))
		rc = xg_account_current(a.want.account, "--account", &a.account, NULL);
	xg_rec_writer_init(&a.w, xg_choices_view_open(&view, o.nargs ? o.args[0] : NULL, stdout,
						      a.json));
	if (rc == 0)
		rc = xg_opt_verb(&o, verbs)->run(&o, &a);
	xg_rec_writer_release(&a.w);
	rc = xg_choices_view_close(&view, rc);
	free(a.account);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
