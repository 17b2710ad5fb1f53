/*
 * The file tools: read, write and edit.  Each takes its path through
 * workspace.c first, which refuses one that leads outside the workspace,
 * and opens it only through workspace.c's descriptors: the file to read,
 * and for a write the directory that will hold it, where the temporary
 * file is made and renamed into place.
 *
 * read scans the file a chunk at a time and keeps only the window it
 * shows, refusing a binary file; write replaces the whole file atomically,
 * creating missing parent directories; edit takes the file whole, places
 * every edit before changing anything (each old text found exactly once,
 * no two overlapping), and writes the result atomically too, keeping the
 * file's line endings and byte order mark.
 */
#include "xg.h"
#include "tools/internal.h"

/* How much of a file's start is searched for a NUL (git's heuristic). */
#define BINARY_SNIFF 8000


/* 1 when args[key] is absent or null, 0 with *out set when it is an
 * integer >= 1, -1 otherwise. */
static int positive_arg_peek(jv args, const char *key, long long *out)
{
	jv v = xg_json_get_peek(args, key);

	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL)
		return 1;
	if (xg_json_int_peek(args, key, out) < 0 || *out < 1)
		return -1;
	return 0;
}

/* ---- read ---- */

struct reader {
	long long offset, limit;	/* the window asked for */
	uint64_t ln;			/* the number of the line being read */
	struct xg_buf line;		/* its bytes, when in the window */
	struct xg_buf text;		/* what the model sees */
	long long shown;
	uint64_t first, last;		/* the lines shown */
	int stopped;			/* the window is full */
	int long_line;			/* the one line shown was cut */
};

/* Cuts n back so that p[0..n) does not end inside a UTF-8 sequence. */
static size_t utf8_floor(const char *p, size_t n)
{
	size_t k = n;

	while (k > 0 && ((unsigned char)p[k - 1] & 0xC0) == 0x80)
		k--;
	if (k > 0 && ((unsigned char)p[k - 1] & 0x80)) {
		unsigned char lead = (unsigned char)p[k - 1];
		size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
		if (n - (k - 1) < need)
			return k - 1;
	}
	return n;
}

/* The line in r->line is complete: show it if it fits. */
static void reader_line_done(struct reader *r)
{
	char prefix[32];
	size_t plen, len = r->line.len, room;
	int k;

	if ((long long)r->ln < r->offset || r->stopped)
		goto next;
	if (len && r->line.buf[len - 1] == '\r')
		len--;
	k = snprintf(prefix, sizeof(prefix), "%6llu\t", (unsigned long long)r->ln);
	plen = (size_t)k;
	room = XG_TOOL_MAX_BYTES > r->text.len ? XG_TOOL_MAX_BYTES - r->text.len : 0;
	if (plen + len + 1 > room) {
		r->stopped = 1;
		if (r->shown)
			goto next;
		/* A first line too long on its own shows its start. */
		len = room > plen + 1 ? utf8_floor(r->line.buf, room - plen - 1) : 0;
		r->long_line = 1;
	}
	xg_buf_add(&r->text, prefix, plen);
	xg_buf_add(&r->text, r->line.buf, len);
	xg_buf_addch(&r->text, '\n');
	if (!r->shown++)
		r->first = r->ln;
	r->last = r->ln;
	if (r->shown >= r->limit)
		r->stopped = 1;
next:
	xg_buf_reset(&r->line);
	r->ln++;
}

static void reader_feed(struct reader *r, const char *p, size_t n)
{
	const char *end = p + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;

		if ((long long)r->ln >= r->offset && !r->stopped) {
			/* Keep no more than can be shown, plus one byte. */
			size_t want = (size_t)(stop - p);
			size_t room = XG_TOOL_MAX_BYTES + 1 > r->line.len ?
				XG_TOOL_MAX_BYTES + 1 - r->line.len : 0;
			xg_buf_add(&r->line, p, want < room ? want : room);
		}
		if (!nl)
			break;
		reader_line_done(r);
		p = nl + 1;
	}
}

