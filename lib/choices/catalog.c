/*
 * The model catalog: the shipped $share/models.json with the user's
 * $config/models.json merged over it, checked, and flattened into one
 * entry per model (man 5 xg-config); and the lookups into it.
 */
#include "xg.h"
#include "choices/internal.h"
#include "jsonfile.h"

/*
 * Loading reads both files (xg_catalog_load), merges the user's providers
 * and models over the shipped ones field by field, null removing one
 * (merge_providers), then checks every provider and model (check.c) and
 * builds cat->providers and cat->models (flatten), with the defaults of
 * what a model leaves out.  A bad entry is left out, its message (the
 * file, line and field at fault) kept in cat->problems and cat->bad, so one
 * typo costs one model.  What the user's file names is recorded too
 * (user_choices): the providers it configures and the models it prefers.
 * After it, the lookups (xg_catalog_model_peek here, the effort helpers of
 * effort.c) trust the entries.  The catalog knows nothing of accounts:
 * whether one is authenticated for a provider is its callers' question.
 */

int xg_catalog_id_valid(const char *s)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	char *p;
	int ok;

	if (!slash)
		return 0;
	p = xg_strndup(s, (size_t)(slash - s));
	ok = xg_catalog_provider_name_valid(p) && xg_catalog_model_name_valid(slash + 1);
	free(p);
	return ok;
}

/* Sets every field of over (but its models) on base; consumes both. */
static jv merge_fields(jv base, jv over)
{
	jv_object_foreach(over, key, value) {
		if (strcmp(jv_string_value(key), "models"))
			base = jv_object_set(base, key, value);
		else {
			jv_free(key);
			jv_free(value);
		}
	}
	jv_free(over);
	return base;
}

/* The user's models over a provider's; consumes both. */
static jv merge_models(jv models, jv over)
{
	jv_object_foreach(over, m, fields) {
		jv old = jv_object_get(jv_copy(models), jv_copy(m));

		if (jv_get_kind(fields) == JV_KIND_NULL) {
			jv_free(old);
			jv_free(fields);
			models = jv_object_delete(models, m);
		} else if (jv_get_kind(old) == JV_KIND_OBJECT &&
			   jv_get_kind(fields) == JV_KIND_OBJECT) {
			models = jv_object_set(models, m, merge_fields(old, fields));
		} else {
			jv_free(old);
			models = jv_object_set(models, m, fields);
		}
	}
	jv_free(over);
	return models;
}

/* The user's providers over the shipped ones; consumes both. */
static jv merge_providers(jv shipped, jv user)
{
	jv_object_foreach(user, name, prov) {
		jv base = jv_object_get(jv_copy(shipped), jv_copy(name));
		jv models, over;

		if (jv_get_kind(prov) == JV_KIND_NULL) {
			jv_free(base);
			jv_free(prov);
			shipped = jv_object_delete(shipped, name);
			continue;
		}
		if (jv_get_kind(base) != JV_KIND_OBJECT || jv_get_kind(prov) != JV_KIND_OBJECT) {
			jv_free(base);
			shipped = jv_object_set(shipped, name, prov);
			continue;
		}
		models = jv_object_get(jv_copy(base), jv_string("models"));
		if (jv_get_kind(models) != JV_KIND_OBJECT) {
			jv_free(models);
			models = jv_object();
		}
		over = jv_object_get(jv_copy(prov), jv_string("models"));
		if (jv_get_kind(over) == JV_KIND_OBJECT) {
			models = merge_models(models, over);
		} else if (jv_is_valid(over) && jv_get_kind(over) != JV_KIND_NULL) {
			/* Not an object: left for the check to name. */
			jv_free(models);
			models = over;
		} else {
			jv_free(over);
		}
		base = merge_fields(base, prov);
		base = jv_object_set(base, jv_string("models"), models);
		shipped = jv_object_set(shipped, name, base);
	}
	jv_free(user);
	return shipped;
}

/* Copies p's field key to prov when it is there and not null; consumes
 * prov, only looks at p. */
static jv optional(jv prov, jv p, const char *key)
{
	jv v = xg_json_get_peek(p, key);

	if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_NULL)
		prov = xg_json_set(prov, key, jv_copy(v));
	return prov;
}

