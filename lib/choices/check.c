/*
 * Checking the catalog's entries, and the defaults of what an entry leaves
 * out (man 5 xg-config).
 */
#include "xg.h"
#include "choices/internal.h"

/*
 * xg_catalog_check_provider and xg_catalog_check_model look at one merged
 * entry and say what is wrong with it and in which field, without
 * printing: catalog.c leaves a bad entry out and keeps the message, so one
 * typo costs one model, not the catalog.  xg_catalog_where turns a field
 * into "'FILE' line N", blaming the file that gave the field (the user's
 * when it has it, else the shipped one), found with xg_catalog_line.
 * xg_catalog_unknown_fields names a field no entry has (a typo that would
 * otherwise leave a default in place silently), and xg_catalog_defaults
 * fills in the limits and efforts an entry does not give.
 */

static const char *const api_kinds[] = {
	"openai-responses", "openai-chat", "anthropic-messages", NULL
};

static const char *const provider_fields[] = {
	"kind", "base_url", "base_url_env", "key_env", "dialect", "headers", "models", NULL
};

static const char *const model_fields[] = {
	"context_window", "max_output_tokens", "efforts", "default_effort", "price", NULL
};

static int name_char(int c)
{
	return isalnum(c) || c == '.' || c == '_' || c == '-';
}

int xg_catalog_provider_name_valid(const char *s)
{
	if (!*s || *s == '.' || *s == '-')
		return 0;
	for (; *s; s++)
		if (!name_char((unsigned char)*s))
			return 0;
	return 1;
}

