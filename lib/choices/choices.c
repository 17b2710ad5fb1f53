#include "xg.h"
#include "choices/choices.h"
#include "conversation.h"
#include "jsonfile.h"

int xg_choices_init(struct xg_choices *c, int verbose)
{
	memset(c, 0, sizeof(*c));
	c->verbose = verbose;
	return xg_catalog_load(&c->cat);
}

void xg_choices_release(struct xg_choices *c)
{
	xg_catalog_release(&c->cat);
}

/* Checks one mode's entry; -1 after naming what is wrong. */
static int check_entry(const char *path, const char *mode, jv e)
{
	const char *model = xg_json_string_peek(e, "model");
	jv effort = xg_json_get_peek(e, "effort"), at = xg_json_get_peek(e, "updatedAt");
	int64_t ms;

	if (!xg_conv_mode_valid(mode))
		return xg_error("'%s': '%s' " XG_CONV_MODE_BAD,
				path, mode);
	if (jv_get_kind(e) != JV_KIND_OBJECT)
		return xg_error("'%s': mode '%s' must be an object", path, mode);
	if (!model || !xg_catalog_id_valid(model))
		return xg_error("'%s': mode '%s': 'model' must be a PROVIDER/MODEL string",
				path, mode);
	if (jv_is_valid(effort) && jv_get_kind(effort) != JV_KIND_NULL &&
	    jv_get_kind(effort) != JV_KIND_STRING)
		return xg_error("'%s': mode '%s': 'effort' must be a string or null", path, mode);
	if (jv_is_valid(at) && (jv_get_kind(at) != JV_KIND_STRING ||
				xg_clock_parse_rfc3339(jv_string_value(at), &ms) < 0))
		return xg_error("'%s': mode '%s': 'updatedAt' must be an RFC 3339 time", path, mode);
	return 0;
}

static int load_choices(const char *path, jv *choices)
{
	int rc = xg_jsonfile_read(path, choices);

	if (rc)
		return rc;
	if (jv_get_kind(*choices) == JV_KIND_NULL) {
		*choices = jv_object();
		return 0;
	}
	jv_object_foreach(*choices, mode, e) {
		if (rc == 0 && check_entry(path, jv_string_value(mode), e) < 0)
			rc = XG_EX_CONFIG;
		jv_free(mode);
		jv_free(e);
	}
	if (rc) {
		jv_free(*choices);
		*choices = jv_null();
	}
	return rc;
}

int xg_choices_load(const char *account, jv *choices)
{
	char *path = xg_account_path(account, "choices.json");
	int rc = load_choices(path, choices);

	free(path);
	return rc;
}

int xg_choices_set(struct xg_choices *c, const char *account, const char *mode,
		   const char *model, const char *effort)
{
	jv entry = xg_catalog_model_peek(&c->cat, model), choices = jv_null(), e;
	char *path = NULL;
	struct xg_buf out = XG_BUF_INIT(0);
	char at[25];
	int fd = -1, rc = XG_EX_CONFIG;

	if (!xg_conv_mode_valid(mode)) {
		xg_error("'%s' " XG_CONV_MODE_BAD, mode);
		return XG_EX_USAGE;
	}
	if (!jv_is_valid(entry)) {
		xg_error("model '%s' is not offered by the catalog ('xg-choices models' lists "
			 "them)", model);
		return XG_EX_CONFIG;
	}
	if (effort && !xg_catalog_accepts_effort(entry, effort)) {
		char *list = xg_catalog_efforts_text(entry);
		xg_error("model '%s' does not accept effort '%s'; it accepts: %s", model, effort,
			 list);
		free(list);
		return XG_EX_CONFIG;
	}
	path = xg_account_path(account, "choices.json");
	fd = xg_account_lock(account, "choices.json");
	if (fd < 0) {
		rc = -fd;
		goto out;
	}
	if ((rc = load_choices(path, &choices)))
		goto out;	/* a broken file stays as it is */
	xg_clock_rfc3339(xg_clock_wall_ms(), at);
	e = xg_json_set(jv_object(), "model", jv_string(model));
	e = xg_json_set(e, "effort", effort ? jv_string(effort) : jv_null());
	e = xg_json_set(e, "updatedAt", jv_string(at));
	choices = xg_json_set(choices, mode, e);
	{
		jv text = jv_dump_string(choices, JV_PRINT_INDENT_FLAGS(2));
		xg_buf_addstr(&out, jv_string_value(text));
		xg_buf_addch(&out, '\n');
		jv_free(text);
		choices = jv_null();
	}
	rc = xg_write_atomic(path, out.buf, out.len, 0644) < 0 ? XG_EX_IOERR : 0;
out:
	if (fd >= 0)
		close(fd);
	jv_free(choices);
	xg_buf_release(&out);
	free(path);
	return rc;
}

