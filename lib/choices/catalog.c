/*
 * The model catalog: the shipped $share/models.json with the user's
 * $config/models.json merged over it, checked, and flattened into one
 * entry per model (man 5 xg-config).
 *
 * Loading reads both files (xg_catalog_load), merges the user's providers
 * and models over the shipped ones field by field, null removing one
 * (merge_providers), then checks every provider and model and builds
 * cat->providers and cat->models (flatten), blaming the file that named
 * what is wrong.  After it, the lookups (xg_catalog_model_peek and the
 * effort helpers) trust the entries.  xg_catalog_write_models is the models
 * verb: the catalog as records, with the account's authentication.
 */
#include "xg.h"
#include "choices/choices.h"
#include "jsonfile.h"

static const char *const api_kinds[] = {
	"openai-responses", "openai-chat", "anthropic-messages", NULL
};

static int name_char(int c)
{
	return isalnum(c) || c == '.' || c == '_' || c == '-';
}

static int provider_name_valid(const char *s)
{
	if (!*s || *s == '.' || *s == '-')
		return 0;
	for (; *s; s++)
		if (!name_char((unsigned char)*s))
			return 0;
	return 1;
}

static int model_name_valid(const char *s)
{
	if (!*s || *s == '/')
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

int xg_catalog_id_valid(const char *s)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	char *p;
	int ok;

	if (!slash)
		return 0;
	p = xg_strndup(s, (size_t)(slash - s));
	ok = provider_name_valid(p) && model_name_valid(slash + 1);
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

/* The file to blame for what is wrong with provider name: the user's when
 * it names the provider, else the shipped one. */
static const char *blame(const struct xg_catalog *cat, jv user, const char *name)
{
	jv p = xg_json_get_peek(xg_json_get_peek(user, "providers"), name);

	return jv_is_valid(p) ? cat->user_path : cat->share_path;
}

static int check_model(const char *file, const char *prov, const char *name, jv m)
{
	jv efforts = xg_json_get_peek(m, "efforts");
	jv def = xg_json_get_peek(m, "default_effort");
	long long n;
	int i, len;

	if (!model_name_valid(name))
		return xg_error("'%s': provider '%s': '%s' is not a model name", file, prov, name);
	if (jv_get_kind(m) != JV_KIND_OBJECT)
		return xg_error("'%s': model '%s/%s' must be an object", file, prov, name);
	if (xg_json_int_peek(m, "context_window", &n) < 0 || n <= 0)
		return xg_error("'%s': model '%s/%s': 'context_window' must be a positive number "
				"of tokens", file, prov, name);
	if (xg_json_int_peek(m, "max_output_tokens", &n) < 0 || n <= 0)
		return xg_error("'%s': model '%s/%s': 'max_output_tokens' must be a positive "
				"number of tokens", file, prov, name);
	if (jv_get_kind(efforts) != JV_KIND_ARRAY)
		return xg_error("'%s': model '%s/%s': 'efforts' must be an array of strings "
				"(empty for a model that takes none)", file, prov, name);
	len = xg_json_length_peek(efforts);
	for (i = 0; i < len; i++) {
		jv e = jv_array_get(jv_copy(efforts), i);
		int ok = jv_get_kind(e) == JV_KIND_STRING && jv_string_length_bytes(jv_copy(e)) > 0;
		jv_free(e);
		if (!ok)
			return xg_error("'%s': model '%s/%s': 'efforts' must be an array of "
					"strings", file, prov, name);
	}
	if (len == 0 && jv_get_kind(def) != JV_KIND_NULL && jv_is_valid(def))
		return xg_error("'%s': model '%s/%s': 'default_effort' must be null for a model "
				"that accepts no effort", file, prov, name);
	if (len > 0 && (jv_get_kind(def) != JV_KIND_STRING ||
			!xg_catalog_accepts_effort_peek(m, jv_string_value(def))))
		return xg_error("'%s': model '%s/%s': 'default_effort' must be one of its "
				"'efforts'", file, prov, name);
	return 0;
}

static int check_provider(const char *file, const char *name, jv p)
{
	const char *kind = xg_json_string_peek(p, "kind");
	jv dialect = xg_json_get_peek(p, "dialect"), headers = xg_json_get_peek(p, "headers");
	const char *url = xg_json_string_peek(p, "base_url");
	jv env = xg_json_get_peek(p, "key_env");
	int i;

	if (!provider_name_valid(name))
		return xg_error("'%s': '%s' is not a provider name (letters, digits, '.', '_', '-')",
				file, name);
	if (jv_get_kind(p) != JV_KIND_OBJECT)
		return xg_error("'%s': provider '%s' must be an object", file, name);
	for (i = 0; kind && api_kinds[i]; i++)
		if (!strcmp(kind, api_kinds[i]))
			break;
	if (!kind || !api_kinds[i])
		return xg_error("'%s': provider '%s': 'kind' must be one of openai-responses, "
				"openai-chat, anthropic-messages", file, name);
	if (jv_is_valid(dialect) && jv_get_kind(dialect) != JV_KIND_STRING &&
	    jv_get_kind(dialect) != JV_KIND_NULL)
		return xg_error("'%s': provider '%s': 'dialect' must be a string", file, name);
	if (jv_is_valid(headers) && jv_get_kind(headers) != JV_KIND_OBJECT &&
	    jv_get_kind(headers) != JV_KIND_NULL)
		return xg_error("'%s': provider '%s': 'headers' must be an object", file, name);
	if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)))
		return xg_error("'%s': provider '%s': 'base_url' must be an http:// or https:// "
				"URL", file, name);
	if (jv_is_valid(env) && jv_get_kind(env) != JV_KIND_NULL &&
	    (jv_get_kind(env) != JV_KIND_STRING || !*jv_string_value(env)))
		return xg_error("'%s': provider '%s': 'key_env' must name an environment variable, "
				"or be null for a provider that needs no key", file, name);
	if (jv_get_kind(xg_json_get_peek(p, "models")) != JV_KIND_OBJECT)
		return xg_error("'%s': provider '%s': 'models' must be an object", file, name);
	return 0;
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

