/*
 * The models verb, xg-choices models: the catalog as records, each model
 * with whether the account is authenticated for its provider; and with
 * --probe PROVIDER, the models its server serves beside the catalog's.
 */
#include "xg.h"
#include "choices/internal.h"
#include "curl.h"

/* Whether the account is authenticated for a model's provider is decided
 * here, where both the catalog and the keys are at hand: the catalog
 * itself knows nothing of accounts. */
int xg_catalog_write_models(const char *account, struct xg_rec_writer *w)
{
	struct xg_catalog cat;
	struct xg_account_keys keys;
	int rc, it;

	if ((rc = xg_catalog_load(&cat)))
		return rc;
	xg_catalog_warn(&cat);
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
		rec = xg_json_set(rec, "configured",
				  r && (xg_json_string_peek(m, "key_env") ||
					xg_catalog_configured_peek(&cat, prov)) ? jv_true() : jv_false());
		if (xg_rec_write(w, rec) < 0)
			rc = XG_EX_IOERR;
		jv_free(m);
	}
	xg_account_keys_release(&keys);
	xg_catalog_release(&cat);
	return rc;
}

/*
 * The probe: llama.cpp's server, Ollama, vLLM, OpenAI, OpenRouter and
 * Anthropic all answer GET {base_url}/models with {"data": [{"id": ...},
 * ...]}.  The request is one short GET, made with libcurl here rather than
 * through the provider library, whose client speaks only the streamed POSTs
 * of the model APIs: a connection refused fails at once, and a server that
 * does not answer within a few seconds is given up.  The account's key for
 * the provider goes in the header the provider's kind expects and is never
 * shown; redirects are not followed, so it goes nowhere else.
 *
 * libcurl is loaded when a probe is asked for (curl.h): linked, it and
 * the libraries it needs would cost every xg-choices process (a stage of
 * every run) some 7 ms to load, for the one verb that speaks HTTP.
 */
#define PROBE_CONNECT_MS 3000L
#define PROBE_TOTAL_MS 10000L
#define PROBE_MAX_BODY ((size_t)8 << 20)

struct sink {
	struct xg_buf *body;
	int over;		/* the answer is longer than PROBE_MAX_BODY */
};

static size_t collect(char *p, size_t size, size_t n, void *ctx)
{
	struct sink *s = ctx;

	if (xg_buf_add(s->body, p, size * n) < 0) {
		s->over = 1;
		return 0;
	}
	return size * n;
}

/* list with line appended; NULL (list freed) when curl cannot. */
static struct curl_slist *add(const struct xg_curl *c, struct curl_slist *list,
			      const char *line)
{
	struct curl_slist *next = list ? c->slist_append(list, line) : NULL;

	if (!next)
		c->slist_free_all(list);
	return next;
}

/* The header lines for provider p (only looked at) and key (may be NULL);
 * NULL when curl cannot make them. */
static struct curl_slist *headers_for(const struct xg_curl *c, jv p, const char *key)
{
	struct curl_slist *list = c->slist_append(NULL, "Accept: application/json");
	const char *kind = xg_json_string_peek(p, "kind");
	jv extra = xg_json_get_peek(p, "headers");
	struct xg_buf h = XG_BUF_INIT(0);
	int anthropic = kind && !strcmp(kind, "anthropic-messages");

	if (anthropic)
		list = add(c, list, "anthropic-version: 2023-06-01");
	if (key) {
		xg_buf_addf(&h, anthropic ? "x-api-key: %s" : "Authorization: Bearer %s", key);
		list = add(c, list, h.buf);
		memset(h.buf, 0, h.len);
	}
	if (jv_get_kind(extra) == JV_KIND_OBJECT) {
		jv_object_foreach(extra, name, value) {
			xg_buf_reset(&h);
			if (jv_get_kind(value) == JV_KIND_STRING) {
				xg_buf_addf(&h, "%s: %s", jv_string_value(name), jv_string_value(value));
				list = add(c, list, h.buf);
			}
			jv_free(name);
			jv_free(value);
		}
	}
	xg_buf_release(&h);
	return list;
}

/* GETs url into body: 0 with *status, or 69 after a message naming
 * provider and url. */
static int get(const struct xg_curl *c, const char *provider, const char *url,
	       struct curl_slist *headers, struct xg_buf *body, long *status)
{
	char err[CURL_ERROR_SIZE] = "";
	struct sink sink = { body, 0 };
	CURL *h;
	CURLcode cc;

	if (!(h = c->easy_init())) {
		xg_error("cannot set up libcurl to ask provider '%s'", provider);
		return XG_EX_SOFTWARE;
	}
	c->easy_setopt(h, CURLOPT_URL, url);
	c->easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	c->easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	c->easy_setopt(h, CURLOPT_WRITEDATA, &sink);
	c->easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	c->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, PROBE_CONNECT_MS);
	c->easy_setopt(h, CURLOPT_TIMEOUT_MS, PROBE_TOTAL_MS);
	c->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	c->easy_setopt(h, CURLOPT_USERAGENT, "xg/" XG_VERSION);
	c->easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
#if LIBCURL_VERSION_NUM >= 0x075500
	c->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	c->easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	cc = c->easy_perform(h);
	c->easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	c->easy_cleanup(h);
	if (sink.over) {
		xg_error("provider '%s' at '%s' answered more than %zu bytes", provider, url,
			 PROBE_MAX_BODY);
		return XG_EX_UNAVAILABLE;
	}
	if (cc != CURLE_OK) {
		xg_error("cannot reach provider '%s' at '%s': %s", provider, url,
			 *err ? err : c->easy_strerror(cc));
		return XG_EX_UNAVAILABLE;
	}
	return 0;
}