/* ---- resolution ---- */

struct cand {
	const char *mode;
	jv e;		/* borrowed from the choices object */
	int64_t at;
};

static int newest_first(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;

	if (a->at != b->at)
		return a->at > b->at ? -1 : 1;
	return strcmp(a->mode, b->mode);
}

/*
 * The candidates for mode, in order: mode's, normal's, then the others
 * newest first.  They borrow from choices (the object keeps a reference to
 * every key and value, so the strings live as long as it does).
 */
static struct cand *candidates(jv choices, const char *mode, size_t *n)
{
	struct cand *v = NULL, tmp;
	size_t alloc = 0, first = 0, i;

	*n = 0;
	jv_object_foreach(choices, key, e) {
		const char *at = xg_json_string_peek(e, "updatedAt");

		XG_ALLOC_GROW(v, *n + 1, alloc);
		v[*n].mode = jv_string_value(key);
		v[*n].e = xg_json_get_peek(choices, jv_string_value(key));
		v[*n].at = -1;
		if (at)
			xg_clock_parse_rfc3339(at, &v[*n].at);
		(*n)++;
		jv_free(key);
		jv_free(e);
	}
	/* mode first, then normal, then the rest by time. */
	for (i = 0; i < *n; i++)
		if (!strcmp(v[i].mode, mode)) {
			tmp = v[first], v[first] = v[i], v[i] = tmp;
			first++;
			break;
		}
	for (i = first; i < *n && strcmp(mode, "normal"); i++)
		if (!strcmp(v[i].mode, "normal")) {
			tmp = v[first], v[first] = v[i], v[i] = tmp;
			first++;
			break;
		}
	if (*n > first)
		qsort(v + first, *n - first, sizeof(*v), newest_first);
	return v;
}

/* What resolution works with: the account's keys and choices. */
struct ctx {
	struct xg_choices *c;
	const char *account;
	struct xg_account_keys keys;
	jv choices;
	struct cand *cands;
	size_t ncands;
	jv skipped;		/* [{mode, id, reason}] */
};

static int ctx_init(struct ctx *x, struct xg_choices *c, const char *account, const char *mode)
{
	int rc;

	memset(x, 0, sizeof(*x));
	x->c = c;
	x->account = account;
	x->skipped = jv_array();
	xg_account_keys_init(&x->keys, account);
	rc = xg_choices_load(account, &x->choices);
	if (rc == 0)
		x->cands = candidates(x->choices, mode ? mode : "normal", &x->ncands);
	return rc;
}

static void ctx_release(struct ctx *x)
{
	free(x->cands);
	jv_free(x->choices);
	jv_free(x->skipped);
	xg_account_keys_release(&x->keys);
}

/*
 * Whether model id can be used by the account: 1, or 0 with *why saying
 * why not (the caller frees it), or -1 with *why set and *code the exit
 * code when auth.json was refused.
 */
