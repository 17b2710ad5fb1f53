/*
 * Resolution: the model and effort a mode runs on for an account, decided
 * from its saved choices and the catalog (design.md B1, ADR-0064).
 */
#include "xg.h"
#include "choices/internal.h"

/*
 * The resolver orders the saved choices as candidates: the mode's own, then
 * normal's, then every other mode's newest first by updatedAt.  The model
 * is the first candidate's that the catalog offers and the account is
 * authenticated for (xg_choices_resolve_usable); each candidate passed over
 * is remembered with its reason for -v.  The effort is taken field by
 * field: that candidate's when the model accepts it, else the first later
 * candidate's that it accepts, else the model's default
 * (xg_choices_resolve_effort).  With no usable candidate the catalog's
 * first usable model is used, with its default effort and a notice
 * (from_catalog); a provider that needs no key counts there only when the
 * person configured it, so a local server nobody set up is never tried.
 * With nothing at all, the failure says how to go on (nothing_configured),
 * 77 when a model the person chose lacks its key, else 78.  start.c
 * builds on the same resolver.
 */

struct xg_choices_cand {
	const char *mode;
	jv e;		/* borrowed from the choices object */
	int64_t at;
};

static int newest_first(const void *pa, const void *pb)
{
	const struct xg_choices_cand *a = pa, *b = pb;

	if (a->at != b->at)
		return a->at > b->at ? -1 : 1;
	return strcmp(a->mode, b->mode);
}

/* Moves the candidate of mode, when there is one, to index *first. */
static void put_first(struct xg_choices_cand *v, size_t n, size_t *first, const char *mode)
{
	struct xg_choices_cand tmp;
	size_t i;

	for (i = *first; i < n; i++)
		if (!strcmp(v[i].mode, mode)) {
			tmp = v[*first], v[*first] = v[i], v[i] = tmp;
			(*first)++;
			return;
		}
}

/*
 * The candidates for mode, in order: mode's, normal's, then the others
 * newest first.  They borrow from choices (the object keeps a reference to
 * every key and value, so the strings live as long as it does).
 */
static struct xg_choices_cand *candidates(jv choices, const char *mode, size_t *n)
{
	struct xg_choices_cand *v = NULL;
	size_t alloc = 0, first = 0;

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
	put_first(v, *n, &first, mode);
	if (strcmp(mode, "normal"))
		put_first(v, *n, &first, "normal");
	if (*n > first)
		XG_QSORT(v + first, *n - first, newest_first);
	return v;
}

int xg_choices_resolver_init(struct xg_choices_resolver *x, struct xg_choices *c,
			     const char *account, const char *mode)
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

void xg_choices_resolver_release(struct xg_choices_resolver *x)
{
	free(x->cands);
	free(x->nokey);
	jv_free(x->choices);
	jv_free(x->skipped);
	xg_account_keys_release(&x->keys);
}