/* The served_model record of entry e (only looked at) of provider. */
static jv served(const struct xg_catalog *cat, const char *provider, const char *name, jv e)
{
	char *id = xg_asprintf("%s/%s", provider, name);
	int offered = jv_is_valid(xg_catalog_model_peek(cat, id));
	jv rec = xg_rec_new("served_model");
	long long ctx = 0;

	if (xg_json_int_peek(e, "max_model_len", &ctx) < 0)	/* vLLM */
		xg_json_int_peek(e, "context_length", &ctx);	/* OpenRouter */
	rec = xg_json_set(rec, "id", jv_string(id));
	rec = xg_json_set(rec, "provider", jv_string(provider));
	rec = xg_json_set(rec, "name", jv_string(name));
	rec = xg_json_set(rec, "offered", offered ? jv_true() : jv_false());
	if (offered) {
		rec = xg_json_set(rec, "add", jv_null());
	} else {
		jv key = jv_dump_string(jv_string(name), 0);
		char *add = ctx > 0 ? xg_asprintf("%s: {\"context_window\": %lld}",
						  jv_string_value(key), ctx)
				    : xg_asprintf("%s: {}", jv_string_value(key));

		rec = xg_json_set(rec, "add", jv_string(add));
		free(add);
		jv_free(key);
	}
	free(id);
	return rec;
}

/* Writes a record per model of the answer; 0, 69 for one that is not a
 * list of models, 74. */
static int write_served(const struct xg_catalog *cat, const char *provider, const char *url,
			const struct xg_buf *body, struct xg_rec_writer *w)
{
	jv v = xg_json_parse(body->buf, body->len), data = xg_json_get_peek(v, "data");
	int rc = 0;

	if (jv_get_kind(data) != JV_KIND_ARRAY) {
		xg_error("provider '%s' at '%s' did not answer with a list of models "
			 "({\"data\": [{\"id\": ...}]})", provider, url);
		jv_free(v);
		return XG_EX_UNAVAILABLE;
	}
	jv_array_foreach(data, i, e) {
		const char *name = xg_json_string_peek(e, "id");

		(void)i;
		if (rc == 0 && name && xg_catalog_model_name_valid(name) &&
		    xg_rec_write(w, served(cat, provider, name, e)) < 0)
			rc = XG_EX_IOERR;
		jv_free(e);
	}
	jv_free(v);
	return rc;
}

/* The URL of provider p's models list; the caller frees it. */
static char *models_url(jv p)
{
	const char *base = xg_json_string_peek(p, "base_url");
	size_t n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	return xg_asprintf("%.*s/models", (int)n, base);
}

/* Asks provider (its entry p, only looked at) for its models with key
 * (may be NULL), and writes them; 0 or an exit code after a message. */
static int ask(const struct xg_catalog *cat, const char *provider, jv p, const char *key,
	       struct xg_rec_writer *w)
{
	struct xg_buf body = XG_BUF_INIT(PROBE_MAX_BODY);
	struct curl_slist *headers = NULL;
	const struct xg_curl *c = xg_curl();
	char *url = models_url(p);
	long status = 0;
	int rc;

	if (!c) {
		xg_error("%s, to probe a server", xg_curl_error());
		rc = XG_EX_SOFTWARE;
		goto out;
	}
	if (!(headers = headers_for(c, p, key))) {
		xg_error("cannot make the headers to ask provider '%s'", provider);
		rc = XG_EX_SOFTWARE;
	} else if ((rc = get(c, provider, url, headers, &body, &status)) == 0) {
		if (status == 401 || status == 403) {
			xg_error("provider '%s' at '%s' refused %s (HTTP %ld)", provider, url,
				 key ? "the key" : "to answer without a key", status);
			rc = XG_EX_NOPERM;
		} else if (status < 200 || status > 299) {
			xg_error("provider '%s' at '%s' answered HTTP %ld", provider, url, status);
			rc = XG_EX_UNAVAILABLE;
		} else {
			rc = write_served(cat, provider, url, &body, w);
		}
	}
	if (headers)
		c->slist_free_all(headers);
out:
	xg_buf_release(&body);
	free(url);
	return rc;
}

int xg_catalog_probe(const char *account, const char *provider, struct xg_rec_writer *w)
{
	struct xg_catalog cat;
	struct xg_account_keys keys;
	char *key = NULL;
	jv p;
	int rc;

	if ((rc = xg_catalog_load(&cat)))
		return rc;
	xg_catalog_warn(&cat);
	p = xg_catalog_provider_peek(&cat, provider);
	if (!jv_is_valid(p)) {
		const char *bad = xg_json_string_peek(cat.bad, provider);

		if (bad)
			xg_error("cannot probe provider '%s': %s", provider, bad);
		else
			xg_error("provider '%s' is not in the model catalog", provider);
		xg_catalog_release(&cat);
		return XG_EX_CONFIG;
	}
	xg_account_keys_init(&keys, account);
	if (xg_account_key(&keys, provider, jv_copy(p), &key) < 0)
		rc = keys.status > 1 ? keys.status : XG_EX_NOPERM;
	else
		rc = ask(&cat, provider, p, key, w);
	if (key) {
		memset(key, 0, strlen(key));
		free(key);
	}
	xg_account_keys_release(&keys);
	xg_catalog_release(&cat);
	return rc;
}