/* Opens path for reading; -1 with *err set when it is not a regular file. */
static int read_open(const struct xg_tool_ctx *ctx, const char *path, const char *shown,
		     off_t *size, jv *err)
{
	struct stat st;
	int fd = xg_tool_workspace_open(ctx, path, O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		*err = xg_tool_fail("read: cannot open '%s': %s", shown, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		*err = xg_tool_fail("read: cannot read '%s': %s", shown, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		*err = xg_tool_fail("read: '%s' is a directory; list it with bash (ls)", shown);
	} else if (!S_ISREG(st.st_mode)) {
		*err = xg_tool_fail("read: '%s' is not a regular file", shown);
	} else {
		*size = st.st_size;
		return fd;
	}
	close(fd);
	return -1;
}

/* Feeds the whole file to the reader; -1 with *err set for a read error or
 * a binary file. */
static int read_scan(struct reader *r, int fd, const char *shown, off_t size, jv *err)
{
	char chunk[16384];	/* its stack pages stay with the process */
	int first = 1, partial = 0;
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		const char *p = chunk;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			*err = xg_tool_fail("read: cannot read '%s': %s", shown, strerror(errno));
			return -1;
		}
		if (first) {
			size_t sniff = (size_t)n < BINARY_SNIFF ? (size_t)n : BINARY_SNIFF;
			if (memchr(chunk, '\0', sniff)) {
				*err = xg_tool_fail("read: '%s' is a binary file (%lld bytes); read "
						    "shows text only: inspect it with bash (e.g. "
						    "file, od -c, strings)", shown, (long long)size);
				return -1;
			}
			/* The byte order mark is not text to show or edit. */
			if (n >= 3 && !memcmp(chunk, "\xEF\xBB\xBF", 3)) {
				p += 3;
				n -= 3;
			}
			first = 0;
		}
		if (n > 0)
			partial = p[n - 1] != '\n';
		reader_feed(r, p, (size_t)n);
	}
	if (partial)
		reader_line_done(r);
	return 0;
}

/* The result once the file is scanned: the window and how to go on. */
static jv read_result(struct reader *r, const char *shown)
{
	uint64_t total = r->ln - 1;
	jv res;

	if (total == 0)
		return xg_json_set(xg_tool_result(1, jv_string("(the file is empty)")),
				   "lines", jv_number(0));
	if ((uint64_t)r->offset > total)
		return xg_tool_fail("read: offset %lld is past the end of '%s', which has "
				    "%llu lines", r->offset, shown, (unsigned long long)total);
	if (r->long_line)
		xg_buf_addf(&r->text, "[line %llu is longer than %d KB and was cut; see the "
			    "rest with bash, e.g. cut -c or head -c]\n",
			    (unsigned long long)r->first, XG_TOOL_MAX_BYTES / 1024);
	if (r->last < total)
		xg_buf_addf(&r->text, "[showing lines %llu-%llu of %llu; continue with "
			    "offset=%llu]\n", (unsigned long long)r->first,
			    (unsigned long long)r->last, (unsigned long long)total,
			    (unsigned long long)r->last + 1);
	xg_buf_setlen(&r->text, r->text.len - 1);
	res = xg_tool_result(1, xg_json_string_bytes(r->text.buf, r->text.len));
	res = xg_json_set(res, "lines", jv_number((double)total));
	res = xg_json_set(res, "truncated", jv_bool(r->last < total || r->long_line));
	if (r->last < total)
		res = xg_json_set(res, "next_offset", jv_number((double)r->last + 1));
	return res;
}

jv xg_tool_read_peek(const struct xg_tool_ctx *ctx, jv args)
{
	struct reader r;
	const char *shown;
	char *path;
	off_t size = 0;
	int fd;
	jv res;

	memset(&r, 0, sizeof(r));
	r.offset = 1;
	r.limit = XG_TOOL_MAX_LINES;
	if (positive_arg_peek(args, "offset", &r.offset) < 0)
		return xg_tool_fail("read: 'offset' must be a line number, 1 or more");
	if (positive_arg_peek(args, "limit", &r.limit) < 0)
		return xg_tool_fail("read: 'limit' must be a number of lines, 1 or more");
	if (r.limit > XG_TOOL_MAX_LINES)
		r.limit = XG_TOOL_MAX_LINES;
	if (!(path = xg_tool_workspace_path_peek(ctx, "read", args, &shown, &res)))
		return res;
	if ((fd = read_open(ctx, path, shown, &size, &res)) >= 0) {
		xg_buf_init(&r.line, 0);
		xg_buf_init(&r.text, 0);
		r.ln = 1;
		if (read_scan(&r, fd, shown, size, &res) == 0)
			res = read_result(&r, shown);
		close(fd);
		xg_buf_release(&r.line);
		xg_buf_release(&r.text);
	}
	free(path);
	return res;
}