/* Keeps the message of a bad entry (key: a model's id or a provider's
 * name, NULL for a warning that leaves nothing out); consumes text. */
static void problem(struct xg_catalog *cat, const char *key, char *text)
{
	cat->problems = jv_array_append(cat->problems, jv_string(text));
	if (key)
		cat->bad = xg_json_set(cat->bad, key, jv_string(text));
	free(text);
}

/* The entry of model mname of provider pname, as xg_catalog_model_peek
 * gives it; consumes pname, mname and m, only looks at prov. */
static jv model_entry(const char *id, jv pname, jv prov, jv mname, jv m)
{
	jv rec = jv_object();

	m = xg_catalog_defaults(m);
	rec = xg_json_set(rec, "id", jv_string(id));
	rec = xg_json_set(rec, "provider", pname);
	rec = xg_json_set(rec, "name", mname);
	rec = xg_json_set(rec, "kind", jv_copy(xg_json_get_peek(prov, "kind")));
	rec = xg_json_set(rec, "base_url", jv_copy(xg_json_get_peek(prov, "base_url")));
	rec = xg_json_set(rec, "key_env", jv_copy(xg_json_get_peek(prov, "key_env")));
	rec = optional(rec, prov, "base_url_env");
	rec = optional(rec, prov, "dialect");
	rec = xg_json_set(rec, "context_window", jv_copy(xg_json_get_peek(m, "context_window")));
	rec = xg_json_set(rec, "max_output_tokens",
			  jv_copy(xg_json_get_peek(m, "max_output_tokens")));
	rec = xg_json_set(rec, "efforts", jv_copy(xg_json_get_peek(m, "efforts")));
	rec = xg_json_set(rec, "default_effort", jv_copy(xg_json_get_peek(m, "default_effort")));
	rec = optional(rec, m, "price");
	jv_free(m);
	return rec;
}

/* Checks a provider's models and adds the good ones to cat->models, each
 * bad one to the problems; consumes models, only looks at pname and
 * prov. */
static void add_models(struct xg_catalog_loading *l, jv pname, jv prov, jv models)
{
	const char *pn = jv_string_value(pname), *field;

	jv_object_foreach(models, mname, m) {
		const char *mn = jv_string_value(mname);
		char *id = xg_asprintf("%s/%s", pn, mn);
		char *why = xg_catalog_check_model(pn, mn, m, &field), *where;

		if (why) {
			where = xg_catalog_where(l, pn, mn, field);
			problem(l->cat, id, xg_asprintf("%s: model '%s': %s, so the model is left out",
							where, id, why));
			free(where);
			free(why);
			jv_free(mname);
			jv_free(m);
		} else {
			xg_catalog_unknown_fields(l, pn, mn, m);
			l->cat->models = jv_object_set(l->cat->models, jv_string(id),
						       model_entry(id, jv_copy(pname), prov, mname, m));
		}
		free(id);
	}
	jv_free(models);
}

/*
 * The provider's entry without its models, p having passed the check:
 * the kind (Chat Completions when not given), and the base URL from its
 * base_url_env variable when that is set (a URL with no path takes the
 * path of base_url), which also makes it configured.  Only looks at p.
 */
static jv provider_entry(struct xg_catalog *cat, const char *name, jv p)
{
	const char *kind = xg_json_string_peek(p, "kind"), *env, *url, *path, *bpath;
	jv prov = jv_object(), key_env = xg_json_get_peek(p, "key_env");

	prov = xg_json_set(prov, "kind", jv_string(kind ? kind : "openai-chat"));
	url = xg_json_string_peek(p, "base_url");
	env = xg_json_string_peek(p, "base_url_env");
	if (env && getenv(env) && *getenv(env)) {
		url = getenv(env);
		path = strchr(strstr(url, "://") + 3, '/');
		bpath = xg_json_string_peek(p, "base_url");
		bpath = xg_catalog_url_valid(bpath) ? strchr(strstr(bpath, "://") + 3, '/') : NULL;
		if (!path && bpath)
			prov = xg_json_set(prov, "base_url", jv_string_fmt("%s%s", url, bpath));
		else
			prov = xg_json_set(prov, "base_url", jv_string(url));
		cat->configured = xg_json_set(cat->configured, name, jv_true());
	} else {
		prov = xg_json_set(prov, "base_url", jv_string(url));
	}
	prov = xg_json_set(prov, "key_env", jv_get_kind(key_env) == JV_KIND_STRING
					    ? jv_copy(key_env) : jv_null());
	prov = optional(prov, p, "base_url_env");
	prov = optional(prov, p, "dialect");
	return optional(prov, p, "headers");
}

