/*
 * The conversations of this directory (dispatch.h), for "xg resume": every
 * conversation file, newest first; the ones whose header names the current
 * directory as their workspace; the first request of each, for the list;
 * what a conversation id looks like, and the conversation a run id names.
 */
#include "xg.h"
#include "dispatch/dispatch.h"
#include "conversation.h"
#include <dirent.h>

/* A header is one short line: an id, a time and a path. */
#define HEADER_MAX ((size_t)64 << 10)
/* The entries read to find the first request, and how much of it a list
 * line shows. */
#define SCAN_MAX 64
#define SHOW_MAX 72

struct conv {
	char *id;
	char *path;
	struct timespec t;
};

static int newer_first(const void *pa, const void *pb)
{
	const struct conv *a = pa, *b = pb;

	if (a->t.tv_sec != b->t.tv_sec)
		return a->t.tv_sec > b->t.tv_sec ? -1 : 1;
	if (a->t.tv_nsec != b->t.tv_nsec)
		return a->t.tv_nsec > b->t.tv_nsec ? -1 : 1;
	return -strcmp(a->id, b->id);
}

/* Every conversation file, newest first; *n of them.  NULL when none. */
static struct conv *all_conversations(size_t *n)
{
	char *dir = xg_path_state("conversations");
	struct conv *v = NULL;
	size_t alloc = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	*n = 0;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat st;
		char *id, *path;

		if (len <= 6 || strcmp(e->d_name + len - 6, ".jsonl"))
			continue;
		id = xg_strndup(e->d_name, len - 6);
		path = xg_path_join(dir, e->d_name);
		if (!xg_conv_id_valid(id) || stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(id);
			free(path);
			continue;
		}
		XG_ALLOC_GROW(v, *n + 1, alloc);
		v[*n].id = id;
		v[*n].path = path;
		v[*n].t = st.st_mtim;
		(*n)++;
	}
	if (d)
		closedir(d);
	free(dir);
	XG_QSORT(v, *n, newer_first);
	return v;
}

static void free_conversations(struct conv *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].id);
		free(v[i].path);
	}
	free(v);
}

/* Whether the conversation at path was started in here (a realpath). */
static int started_here(const char *path, const char *here)
{
	struct xg_buf b = XG_BUF_INIT(0);
	char chunk[4096], *real;
	const char *cwd;
	int fd = open(path, O_RDONLY | O_CLOEXEC), here_too = 0;
	ssize_t k;
	jv h;

	if (fd < 0)
		return 0;
	while (b.len < HEADER_MAX && !memchr(b.buf, '\n', b.len) &&
	       (k = read(fd, chunk, sizeof(chunk))) > 0)
		xg_buf_add(&b, chunk, (size_t)k);
	close(fd);
	h = xg_json_parse(b.buf, strcspn(b.buf, "\n"));
	cwd = xg_json_string_peek(h, "type") && !strcmp(xg_json_string_peek(h, "type"),
							  "conversation")
		? xg_json_string_peek(h, "cwd") : NULL;
	if (cwd) {
		real = realpath(cwd, NULL);
		here_too = !strcmp(real ? real : cwd, here);
		free(real);
	}
	jv_free(h);
	xg_buf_release(&b);
	return here_too;
}

/* The conversations started here, newest first, at most max; *n of them. */
static struct conv *here_conversations(size_t max, size_t *n)
{
	char *here = realpath(".", NULL);
	size_t all, i;
	struct conv *v = all_conversations(&all);

	*n = 0;
	for (i = 0; i < all; i++) {
		if (here && *n < max && started_here(v[i].path, here)) {
			v[(*n)++] = v[i];	/* the kept ones move to the front */
		} else {
			free(v[i].id);
			free(v[i].path);
		}
	}
	free(here);
	return v;
}

char *xg_dispatch_newest_here(void)
{
	size_t n;
	struct conv *v = here_conversations(1, &n);
	char *id = n ? xg_strdup(v[0].id) : NULL;

	free_conversations(v, n);
	return id;
}