/* ---- write ---- */

int xg_tool_mkdir_parents(const char *path)
{
	char *p = xg_strdup(path), *s;

	for (s = p + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			int e = errno;
			free(p);
			errno = e;
			return -1;
		}
		*s = '/';
	}
	free(p);
	return 0;
}

/* A temporary file beside base in dir, made with O_EXCL; its name in tmp. */
static int open_temporary(int dir, const char *base, struct xg_buf *tmp)
{
	unsigned seed = (unsigned)getpid() ^ (unsigned)xg_clock_ms();
	int i, fd = -1;

	for (i = 0; i < 100; i++) {
		seed = seed * 1103515245u + 12345u;
		xg_buf_reset(tmp);
		xg_buf_addf(tmp, "%s.tmp%06x", base, (seed >> 8) & 0xffffff);
		fd = openat(dir, tmp->buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	return fd;
}

/* Writes base in dir atomically with mode: a temporary file there, fsync,
 * renamed over base, and the directory synced. */
static int write_at(int dir, const char *base, const char *data, size_t len, mode_t mode)
{
	struct xg_buf tmp = XG_BUF_INIT(0);
	int fd = open_temporary(dir, base, &tmp), e;

	if (fd < 0)
		goto fail;
	if (fchmod(fd, mode) < 0 || xg_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		e = errno;
		close(fd);
		errno = e;
		goto unlink;
	}
	if (close(fd) < 0 || renameat(dir, tmp.buf, dir, base) < 0)
		goto unlink;
	/* The directory entry is what makes the write last. */
	if ((fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
			e = errno;
			close(fd);
			errno = e;
			goto fail;
		}
		close(fd);
	}
	xg_buf_release(&tmp);
	return 0;
unlink:
	e = errno;
	unlinkat(dir, tmp.buf, 0);
	errno = e;
fail:
	e = errno;
	xg_buf_release(&tmp);
	errno = e;
	return -1;
}

/* Writes the file at resolved, keeping an existing file's mode. */
static int write_file(const struct xg_tool_ctx *ctx, const char *resolved, const char *data,
		      size_t len, int *created)
{
	struct stat st;
	mode_t mode = 0644;
	const char *base;
	int dir, rc, e;

	*created = 1;
	if ((dir = xg_tool_workspace_dir(ctx, resolved, 1, &base)) < 0)
		return -1;
	if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode)) {
			close(dir);
			errno = EISDIR;
			return -1;
		}
		mode = st.st_mode & 07777;
		*created = 0;
	}
	rc = write_at(dir, base, data, len, mode);
	e = errno;
	close(dir);
	errno = e;
	return rc;
}

jv xg_tool_write_peek(const struct xg_tool_ctx *ctx, jv args)
{
	jv content = xg_json_get_peek(args, "content");
	const char *shown;
	char *path;
	size_t len;
	int created;
	jv r;

	if (jv_get_kind(content) != JV_KIND_STRING)
		return xg_tool_fail("write: 'content' must be a string");
	if (!(path = xg_tool_workspace_path_peek(ctx, "write", args, &shown, &r)))
		return r;
	len = (size_t)jv_string_length_bytes(jv_copy(content));
	if (write_file(ctx, path, jv_string_value(content), len, &created) < 0) {
		r = xg_tool_fail("write: cannot write '%s': %s", shown, strerror(errno));
	} else {
		r = xg_tool_result(1, jv_string_fmt("%s '%s' (%zu byte%s)",
						    created ? "Created" : "Wrote", shown, len,
						    len == 1 ? "" : "s"));
		r = xg_json_set(r, "bytes", jv_number((double)len));
		r = xg_json_set(r, "created", jv_bool(created));
	}
	free(path);
	return r;
}

