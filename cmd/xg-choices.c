/*
 * xg-choices: the model catalog, accounts and their credentials, saved
 * model choices, and the start model of a conversation.
 */
#include "xg.h"
#include "account.h"
#include "catalog.h"
#include "choices.h"

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
	{ OPT_VERBOSE, 'v', "verbose", NULL, "say on stderr which saved choices were skipped and why" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-choices", "Pick the model a conversation runs on; keep an account's model choices.",
	usage, options
};

struct args {
	const char *account, *conversation, *effort, *mode, *model;
	int remove, verbose;
};

static void need_operands(struct xg_opts *o, int n, const char *what)
{
	if (o->nargs != n + 1)
		xg_usage_error(&cmd, "'%s' %s", o->args[0], what);
}

static char *current_account(const struct args *a)
{
	char *name;
	int rc = xg_account_current(a->account, "--account", &name, NULL);

	if (rc)
		exit(rc);
	return name;
}

static int write_or_die(struct xg_rec_writer *w, jv rec)
{
	if (xg_rec_write(w, rec) < 0)
		exit(xg_prog_exit(XG_EX_IOERR));
	return 0;
}

static int cmd_models(const struct args *a, struct xg_rec_writer *w)
{
	struct xg_catalog cat;
	struct xg_account_keys keys;
	char *account;
	int rc, it;

	if ((rc = xg_catalog_load(&cat)))
		return rc;
	account = current_account(a);
	xg_account_keys_init(&keys, account);
	for (it = jv_object_iter(cat.models); rc == 0 && jv_object_iter_valid(cat.models, it);
	     it = jv_object_iter_next(cat.models, it)) {
		jv m = jv_object_iter_value(cat.models, it);
		const char *prov = xg_json_string_peek(m, "provider"), *how = NULL;
		int r = xg_account_authenticated(&keys, prov,
						 xg_catalog_provider_peek(&cat, prov), &how);
		jv rec = xg_rec_new("catalog_model");

		if (r < 0) {
			rc = keys.status;
			jv_free(m);
			jv_free(rec);
			break;
		}
		jv_object_foreach(m, k, v)
			rec = jv_object_set(rec, k, v);
		rec = xg_json_set(rec, "account", jv_string(account));
		rec = xg_json_set(rec, "authenticated", r ? jv_true() : jv_false());
		rec = xg_json_set(rec, "auth", how ? jv_string(how) : jv_null());
		write_or_die(w, rec);
		jv_free(m);
	}
	xg_account_keys_release(&keys);
	xg_catalog_release(&cat);
	free(account);
	return rc;
}

static int cmd_accounts(const struct args *a, struct xg_rec_writer *w)
{
	char *current = current_account(a);
	jv names = xg_account_list();
	int i, n = xg_json_length_peek(names), seen = 0;

	for (i = 0; i < n; i++) {
		jv name = jv_array_get(jv_copy(names), i);
		int cur = !strcmp(jv_string_value(name), current);
		jv rec = xg_json_set(xg_rec_new("account"), "name", name);

		seen |= cur;
		write_or_die(w, xg_json_set(rec, "current", cur ? jv_true() : jv_false()));
	}
	if (!seen)
		write_or_die(w, xg_json_set(xg_json_set(xg_rec_new("account"), "name",
							jv_string(current)), "current", jv_true()));
	jv_free(names);
	free(current);
	return 0;
}