static int usable(struct ctx *x, const char *id, char **why, int *code)
{
	jv m = xg_catalog_model_peek(&x->c->cat, id);
	const char *prov, *env;
	int r;

	*why = NULL;
	if (!jv_is_valid(m)) {
		*why = xg_asprintf("'%s' is not offered by the catalog", id);
		*code = XG_EX_CONFIG;
		return 0;
	}
	prov = xg_json_string_peek(m, "provider");
	r = xg_account_authenticated(&x->keys, prov, xg_catalog_provider_peek(&x->c->cat, prov),
				     NULL);
	if (r > 0)
		return 1;
	if (r < 0) {
		*why = xg_asprintf("the credentials of account '%s' cannot be read (%s)",
				   x->account, x->keys.path);
		*code = x->keys.status;
		return -1;
	}
	env = xg_json_string_peek(m, "key_env");
	*why = xg_asprintf("account '%s' has no credentials for provider '%s' (set %s, or run "
			   "'xg-choices auth %s')", x->account, prov, env ? env : "its key", prov);
	*code = XG_EX_NOPERM;
	return 0;
}

/* The effort for model: the first of the candidates from index from on
 * that it accepts, else its default (null for a model that takes none).
 * *src names where it came from: a mode, or "default". */
static jv pick_effort(struct ctx *x, jv model, size_t from, const char **src)
{
	const char *def = xg_catalog_default_effort_peek(model);
	size_t i;

	*src = "default";
	if (!def)
		return jv_null();
	for (i = from; i < x->ncands; i++) {
		const char *e = xg_json_string_peek(x->cands[i].e, "effort");
		if (e && xg_catalog_accepts_effort(model, e)) {
			*src = x->cands[i].mode;
			return jv_string(e);
		}
	}
	return jv_string(def);
}

/* A model record for catalog entry m (borrowed) at effort (consumed). */
static jv model_record(jv m, jv effort, const char *source, const char *account,
		       const char *mode)
{
	static const char *const fields[] = {
		"provider", "name", "kind", "base_url", "context_window", "max_output_tokens", NULL
	};
	jv r = xg_rec_new("model");
	int i;

	r = xg_json_set(r, "id", jv_copy(xg_json_get_peek(m, "id")));
	for (i = 0; fields[i]; i++)
		r = xg_json_set(r, fields[i], jv_copy(xg_json_get_peek(m, fields[i])));
	if (jv_is_valid(xg_json_get_peek(m, "dialect")))
		r = xg_json_set(r, "dialect", jv_copy(xg_json_get_peek(m, "dialect")));
	r = xg_json_set(r, "effort", effort);
	r = xg_json_set(r, "source", jv_string(source));
	r = xg_json_set(r, "account", jv_string(account));
	return xg_json_set(r, "mode", jv_string(mode));
}

/* The record for no usable model: "id": null and the reason. */
static jv null_record(const char *source, const char *account, const char *mode,
		      const char *reason)
{
	jv r = xg_rec_new("model");

	r = xg_json_set(r, "id", jv_null());
	r = xg_json_set(r, "provider", jv_null());
	r = xg_json_set(r, "effort", jv_null());
	r = xg_json_set(r, "source", jv_string(source));
	r = xg_json_set(r, "account", account ? jv_string(account) : jv_null());
	r = xg_json_set(r, "mode", jv_string(mode));
	return xg_json_set(r, "reason", jv_string(reason));
}

static void skip(struct ctx *x, const char *mode, const char *id, const char *why)
{
	jv s = jv_object();

	s = xg_json_set(s, "mode", mode ? jv_string(mode) : jv_null());
	s = xg_json_set(s, "id", jv_string(id));
	s = xg_json_set(s, "reason", jv_string(why));
	x->skipped = jv_array_append(x->skipped, s);
	if (x->c->verbose)
		xg_warn("skipped %s%s%s: %s", id, mode ? ", saved for mode " : "", mode ? mode : "",
			why);
}

/*
 * Resolves mode for the account into *out (a model record with source).
 * *notice is set when the catalog's first usable model had to be used.
 * Returns 0 or an exit code (and then *out has "id": null).
 */
