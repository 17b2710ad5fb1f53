/*
 * Usage (xg-log usage): the tokens of the runs that pass the filter,
 * summed in all or by model, day, account or workspace: input, cached
 * input, output, the share of input the cache served, and the cost.  A
 * run's cost is the one it recorded; a run that recorded none is priced
 * from the catalog's price of its model now, when it has one; else the
 * cost is unknown, and the row says so.  A run that used no tokens costs
 * nothing whatever its price; a row none of whose runs has a known cost
 * shows "-", never $0.
 */
#include "xg.h"
#include "log/internal.h"
#include "choices/choices.h"

struct sum {
	long long runs, in, cached, out, unpriced;
	long long priced;	/* runs whose cost is known and counted */
	double cost;
};

/* What line_cost says of a run that used no tokens and recorded no cost. */
#define NOTHING_TO_PRICE (-2.0)

struct usage {
	const struct xg_log_opts *o;
	struct log_filter f;
	struct xg_catalog cat;
	int have_catalog;
	jv keys;		/* key -> index into sums, in first-seen order */
	struct sum *sums;
	size_t n, cap;
	struct sum total;
};

static const char *const groupings[] = { "model", "day", "account", "workspace", NULL };

/* The key of line's group (the caller frees it). */
static char *group_key(const struct usage *u, jv line)
{
	const char *by = u->o->by, *v;
	char when[17];

	if (!by)
		return xg_strdup("all");
	if (!strcmp(by, "day")) {
		xg_log_local_time(xg_log_started_peek(line), when);
		when[10] = 0;
		return xg_strdup(when);
	}
	v = xg_json_string_peek(line, by);
	return xg_strdup(v ? v : "-");
}

static void add(struct sum *s, long long in, long long cached, long long out, double cost)
{
	s->runs++;
	s->in += in;
	s->cached += cached;
	s->out += out;
	if (cost == NOTHING_TO_PRICE)
		return;
	if (cost < 0) {
		s->unpriced++;
	} else {
		s->priced++;
		s->cost += cost;
	}
}

static double line_cost(struct usage *u, jv line, long long in, long long cached, long long out)
{
	const char *model = xg_json_string_peek(line, "model");
	double cost;

	if (xg_json_number_peek(line, "cost", &cost) == 0)
		return cost;
	if (in == 0 && out == 0)
		return NOTHING_TO_PRICE;
	if (!model)
		return -1;
	if (!u->have_catalog)
		u->have_catalog = xg_catalog_load(&u->cat) == 0 ? 1 : -1;
	if (u->have_catalog < 0)
		return -1;
	return xg_catalog_cost_peek(xg_catalog_model_peek(&u->cat, model), in, cached, out);
}

static int visit(jv line, void *ctx)
{
	struct usage *u = ctx;
	jv usage = xg_json_get_peek(line, "usage"), at;
	long long in = 0, cached = 0, out = 0;
	char *key;
	double cost;
	size_t i;

	if (!xg_log_filter_peek(&u->f, line))
		return 0;
	xg_json_int_peek(usage, "input", &in);
	xg_json_int_peek(usage, "cached_input", &cached);
	xg_json_int_peek(usage, "output", &out);
	cost = line_cost(u, line, in, cached, out);
	key = group_key(u, line);
	at = jv_object_get(jv_copy(u->keys), jv_string(key));
	if (jv_get_kind(at) == JV_KIND_NUMBER) {
		i = (size_t)jv_number_value(at);
	} else {
		if (u->n == u->cap) {
			u->cap = u->cap ? 2 * u->cap : 16;
			u->sums = xg_realloc(u->sums, u->cap * sizeof(*u->sums));
		}
		i = u->n++;
		memset(&u->sums[i], 0, sizeof(u->sums[i]));
		u->keys = jv_object_set(u->keys, jv_string(key), jv_number((double)i));
	}
	jv_free(at);
	free(key);
	add(&u->sums[i], in, cached, out, cost);
	add(&u->total, in, cached, out, cost);
	return 0;
}

