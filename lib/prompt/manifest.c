/*
 * A variant's files: the manifest and the section files it names, read and
 * checked (the format is in prompt.h), and the version id, the hash of
 * those files.  With template.c this is the bottom of the prompt folder: it
 * knows nothing of where variants are stored or what a pack is.
 *
 * Everything wrong in a variant's files is a configuration error (78) that
 * names the manifest and the line: a name, a budget, a kind or a mode that
 * is not one, a section file that is missing or not UTF-8, a stable
 * section after "reporting".
 */
#include "xg.h"
#include "prompt/prompt.h"
#include "conversation.h"
#include "sha256.h"

static int name_ok(const char *s)
{
	if (!*s || !islower((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-')
			return 0;
	return 1;
}

static int file_ok(const char *s)
{
	if (!*s || *s == '.' || strchr(s, '/') || !strcmp(s, XG_PROMPT_MANIFEST) ||
	    !strcmp(s, "meta.json"))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return 0;
	return 1;
}

/* Whether p[0..n) is well-formed UTF-8 without NUL. */
static int utf8_ok(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p, *end = s + n;

	while (s < end) {
		unsigned c = *s++;
		int more;
		unsigned cp, min;

		if (c == 0)
			return 0;
		if (c < 0x80)
			continue;
		if ((c & 0xe0) == 0xc0) { more = 1; cp = c & 0x1f; min = 0x80; }
		else if ((c & 0xf0) == 0xe0) { more = 2; cp = c & 0x0f; min = 0x800; }
		else if ((c & 0xf8) == 0xf0) { more = 3; cp = c & 0x07; min = 0x10000; }
		else return 0;
		if (end - s < more)
			return 0;
		while (more--) {
			if ((*s & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (*s++ & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
	}
	return 1;
}

static int split_fields(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;

	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (n == max)
			return max + 1;
		f[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static int bad_line(const struct xg_prompt_manifest *m, size_t lineno, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad_line(const struct xg_prompt_manifest *m, size_t lineno, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	xg_error("%s:%zu: %s", m->path, lineno, msg);
	return XG_EX_CONFIG;
}

static int load_section_text(struct xg_prompt_manifest *m, struct xg_prompt_section *s)
{
	struct xg_buf b = XG_BUF_INIT(XG_PROMPT_MAX_FILE);
	char *path = xg_path_join(m->dir, s->file);
	int rc = 0;

	errno = 0;
	if (xg_read_file(path, &b) < 0) {
		if (errno == ENOENT || errno == EACCES || errno == EISDIR)
			rc = bad_line(m, s->lineno, "cannot read section file '%s': %s", s->file,
				      strerror(errno));
		else
			rc = bad_line(m, s->lineno, "cannot read section file '%s'", s->file);
	} else if (!utf8_ok(b.buf, b.len)) {
		rc = bad_line(m, s->lineno, "section file '%s' is not valid UTF-8", s->file);
	}
	free(path);
	if (rc) {
		xg_buf_release(&b);
		return rc;
	}
	s->text = xg_buf_detach(&b, &s->len);
	return 0;
}

static int parse_line(struct xg_prompt_manifest *m, char *line, size_t lineno)
{
	struct xg_prompt_section *s;
	char *f[6], *end;
	unsigned long long budget;
	size_t i;
	int n = split_fields(line, f, 5);

	if (n == 0 || f[0][0] == '#')
		return 0;
	if (n != 5)
		return bad_line(m, lineno, "expected 5 fields (name file budget kind mode), found %s",
				n > 5 ? "more" : (n == 4 ? "4" : n == 3 ? "3" : n == 2 ? "2" : "1"));
	if (!name_ok(f[0]))
		return bad_line(m, lineno, "bad section name '%s'", f[0]);
	if (!file_ok(f[1]))
		return bad_line(m, lineno, "bad file name '%s'", f[1]);
	errno = 0;
	budget = strtoull(f[2], &end, 10);
	if (!isdigit((unsigned char)f[2][0]) || *end || errno || budget == 0 ||
	    budget > XG_PROMPT_MAX_BUDGET)
		return bad_line(m, lineno, "bad budget '%s': expected 1 to %d characters", f[2],
				XG_PROMPT_MAX_BUDGET);
	if (strcmp(f[3], "stable") && strcmp(f[3], "dynamic"))
		return bad_line(m, lineno, "bad kind '%s': expected 'stable' or 'dynamic'", f[3]);
	if (!strcmp(f[3], "stable") ? strcmp(f[4], "all") :
	    (strcmp(f[4], "all") && strcmp(f[4], "-") && !xg_conv_mode_valid(f[4])))
		return bad_line(m, lineno, "bad mode '%s' for a %s section", f[4], f[3]);
	for (i = 0; i < m->nr; i++) {
		if (!strcmp(m->sec[i].name, f[0]))
			return bad_line(m, lineno, "section '%s' is already on line %zu", f[0],
					m->sec[i].lineno);
		if (!strcmp(m->sec[i].file, f[1]))
			return bad_line(m, lineno, "file '%s' is already used on line %zu", f[1],
					m->sec[i].lineno);
	}
	XG_ALLOC_GROW(m->sec, m->nr + 1, m->alloc);
	s = &m->sec[m->nr++];
	memset(s, 0, sizeof(*s));
	s->name = xg_strdup(f[0]);
	s->file = xg_strdup(f[1]);
	s->budget = (size_t)budget;
	s->stable = !strcmp(f[3], "stable");
	s->mode = xg_strdup(f[4]);
	s->lineno = lineno;
	return load_section_text(m, s);
}

/* The stable prefix ends with reporting when there is one (design.md B8). */
static int check_order(const struct xg_prompt_manifest *m)
{
	const struct xg_prompt_section *rep = NULL;
	size_t i;

	for (i = 0; i < m->nr; i++) {
		if (!m->sec[i].stable)
			continue;
		if (rep)
			return bad_line(m, m->sec[i].lineno,
					"stable section '%s' comes after 'reporting', which must be last",
					m->sec[i].name);
		if (!strcmp(m->sec[i].name, "reporting"))
			rep = &m->sec[i];
	}
	if (m->nr == 0)
		return bad_line(m, 1, "no sections");
	return 0;
}

int xg_prompt_manifest_load(const char *dir, struct xg_prompt_manifest *m)
{
	struct xg_buf b = XG_BUF_INIT(XG_PROMPT_MAX_FILE);
	char *p, *nl;
	size_t lineno = 0;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	m->dir = xg_strdup(dir);
	m->path = xg_path_join(dir, XG_PROMPT_MANIFEST);
	errno = 0;
	if (xg_read_file(m->path, &b) < 0) {
		xg_error("cannot read manifest '%s': %s", m->path,
			 strerror(errno ? errno : EFBIG));
		xg_buf_release(&b);
		return XG_EX_CONFIG;
	}
	m->raw = xg_memdup(b.buf, b.len);
	m->rawlen = b.len;
	if (!utf8_ok(b.buf, b.len)) {
		xg_buf_release(&b);
		return bad_line(m, 1, "not valid UTF-8");
	}
	for (p = b.buf; !rc && p < b.buf + b.len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(b.buf + b.len - p));
		if (!nl)
			nl = b.buf + b.len;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		rc = parse_line(m, p, ++lineno);
	}
	xg_buf_release(&b);
	if (!rc)
		rc = check_order(m);
	return rc;
}

void xg_prompt_manifest_release(struct xg_prompt_manifest *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++) {
		free(m->sec[i].name);
		free(m->sec[i].file);
		free(m->sec[i].mode);
		free(m->sec[i].text);
	}
	free(m->sec);
	free(m->dir);
	free(m->path);
	free(m->raw);
	memset(m, 0, sizeof(*m));
}

const struct xg_prompt_section *xg_prompt_section_find(const struct xg_prompt_manifest *m,
							const char *name)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (!strcmp(m->sec[i].name, name))
			return &m->sec[i];
	return NULL;
}

static void hash_file(struct xg_sha256 *c, const char *name, const char *data, size_t len)
{
	char n[32];
	int k = snprintf(n, sizeof(n), "%zu", len);

	xg_sha256_update(c, name, strlen(name) + 1);
	xg_sha256_update(c, n, (size_t)k + 1);
	xg_sha256_update(c, data, len);
}

static int by_file(const void *a, const void *b)
{
	const struct xg_prompt_section *const *x = a, *const *y = b;

	return strcmp((*x)->file, (*y)->file);
}

void xg_prompt_version_id(const struct xg_prompt_manifest *m, char out[XG_PROMPT_VERSION_LEN + 1])
{
	const struct xg_prompt_section **v = xg_calloc(m->nr + 1, sizeof(*v));
	struct xg_sha256 c;
	unsigned char d[XG_SHA256_LEN];
	char hex[65];
	size_t i;
	int manifest_done = 0;

	for (i = 0; i < m->nr; i++)
		v[i] = &m->sec[i];
	XG_QSORT(v, m->nr, by_file);
	xg_sha256_init(&c);
	for (i = 0; i <= m->nr; i++) {
		if (!manifest_done && (i == m->nr || strcmp(XG_PROMPT_MANIFEST, v[i]->file) < 0)) {
			hash_file(&c, XG_PROMPT_MANIFEST, m->raw, m->rawlen);
			manifest_done = 1;
		}
		if (i < m->nr)
			hash_file(&c, v[i]->file, v[i]->text, v[i]->len);
	}
	xg_sha256_final(&c, d);
	xg_sha256_hex(d, hex);
	memcpy(out, hex, XG_PROMPT_VERSION_LEN);
	out[XG_PROMPT_VERSION_LEN] = '\0';
	free(v);
}