static int resolve(struct ctx *x, const char *mode, const char *source, jv *out, char **notice)
{
	const char *src;
	char *why = NULL;
	size_t i;
	int code = 0, r, it;
	jv models;

	*notice = NULL;
	for (i = 0; i < x->ncands; i++) {
		const char *id = xg_json_string_peek(x->cands[i].e, "model");
		jv m, effort;

		r = usable(x, id, &why, &code);
		if (r < 0)
			goto refused;
		if (r == 0) {
			skip(x, x->cands[i].mode, id, why);
			free(why);
			continue;
		}
		m = xg_catalog_model_peek(&x->c->cat, id);
		effort = pick_effort(x, m, i, &src);
		*out = model_record(m, effort, source, x->account, mode);
		*out = xg_json_set(*out, "choice", jv_string(x->cands[i].mode));
		*out = xg_json_set(*out, "effort_from", jv_string(src));
		goto done;
	}
	/* No usable saved selection: the catalog's first usable model. */
	models = x->c->cat.models;
	for (it = jv_object_iter(models); jv_object_iter_valid(models, it);
	     it = jv_object_iter_next(models, it)) {
		jv key = jv_object_iter_key(models, it);
		const char *id = jv_string_value(key), *def;
		jv m;

		jv_free(key);	/* models holds the string too */
		r = usable(x, id, &why, &code);
		if (r < 0)
			goto refused;
		free(why);
		why = NULL;
		if (r == 0)
			continue;
		m = xg_catalog_model_peek(&x->c->cat, id);
		def = xg_catalog_default_effort_peek(m);
		*out = model_record(m, def ? jv_string(def) : jv_null(), source, x->account, mode);
		*out = xg_json_set(*out, "choice", jv_null());
		*out = xg_json_set(*out, "effort_from", jv_string("default"));
		*notice = xg_asprintf("account '%s' has no usable saved model for mode '%s'; "
				      "using %s%s%s%s, the first model of the catalog it can use",
				      x->account, mode, id, def ? " (" : "", def ? def : "",
				      def ? ")" : "");
		goto done;
	}
	if (xg_json_length_peek(x->c->cat.models) == 0) {
		*out = null_record(source, x->account, mode, "the model catalog offers no model");
		xg_error("the model catalog offers no model ('%s')", x->c->cat.user_path);
		return XG_EX_CONFIG;
	}
	why = xg_asprintf("account '%s' has no credentials for any provider of the catalog "
			  "(set a provider's key variable, or run 'xg-choices auth PROVIDER')",
			  x->account);
	*out = null_record(source, x->account, mode, why);
	xg_error("%s", why);
	free(why);
	return XG_EX_NOPERM;
refused:
	*out = null_record(source, x->account, mode, why);
	free(why);
	return code;
done:
	if (x->c->verbose)
		*out = xg_json_set(*out, "skipped", jv_copy(x->skipped));
	return 0;
}

int xg_choices_resolve(struct xg_choices *c, const char *account, const char *mode,
		       jv *model, char **notice)
{
	struct ctx x;
	int rc;

	*notice = NULL;
	if ((rc = ctx_init(&x, c, account, mode))) {
		*model = null_record("mode", account, mode, "the saved choices cannot be read");
	} else {
		rc = resolve(&x, mode, "mode", model, notice);
		if (c->verbose && !jv_is_valid(xg_json_get_peek(*model, "skipped")))
			*model = xg_json_set(*model, "skipped", jv_copy(x.skipped));
	}
	ctx_release(&x);
	return rc;
}

/* ---- the start model of a conversation ---- */

/* request's string field, or NULL; -1 in *bad (reported) for another kind. */
static const char *req_string(jv request, const char *field, size_t lineno, int *bad)
{
	jv v = xg_json_get_peek(request, field);

	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL)
		return NULL;
	if (jv_get_kind(v) == JV_KIND_STRING)
		return jv_string_value(v);
	if (!*bad) {
		if (lineno)
			xg_error("request on line %zu: '%s' must be a string, not %s", lineno, field,
				 xg_json_kind_peek(v));
		else
			xg_error("request: '%s' must be a string, not %s", field, xg_json_kind_peek(v));
	}
	*bad = 1;
	return NULL;
}

static jv notice_record(const char *text)
{
	jv n = xg_rec_new("notice");

	n = xg_json_set(n, "from", jv_string("xg-choices"));
	return xg_json_set(n, "text", jv_string(text));
}

