/*
 * The views a person reads (xg-choices(1), VIEWS): on a terminal, and
 * without --json, the records of models, models --probe, get and accounts
 * are drawn as a table.  The verbs write their records as always, into a
 * buffer here instead of standard output, and the table is drawn from
 * those records, so what a person sees is what a script would read.
 *
 *   MODEL              READY                    WINDOW  EFFORTS              PRICE IN/OUT
 *   openai/gpt-5.1     no key (OPENAI_API_KEY)  400k    none low medium* high  -
 */
#include "xg.h"
#include "choices/internal.h"

/* The columns a table may have. */
#define VIEW_COLUMNS 6

struct table {
	jv rows;		/* arrays of strings, the heading first */
	size_t width[VIEW_COLUMNS];
	size_t ncol;
};

/* How many columns s takes on a terminal: its characters, not its bytes. */
static size_t columns_of(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Adds a row of n strings (copied). */
static void add_row(struct table *t, const char *const *cells, size_t n)
{
	jv row = jv_array();
	size_t i;

	for (i = 0; i < n && i < VIEW_COLUMNS; i++) {
		size_t w = columns_of(cells[i]);

		if (w > t->width[i])
			t->width[i] = w;
		row = jv_array_append(row, jv_string(cells[i]));
	}
	if (n > t->ncol)
		t->ncol = n;
	t->rows = jv_array_append(t->rows, row);
}

/* The rows, two spaces between columns; the last column is not padded. */
static void draw(struct table *t, FILE *out)
{
	jv_array_foreach(t->rows, r, row) {
		size_t n = (size_t)jv_array_length(jv_copy(row)), i;

		(void)r;
		for (i = 0; i < n; i++) {
			jv cell = jv_array_get(jv_copy(row), (int)i);
			const char *s = jv_string_value(cell);

			fputs(s, out);
			if (i + 1 < n)
				fprintf(out, "%*s", (int)(t->width[i] - columns_of(s) + 2), "");
			jv_free(cell);
		}
		fputc('\n', out);
		jv_free(row);
	}
}

/* 400000 -> "400k", 1047576 -> "1.0M". */
static void window_text(jv m, char out[24])
{
	long long n;

	if (xg_json_int_peek(m, "context_window", &n) < 0)
		snprintf(out, 24, "-");
	else if (n >= 1000000)
		snprintf(out, 24, "%.1fM", (double)n / 1e6);
	else
		snprintf(out, 24, "%lldk", (n + 500) / 1000);
}

/* Whether the model can be used and, when not, why (the caller frees it). */
static char *ready_text(jv m)
{
	const char *how = xg_json_string_peek(m, "auth");
	const char *key_env = xg_json_string_peek(m, "key_env");
	const char *url_env = xg_json_string_peek(m, "base_url_env");
	bool authenticated = false, configured = false;

	xg_json_bool_peek(m, "authenticated", &authenticated);
	xg_json_bool_peek(m, "configured", &configured);
	if (!authenticated)
		return xg_asprintf("no key (%s)", key_env ? key_env : "?");
	if (how && !strcmp(how, "env"))
		return xg_asprintf("yes (%s)", key_env ? key_env : "env");
	if (how && !strcmp(how, "auth.json"))
		return xg_strdup("yes (auth.json)");
	if (configured)
		return xg_strdup("yes (local)");
	return url_env ? xg_asprintf("local, %s unset", url_env) : xg_strdup("local, not set up");
}

/* "none low medium* high": the default marked; "-" for none. */
static char *efforts_text(jv m)
{
	const char *def = xg_json_string_peek(m, "default_effort");
	jv efforts = xg_json_get_peek(m, "efforts");
	struct xg_buf b = XG_BUF_INIT(0);

	if (jv_get_kind(efforts) == JV_KIND_ARRAY) {
		jv_array_foreach(efforts, i, e) {
			if (jv_get_kind(e) == JV_KIND_STRING) {
				xg_buf_addf(&b, "%s%s%s", b.len ? " " : "", jv_string_value(e),
					    def && !strcmp(def, jv_string_value(e)) ? "*" : "");
			}
			(void)i;
			jv_free(e);
		}
	}
	if (!b.len)
		xg_buf_addstr(&b, "-");
	return xg_buf_detach(&b, NULL);
}

/* "$1.25/$10.00", dollars per million tokens in and out; "-" when the
 * catalog gives no price. */
static void price_text(jv m, char out[64])
{
	jv price = xg_json_get_peek(m, "price");
	double in, o;

	if (xg_json_number_peek(price, "input", &in) < 0 ||
	    xg_json_number_peek(price, "output", &o) < 0)
		snprintf(out, 64, "-");
	else
		snprintf(out, 64, "$%.2f/$%.2f", in, o);
}

static void model_row(struct table *t, jv m, int *nokey)
{
	const char *id = xg_json_string_peek(m, "id");
	char window[24], price[64], *ready = ready_text(m), *efforts = efforts_text(m);
	const char *cells[] = { id ? id : "?", ready, window, efforts, price };

	window_text(m, window);
	price_text(m, price);
	*nokey |= !strncmp(ready, "no key", 6);
	add_row(t, cells, 5);
	free(ready);
	free(efforts);
}

static void served_row(struct table *t, jv m)
{
	const char *id = xg_json_string_peek(m, "id"), *add = xg_json_string_peek(m, "add");
	bool offered = false;
	const char *cells[3];

	xg_json_bool_peek(m, "offered", &offered);
	cells[0] = id ? id : "?";
	cells[1] = offered ? "yes" : "no";
	cells[2] = add ? add : "";
	add_row(t, cells, 3);
}

static void choice_row(struct table *t, jv c)
{
	const char *mode = xg_json_string_peek(c, "mode"), *model = xg_json_string_peek(c, "model");
	const char *effort = xg_json_string_peek(c, "effort");
	const char *at = xg_json_string_peek(c, "updatedAt");
	int64_t ms;
	time_t secs;
	struct tm tm;
	char when[20] = "-";
	const char *cells[4];

	if (at && xg_clock_parse_rfc3339(at, &ms) == 0) {
		secs = (time_t)(ms / 1000);
		if (localtime_r(&secs, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	}
	cells[0] = mode ? mode : "?";
	cells[1] = model ? model : "-";
	cells[2] = effort ? effort : "-";
	cells[3] = when;
	add_row(t, cells, 4);
}

static void account_row(struct table *t, jv a)
{
	const char *name = xg_json_string_peek(a, "name");
	bool current = false;
	const char *cells[2];

	xg_json_bool_peek(a, "current", &current);
	cells[0] = current ? "*" : " ";
	cells[1] = name ? name : "?";
	add_row(t, cells, 2);
}

/* The heading for the records' type; NULL for a type drawn without one. */
static void heading(struct table *t, const char *type)
{
	static const char *const models[] = { "MODEL", "READY", "WINDOW", "EFFORTS",
					      "PRICE IN/OUT" };
	static const char *const served[] = { "SERVED", "OFFERED", "ADD TO MODELS.JSON" };
	static const char *const choices[] = { "MODE", "MODEL", "EFFORT", "SAVED" };

	if (!strcmp(type, "catalog_model"))
		add_row(t, models, 5);
	else if (!strcmp(type, "served_model"))
		add_row(t, served, 3);
	else if (!strcmp(type, "choice"))
		add_row(t, choices, 4);
}

/* Draws the records of text (NDJSON) on out; a record of a type no table
 * has is written as it is.  rc is the verb's exit status. */
static void draw_records(const char *verb, const char *text, size_t len, int rc, FILE *out)
{
	struct table t = { jv_array(), { 0 }, 0 };
	const char *p = text, *end = text + len, *type = NULL;
	int nokey = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		jv r = jv_parse_sized(p, (int)n);
		const char *rt = xg_json_string_peek(r, "type");

		if (rt && !type)
			heading(&t, type = rt);
		if (rt && !strcmp(rt, "catalog_model"))
			model_row(&t, r, &nokey);
		else if (rt && !strcmp(rt, "served_model"))
			served_row(&t, r);
		else if (rt && !strcmp(rt, "choice"))
			choice_row(&t, r);
		else if (rt && !strcmp(rt, "account"))
			account_row(&t, r);
		else
			fprintf(out, "%.*s\n", (int)n, p);
		jv_free(r);
		p += n + 1;
	}
	draw(&t, out);
	jv_free(t.rows);
	if (nokey)
		fprintf(out, "A key: 'xg-choices auth PROVIDER' (it asks for it), or the "
			"provider's variable.\n");
	if (!type && rc == 0 && !strcmp(verb, "get"))
		fprintf(stderr, "%s: no model choice saved yet: 'xg-choices set --model ID' "
			"saves one\n", xg_progname);
}

FILE *xg_choices_view_open(struct xg_choices_view *v, const char *verb, FILE *out, int json)
{
	static const char *const drawn[] = { "models", "get", "accounts", NULL };
	int i, table = 0;

	memset(v, 0, sizeof(*v));
	v->out = out;
	v->verb = verb;
	for (i = 0; drawn[i] && verb; i++)
		table |= !strcmp(verb, drawn[i]);
	if (table && !json && isatty(fileno(out)))
		v->mem = open_memstream(&v->text, &v->len);
	return v->mem ? v->mem : out;
}

int xg_choices_view_close(struct xg_choices_view *v, int rc)
{
	if (!v->mem)
		return rc;
	if (fclose(v->mem) != 0 && rc == 0)
		rc = XG_EX_IOERR;
	v->mem = NULL;
	if (v->text && rc != XG_EX_IOERR)
		draw_records(v->verb, v->text, v->len, rc, v->out);
	free(v->text);
	v->text = NULL;
	return rc;
}