/* Checks the merged providers and flattens them into cat->models and
 * cat->providers, a bad entry left out with its message; consumes
 * providers. */
static void flatten(struct xg_catalog_loading *l, jv providers)
{
	struct xg_catalog *cat = l->cat;
	const char *field;

	jv_object_foreach(providers, name, p) {
		const char *pn = jv_string_value(name);
		char *why = xg_catalog_check_provider(pn, p, &field), *where;
		jv prov, models;

		if (why) {
			where = xg_catalog_where(l, pn, NULL, field);
			problem(cat, pn, xg_asprintf("%s: provider '%s': %s, so its models are left "
						     "out", where, pn, why));
			free(where);
			free(why);
		} else {
			xg_catalog_unknown_fields(l, pn, NULL, p);
			prov = provider_entry(cat, pn, p);
			models = xg_json_get_peek(p, "models");
			add_models(l, name, prov, jv_get_kind(models) == JV_KIND_OBJECT
						  ? jv_copy(models) : jv_object());
			cat->providers = jv_object_set(cat->providers, jv_copy(name), prov);
		}
		jv_free(name);
		jv_free(p);
	}
	jv_free(providers);
}

/* What the user's file says about choosing: the providers it names are
 * configured, and the models it gives are preferred, in its order.
 * Consumes providers. */
static void user_choices(struct xg_catalog *cat, jv providers)
{
	jv_object_foreach(providers, name, p) {
		jv models = xg_json_get_peek(p, "models");
		const char *pn = jv_string_value(name);

		if (jv_is_valid(xg_catalog_provider_peek(cat, pn)) &&
		    jv_get_kind(p) == JV_KIND_OBJECT)
			cat->configured = xg_json_set(cat->configured, pn, jv_true());
		if (jv_get_kind(models) == JV_KIND_OBJECT) {
			jv_object_foreach(models, mname, m) {
				char *id = xg_asprintf("%s/%s", pn, jv_string_value(mname));

				if (jv_get_kind(m) == JV_KIND_OBJECT &&
				    jv_is_valid(xg_catalog_model_peek(cat, id)))
					cat->preferred = xg_json_set(cat->preferred, id, jv_true());
				free(id);
				jv_free(mname);
				jv_free(m);
			}
		}
		jv_free(name);
		jv_free(p);
	}
	jv_free(providers);
}

/* Reads a catalog file into *value, keeping its text for messages: 0 (a
 * missing file is jv_null()), or an exit code after reporting. */
static int read_file(const char *path, struct xg_buf *text, jv *value)
{
	*value = jv_null();
	if (xg_read_file(path, text) < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == EFBIG) {
			xg_error("'%s' is larger than %zu bytes", path, (size_t)XG_JSONFILE_MAX);
			return XG_EX_CONFIG;
		}
		xg_error_errno("cannot read '%s'", path);
		return errno == EACCES ? XG_EX_NOPERM : XG_EX_IOERR;
	}
	return xg_jsonfile_parse(path, text->buf, text->len, value);
}

static int providers_of(const char *path, jv file, jv *out)
{
	jv p = xg_json_get_peek(file, "providers");

	if (jv_get_kind(p) != JV_KIND_OBJECT) {
		xg_error("'%s': 'providers' must be an object", path);
		return XG_EX_CONFIG;
	}
	*out = jv_copy(p);
	return 0;
}