/* "id (effort)" or "id" for messages; the caller frees it. */
static char *with_effort(const char *id, jv effort)
{
	if (jv_get_kind(effort) == JV_KIND_STRING)
		return xg_asprintf("%s (%s)", id, jv_string_value(effort));
	return xg_strdup(id);
}

/* The effort to keep for model m: wanted when it accepts it, else the
 * resolution's. */
static jv keep_effort(struct ctx *x, jv m, jv wanted, const char **src)
{
	if (jv_get_kind(wanted) == JV_KIND_STRING &&
	    xg_catalog_accepts_effort(m, jv_string_value(wanted))) {
		*src = NULL;
		return jv_copy(wanted);
	}
	return pick_effort(x, m, 0, src);
}

static int start_explicit(struct ctx *x, const char *mode, const char *id, const char *effort,
			  jv last, jv *out)
{
	char *why = NULL;
	const char *src = NULL;
	int code = 0, r = usable(x, id, &why, &code);
	jv m, e;

	if (r <= 0) {
		xg_error("cannot start on %s: %s", id, why);
		*out = null_record("flag", x->account, mode, why);
		*out = xg_json_set(*out, "requested", jv_string(id));
		free(why);
		return code;
	}
	m = xg_catalog_model_peek(&x->c->cat, id);
	if (effort && !xg_catalog_accepts_effort(m, effort)) {
		char *list = xg_catalog_efforts_text(m);
		why = xg_asprintf("model '%s' does not accept effort '%s'; it accepts: %s", id,
				  effort, list);
		xg_error("%s", why);
		*out = null_record("flag", x->account, mode, why);
		*out = xg_json_set(*out, "requested", jv_string(id));
		free(list);
		free(why);
		return XG_EX_CONFIG;
	}
	if (effort) {
		e = jv_string(effort);
	} else {
		const char *lid = xg_json_string_peek(last, "id");
		e = lid && !strcmp(lid, id) ? keep_effort(x, m, xg_json_get_peek(last, "effort"), &src)
					    : pick_effort(x, m, 0, &src);
	}
	*out = model_record(m, e, "flag", x->account, mode);
	return 0;
}

/* What the fallback checks under the conversation's lock: that the
 * conversation still ends on the model it decided to replace. */
struct still {
	const char *from;
	jv now;			/* the conversation's last model, when it is another */
};

static int still_on(const char *id, void *ctx)
{
	struct still *s = ctx;
	jv now = xg_conv_last_model(id, NULL);
	const char *nid = xg_json_string_peek(now, "id");

	if (!jv_is_valid(now))
		return -1;
	if (nid && !strcmp(nid, s->from)) {
		jv_free(now);
		return 1;
	}
	jv_free(s->now);
	s->now = now;
	return 0;
}

/* start_fallback's answer when another writer changed the conversation's
 * model first: decide again from *now. */
#define START_AGAIN (-1)

/*
 * The conversation's model could not be used: start on the resolution, and
 * record the change in the conversation.  The record is appended only when
 * the conversation still ends on that model, checked under its lock, so
 * concurrent starts record one change; when it no longer does, returns
 * START_AGAIN with *now the model it ends on.
 */