/* The entry of model mname of provider pname, as xg_catalog_model_peek
 * gives it; consumes pname and mname, only looks at prov and m. */
static jv model_entry(const char *id, jv pname, jv prov, jv mname, jv m)
{
	jv rec = jv_object(), def = xg_json_get_peek(m, "default_effort");

	rec = xg_json_set(rec, "id", jv_string(id));
	rec = xg_json_set(rec, "provider", pname);
	rec = xg_json_set(rec, "name", mname);
	rec = xg_json_set(rec, "kind", jv_copy(xg_json_get_peek(prov, "kind")));
	rec = xg_json_set(rec, "base_url", jv_copy(xg_json_get_peek(prov, "base_url")));
	rec = xg_json_set(rec, "key_env", jv_copy(xg_json_get_peek(prov, "key_env")));
	rec = optional(rec, prov, "dialect");
	rec = xg_json_set(rec, "context_window", jv_copy(xg_json_get_peek(m, "context_window")));
	rec = xg_json_set(rec, "max_output_tokens",
			  jv_copy(xg_json_get_peek(m, "max_output_tokens")));
	rec = xg_json_set(rec, "efforts", jv_copy(xg_json_get_peek(m, "efforts")));
	return xg_json_set(rec, "default_effort", jv_is_valid(def) ? jv_copy(def) : jv_null());
}

/* Checks a provider's models and adds them to cat->models; consumes
 * models, only looks at pname and prov. */
static int add_models(struct xg_catalog *cat, const char *file, jv pname, jv prov, jv models)
{
	const char *pn = jv_string_value(pname);
	int rc = 0;

	jv_object_foreach(models, mname, m) {
		char *id;

		if (rc == 0 && check_model(file, pn, jv_string_value(mname), m) < 0)
			rc = -1;
		if (rc < 0) {
			jv_free(mname);
			jv_free(m);
			continue;
		}
		id = xg_asprintf("%s/%s", pn, jv_string_value(mname));
		cat->models = jv_object_set(cat->models, jv_string(id),
					    model_entry(id, jv_copy(pname), prov, mname, m));
		free(id);
		jv_free(m);
	}
	jv_free(models);
	return rc;
}

/* Checks the merged providers and flattens them into cat->models and
 * cat->providers; consumes providers, only looks at user. */
