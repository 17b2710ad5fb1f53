/*
 * A settings record (man 5 xg-records, settings) as a terminal shows it,
 * for xg-run --settings: one row a policy (the stall watch, the retries,
 * the work slices, compaction), what it is with durations as a person
 * writes them (15m, 30s), and where it came from.
 */
#include "xg.h"
#include "dispatch/dispatch.h"

/* A duration as a person writes it: 15m, 30s, 1500ms. */
static void add_duration(struct xg_buf *b, double ms)
{
	long long n = (long long)ms;

	if (n && n % 3600000 == 0)
		xg_buf_addf(b, "%lldh", n / 3600000);
	else if (n && n % 60000 == 0)
		xg_buf_addf(b, "%lldm", n / 60000);
	else if (n && n % 1000 == 0)
		xg_buf_addf(b, "%llds", n / 1000);
	else
		xg_buf_addf(b, "%lldms", n);
}

static double num(jv rec, const char *policy, const char *key)
{
	jv v = xg_json_get_peek(xg_json_get_peek(xg_json_get_peek(rec, policy), "value"), key);

	return jv_get_kind(v) == JV_KIND_NUMBER ? jv_number_value(v) : 0;
}

/* The rows of the table: the policy, what it is, where it came from; the
 * middle column as wide as its widest. */
struct rows {
	const char *name[4], *policy[4];
	char *what[4];
	int n;
};

static void row(struct rows *t, const char *name, struct xg_buf *b, const char *policy)
{
	t->name[t->n] = name;
	t->policy[t->n] = policy;
	t->what[t->n++] = xg_strdup(b->buf);
	xg_buf_reset(b);
}

static void print_rows(FILE *out, struct rows *t, jv rec)
{
	int i, width = 0;

	for (i = 0; i < t->n; i++)
		if ((int)strlen(t->what[i]) > width)
			width = (int)strlen(t->what[i]);
	for (i = 0; i < t->n; i++) {
		jv from = xg_json_get_peek(xg_json_get_peek(rec, t->policy[i]), "from");

		fprintf(out, "%-11s %-*s  %s\n", t->name[i], width, t->what[i],
			jv_get_kind(from) == JV_KIND_STRING ? jv_string_value(from) : "");
		free(t->what[i]);
	}
}

void xg_render_settings_peek(FILE *out, jv rec)
{
	static const char *const windows[] = { "reply", "tool", "grace", "beat" };
	static const char *const retry[] = { "base", "cap", "idle", "connect", "budget" };
	struct xg_buf b = XG_BUF_INIT(0);
	struct rows t = { 0 };
	char key[16];
	size_t i;

	for (i = 0; i < 4; i++) {
		snprintf(key, sizeof(key), "%s_ms", windows[i]);
		xg_buf_addf(&b, "%s%s ", i ? ", " : "", windows[i]);
		add_duration(&b, num(rec, "stall", key));
	}
	row(&t, "stall", &b, "stall");
	xg_buf_addf(&b, "%g retries", num(rec, "retry", "attempts"));
	for (i = 0; i < 5; i++) {
		snprintf(key, sizeof(key), "%s_ms", retry[i]);
		xg_buf_addf(&b, ", %s ", retry[i]);
		add_duration(&b, num(rec, "retry", key));
	}
	row(&t, "retry", &b, "retry");
	if (jv_get_kind(xg_json_get_peek(xg_json_get_peek(xg_json_get_peek(rec, "work_slice"),
							  "value"), "off")) == JV_KIND_TRUE) {
		xg_buf_addstr(&b, "off");
	} else {
		xg_buf_addf(&b, "%g tool calls or ", num(rec, "work_slice", "max_tool_calls"));
		add_duration(&b, num(rec, "work_slice", "max_ms"));
		xg_buf_addf(&b, ", %g slices", num(rec, "work_slice", "max_slices"));
	}
	row(&t, "work slice", &b, "work_slice");
	xg_buf_addf(&b, "reserve the output limit, at least %g, at most 1/%g window",
		    num(rec, "compaction", "reserve_floor_tokens"),
		    1 / num(rec, "compaction", "reserve_max_window_share"));
	row(&t, "compaction", &b, "compaction");
	print_rows(out, &t, rec);
	xg_buf_release(&b);
}