/* The text of the conversation's first request (or goal), or NULL. */
static char *first_request(const char *path)
{
	struct xg_rec_reader rd;
	struct xg_rec rec;
	char *text = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return NULL;
	xg_rec_reader_init(&rd, fd, path);
	for (i = 0; !text && i < SCAN_MAX && xg_rec_next(&rd, &rec) > 0; i++) {
		const char *role = xg_json_string_peek(rec.v, "role");
		const char *t = xg_json_string_peek(rec.v, "text");

		if (rec.type && !strcmp(rec.type, "message") && role && !strcmp(role, "user") &&
		    t && !xg_json_string_peek(rec.v, "kind"))
			text = xg_strdup(t);
		/* A conversation a goal started: its rounds' messages are the
		 * harness's, the objective the person's. */
		else if (rec.type && !strcmp(rec.type, "goal") &&
			 (t = xg_json_string_peek(rec.v, "objective")))
			text = xg_asprintf("goal: %s", t);
		xg_rec_release(&rec);
	}
	xg_rec_reader_release(&rd);
	close(fd);
	return text;
}

/* Appends the first line of s, at most SHOW_MAX bytes of it (a whole UTF-8
 * character at the end), without control characters; "..." when cut. */
static void add_first_line(struct xg_buf *b, const char *s)
{
	size_t n = strcspn(s, "\r\n"), i;
	int cut = s[n] && s[n + strspn(s + n, "\r\n")];

	if (n > SHOW_MAX) {
		n = SHOW_MAX;
		n = xg_utf8_start(s, n);
		cut = 1;
	}
	for (i = 0; i < n; i++)
		xg_buf_addch(b, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i]);
	if (cut)
		xg_buf_addstr(b, "...");
}

int xg_dispatch_list_here(FILE *fp, int max)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t n, i;
	struct conv *v = here_conversations(max > 0 ? (size_t)max : 0, &n);

	for (i = 0; i < n; i++) {
		char when[32] = "";
		char *text = first_request(v[i].path);
		struct tm tm;

		if (localtime_r(&v[i].t.tv_sec, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
		xg_buf_reset(&b);
		xg_buf_addf(&b, "%s\t%s\t", v[i].id, when);
		add_first_line(&b, text ? text : "(no request)");
		fprintf(fp, "%s\n", b.buf);
		free(text);
	}
	xg_buf_release(&b);
	free_conversations(v, n);
	return (int)n;
}

/* The conversation the run id made, from its run.json, or NULL when there
 * is no such run or it names none.  A run id is shaped as a conversation
 * id. */
static char *run_conversation(const char *id)
{
	char *rel = xg_asprintf("runs/%s/run.json", id), *path = xg_path_state(rel), *conv = NULL;
	struct xg_buf b = XG_BUF_INIT((size_t)1 << 20);
	const char *c;
	jv v;

	free(rel);
	if (xg_read_file(path, &b) < 0) {
		free(path);
		xg_buf_release(&b);
		return NULL;
	}
	v = xg_json_parse(b.buf, b.len);
	if (jv_get_kind(v) == JV_KIND_OBJECT && (c = xg_json_string_peek(v, "conversation")))
		conv = xg_strdup(c);
	jv_free(v);
	free(path);
	xg_buf_release(&b);
	return conv;
}

int xg_dispatch_is_conversation_id(const char *word)
{
	static const char shape[] = "00000000-000000-xxxxxxxx";
	size_t i;

	char *run;

	if (!xg_conv_id_valid(word))
		return 0;
	if (xg_conv_exists(word))
		return 1;
	if ((run = run_conversation(word))) {
		free(run);
		return 1;
	}
	if (strlen(word) != sizeof(shape) - 1)
		return 0;
	for (i = 0; shape[i]; i++) {
		if (shape[i] == '0' && !isdigit((unsigned char)word[i]))
			return 0;
		if (shape[i] == 'x' && !isxdigit((unsigned char)word[i]))
			return 0;
		if (shape[i] == '-' && word[i] != '-')
			return 0;
	}
	return 1;
}

char *xg_dispatch_conversation_of(const char *id, int must)
{
	char *conv;

	if (!xg_conv_id_valid(id))
		xg_die(XG_EX_USAGE, "'%s' " XG_CONV_ID_BAD, id);
	if (xg_conv_exists(id))
		return xg_strdup(id);
	if ((conv = run_conversation(id))) {
		if (xg_conv_exists(conv))
			return conv;
		xg_die(XG_EX_DATAERR, "run '%s' left no conversation: it ended before it made "
		       "one", id);
	}
	if (must)
		xg_die(XG_EX_DATAERR, "there is no conversation or run '%s': 'xg resume' lists "
		       "this directory's conversations, 'xg log conversations' all of them, and "
		       "'xg log' the runs", id);
	return NULL;
}
