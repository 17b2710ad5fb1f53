/*
 * The conversations (xg-log conversations): one row each, the newest
 * first: the id, the time of its last entry (the file's), how many turns
 * a person typed, the workspace and the first request.  Hidden messages
 * (a goal's continuations) are no one's turns and are not counted.
 */
#include "xg.h"
#include "log/internal.h"
#include "conversation.h"
#include <dirent.h>

struct conv {
	char *id;
	int64_t updated;
	jv row;
};

static int newest_first(const void *a, const void *b)
{
	const struct conv *x = a, *y = b;

	if (x->updated != y->updated)
		return x->updated < y->updated ? 1 : -1;
	return strcmp(y->id, x->id);
}

/* The row of the conversation in buf (its whole file); only looks. */
static jv summarise(const char *id, const struct xg_buf *buf, int64_t updated)
{
	const char *p = buf->buf, *end = buf->buf + buf->len;
	jv row = xg_rec_new("conversation"), first = jv_null();
	long long turns = 0;
	char at[25];
	int lineno = 0;

	row = xg_json_set(row, "id", jv_string(id));
	row = xg_json_set(row, "workspace", jv_null());
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (lineno++ == 0 || memmem(p, n, "\"role\":\"user\"", 13)) {
			jv e = jv_parse_sized(p, (int)n);
			const char *type = xg_json_string_peek(e, "type");
			bool hidden = false;

			xg_json_bool_peek(e, "hidden", &hidden);
			if (type && !strcmp(type, "conversation")) {
				row = xg_json_set(row, "workspace", jv_copy(xg_json_get_peek(e, "cwd")));
				row = xg_json_set(row, "created", jv_copy(xg_json_get_peek(e, "created")));
			} else if (type && !strcmp(type, "message") && !hidden) {
				turns++;
				if (jv_get_kind(first) == JV_KIND_NULL && xg_json_string_peek(e, "text"))
					first = jv_copy(xg_json_get_peek(e, "text"));
			}
			jv_free(e);
		}
		p += n + 1;
	}
	xg_clock_rfc3339(updated, at);
	row = xg_json_set(row, "updated", jv_string(at));
	row = xg_json_set(row, "turns", jv_number((double)turns));
	return xg_json_set(row, "request", first);
}

static void print_row(FILE *fp, jv row, int64_t updated)
{
	const char *req = xg_json_string_peek(row, "request");
	char when[17], *ws = xg_log_short_path(xg_json_string_peek(row, "workspace"));
	long long turns = 0;

	xg_json_int_peek(row, "turns", &turns);
	xg_log_local_time(updated, when);
	fprintf(fp, "%s  %s  %3lld turn%s  %s  %.*s\n", xg_json_string_peek(row, "id"), when, turns,
		turns == 1 ? " " : "s", ws, req ? (int)strcspn(req, "\r\n") : 0, req ? req : "");
	free(ws);
}

/* The conversations of the state directory, with their rows. */
static size_t collect(const struct log_filter *f, struct conv **out)
{
	char *dir = xg_path_state("conversations");
	DIR *d = opendir(dir);
	struct dirent *de;
	struct conv *all = NULL;
	size_t n = 0, cap = 0;

	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct xg_buf b = XG_BUF_INIT(0);
		struct stat st;
		char *path, *id;

		if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl"))
			continue;
		id = xg_strndup(de->d_name, l - 6);
		path = xg_path_join(dir, de->d_name);
		if (xg_conv_id_valid(id) && stat(path, &st) == 0 && xg_read_file(path, &b) == 0) {
			int64_t ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
			jv row = summarise(id, &b, ms);

			if (f->workspace &&
			    !xg_log_under(xg_json_string_peek(row, "workspace"), f->workspace)) {
				jv_free(row);
			} else {
				if (n == cap) {
					cap = cap ? 2 * cap : 32;
					all = xg_realloc(all, cap * sizeof(*all));
				}
				all[n].id = id;
				all[n].updated = ms;
				all[n++].row = row;
				id = NULL;
			}
		}
		xg_buf_release(&b);
		free(path);
		free(id);
	}
	if (d)
		closedir(d);
	free(dir);
	XG_QSORT(all, n, newest_first);
	*out = all;
	return n;
}

int xg_log_conversations(const struct xg_log_opts *o, FILE *out)
{
	struct log_filter f;
	struct conv *all;
	size_t n, i;
	long shown = 0;
	int rc;

	if ((rc = xg_log_filter_init(&f, o)))
		return rc;
	n = collect(&f, &all);
	for (i = 0; i < n; i++) {
		if ((o->max <= 0 || shown < o->max) && (!f.since || all[i].updated >= f.since)) {
			shown++;
			if (o->json) {
				struct xg_buf b = XG_BUF_INIT(0);

				xg_json_dump(&b, jv_copy(all[i].row));
				fprintf(out, "%s\n", b.buf);
				xg_buf_release(&b);
			} else {
				print_row(out, all[i].row, all[i].updated);
			}
		}
		jv_free(all[i].row);
		free(all[i].id);
	}
	free(all);
	xg_log_filter_release(&f);
	return 0;
}