static int start_fallback(struct ctx *x, const char *mode, const char *conv, jv last,
			  const char *why, jv *out, char **notice, jv *now)
{
	const char *from = xg_json_string_peek(last, "id");
	jv effort = xg_json_get_peek(last, "effort"), replaced = jv_object(), change;
	struct still st = { from, jv_null() };
	char *old, *catalog_note = NULL, *to;
	int rc, a, aerr;

	rc = resolve(x, mode, "fallback", out, &catalog_note);
	replaced = xg_json_set(replaced, "id", jv_string(from));
	replaced = xg_json_set(replaced, "effort", jv_copy(effort));
	replaced = xg_json_set(replaced, "reason", jv_string(why));
	*out = xg_json_set(*out, "replaced", replaced);
	if (rc) {
		free(catalog_note);
		return rc;
	}
	change = xg_rec_new("model_change");
	change = xg_json_set(change, "from", jv_string(from));
	change = xg_json_set(change, "to", jv_copy(xg_json_get_peek(*out, "id")));
	change = xg_json_set(change, "effort", jv_copy(xg_json_get_peek(*out, "effort")));
	change = xg_json_set(change, "reason", jv_string(why));
	a = xg_conv_append_if(conv, change, still_on, &st);
	aerr = errno;
	if (a == 1) {
		jv_free(*out);
		*out = jv_invalid();
		free(catalog_note);
		*now = st.now;
		return START_AGAIN;
	}
	jv_free(st.now);
	old = with_effort(from, effort);
	to = with_effort(xg_json_string_peek(*out, "id"), xg_json_get_peek(*out, "effort"));
	*notice = xg_asprintf("conversation %s ran on %s, which cannot be used now: %s; it "
			      "continues on %s, %s", conv, old, why, to,
			      catalog_note ? "the first model of the catalog this account can use "
			      "(no saved choice is usable)" : "the account's newest saved choice");
	free(old);
	free(to);
	free(catalog_note);
	return a < 0 ? xg_exit_for_errno(aerr) : 0;
}

static int start_conversation(struct ctx *x, const char *mode, const char *conv, jv last,
			      jv *out, char **notice)
{
	const char *id, *src;
	char *why = NULL;
	int code = 0, r, tries;

	last = jv_copy(last);
	for (tries = 0; ; tries++) {
		jv now = jv_null();

		if (jv_get_kind(last) == JV_KIND_NULL) {
			/* The history no longer names a model. */
			r = resolve(x, mode, "mode", out, notice);
			break;
		}
		id = xg_json_string_peek(last, "id");
		r = usable(x, id, &why, &code);
		if (r < 0) {
			xg_error("cannot decide the model of conversation %s: %s", conv, why);
			*out = null_record("history", x->account, mode, why);
			free(why);
			r = code;
			break;
		}
		if (r > 0) {
			jv m = xg_catalog_model_peek(&x->c->cat, id);
			*out = model_record(m, keep_effort(x, m, xg_json_get_peek(last, "effort"),
							   &src), "history", x->account, mode);
			r = 0;
			break;
		}
		r = start_fallback(x, mode, conv, last, why, out, notice, &now);
		free(why);
		why = NULL;
		if (r != START_AGAIN)
			break;
		jv_free(last);
		last = now;
		if (tries == 16) {
			/* Others keep changing it: give up as on a busy lock. */
			xg_error("the model of conversation %s keeps changing; try again", conv);
			*out = null_record("fallback", x->account, mode,
					   "the conversation's model keeps changing");
			r = XG_EX_TEMPFAIL;
			break;
		}
	}
	jv_free(last);
	return r;
}

/* Applies an effort asked for without a model to the started model *out
 * when that model accepts it; else returns a notice's text saying why it
 * was not applied (the caller frees it). */
static char *apply_effort(struct xg_choices *c, jv *out, const char *effort, const char *from)
{
	const char *id = xg_json_string_peek(*out, "id");
	jv m;
	char *list, *text;

	if (!id)
		return xg_asprintf("effort '%s' (%s) was not applied: no model could be started",
				   effort, from);
	m = xg_catalog_model_peek(&c->cat, id);
	if (xg_catalog_accepts_effort(m, effort)) {
		*out = xg_json_set(*out, "effort", jv_string(effort));
		*out = xg_json_set(*out, "effort_from", jv_string(from));
		return NULL;
	}
	list = xg_catalog_efforts_text(m);
	text = xg_asprintf("effort '%s' (%s) was not applied: model %s does not accept it "
			   "(it accepts: %s); it runs at %s", effort, from, id, list,
			   xg_json_string_peek(*out, "effort") ? xg_json_string_peek(*out, "effort")
							       : "no effort");
	free(list);
	return text;
}