int xg_choices_resolve_usable(struct xg_choices_resolver *x, const char *id, char **why,
			      int *code)
{
	jv m = xg_catalog_model_peek(&x->c->cat, id);
	const char *prov, *env;
	int r;

	*why = NULL;
	if (!jv_is_valid(m)) {
		const char *bad = xg_catalog_bad_peek(&x->c->cat, id);

		*why = bad ? xg_strdup(bad) : xg_asprintf("'%s' is not offered by the catalog", id);
		*code = XG_EX_CONFIG;
		return 0;
	}
	prov = xg_json_string_peek(m, "provider");
	r = xg_account_authenticated_peek(&x->keys, prov,
					  xg_catalog_provider_peek(&x->c->cat, prov), NULL);
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

jv xg_choices_resolve_effort(struct xg_choices_resolver *x, const char *id, size_t from,
			     const char **src)
{
	jv model = xg_catalog_model_peek(&x->c->cat, id);
	const char *def = xg_catalog_default_effort_peek(model);
	size_t i;

	*src = "default";
	if (!def)
		return jv_null();
	for (i = from; i < x->ncands; i++) {
		const char *e = xg_json_string_peek(x->cands[i].e, "effort");
		if (e && xg_catalog_accepts_effort_peek(model, e)) {
			*src = x->cands[i].mode;
			return jv_string(e);
		}
	}
	return jv_string(def);
}

static void skip(struct xg_choices_resolver *x, const char *mode, const char *id,
		 const char *why)
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
 * The first saved candidate the account can use, as a record in *out: 1
 * when there is one, 0 when none is (each skipped), or -1 with *why and
 * *code set when auth.json was refused.
 */
static int from_saved(struct xg_choices_resolver *x, const char *mode, const char *source,
		      jv *out, char **why, int *code)
{
	const char *src;
	size_t i;
	int r;

	for (i = 0; i < x->ncands; i++) {
		const char *id = xg_json_string_peek(x->cands[i].e, "model");
		jv effort;

		r = xg_choices_resolve_usable(x, id, why, code);
		if (r < 0)
			return -1;
		if (r == 0) {
			skip(x, x->cands[i].mode, id, *why);
			if (*code == XG_EX_NOPERM && !x->nokey)
				x->nokey = *why;
			else
				free(*why);
			*why = NULL;
			continue;
		}
		effort = xg_choices_resolve_effort(x, id, i, &src);
		*out = xg_choices_model_record(jv_copy(xg_catalog_model_peek(&x->c->cat, id)),
					       effort, source, x->account, mode);
		*out = xg_json_set(*out, "choice", jv_string(x->cands[i].mode));
		*out = xg_json_set(*out, "effort_from", jv_string(src));
		return 1;
	}
	return 0;
}

/*
 * Whether resolution may start on catalog model id by itself: it is
 * usable, and a provider that needs no key is configured (named by the
 * user's models.json, or its base_url_env set), so that a local server
 * nobody set up is never tried.  As xg_choices_resolve_usable.
 */
static int catalog_candidate(struct xg_choices_resolver *x, const char *id, char **why,
			     int *code)
{
	jv m = xg_catalog_model_peek(&x->c->cat, id);
	const char *prov = xg_json_string_peek(m, "provider");
	int r;

	if (!xg_json_string_peek(m, "key_env") && !xg_catalog_configured_peek(&x->c->cat, prov))
		return 0;
	r = xg_choices_resolve_usable(x, id, why, code);
	if (r == 0 && *code == XG_EX_NOPERM && !x->nokey &&
	    jv_is_valid(xg_json_get_peek(x->c->cat.preferred, id))) {
		/* A model the person gave in models.json lacks its key. */
		x->nokey = *why;
		*why = NULL;
	}
	if (r >= 0) {
		free(*why);
		*why = NULL;
	}
	return r;
}

/* Starts on catalog model id at its default effort, with the notice that
 * says why; returns 1. */
static int catalog_pick(struct xg_choices_resolver *x, const char *id, const char *mode,
			const char *source, jv *out, char **notice)
{
	jv m = xg_catalog_model_peek(&x->c->cat, id);
	const char *def = xg_catalog_default_effort_peek(m);

	*out = xg_choices_model_record(jv_copy(m), def ? jv_string(def) : jv_null(), source,
				       x->account, mode);
	*out = xg_json_set(*out, "choice", jv_null());
	*out = xg_json_set(*out, "effort_from", jv_string("default"));
	*notice = xg_asprintf("account '%s' has no usable saved model for mode '%s'; using "
			      "%s%s%s%s, the first model of the catalog it can use", x->account,
			      mode, id, def ? " (" : "", def ? def : "", def ? ")" : "");
	return 1;
}

/* The first model of the catalog the account can use, as from_saved, with
 * the notice that says so.  Providers come in catalog order, and within
 * one the models the user's models.json gives come first: a local server
 * set up with its own model runs that one, not a shipped name. */
static int from_catalog(struct xg_choices_resolver *x, const char *mode, const char *source,
			jv *out, char **notice, char **why, int *code)
{
	const struct xg_catalog *cat = &x->c->cat;
	int pi, it, pass, r;

	for (pi = jv_object_iter(cat->providers); jv_object_iter_valid(cat->providers, pi);
	     pi = jv_object_iter_next(cat->providers, pi)) {
		jv pkey = jv_object_iter_key(cat->providers, pi);
		const char *prov = jv_string_value(pkey);

		jv_free(pkey);	/* the catalog holds the string too */
		for (pass = 0; pass < 2; pass++) {
			jv ids = pass == 0 ? cat->preferred : cat->models;

			for (it = jv_object_iter(ids); jv_object_iter_valid(ids, it);
			     it = jv_object_iter_next(ids, it)) {
				jv key = jv_object_iter_key(ids, it);
				const char *id = jv_string_value(key);

				jv_free(key);	/* ids holds the string too */
				if (strncmp(id, prov, strlen(prov)) || id[strlen(prov)] != '/' ||
				    (pass == 1 && jv_is_valid(xg_json_get_peek(cat->preferred, id))))
					continue;
				if ((r = catalog_candidate(x, id, why, code)) != 0)
					return r < 0 ? -1 : catalog_pick(x, id, mode, source, out,
									 notice);
			}
		}
	}
	return 0;
}

/*
 * What to say when the account can use no model and nothing points at
 * one: the two ways forward, a key or a local server, from the catalog's
 * own providers (the first that needs a key, every key variable, and the
 * first local server), with the lines of models.json to add.  The caller
 * frees it.
 */
static char *nothing_configured(const struct xg_choices_resolver *x)
{
	const struct xg_catalog *cat = &x->c->cat;
	struct xg_buf b = XG_BUF_INIT(0), envs = XG_BUF_INIT(0);
	const char *keyed = NULL, *local = NULL, *url = NULL, *url_env = NULL, *last = NULL;
	int it;

	for (it = jv_object_iter(cat->providers); jv_object_iter_valid(cat->providers, it);
	     it = jv_object_iter_next(cat->providers, it)) {
		jv name = jv_object_iter_key(cat->providers, it);
		jv p = xg_json_get_peek(cat->providers, jv_string_value(name));
		const char *env = xg_json_string_peek(p, "key_env");

		if (env) {
			if (!keyed)
				keyed = jv_string_value(name);
			if (last)
				xg_buf_addf(&envs, "%s%s", envs.len ? ", " : "", last);
			last = env;
		} else if (!local) {
			local = jv_string_value(name);
			url = xg_json_string_peek(p, "base_url");
			url_env = xg_json_string_peek(p, "base_url_env");
		}
		jv_free(name);	/* the catalog holds the string too */
	}
	if (last)
		xg_buf_addf(&envs, "%s%s", envs.len ? " or " : "", last);
	xg_buf_addf(&b, "no model is configured for account '%s': no provider has a key, and "
		    "no local server is set up.", x->account);
	if (xg_json_length_peek(x->skipped) > 0) {
		jv s = jv_array_get(jv_copy(x->skipped), 0);
		xg_buf_addf(&b, " (The saved choice for mode '%s' cannot be used: %s.)",
			    xg_json_string_peek(s, "mode"), xg_json_string_peek(s, "reason"));
		jv_free(s);
	}
	if (keyed)
		xg_buf_addf(&b, "\n  For a hosted model, store its key: xg-choices auth %s < keyfile"
			    "\n    (or set %s).", keyed, envs.buf);
	if (local) {
		xg_buf_addf(&b, "\n  For a local server, add to '%s':\n"
			    "    {\"providers\": {\"%s\": {\"models\": {\n"
			    "      \"MODEL\": {}\n"
			    "    }}}}\n"
			    "    with MODEL a model the server at %s serves "
			    "('xg-choices models --probe %s' lists them)", cat->user_path, local, url,
			    local);
		if (url_env)
			xg_buf_addf(&b, ";\n    or set %s to the server's URL", url_env);
		xg_buf_addch(&b, '.');
	}
	xg_buf_release(&envs);
	return xg_buf_detach(&b, NULL);
}

int xg_choices_resolve_mode(struct xg_choices_resolver *x, const char *mode,
			    const char *source, jv *out, char **notice)
{
	char *why = NULL;
	int code = 0, r;

	*notice = NULL;
	r = from_saved(x, mode, source, out, &why, &code);
	if (r == 0)
		r = from_catalog(x, mode, source, out, notice, &why, &code);
	if (r < 0) {
		*out = xg_choices_null_record(source, x->account, mode, why);
		free(why);
		return code;
	}
	if (r > 0) {
		if (x->c->verbose)
			*out = xg_json_set(*out, "skipped", jv_copy(x->skipped));
		return 0;
	}
	if (xg_json_length_peek(x->c->cat.models) == 0) {
		*out = xg_choices_null_record(source, x->account, mode,
					      "the model catalog offers no model");
		xg_error("the model catalog offers no model ('%s')", x->c->cat.user_path);
		return XG_EX_CONFIG;
	}
	/* A saved model whose key is missing is a credentials problem; with
	 * none, nothing was configured. */
	if (x->nokey) {
		why = xg_asprintf("no model can be used for account '%s': %s", x->account, x->nokey);
		code = XG_EX_NOPERM;
	} else {
		why = nothing_configured(x);
		code = XG_EX_CONFIG;
	}
	*out = xg_choices_null_record(source, x->account, mode, why);
	if (!xg_prog_records_shown())
		xg_error("%s", why);
	free(why);
	return code;
}

int xg_choices_resolve(struct xg_choices *c, const char *account, const char *mode,
		       jv *model, char **notice)
{
	struct xg_choices_resolver x;
	int rc;

	*notice = NULL;
	if ((rc = xg_choices_resolver_init(&x, c, account, mode))) {
		*model = xg_choices_null_record("mode", account, mode,
						"the saved choices cannot be read");
	} else {
		rc = xg_choices_resolve_mode(&x, mode, "mode", model, notice);
		if (c->verbose && !jv_is_valid(xg_json_get_peek(*model, "skipped")))
			*model = xg_json_set(*model, "skipped", jv_copy(x.skipped));
	}
	if (rc && !xg_json_string_peek(*model, "id"))
		*model = xg_json_set(*model, "exit", jv_number(rc));
	xg_choices_resolver_release(&x);
	return rc;
}

int xg_choices_write_resolved(const char *account, const char *mode, int verbose,
			      struct xg_rec_writer *w)
{
	struct xg_choices c;
	char *notice = NULL;
	jv model;
	int rc;

	if ((rc = xg_choices_init(&c, verbose)) == 0) {
		xg_catalog_warn(&c.cat);
		rc = xg_choices_resolve(&c, account, mode ? mode : "normal", &model, &notice);
		if (notice)
			xg_warn("%s", notice);
		if (xg_rec_write(w, model) < 0)
			rc = XG_EX_IOERR;
		free(notice);
	}
	xg_choices_release(&c);
	return rc;
}