int xg_catalog_model_name_valid(const char *s)
{
	if (!*s || *s == '/')
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

int xg_catalog_url_valid(const char *url)
{
	return url && (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) &&
	       url[strcspn(url, ":") + 3] != '\0';
}

/* Whether v is there and not null. */
static int given(jv v)
{
	return jv_is_valid(v) && jv_get_kind(v) != JV_KIND_NULL;
}

static int env_name_valid(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* Whether p's optional field key, when given, is a variable's name. */
static int env_field_ok(jv p, const char *key)
{
	jv v = xg_json_get_peek(p, key);

	return !given(v) || (jv_get_kind(v) == JV_KIND_STRING && env_name_valid(jv_string_value(v)));
}

char *xg_catalog_check_provider(const char *name, jv p, const char **field)
{
	const char *kind = xg_json_string_peek(p, "kind"), *env;
	jv dialect = xg_json_get_peek(p, "dialect"), headers = xg_json_get_peek(p, "headers");
	jv models = xg_json_get_peek(p, "models");
	int i;

	*field = NULL;
	if (!xg_catalog_provider_name_valid(name))
		return xg_asprintf("'%s' is not a provider name (letters, digits, '.', '_', '-')",
				   name);
	if (jv_get_kind(p) != JV_KIND_OBJECT)
		return xg_strdup("it must be an object");
	*field = "kind";
	for (i = 0; kind && api_kinds[i]; i++)
		if (!strcmp(kind, api_kinds[i]))
			break;
	if (given(xg_json_get_peek(p, "kind")) && (!kind || !api_kinds[i]))
		return xg_strdup("'kind' must be one of openai-responses, openai-chat, "
				 "anthropic-messages");
	*field = "dialect";
	if (given(dialect) && jv_get_kind(dialect) != JV_KIND_STRING)
		return xg_strdup("'dialect' must be a string");
	*field = "headers";
	if (given(headers) && jv_get_kind(headers) != JV_KIND_OBJECT)
		return xg_strdup("'headers' must be an object");
	*field = "key_env";
	if (!env_field_ok(p, "key_env"))
		return xg_strdup("'key_env' must name an environment variable, or be null for a "
				 "provider that needs no key");
	*field = "base_url_env";
	if (!env_field_ok(p, "base_url_env"))
		return xg_strdup("'base_url_env' must name an environment variable");
	env = xg_json_string_peek(p, "base_url_env");
	if (env && getenv(env) && *getenv(env)) {
		if (!xg_catalog_url_valid(getenv(env)))
			return xg_asprintf("%s is set but is not an http:// or https:// URL", env);
	} else {
		*field = "base_url";
		if (!xg_catalog_url_valid(xg_json_string_peek(p, "base_url")))
			return xg_strdup("'base_url' must be an http:// or https:// URL");
	}
	*field = "models";
	if (given(models) && jv_get_kind(models) != JV_KIND_OBJECT)
		return xg_strdup("'models' must be an object");
	*field = NULL;
	return NULL;
}

/* Whether m's optional field key, when given, is a positive integer. */
static int tokens_ok(jv m, const char *key)
{
	long long n;

	return !given(xg_json_get_peek(m, key)) || (xg_json_int_peek(m, key, &n) == 0 && n > 0);
}

char *xg_catalog_check_model(const char *prov, const char *name, jv m, const char **field)
{
	jv efforts = xg_json_get_peek(m, "efforts"), def = xg_json_get_peek(m, "default_effort");
	int i, len = 0;

	*field = NULL;
	if (!xg_catalog_model_name_valid(name))
		return xg_asprintf("'%s' is not a model name (no spaces or control characters, not "
				   "starting with '/')", name);
	if (jv_get_kind(m) != JV_KIND_OBJECT)
		return xg_strdup("it must be an object ({} takes every default)");
	*field = "context_window";
	if (!tokens_ok(m, "context_window"))
		return xg_strdup("'context_window' must be a positive number of tokens");
	*field = "max_output_tokens";
	if (!tokens_ok(m, "max_output_tokens"))
		return xg_strdup("'max_output_tokens' must be a positive number of tokens");
	*field = "efforts";
	if (given(efforts) && jv_get_kind(efforts) != JV_KIND_ARRAY)
		return xg_strdup("'efforts' must be an array of strings (empty for a model that "
				 "takes none)");
	len = given(efforts) ? xg_json_length_peek(efforts) : 0;
	for (i = 0; i < len; i++) {
		jv e = jv_array_get(jv_copy(efforts), i);
		int ok = jv_get_kind(e) == JV_KIND_STRING && jv_string_length_bytes(jv_copy(e)) > 0;

		jv_free(e);
		if (!ok)
			return xg_strdup("'efforts' must be an array of strings");
	}
	*field = "default_effort";
	if (given(def) && jv_get_kind(def) != JV_KIND_STRING)
		return xg_strdup("'default_effort' must be a string, or null");
	if (given(def) && len == 0)
		return xg_strdup("'default_effort' must be null for a model that accepts no effort "
				 "('efforts' is empty or not given)");
	if (given(def) && !xg_catalog_accepts_effort_peek(m, jv_string_value(def)))
		return xg_strdup("'default_effort' must be one of its 'efforts'");
	*field = "price";
	if (given(xg_json_get_peek(m, "price")))
		return xg_catalog_check_price(xg_json_get_peek(m, "price"));
	*field = NULL;
	return NULL;
}

jv xg_catalog_defaults(jv m)
{
	jv efforts = xg_json_get_peek(m, "efforts"), def = xg_json_get_peek(m, "default_effort");
	long long ctx = XG_CATALOG_CONTEXT_WINDOW, out;

	if (xg_json_int_peek(m, "context_window", &ctx) < 0)
		m = xg_json_set(m, "context_window", jv_number((double)ctx));
	if (xg_json_int_peek(m, "max_output_tokens", &out) < 0) {
		out = XG_CATALOG_MAX_OUTPUT;
		if (out > ctx / 4)
			out = ctx / 4 > 0 ? ctx / 4 : 1;
		m = xg_json_set(m, "max_output_tokens", jv_number((double)out));
	}
	if (!given(efforts)) {
		m = xg_json_set(m, "efforts", jv_array());
		efforts = xg_json_get_peek(m, "efforts");
	}
	if (!given(def)) {
		if (xg_json_length_peek(efforts) == 0)
			def = jv_null();
		else if (xg_catalog_accepts_effort_peek(m, "medium"))
			def = jv_string("medium");
		else
			def = jv_array_get(jv_copy(efforts), 0);
		m = xg_json_set(m, "default_effort", def);
	}
	return m;
}

/* providers.PROV[.models.MODEL][.FIELD] of file value f, borrowed. */
static jv at_peek(jv f, const char *prov, const char *model, const char *field)
{
	jv v = xg_json_get_peek(xg_json_get_peek(f, "providers"), prov);

	if (model)
		v = xg_json_get_peek(xg_json_get_peek(v, "models"), model);
	return field ? xg_json_get_peek(v, field) : v;
}

char *xg_catalog_where(const struct xg_catalog_loading *l, const char *prov, const char *model,
		       const char *field)
{
	const char *path[5];
	const struct xg_buf *text;
	const char *file;
	size_t n = 0, line;
	int user;

	/* The file that gives the field; when neither does, the user's if it
	 * names the entry, else the shipped one. */
	if (field && jv_is_valid(at_peek(l->user, prov, model, field)))
		user = 1;
	else if (field && jv_is_valid(at_peek(l->shipped, prov, model, field)))
		user = 0;
	else
		user = jv_is_valid(at_peek(l->user, prov, model, NULL));
	if (user) {
		file = l->cat->user_path;
		text = &l->utext;
	} else {
		file = l->cat->share_path;
		text = &l->stext;
	}
	path[n++] = "providers";
	path[n++] = prov;
	if (model) {
		path[n++] = "models";
		path[n++] = model;
	}
	if (field)
		path[n++] = field;
	line = xg_catalog_line(text->buf, text->len, path, n);
	return line ? xg_asprintf("'%s' line %zu", file, line) : xg_asprintf("'%s'", file);
}

/* Edits to turn a into b, at most 99 (enough to rank close names). */
int xg_catalog_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int row[100], prev, tmp, best;

	if (la > 99 || lb > 99)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			tmp = row[j];
			best = prev + (tolower((unsigned char)a[i - 1]) !=
				       tolower((unsigned char)b[j - 1]));
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

/* The known field closest to key, when it is close enough to be a typo. */
static const char *closest_field(const char *const *known, const char *key)
{
	const char *best = NULL;
	int d, bd = 4;

	for (; *known; known++)
		if ((d = xg_catalog_distance(key, *known)) < bd) {
			bd = d;
			best = *known;
		}
	return best;
}

void xg_catalog_unknown_fields(struct xg_catalog_loading *l, const char *prov,
			       const char *model, jv entry)
{
	const char *const *known = model ? model_fields : provider_fields;

	jv_object_foreach(entry, key, value) {
		const char *k = jv_string_value(key), *near;
		size_t i;
		char *where, *text;

		for (i = 0; known[i] && strcmp(known[i], k); i++)
			;
		if (!known[i]) {
			near = closest_field(known, k);
			where = xg_catalog_where(l, prov, model, k);
			text = xg_asprintf("%s: %s '%s%s%s': unknown field '%s' is ignored%s%s%s",
					   where, model ? "model" : "provider", prov,
					   model ? "/" : "", model ? model : "", k,
					   near ? " (did you mean '" : "", near ? near : "",
					   near ? "'?)" : "");
			l->cat->problems = jv_array_append(l->cat->problems, jv_string(text));
			free(text);
			free(where);
		}
		jv_free(key);
		jv_free(value);
	}
}