int xg_choices_start(struct xg_choices *c, const struct xg_choices_want *w, jv request,
		     jv *records)
{
	const char *acct, *mode, *model, *effort, *conv;
	char *account = NULL, *notice = NULL, *unapplied = NULL;
	int bad = 0, rc, torn = 0;
	struct ctx x;
	jv out = jv_invalid(), last = jv_null();

	*records = jv_array();
	acct = w->account ? w->account : req_string(request, "account", w->lineno, &bad);
	mode = w->mode ? w->mode : req_string(request, "mode", w->lineno, &bad);
	model = w->model ? w->model : req_string(request, "model", w->lineno, &bad);
	effort = w->effort ? w->effort : req_string(request, "effort", w->lineno, &bad);
	conv = w->conversation ? w->conversation
			       : req_string(request, "conversation", w->lineno, &bad);
	if (!mode)
		mode = "normal";
	if (!bad && !xg_conv_mode_valid(mode)) {
		xg_error("'%s' " XG_CONV_MODE_BAD, mode);
		bad = 1;
	}
	if (!bad && conv && !xg_conv_id_valid(conv)) {
		xg_error("'%s' " XG_CONV_ID_BAD, conv);
		bad = 1;
	}
	if (bad) {
		out = null_record("mode", NULL, xg_conv_mode_valid(mode) ? mode : "normal",
				  "the request is not valid");
		rc = XG_EX_DATAERR;
		goto done;
	}
	rc = xg_account_current(acct, w->account ? "--account" : "request.account", &account, NULL);
	if (rc) {
		out = null_record(model ? "flag" : "mode", NULL, mode, "the account is not valid");
		goto done;
	}
	if ((rc = ctx_init(&x, c, account, mode))) {
		out = null_record(model ? "flag" : "mode", account, mode,
				  "the saved choices cannot be read");
		ctx_release(&x);
		goto done;
	}
	if (conv) {
		last = xg_conv_last_model(conv, &torn);
		if (torn) {
			char *t = xg_asprintf("the last line of conversation %s is torn (an append "
					      "that did not finish); it is ignored", conv);
			xg_warn("%s", t);
			*records = jv_array_append(*records, notice_record(t));
			free(t);
		}
	}
	if (!jv_is_valid(last)) {
		out = null_record(model ? "flag" : "mode", account, mode,
				  "the conversation cannot be read");
		rc = XG_EX_IOERR;
	} else if (model) {
		rc = start_explicit(&x, mode, model, effort, last, &out);
	} else if (jv_get_kind(last) == JV_KIND_NULL) {
		rc = resolve(&x, mode, "mode", &out, &notice);
	} else {
		rc = start_conversation(&x, mode, conv, last, &out, &notice);
	}
	if (effort && !model && jv_is_valid(last)) {
		/* An effort without a model is for whatever model starts. */
		unapplied = apply_effort(c, &out, effort, w->effort ? "--effort" : "request.effort");
		if (unapplied)
			xg_warn("%s", unapplied);
	}
	if (x.c->verbose && !jv_is_valid(xg_json_get_peek(out, "skipped")))
		out = xg_json_set(out, "skipped", jv_copy(x.skipped));
	ctx_release(&x);
done:
	if (conv && xg_conv_id_valid(conv))
		out = xg_json_set(out, "conversation", jv_string(conv));
	if (notice)
		*records = jv_array_append(*records, notice_record(notice));
	if (unapplied)
		*records = jv_array_append(*records, notice_record(unapplied));
	*records = jv_array_append(*records, out);
	free(notice);
	free(unapplied);
	free(account);
	jv_free(last);
	jv_free(request);
	return rc;
}

/* ---- the commands of xg-choices, as library calls ---- */

int xg_choices_write_models(const char *account, struct xg_rec_writer *w)
{
	struct xg_catalog cat;
	struct xg_account_keys keys;
	int rc, it;

	if ((rc = xg_catalog_load(&cat)))
		return rc;
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
		if (xg_rec_write(w, rec) < 0)
			rc = XG_EX_IOERR;
		jv_free(m);
	}
	xg_account_keys_release(&keys);
	xg_catalog_release(&cat);
	return rc;
}