int xg_catalog_load(struct xg_catalog *cat)
{
	struct xg_catalog_loading l = { cat, jv_null(), jv_null(),
					XG_BUF_INIT(XG_JSONFILE_MAX), XG_BUF_INIT(XG_JSONFILE_MAX) };
	jv sp = jv_null(), up = jv_object();
	int rc;

	memset(cat, 0, sizeof(*cat));
	cat->models = jv_object();
	cat->providers = jv_object();
	cat->bad = jv_object();
	cat->problems = jv_array();
	cat->configured = jv_object();
	cat->preferred = jv_object();
	cat->share_path = xg_path_share("models.json");
	cat->user_path = xg_path_config("models.json");
	rc = read_file(cat->share_path, &l.stext, &l.shipped);
	if (rc == 0 && jv_get_kind(l.shipped) == JV_KIND_NULL) {
		xg_error("cannot find the shipped model catalog '%s' (is XG_SHARE_DIR right?)",
			 cat->share_path);
		rc = XG_EX_CONFIG;
		goto out;
	}
	if (rc || (rc = providers_of(cat->share_path, l.shipped, &sp)))
		goto out;
	if ((rc = read_file(cat->user_path, &l.utext, &l.user)))
		goto out;
	if (jv_get_kind(l.user) != JV_KIND_NULL) {
		jv_free(up);
		up = jv_null();
		if ((rc = providers_of(cat->user_path, l.user, &up)))
			goto out;
	}
	flatten(&l, merge_providers(sp, jv_copy(up)));
	user_choices(cat, up);
	sp = up = jv_null();
out:
	jv_free(sp);
	jv_free(up);
	jv_free(l.shipped);
	jv_free(l.user);
	xg_buf_release(&l.stext);
	xg_buf_release(&l.utext);
	if (rc)
		xg_catalog_release(cat);
	return rc;
}

void xg_catalog_warn(const struct xg_catalog *cat)
{
	int i, n = xg_json_length_peek(cat->problems);

	for (i = 0; i < n; i++) {
		jv t = jv_array_get(jv_copy(cat->problems), i);
		xg_warn("%s", jv_string_value(t));
		jv_free(t);
	}
}

const char *xg_catalog_bad_peek(const struct xg_catalog *cat, const char *id)
{
	const char *slash = id ? strchr(id, '/') : NULL, *why;
	char *prov;

	if (!id || (why = xg_json_string_peek(cat->bad, id)))
		return id ? why : NULL;
	if (!slash)
		return NULL;
	prov = xg_strndup(id, (size_t)(slash - id));
	why = xg_json_string_peek(cat->bad, prov);
	free(prov);
	return why;
}

int xg_catalog_configured_peek(const struct xg_catalog *cat, const char *provider)
{
	return jv_get_kind(xg_json_get_peek(cat->configured, provider)) == JV_KIND_TRUE;
}

/* Each value the catalog holds, freed. */
static void free_values(struct xg_catalog *cat)
{
	jv_free(cat->models);
	jv_free(cat->providers);
	jv_free(cat->bad);
	jv_free(cat->problems);
	jv_free(cat->configured);
	jv_free(cat->preferred);
}

void xg_catalog_release(struct xg_catalog *cat)
{
	free_values(cat);
	free(cat->share_path);
	free(cat->user_path);
	memset(cat, 0, sizeof(*cat));
	cat->models = cat->providers = cat->bad = cat->problems = jv_invalid();
	cat->configured = cat->preferred = jv_invalid();
}

void xg_catalog_narrow(struct xg_catalog *cat, const char *id)
{
	jv m = jv_copy(xg_catalog_model_peek(cat, id)), one = jv_object();

	if (jv_is_valid(m))
		one = xg_json_set(one, id, m);
	else
		jv_free(m);
	free_values(cat);
	cat->models = one;
	cat->providers = jv_object();
	cat->bad = jv_object();
	cat->problems = jv_array();
	cat->configured = jv_object();
	cat->preferred = jv_object();
}

jv xg_catalog_model_peek(const struct xg_catalog *cat, const char *id)
{
	return id ? xg_json_get_peek(cat->models, id) : jv_invalid();
}

jv xg_catalog_provider_peek(const struct xg_catalog *cat, const char *name)
{
	return name ? xg_json_get_peek(cat->providers, name) : jv_invalid();
}
