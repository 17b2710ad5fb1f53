/*
 * xg-choices: the model catalog, accounts and their keys, saved model
 * choices, and the start model of a conversation.
 */
#include "xg.h"
#include "choices/choices.h"
#include "conversation.h"

static const char *const usage[] = {
	"xg-choices models [--account name]",
	"xg-choices accounts",
	"xg-choices auth [--account name] [--remove] provider",
	"xg-choices set [--account name] --mode mode --model id [--effort effort]",
	"xg-choices get [--account name] [--mode mode]",
	"xg-choices resolve [-v] [--account name] [--mode mode]",
	"xg-choices start [-v] [--account name] [--mode mode] [--model id] [--effort effort] "
		"[--conversation id]",
	NULL
};

enum { OPT_ACCOUNT = 1, OPT_CONVERSATION, OPT_EFFORT, OPT_MODE, OPT_MODEL, OPT_REMOVE,
       OPT_VERBOSE };

static const struct xg_option options[] = {
	{ OPT_ACCOUNT, 0, "account", "name", "use this account (else XG_ACCOUNT, the account file, default)" },
	{ OPT_CONVERSATION, 0, "conversation", "id", "start: the conversation to resume" },
	{ OPT_EFFORT, 0, "effort", "effort", "the effort to save, or to start at" },
	{ OPT_MODE, 0, "mode", "mode", "the mode (normal, plan, ...); default normal" },
	{ OPT_MODEL, 0, "model", "id", "a model, PROVIDER/MODEL" },
	{ OPT_REMOVE, 0, "remove", NULL, "auth: remove the provider's stored key" },
	{ OPT_VERBOSE, 'v', "verbose", NULL, "say which saved choices were skipped and why" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-choices", "Pick the model a conversation runs on; keep an account's model choices.",
	usage, options
};

/* Whether verb was given with n operands after it. */
static int is(struct xg_opts *o, const char *verb, int n)
{
	if (strcmp(o->args[0], verb))
		return 0;
	if (o->nargs != n + 1)
		xg_usage_error(&cmd, "'%s' takes %s", verb, n ? "one operand" : "no operands");
	return 1;
}

int main(int argc, char **argv)
{
	struct xg_choices_want want = { 0 };
	struct xg_rec_writer w;
	struct xg_rec_reader r;
	struct xg_choices c;
	struct xg_opts o;
	const char *arg, *mode;
	char *account = NULL, *key;
	int id, rc, remove = 0, verbose = 0;

	xg_prog_init("xg-choices");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_ACCOUNT: want.account = arg; break;
		case OPT_CONVERSATION: want.conversation = arg; break;
		case OPT_EFFORT: want.effort = arg; break;
		case OPT_MODE: want.mode = arg; break;
		case OPT_MODEL: want.model = arg; break;
		case OPT_REMOVE: remove = 1; break;
		case OPT_VERBOSE: verbose = 1; break;
		}
	}
	if (o.nargs < 1)
		xg_usage_error(&cmd, "a command is needed: models, accounts, auth, set, get, "
			       "resolve or start");
	if (want.mode && !xg_conv_mode_valid(want.mode))
		xg_usage_error(&cmd, "'%s' " XG_CONV_MODE_BAD, want.mode);
	if (want.account && !xg_account_name_valid(want.account))
		xg_usage_error(&cmd, "'%s' " XG_ACCOUNT_NAME_BAD, want.account);
	if (want.conversation && !xg_conv_id_valid(want.conversation))
		xg_usage_error(&cmd, "'%s' " XG_CONV_ID_BAD, want.conversation);
	if (want.conversation && strcmp(o.args[0], "start"))
		xg_usage_error(&cmd, "--conversation is for 'start'");
	if (remove && strcmp(o.args[0], "auth"))
		xg_usage_error(&cmd, "--remove is for 'auth'");
	mode = want.mode ? want.mode : "normal";
	xg_rec_writer_init(&w, stdout);

	/* start finds its account per request; the others use one. */
	if (strcmp(o.args[0], "start") &&
	    (rc = xg_account_current(want.account, "--account", &account, NULL))) {
		xg_opt_release(&o);
		return xg_prog_exit(rc);
	}

	if (is(&o, "models", 0)) {
		rc = xg_choices_write_models(account, &w);
	} else if (is(&o, "accounts", 0)) {
		rc = xg_choices_write_accounts(account, &w);
	} else if (is(&o, "auth", 1)) {
		struct xg_catalog cat;
		if ((rc = xg_catalog_load(&cat)) == 0 &&
		    !jv_is_valid(xg_catalog_provider_peek(&cat, o.args[1]))) {
			xg_error("provider '%s' is not in the model catalog", o.args[1]);
			rc = XG_EX_CONFIG;
		}
		xg_catalog_release(&cat);
		if (rc == 0 && remove) {
			rc = xg_account_remove_key(account, o.args[1]);
		} else if (rc == 0) {
			if (!xg_stdin_readable())
				xg_die(XG_EX_USAGE, "the key is read from standard input, which is "
				       "a terminal or closed; pipe it in, e.g. 'xg-choices auth %s "
				       "< keyfile'", o.args[1]);
			if ((rc = xg_account_read_key(0, &key)) == 0) {
				rc = xg_account_store_key(account, o.args[1], key);
				memset(key, 0, strlen(key));
				free(key);
			}
		}
	} else if (is(&o, "set", 0)) {
		if (!want.mode || !want.model)
			xg_usage_error(&cmd, "'set' needs --mode and --model");
		if ((rc = xg_choices_init(&c, verbose)) == 0)
			rc = xg_choices_set(&c, account, want.mode, want.model, want.effort);
		xg_choices_release(&c);
	} else if (is(&o, "get", 0)) {
		rc = xg_choices_write_saved(account, want.mode, &w);
	} else if (is(&o, "resolve", 0)) {
		char *notice = NULL;
		jv model;
		if ((rc = xg_choices_init(&c, verbose)) == 0) {
			rc = xg_choices_resolve(&c, account, mode, &model, &notice);
			if (notice)
				xg_warn("%s", notice);
			if (xg_rec_write(&w, model) < 0)
				rc = XG_EX_IOERR;
			free(notice);
		}
		xg_choices_release(&c);
	} else if (is(&o, "start", 0)) {
		int readable = xg_stdin_readable();
		if (readable)
			xg_rec_reader_init(&r, 0, "standard input");
		rc = xg_choices_init(&c, verbose);
		rc = xg_choices_filter(&c, rc, &want, readable ? &r : NULL, &w);
		if (readable)
			xg_rec_reader_release(&r);
		xg_choices_release(&c);
	} else {
		xg_usage_error(&cmd, "unknown command '%s'", o.args[0]);
	}
	free(account);
	xg_rec_writer_release(&w);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
