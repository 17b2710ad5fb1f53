/*
 * The list of runs (xg-log(1) with no verb): the index's lines that pass
 * the filter, newest first, as rows for a person or as the lines
 * themselves (--json).
 *
 *   3f9a1c2b  2026-11-30 10:56  interrupted (user)  demo/scripted   1.2k/300  ~/roman  make ...
 *   0c4d2e1a  2026-11-30 10:41  completed           openai/gpt-5.1  20.1k/2k  ~/roman  fix ...
 *
 * The id's last 8 characters, the local start time, the status (with its
 * stop), the model, tokens in and out, the workspace, the request's first
 * line.  The rows are drawn once all are known, each column as wide as its
 * widest cell, so a long status or model keeps the columns aligned.
 */
#include "xg.h"
#include "log/internal.h"

#define REQUEST_MAX 60

enum { COL_ID, COL_WHEN, COL_STATUS, COL_MODEL, COL_TOKENS, COL_WORKSPACE, COL_REQUEST, NCOLS };

struct list {
	const struct xg_log_opts *o;
	struct log_filter f;
	struct xg_buf row;
	FILE *out;
	long left;
	int failed;
	long shown;		/* runs listed */
	jv rows;		/* the rows' cells, drawn at the end */
	size_t width[NCOLS];
};

/* s cut to at most max bytes on a character's boundary, "..." when cut. */
static void add_cut(struct xg_buf *b, const char *s, size_t max)
{
	size_t n = strcspn(s, "\r\n");
	int cut = n > max;

	if (cut) {
		n = max;
		n = xg_utf8_start(s, n);
	}
	for (size_t i = 0; i < n; i++)
		xg_buf_addch(b, (unsigned char)s[i] < 0x20 ? ' ' : s[i]);
	if (cut)
		xg_buf_addstr(b, "...");
}

/* How many columns s takes on a terminal: its characters, not bytes. */
static size_t columns_of(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static jv cell(struct list *l, int col, const char *s)
{
	size_t w = columns_of(s);

	if (w > l->width[col])
		l->width[col] = w;
	return jv_string(s);
}

static void add_row(struct list *l, jv line)
{
	const char *id = xg_json_string_peek(line, "run");
	const char *status = xg_json_string_peek(line, "status");
	const char *stop = xg_json_string_peek(line, "stop");
	const char *model = xg_json_string_peek(line, "model");
	const char *req = xg_json_string_peek(line, "request");
	jv usage = xg_json_get_peek(line, "usage"), row = jv_array();
	long long in = 0, outn = 0;
	char when[17], tin[24], tout[24], tok[56];
	char *ws = xg_log_short_path(xg_json_string_peek(line, "workspace"));
	size_t idl = id ? strlen(id) : 0;
	struct xg_buf b = XG_BUF_INIT(0);

	xg_log_local_time(xg_log_started_peek(line), when);
	xg_json_int_peek(usage, "input", &in);
	xg_json_int_peek(usage, "output", &outn);
	xg_log_count(in, tin);
	xg_log_count(outn, tout);
	snprintf(tok, sizeof(tok), "%s/%s", tin, tout);
	row = jv_array_append(row, cell(l, COL_ID, idl > 8 ? id + idl - 8 : id ? id : "?"));
	row = jv_array_append(row, cell(l, COL_WHEN, when));
	xg_buf_addf(&b, "%s%s%s%s", status ? status : "?", stop ? " (" : "", stop ? stop : "",
		    stop ? ")" : "");
	row = jv_array_append(row, cell(l, COL_STATUS, b.buf));
	row = jv_array_append(row, cell(l, COL_MODEL, model ? model : "-"));
	row = jv_array_append(row, cell(l, COL_TOKENS, tok));
	xg_buf_reset(&b);
	add_cut(&b, ws, 40);
	row = jv_array_append(row, cell(l, COL_WORKSPACE, b.buf));
	xg_buf_reset(&b);
	add_cut(&b, req ? req : "", REQUEST_MAX);
	row = jv_array_append(row, cell(l, COL_REQUEST, b.buf));
	l->rows = jv_array_append(l->rows, row);
	xg_buf_release(&b);
	free(ws);
}

/* The rows, two spaces apart; the tokens to the right, the request not
 * padded. */
static void draw(struct list *l)
{
	jv_array_foreach(l->rows, i, row) {
		(void)i;
		xg_buf_reset(&l->row);
		for (int c = 0; c < NCOLS; c++) {
			jv v = jv_array_get(jv_copy(row), c);
			const char *s = jv_string_value(v);
			int pad = (int)(l->width[c] - columns_of(s));

			if (c == COL_TOKENS)
				xg_buf_addf(&l->row, "%*s%s  ", pad, "", s);
			else if (c == COL_REQUEST)
				xg_buf_addf(&l->row, "%s\n", s);
			else
				xg_buf_addf(&l->row, "%s%*s  ", s, pad, "");
			jv_free(v);
		}
		jv_free(row);
		if (!l->failed && fwrite(l->row.buf, 1, l->row.len, l->out) != l->row.len)
			l->failed = 1;
	}
}

static int visit(jv line, void *ctx)
{
	struct list *l = ctx;

	if (!xg_log_filter_peek(&l->f, line))
		return 0;
	l->shown++;
	if (!l->o->json) {
		add_row(l, line);
		return l->left > 0 && --l->left == 0;
	}
	xg_buf_reset(&l->row);
	xg_json_dump(&l->row, jv_copy(line));
	xg_buf_addch(&l->row, '\n');
	if (fwrite(l->row.buf, 1, l->row.len, l->out) != l->row.len) {
		l->failed = 1;
		return 1;
	}
	return l->left > 0 && --l->left == 0;
}

int xg_log_list(const struct xg_log_opts *o, FILE *out)
{
	struct list l = { o, { 0 }, XG_BUF_INIT(0), out, o->max, 0, 0, jv_array(), { 0 } };
	struct log_index ix;
	int rc, any = 0;

	if ((rc = xg_log_filter_init(&l.f, o))) {
		jv_free(l.rows);
		return rc;
	}
	if ((rc = xg_log_index_open(&ix)) == 0) {
		ix.needle = xg_log_filter_needle(&l.f);
		xg_log_index_scan(&ix, 1, visit, &l);
		draw(&l);
		rc = l.failed ? XG_EX_IOERR : xg_log_index_status(&ix);
		any = ix.size > 0 || jv_array_length(jv_copy(ix.running)) > 0;
	}
	/* A person at a terminal is told why the list is empty; a script
	 * reading a pipe gets nothing, as for any empty list. */
	if (!rc && !l.shown && isatty(fileno(out)))
		fprintf(stderr, any ? "%s: no run matches\n"
			: "%s: no runs yet: 'xg run TEXT' starts one\n", xg_progname);
	xg_log_index_close(&ix);
	xg_log_filter_release(&l.f);
	xg_buf_release(&l.row);
	jv_free(l.rows);
	return rc;
}