/* The key on standard input: one line, printable, trimmed. */
static char *read_key(void)
{
	struct xg_buf b = XG_BUF_INIT(16384);
	char chunk[1024];
	size_t i;
	ssize_t n;

	if (!xg_stdin_readable())
		xg_die(XG_EX_USAGE, "the key is read from standard input, which is a terminal or "
		       "closed; pipe it in, e.g. 'xg-choices auth openai < keyfile'");
	while ((n = read(0, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			xg_die_errno(XG_EX_IOERR, "cannot read standard input");
		if (xg_buf_add(&b, chunk, (size_t)n) < 0)
			xg_die(XG_EX_DATAERR, "the key on standard input is longer than %zu bytes",
			       b.max);
	}
	memset(chunk, 0, sizeof(chunk));
	while (b.len && isspace((unsigned char)b.buf[b.len - 1]))
		b.len--;
	b.buf[b.len] = '\0';
	for (i = 0; i < b.len; i++)
		if ((unsigned char)b.buf[i] <= ' ' || b.buf[i] == 0x7f) {
			memset(b.buf, 0, b.len);
			xg_die(XG_EX_DATAERR, "the key on standard input holds a space or a control "
			       "character at byte %zu; give the key alone", i + 1);
		}
	if (b.len == 0)
		xg_die(XG_EX_DATAERR, "no key on standard input");
	return xg_buf_detach(&b, NULL);
}

static int cmd_auth(const struct args *a, const char *provider)
{
	struct xg_catalog cat;
	char *account, *key;
	int rc;

	if ((rc = xg_catalog_load(&cat)))
		return rc;
	if (!jv_is_valid(xg_catalog_provider_peek(&cat, provider))) {
		xg_catalog_release(&cat);
		xg_error("provider '%s' is not in the model catalog", provider);
		return XG_EX_CONFIG;
	}
	xg_catalog_release(&cat);
	account = current_account(a);
	if (a->remove) {
		rc = xg_account_remove_key(account, provider);
	} else {
		key = read_key();
		rc = xg_account_store_key(account, provider, key);
		memset(key, 0, strlen(key));
		free(key);
	}
	free(account);
	return rc;
}

static int cmd_set(const struct args *a)
{
	struct xg_choices c;
	char *account;
	int rc;

	if (!a->mode || !a->model)
		xg_usage_error(&cmd, "'set' needs --mode and --model");
	if ((rc = xg_choices_init(&c, a->verbose)) == 0) {
		account = current_account(a);
		rc = xg_choices_set(&c, account, a->mode, a->model, a->effort);
		free(account);
	}
	xg_choices_release(&c);
	return rc;
}

static int cmd_get(const struct args *a, struct xg_rec_writer *w)
{
	char *account = current_account(a);
	jv choices;
	int rc = xg_choices_load(account, &choices), found = 0;

	if (rc == 0) {
		jv_object_foreach(choices, mode, e) {
			jv rec = xg_rec_new("choice");

			if (a->mode && strcmp(a->mode, jv_string_value(mode))) {
				jv_free(mode);
				jv_free(e);
				jv_free(rec);
				continue;
			}
			found = 1;
			rec = xg_json_set(rec, "account", jv_string(account));
			rec = jv_object_set(rec, jv_string("mode"), mode);
			rec = xg_json_set(rec, "model", jv_copy(xg_json_get_peek(e, "model")));
			rec = xg_json_set(rec, "effort", jv_is_valid(xg_json_get_peek(e, "effort"))
					  ? jv_copy(xg_json_get_peek(e, "effort")) : jv_null());
			rec = xg_json_set(rec, "updatedAt", jv_is_valid(xg_json_get_peek(e, "updatedAt"))
					  ? jv_copy(xg_json_get_peek(e, "updatedAt")) : jv_null());
			write_or_die(w, rec);
			jv_free(e);
		}
		jv_free(choices);
		if (a->mode && !found)
			rc = XG_EX_FAIL;
	}
	free(account);
	return rc;
}

static int cmd_resolve(const struct args *a, struct xg_rec_writer *w)
{
	struct xg_choices c;
	char *account, *notice = NULL;
	jv model;
	int rc;

	if ((rc = xg_choices_init(&c, a->verbose)) == 0) {
		account = current_account(a);
		rc = xg_choices_resolve(&c, account, a->mode ? a->mode : "normal", &model, &notice);
		if (notice)
			xg_warn("%s", notice);
		write_or_die(w, model);
		free(notice);
		free(account);
	}
	xg_choices_release(&c);
	return rc;
}

/* One request's records (notices, then its model record); the worst exit
 * code so far is kept in *worst. */
static void start_one(struct xg_choices *c, int init_rc, struct xg_choices_want *want,
		      jv request, struct xg_rec_writer *w, int *worst)
{
	jv out;
	int rc, i, n;

	if (init_rc) {
		jv m = xg_rec_new("model");
		m = xg_json_set(m, "id", jv_null());
		m = xg_json_set(m, "effort", jv_null());
		m = xg_json_set(m, "source", jv_string(want->model ? "flag" : "mode"));
		m = xg_json_set(m, "reason", jv_string("the model catalog cannot be read"));
		jv_free(request);
		out = jv_array_append(jv_array(), m);
		rc = init_rc;
	} else {
		rc = xg_choices_start(c, want, request, &out);
	}
	n = xg_json_length_peek(out);
	for (i = 0; i < n; i++)
		write_or_die(w, jv_array_get(jv_copy(out), i));
	jv_free(out);
	if (rc && !*worst)
		*worst = rc;
}

/* The filter: records pass through; each request gets its model record
 * right after it, and input without a request gets one at the end. */
static int cmd_start(const struct args *a, struct xg_rec_writer *w)
{
	struct xg_choices_want want = {
		a->account, a->mode, a->model, a->effort, a->conversation, 0
	};
	struct xg_choices c;
	struct xg_rec_reader r;
	struct xg_rec rec;
	int init_rc, worst = 0, requests = 0;

	init_rc = xg_choices_init(&c, a->verbose);
	if (xg_stdin_readable()) {
		xg_rec_reader_init(&r, 0, "standard input");
		while (xg_rec_next_or_die(&r, &rec) > 0) {
			if (xg_rec_pass(w, &rec) < 0)
				exit(xg_prog_exit(XG_EX_IOERR));
			if (rec.type && !strcmp(rec.type, "request")) {
				requests++;
				want.lineno = rec.lineno;
				start_one(&c, init_rc, &want, jv_copy(rec.v), w, &worst);
			}
			xg_rec_release(&rec);
		}
		xg_rec_reader_release(&r);
	}
	if (!requests) {
		want.lineno = 0;
		start_one(&c, init_rc, &want, jv_null(), w, &worst);
	}
	xg_choices_release(&c);
	return worst;
}

int main(int argc, char **argv)
{
	struct xg_rec_writer w;
	struct args a = { 0 };
	struct xg_opts o;
	const char *arg, *verb;
	int id, rc = 0;

	xg_prog_init("xg-choices");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_ACCOUNT: a.account = arg; break;
		case OPT_CONVERSATION: a.conversation = arg; break;
		case OPT_EFFORT: a.effort = arg; break;
		case OPT_MODE: a.mode = arg; break;
		case OPT_MODEL: a.model = arg; break;
		case OPT_REMOVE: a.remove = 1; break;
		case OPT_VERBOSE: a.verbose = 1; break;
		}
	}
	if (o.nargs < 1)
		xg_usage_error(&cmd, "a command is needed: models, accounts, auth, set, get, "
			       "resolve or start");
	verb = o.args[0];
	if (a.mode && !xg_choices_mode_valid(a.mode))
		xg_usage_error(&cmd, "'%s' is not a mode name (lowercase letters, digits, '_', '-')",
			       a.mode);
	if (a.account && !xg_account_name_valid(a.account))
		xg_usage_error(&cmd, "'%s' is not an account name (letters, digits, '.', '_', '-')",
			       a.account);
	if (a.conversation && strcmp(verb, "start"))
		xg_usage_error(&cmd, "--conversation is for 'start'");
	if (a.remove && strcmp(verb, "auth"))
		xg_usage_error(&cmd, "--remove is for 'auth'");
	xg_rec_writer_init(&w, stdout);
	if (!strcmp(verb, "models")) {
		need_operands(&o, 0, "takes no operands");
		rc = cmd_models(&a, &w);
	} else if (!strcmp(verb, "accounts")) {
		need_operands(&o, 0, "takes no operands");
		rc = cmd_accounts(&a, &w);
	} else if (!strcmp(verb, "auth")) {
		need_operands(&o, 1, "needs one provider");
		rc = cmd_auth(&a, o.args[1]);
	} else if (!strcmp(verb, "set")) {
		need_operands(&o, 0, "takes no operands");
		rc = cmd_set(&a);
	} else if (!strcmp(verb, "get")) {
		need_operands(&o, 0, "takes no operands");
		rc = cmd_get(&a, &w);
	} else if (!strcmp(verb, "resolve")) {
		need_operands(&o, 0, "takes no operands");
		rc = cmd_resolve(&a, &w);
	} else if (!strcmp(verb, "start")) {
		need_operands(&o, 0, "takes no operands");
		rc = cmd_start(&a, &w);
	} else {
		xg_usage_error(&cmd, "unknown command '%s'", verb);
	}
	xg_rec_writer_release(&w);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