/* ---- edit ---- */

struct edit {
	char *old, *new;	/* in the file's line endings */
	size_t old_len, new_len;
	size_t at;		/* where old was found */
	int index;
};

/* text with every LF not after a CR turned into CR LF. */
static char *to_crlf(const char *text, size_t len, size_t *out_len)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t i;

	for (i = 0; i < len; i++) {
		if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r'))
			xg_buf_addch(&b, '\r');
		xg_buf_addch(&b, text[i]);
	}
	return xg_buf_detach(&b, out_len);
}

static size_t count_matches(const char *hay, size_t n, const char *needle, size_t k,
			    size_t *first)
{
	const char *p = hay, *end = hay + n, *q;
	size_t count = 0;

	while (p < end && (q = memmem(p, (size_t)(end - p), needle, k))) {
		if (!count++)
			*first = (size_t)(q - hay);
		p = q + 1;
	}
	return count;
}

static size_t line_of(const char *p, size_t off)
{
	size_t line = 1;
	const char *q, *end = p + off;

	for (q = p; q < end && (q = memchr(q, '\n', (size_t)(end - q))); q++)
		line++;
	return line;
}

static int by_position(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* Reads the edits in the file's line endings; a result on error. */
static int parse_edits_peek(jv list, int crlf, struct edit **out, int *count, jv *err)
{
	int i, n = xg_json_length_peek(list);
	struct edit *e;

	if (jv_get_kind(list) != JV_KIND_ARRAY || n < 1) {
		*err = xg_tool_fail("edit: 'edits' must be a non-empty array of "
				    "{old_text, new_text}");
		return -1;
	}
	e = xg_calloc((size_t)n, sizeof(*e));
	for (i = 0; i < n; i++) {
		jv it = jv_array_get(jv_copy(list), i);
		jv o = xg_json_get_peek(it, "old_text"), w = xg_json_get_peek(it, "new_text");
		size_t ol, nl;

		if (jv_get_kind(o) != JV_KIND_STRING || jv_get_kind(w) != JV_KIND_STRING) {
			jv_free(it);
			*err = xg_tool_fail("edit: edits[%d] must have string 'old_text' and "
					    "'new_text'; nothing was changed", i);
			goto fail;
		}
		ol = (size_t)jv_string_length_bytes(jv_copy(o));
		nl = (size_t)jv_string_length_bytes(jv_copy(w));
		if (ol == 0) {
			jv_free(it);
			*err = xg_tool_fail("edit: edits[%d]: 'old_text' is empty; nothing was "
					    "changed", i);
			goto fail;
		}
		if (crlf) {
			e[i].old = to_crlf(jv_string_value(o), ol, &e[i].old_len);
			e[i].new = to_crlf(jv_string_value(w), nl, &e[i].new_len);
		} else {
			e[i].old = xg_memdup(jv_string_value(o), ol);
			e[i].old_len = ol;
			e[i].new = xg_memdup(jv_string_value(w), nl);
			e[i].new_len = nl;
		}
		e[i].index = i;
		jv_free(it);
	}
	*out = e;
	*count = n;
	return 0;
fail:
	while (i-- > 0) {
		free(e[i].old);
		free(e[i].new);
	}
	free(e);
	return -1;
}

static jv edit_refused(jv r, int index, const char *reason)
{
	r = xg_json_set(r, "failed_edit", jv_number(index));
	return xg_json_set(r, "reason", jv_string(reason));
}

/*
 * Finds every edit's one place and checks that none overlaps another; the
 * refusal names the first edit at fault.
 */
static int place_edits(struct edit *e, int n, const char *text, size_t len,
		       const char *shown, jv *err)
{
	int i, k;

	for (i = 0; i < n; i++) {
		size_t found = count_matches(text, len, e[i].old, e[i].old_len, &e[i].at);

		if (found == 0) {
			*err = edit_refused(xg_tool_fail(
				"edit: edits[%d]: old_text was not found in '%s'; nothing "
				"was changed (read the file again to see its text as it is)",
				i, shown), i, "not_found");
			return -1;
		}
		if (found > 1) {
			*err = edit_refused(xg_tool_fail(
				"edit: edits[%d]: old_text occurs %zu times in '%s'; add "
				"surrounding lines to make it unique; nothing was changed",
				i, found, shown), i, "not_unique");
			*err = xg_json_set(*err, "matches", jv_number((double)found));
			return -1;
		}
		for (k = 0; k < i; k++)
			if (e[i].at < e[k].at + e[k].old_len && e[k].at < e[i].at + e[i].old_len) {
				*err = edit_refused(xg_tool_fail(
					"edit: edits[%d] overlaps edits[%d] (both change text "
					"at line %zu); merge them into one edit; nothing was "
					"changed", i, k, line_of(text, e[i].at)), i, "overlap");
				*err = xg_json_set(*err, "overlaps", jv_number(k));
				return -1;
			}
	}
	return 0;
}

/* The file at resolved into b, opened beneath the workspace. */
static int read_whole(const struct xg_tool_ctx *ctx, const char *resolved, struct xg_buf *b)
{
	int fd = xg_tool_workspace_open(ctx, resolved, O_RDONLY), rc, e;

	if (fd < 0)
		return -1;
	rc = xg_read_fd(fd, b);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

jv xg_tool_edit_peek(const struct xg_tool_ctx *ctx, jv args)
{
	struct xg_buf file = XG_BUF_INIT(XG_TOOL_EDIT_MAX_FILE);
	struct xg_buf out = XG_BUF_INIT(0);
	struct xg_buf where = XG_BUF_INIT(0);
	struct edit *e = NULL;
	const char *shown, *text, *nl;
	char *path;
	size_t base, pos, len;
	int n = 0, i, crlf, created;
	jv r;

	if (!(path = xg_tool_workspace_path_peek(ctx, "edit", args, &shown, &r)))
		return r;
	if (read_whole(ctx, path, &file) < 0) {
		r = errno == EFBIG
			? xg_tool_fail("edit: '%s' is larger than %zu MB; edit it with bash",
				       shown, XG_TOOL_EDIT_MAX_FILE >> 20)
			: xg_tool_fail("edit: cannot read '%s': %s", shown, strerror(errno));
		goto out;
	}
	if (memchr(file.buf, '\0', file.len)) {
		r = xg_tool_fail("edit: '%s' is a binary file; edit changes text only", shown);
		goto out;
	}
	base = file.len >= 3 && !memcmp(file.buf, "\xEF\xBB\xBF", 3) ? 3 : 0;
	text = file.buf + base;
	len = file.len - base;
	/* The file's first line ending decides what the edits' LFs become. */
	nl = memchr(text, '\n', len);
	crlf = nl && nl > text && nl[-1] == '\r';
	if (parse_edits_peek(xg_json_get_peek(args, "edits"), crlf, &e, &n, &r) < 0)
		goto out;
	if (place_edits(e, n, text, len, shown, &r) < 0)
		goto out;

	for (i = 0; i < n; i++)
		xg_buf_addf(&where, "%sedits[%d] at line %zu", i ? ", " : "", i,
			    line_of(text, e[i].at));
	XG_QSORT(e, n, by_position);
	xg_buf_add(&out, file.buf, base);
	for (pos = 0, i = 0; i < n; i++) {
		xg_buf_add(&out, text + pos, e[i].at - pos);
		xg_buf_add(&out, e[i].new, e[i].new_len);
		pos = e[i].at + e[i].old_len;
	}
	xg_buf_add(&out, text + pos, len - pos);
	if (write_file(ctx, path, out.buf, out.len, &created) < 0) {
		r = xg_tool_fail("edit: cannot write '%s': %s", shown, strerror(errno));
		goto out;
	}
	r = xg_tool_result(1, jv_string_fmt("Edited '%s': %s", shown, where.buf));
	r = xg_json_set(r, "edits", jv_number(n));
out:
	for (i = 0; i < n; i++) {
		free(e[i].old);
		free(e[i].new);
	}
	free(e);
	xg_buf_release(&file);
	xg_buf_release(&out);
	xg_buf_release(&where);
	free(path);
	return r;
}
