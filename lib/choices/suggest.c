/*
 * "Did you mean": what to say about a model id the catalog does not offer.
 */
#include "xg.h"
#include "choices/internal.h"

/*
 * A model left out for a bad entry gets that entry's message.  Otherwise
 * the closest ids of the catalog are named, at most two: the same model
 * name under another provider ("openai/gpt-5.1" for "gpt-5.1",
 * "ollama/gpt-oss:20b" for "llamacpp/gpt-oss:20b"), or else the ids fewest
 * edits away, when they are close enough to be a typo (no more edits than
 * a third of the model name's length, at least one).
 */

#define MAX_SUGGESTIONS 2

struct near {
	const char *id;		/* borrowed from the catalog */
	int score;		/* -1 for the same name; else the edits */
};

/* Keeps c among the best in v (n of them so far, sorted); returns n. */
static size_t keep(struct near *v, size_t n, struct near c)
{
	size_t i;

	for (i = n; i > 0 && v[i - 1].score > c.score; i--)
		if (i < MAX_SUGGESTIONS)
			v[i] = v[i - 1];
	if (i < MAX_SUGGESTIONS)
		v[i] = c;
	return n < MAX_SUGGESTIONS ? n + 1 : n;
}

char *xg_catalog_not_offered(const struct xg_catalog *cat, const char *id)
{
	const char *bad = xg_catalog_bad_peek(cat, id), *slash = strchr(id, '/');
	const char *name = slash ? slash + 1 : id;
	struct near best[MAX_SUGGESTIONS];
	int limit = (int)strlen(name) / 3, it, same = 0;
	size_t n = 0;
	char *text;

	if (bad)
		return xg_strdup(bad);
	if (limit < 1)
		limit = 1;
	for (it = jv_object_iter(cat->models); jv_object_iter_valid(cat->models, it);
	     it = jv_object_iter_next(cat->models, it)) {
		jv m = jv_object_iter_value(cat->models, it);
		const char *cid = xg_json_string_peek(m, "id");
		const char *cname = xg_json_string_peek(m, "name");
		/* cid lives on after jv_free(m): the catalog holds the entry. */
		struct near c = { cid, 0 };

		if (!strcasecmp(cname, name))
			c.score = -1, same = 1;
		else
			c.score = slash ? xg_catalog_distance(id, cid)
					: xg_catalog_distance(name, cname);
		if (c.score <= limit)
			n = keep(best, n, c);
		jv_free(m);
	}
	/* The same name elsewhere says more than a near one. */
	while (same && n > 0 && best[n - 1].score >= 0)
		n--;
	if (n == 0)
		return xg_asprintf("'%s' is not offered by the catalog ('xg-choices models' lists "
				   "the models it offers)", id);
	text = xg_asprintf("'%s' is not offered by the catalog (did you mean '%s'%s%s%s?)", id,
			   best[0].id, n > 1 ? " or '" : "", n > 1 ? best[1].id : "",
			   n > 1 ? "'" : "");
	return text;
}