static int flatten(struct xg_catalog *cat, jv providers, jv user)
{
	int rc = 0;

	jv_object_foreach(providers, name, p) {
		const char *pn = jv_string_value(name);
		const char *file = blame(cat, user, pn);
		jv env = xg_json_get_peek(p, "key_env");
		jv prov = jv_object();

		if (rc == 0 && check_provider(file, pn, p) < 0)
			rc = -1;
		if (rc == 0) {
			prov = xg_json_set(prov, "kind", jv_copy(xg_json_get_peek(p, "kind")));
			prov = xg_json_set(prov, "base_url", jv_copy(xg_json_get_peek(p, "base_url")));
			prov = xg_json_set(prov, "key_env", jv_is_valid(env) ? jv_copy(env) : jv_null());
			prov = optional(prov, p, "dialect");
			prov = optional(prov, p, "headers");
			rc = add_models(cat, file, name, prov,
					jv_copy(xg_json_get_peek(p, "models")));
		}
		cat->providers = jv_object_set(cat->providers, name, prov);
		jv_free(p);
	}
	jv_free(providers);
	return rc;
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
	jv shipped = jv_null(), user = jv_null(), sp = jv_null(), up = jv_object();
	int rc;

	memset(cat, 0, sizeof(*cat));
	cat->models = jv_object();
	cat->providers = jv_object();
	cat->share_path = xg_path_share("models.json");
	cat->user_path = xg_path_config("models.json");
	rc = xg_jsonfile_read(cat->share_path, &shipped);
	if (rc == 0 && jv_get_kind(shipped) == JV_KIND_NULL) {
		xg_error("cannot find the shipped model catalog '%s' (is XG_SHARE_DIR right?)",
			 cat->share_path);
		rc = XG_EX_CONFIG;
		goto out;
	}
	if (rc || (rc = providers_of(cat->share_path, shipped, &sp)))
		goto out;
	if ((rc = xg_jsonfile_read(cat->user_path, &user)))
		goto out;
	if (jv_get_kind(user) != JV_KIND_NULL) {
		jv_free(up);
		up = jv_null();
		if ((rc = providers_of(cat->user_path, user, &up)))
			goto out;
	}
	rc = flatten(cat, merge_providers(sp, up), user) < 0 ? XG_EX_CONFIG : 0;
	sp = up = jv_null();
out:
	jv_free(sp);
	jv_free(up);
	jv_free(shipped);
	jv_free(user);
	if (rc)
		xg_catalog_release(cat);
	return rc;
}

void xg_catalog_release(struct xg_catalog *cat)
{
	jv_free(cat->models);
	jv_free(cat->providers);
	free(cat->share_path);
	free(cat->user_path);
	memset(cat, 0, sizeof(*cat));
	cat->models = cat->providers = jv_invalid();
}

jv xg_catalog_model_peek(const struct xg_catalog *cat, const char *id)
{
	return id ? xg_json_get_peek(cat->models, id) : jv_invalid();
}

jv xg_catalog_provider_peek(const struct xg_catalog *cat, const char *name)
{
	return name ? xg_json_get_peek(cat->providers, name) : jv_invalid();
}

int xg_catalog_accepts_effort_peek(jv model, const char *effort)
{
	jv efforts = xg_json_get_peek(model, "efforts");
	int i, len = xg_json_length_peek(efforts), found = 0;

	for (i = 0; effort && i < len && !found; i++) {
		jv e = jv_array_get(jv_copy(efforts), i);
		found = jv_get_kind(e) == JV_KIND_STRING && !strcmp(jv_string_value(e), effort);
		jv_free(e);
	}
	return found;
}

const char *xg_catalog_default_effort_peek(jv model)
{
	return xg_json_string_peek(model, "default_effort");
}

char *xg_catalog_efforts_text(jv model)
{
	jv efforts = xg_json_get_peek(model, "efforts");
	struct xg_buf b = XG_BUF_INIT(0);
	int i, len = xg_json_length_peek(efforts);

	for (i = 0; i < len; i++) {
		jv e = jv_array_get(jv_copy(efforts), i);
		if (jv_get_kind(e) == JV_KIND_STRING)
			xg_buf_addf(&b, "%s%s", i ? ", " : "", jv_string_value(e));
		jv_free(e);
	}
	if (b.len == 0)
		xg_buf_addstr(&b, "none");
	jv_free(model);
	return xg_buf_detach(&b, NULL);
}

int xg_catalog_write_models(const char *account, struct xg_rec_writer *w)
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
		int r = xg_account_authenticated_peek(&keys, prov,
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