static void row(FILE *fp, int width, const char *key, const struct sum *s)
{
	char in[24], cached[24], out[24], cost[40];

	xg_log_count(s->in, in);
	xg_log_count(s->cached, cached);
	xg_log_count(s->out, out);
	if (!s->priced)
		snprintf(cost, sizeof(cost), "-");
	else
		snprintf(cost, sizeof(cost), "$%.4f%s", s->cost, s->unpriced ? "*" : "");
	fprintf(fp, "%-*s %6lld %9s %9s %9s %6.1f%% %12s\n", width, key, s->runs, in, cached, out,
		s->in ? 100.0 * (double)s->cached / (double)s->in : 0.0, cost);
}

static void record(FILE *fp, const char *by, const char *key, const struct sum *s)
{
	struct xg_buf b = XG_BUF_INIT(0);
	jv v = xg_rec_new("usage_sum");

	v = xg_json_set(v, "by", by ? jv_string(by) : jv_null());
	v = xg_json_set(v, "key", key ? jv_string(key) : jv_null());
	v = xg_json_set(v, "runs", jv_number((double)s->runs));
	v = xg_json_set(v, "input", jv_number((double)s->in));
	v = xg_json_set(v, "cached_input", jv_number((double)s->cached));
	v = xg_json_set(v, "output", jv_number((double)s->out));
	v = xg_json_set(v, "cache_hit", jv_number(s->in ? (double)s->cached / (double)s->in : 0));
	v = xg_json_set(v, "cost", s->priced ? jv_number(s->cost) : jv_null());
	v = xg_json_set(v, "unpriced_runs", jv_number((double)s->unpriced));
	xg_json_dump(&b, v);
	fprintf(fp, "%s\n", b.buf);
	xg_buf_release(&b);
}

/* Rows in the order of their keys (days oldest first), then the total. */
static void report(struct usage *u, FILE *fp)
{
	jv keys = jv_keys(jv_copy(u->keys));
	int width = 5;		/* "total" */

	/* The key column as wide as its widest key, in characters. */
	jv_array_foreach(keys, i, k) {
		int w = 0;

		for (const char *p = jv_string_value(k); *p; p++)
			w += ((unsigned char)*p & 0xc0) != 0x80;
		if (w > width)
			width = w;
		(void)i;
		jv_free(k);
	}
	if (!u->o->json)
		fprintf(fp, "%-*s %6s %9s %9s %9s %7s %12s\n", width, u->o->by ? u->o->by : "",
			"runs", "input", "cached", "output", "hit", "cost");
	jv_array_foreach(keys, i, k) {
		jv at = jv_object_get(jv_copy(u->keys), jv_copy(k));
		size_t n = (size_t)jv_number_value(at);

		(void)i;
		if (u->o->json)
			record(fp, u->o->by, jv_string_value(k), &u->sums[n]);
		else if (u->o->by)
			row(fp, width, jv_string_value(k), &u->sums[n]);
		jv_free(k);
		jv_free(at);
	}
	jv_free(keys);
	if (u->o->json && u->o->by)
		record(fp, u->o->by, NULL, &u->total);
	else if (!u->o->json)
		row(fp, width, "total", &u->total);
	if (!u->o->json && u->total.unpriced && u->total.priced)
		fprintf(fp, "* %lld of the runs have no price in the catalog; their cost is left "
			"out\n", u->total.unpriced);
}

int xg_log_usage(const struct xg_log_opts *o, FILE *out)
{
	struct usage u;
	struct log_index ix;
	int rc, i, ok = !o->by;

	memset(&u, 0, sizeof(u));
	u.o = o;
	for (i = 0; o->by && groupings[i]; i++)
		ok |= !strcmp(o->by, groupings[i]);
	if (!ok) {
		xg_error("--by '%s' is not a grouping: model, day, account or workspace", o->by);
		return XG_EX_USAGE;
	}
	if ((rc = xg_log_filter_init(&u.f, o)))
		return rc;
	u.keys = jv_object();
	if ((rc = xg_log_index_open(&ix)) == 0) {
		ix.needle = xg_log_filter_needle(&u.f);
		xg_log_index_scan(&ix, 0, visit, &u);
		report(&u, out);
		rc = xg_log_index_status(&ix);
	}
	xg_log_index_close(&ix);
	if (u.have_catalog > 0)
		xg_catalog_release(&u.cat);
	jv_free(u.keys);
	free(u.sums);
	xg_log_filter_release(&u.f);
	return rc;
}