static jv account_record(const char *name, int current)
{
	jv rec = xg_json_set(xg_rec_new("account"), "name", jv_string(name));

	return xg_json_set(rec, "current", current ? jv_true() : jv_false());
}

int xg_choices_write_accounts(const char *current, struct xg_rec_writer *w)
{
	jv names = xg_account_list();
	int i, n = xg_json_length_peek(names), seen = 0, rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		jv name = jv_array_get(jv_copy(names), i);
		int cur = !strcmp(jv_string_value(name), current);

		seen |= cur;
		if (xg_rec_write(w, account_record(jv_string_value(name), cur)) < 0)
			rc = XG_EX_IOERR;
		jv_free(name);
	}
	if (!seen && rc == 0 && xg_rec_write(w, account_record(current, 1)) < 0)
		rc = XG_EX_IOERR;
	jv_free(names);
	return rc;
}

/* e's field, or null when it has none. */
static jv field_or_null(jv e, const char *key)
{
	jv v = xg_json_get_peek(e, key);

	return jv_is_valid(v) ? jv_copy(v) : jv_null();
}

int xg_choices_write_saved(const char *account, const char *mode, struct xg_rec_writer *w)
{
	jv choices;
	int rc = xg_choices_load(account, &choices), found = 0;

	if (rc)
		return rc;
	jv_object_foreach(choices, key, e) {
		jv rec;

		if (rc || (mode && strcmp(mode, jv_string_value(key)))) {
			jv_free(key);
			jv_free(e);
			continue;
		}
		found = 1;
		rec = xg_json_set(xg_rec_new("choice"), "account", jv_string(account));
		rec = jv_object_set(rec, jv_string("mode"), key);
		rec = xg_json_set(rec, "model", field_or_null(e, "model"));
		rec = xg_json_set(rec, "effort", field_or_null(e, "effort"));
		rec = xg_json_set(rec, "updatedAt", field_or_null(e, "updatedAt"));
		if (xg_rec_write(w, rec) < 0)
			rc = XG_EX_IOERR;
		jv_free(e);
	}
	jv_free(choices);
	return rc ? rc : mode && !found ? XG_EX_FAIL : 0;
}

/* Writes one request's records; keeps the first failure's code. */
static int start_one(struct xg_choices *c, int init_rc, struct xg_choices_want *want,
		     jv request, struct xg_rec_writer *w, int *worst)
{
	jv out;
	int rc, i, n, wrc = 0;

	if (init_rc) {
		jv m = null_record(want->model ? "flag" : "mode", NULL,
				   want->mode ? want->mode : "normal",
				   "the model catalog cannot be read");
		jv_free(request);
		out = jv_array_append(jv_array(), m);
		rc = init_rc;
	} else {
		rc = xg_choices_start(c, want, request, &out);
	}
	n = xg_json_length_peek(out);
	for (i = 0; i < n && wrc == 0; i++)
		wrc = xg_rec_write(w, jv_array_get(jv_copy(out), i));
	jv_free(out);
	if (rc && !*worst)
		*worst = rc;
	return wrc < 0 ? -1 : 0;
}

int xg_choices_filter(struct xg_choices *c, int init_rc, const struct xg_choices_want *want,
		      struct xg_rec_reader *r, struct xg_rec_writer *w)
{
	struct xg_choices_want wt = *want;
	struct xg_rec rec;
	int worst = 0, requests = 0;

	while (r && xg_rec_next_or_die(r, &rec) > 0) {
		int bad = xg_rec_pass(w, &rec) < 0;

		if (!bad && rec.type && !strcmp(rec.type, "request")) {
			requests++;
			wt.lineno = rec.lineno;
			bad = start_one(c, init_rc, &wt, jv_copy(rec.v), w, &worst) < 0;
		}
		xg_rec_release(&rec);
		if (bad)
			return XG_EX_IOERR;
	}
	if (!requests) {
		wt.lineno = 0;
		if (start_one(c, init_rc, &wt, jv_null(), w, &worst) < 0)
			return XG_EX_IOERR;
	}
	return worst;
}
