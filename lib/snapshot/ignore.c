/*
 * Ignore rules in gitignore syntax (see snapshot/internal.h): the reading
 * of a file of patterns into a list, each pattern classified once (negated,
 * for directories only, matching a name at any depth, a plain suffix), the
 * matching of a path against a list, last pattern first, and wildmatch for
 * the wildcards, "**" included.  Also the one loader of git's global
 * excludes file, which a snapshot and a replay both honour, and the
 * reading of a sparse checkout's patterns, which say what is in it.
 */
#include "xg.h"
#include "snapshot/internal.h"

enum {
	PAT_NEGATIVE = 1,	/* "!pattern" */
	PAT_DIRONLY = 2,	/* "pattern/" */
	PAT_BASENAME = 4,	/* no "/": matches the last component */
	PAT_SUFFIX = 8		/* "*literal": a suffix test does it */
};

static int is_wild(int c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

static void add_pattern(struct xg_snapshot_rules *r, const char *s, size_t len)
{
	struct xg_snapshot_pattern *p;
	unsigned flags = 0;
	size_t i;

	if (len && s[0] == '!') {
		flags |= PAT_NEGATIVE;
		s++;
		len--;
	}
	if (len && s[len - 1] == '/') {
		flags |= PAT_DIRONLY;
		len--;
	}
	if (!len)
		return;
	if (!memchr(s, '/', len))
		flags |= PAT_BASENAME;
	XG_ALLOC_GROW(r->pat, r->nr + 1, r->alloc);
	p = &r->pat[r->nr++];
	p->text = xg_strndup(s, len);
	p->len = len;
	for (i = 0; i < len && !is_wild((unsigned char)s[i]); i++)
		;
	p->literal = i;
	if (len > 1 && s[0] == '*') {
		for (i = 1; i < len && !is_wild((unsigned char)s[i]); i++)
			;
		if (i == len)
			flags |= PAT_SUFFIX;
	}
	p->flags = flags;
}

void xg_snapshot_rules_add(struct xg_snapshot_rules *r, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	/* A byte-order mark at the start is not part of the first pattern. */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		size_t n = (size_t)(eol - p);

		/* Trailing spaces go unless a backslash protects the last. */
		while (n && p[n - 1] == ' ' && !(n >= 2 && p[n - 2] == '\\'))
			n--;
		if (n && p[0] != '#')
			add_pattern(r, p, n);
		p = nl ? nl + 1 : end;
	}
}

int xg_snapshot_rules_load(struct xg_snapshot_rules *r, const char *base, const char *file)
{
	struct xg_buf b = XG_BUF_INIT((size_t)64 << 20);

	if (!r->base) {
		r->base = xg_strdup(base);
		r->baselen = strlen(base);
	}
	if (xg_read_file(file, &b) < 0) {
		xg_buf_release(&b);
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	}
	xg_snapshot_rules_add(r, b.buf, b.len);
	xg_buf_release(&b);
	return 0;
}

char *xg_snapshot_rules_user_file(const char *name)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg && *xdg)
		return xg_asprintf("%s/git/%s", xdg, name);
	return home ? xg_asprintf("%s/.config/git/%s", home, name) : NULL;
}

int xg_snapshot_attributes_exist(const char *commondir)
{
	char *p[3];
	int i, any = 0;

	p[0] = xg_strdup("/etc/gitattributes");
	p[1] = xg_snapshot_rules_user_file("attributes");
	p[2] = xg_path_join(commondir, "info/attributes");
	for (i = 0; i < 3; i++) {
		if (p[i] && access(p[i], F_OK) == 0)
			any = 1;
		free(p[i]);
	}
	return any;
}

char *xg_snapshot_excludes_path(git_config *cfg)
{
	git_buf path = { 0 };
	char *f;

	if (cfg && !git_config_get_path(&path, cfg, "core.excludesfile")) {
		f = xg_strdup(path.ptr);
		git_buf_dispose(&path);
		return f;
	}
	return xg_snapshot_rules_user_file("ignore");
}

void xg_snapshot_rules_release(struct xg_snapshot_rules *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		free(r->pat[i].text);
	free(r->pat);
	free(r->base);
	memset(r, 0, sizeof(*r));
}

/* A bracket expression at *pp (just after '['); sets *pp past its ']'.
 * Returns 1 when c is in the set, 0 when not, -1 when the set is not closed. */
static int match_class(const char **pp, unsigned char c)
{
	static const struct { const char *name; int (*fn)(int); } classes[] = {
		{ "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank },
		{ "cntrl", iscntrl }, { "digit", isdigit }, { "graph", isgraph },
		{ "lower", islower }, { "print", isprint }, { "punct", ispunct },
		{ "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
	};
	const char *p = *pp;
	int negate = 0, found = 0, first = 1;

	if (*p == '!' || *p == '^') {
		negate = 1;
		p++;
	}
	for (;; first = 0) {
		unsigned char lo = (unsigned char)*p;

		if (!lo)
			return -1;
		if (lo == ']' && !first)
			break;
		if (lo == '[' && p[1] == ':') {
			const char *close = strstr(p + 2, ":]");
			size_t k, n;

			if (close) {
				n = (size_t)(close - (p + 2));
				for (k = 0; k < sizeof(classes) / sizeof(classes[0]); k++)
					if (strlen(classes[k].name) == n &&
					    !strncmp(classes[k].name, p + 2, n))
						break;
				if (k == sizeof(classes) / sizeof(classes[0]))
					return -1;
				if (classes[k].fn(c))
					found = 1;
				p = close + 2;
				continue;
			}
		}
		if (lo == '\\') {
			lo = (unsigned char)*++p;
			if (!lo)
				return -1;
		}
		p++;
		if (*p == '-' && p[1] && p[1] != ']') {
			unsigned char hi = (unsigned char)p[1];

			p += 2;
			if (hi == '\\') {
				hi = (unsigned char)*p++;
				if (!hi)
					return -1;
			}
			if (c >= lo && c <= hi)
				found = 1;
		} else if (c == lo) {
			found = 1;
		}
	}
	*pp = p + 1;
	return found != negate;
}

static int wild(const char *start, const char *p, const char *t, int pathname)
{
	for (; *p; p++, t++) {
		const char *rest, *first;
		int r;

		switch (*p) {
		case '?':
			if (!*t || (pathname && *t == '/'))
				return 0;
			break;
		case '[':
			if (!*t || (pathname && *t == '/'))
				return 0;
			rest = p + 1;
			r = match_class(&rest, (unsigned char)*t);
			if (r <= 0)
				return 0;
			p = rest - 1;
			break;
		case '*':
			first = p;
			while (p[1] == '*')
				p++;
			rest = p + 1;
			if (!pathname) {
				for (;; t++) {
					if (wild(start, rest, t, 0))
						return 1;
					if (!*t)
						return 0;
				}
			}
			/* "**" spans directories only as a whole component. */
			if (p > first && (first == start || first[-1] == '/') &&
			    (!*rest || *rest == '/')) {
				if (!*rest)
					return 1;
				for (;;) {
					if (wild(start, rest + 1, t, 1))
						return 1;
					t = strchr(t, '/');
					if (!t)
						return 0;
					t++;
				}
			}
			for (;; t++) {
				if (wild(start, rest, t, 1))
					return 1;
				if (!*t || *t == '/')
					return 0;
			}
		case '\\':
			p++;
			if (!*p || *p != *t)
				return 0;
			break;
		default:
			if (*p != *t)
				return 0;
		}
	}
	return !*t;
}

int xg_snapshot_wildmatch(const char *pattern, const char *text, int pathname)
{
	return wild(pattern, pattern, text, pathname);
}

static int match_one(const struct xg_snapshot_pattern *p, const char *path, size_t len,
		     const char *rel, size_t rellen)
{
	const char *pat = p->text;

	if (p->flags & PAT_BASENAME) {
		const char *slash = memrchr(path, '/', len);
		const char *name = slash ? slash + 1 : path;
		size_t namelen = len - (size_t)(name - path);

		if (p->literal == p->len)
			return namelen == p->len && !memcmp(name, pat, namelen);
		if (p->flags & PAT_SUFFIX)
			return namelen >= p->len - 1 &&
			       !memcmp(name + namelen - (p->len - 1), pat + 1, p->len - 1);
		return wild(pat, pat, name, 0);
	}
	/* A pattern with a slash is anchored to its file's directory. */
	if (*pat == '/')
		pat++;
	if (p->literal == p->len)
		return rellen == (size_t)(p->text + p->len - pat) && !memcmp(rel, pat, rellen);
	return wild(pat, pat, rel, 1);
}

int xg_snapshot_rules_match(const struct xg_snapshot_rules *r, const char *path,
			    size_t len, int is_dir)
{
	const char *rel = path;
	size_t rellen = len, i;

	if (r->baselen) {
		if (len <= r->baselen || path[r->baselen] != '/' ||
		    memcmp(path, r->base, r->baselen))
			return -1;
		rel = path + r->baselen + 1;
		rellen = len - r->baselen - 1;
	}
	for (i = r->nr; i-- > 0;) {
		const struct xg_snapshot_pattern *p = &r->pat[i];

		if ((p->flags & PAT_DIRONLY) && !is_dir)
			continue;
		if (match_one(p, path, len, rel, rellen))
			return !(p->flags & PAT_NEGATIVE);
	}
	return -1;
}

/*
 * git's path_in_sparse_checkout: the path as a file, then each directory
 * above it, until a pattern decides; a pattern matching means inside, a
 * "!" pattern outside, and nothing deciding outside.  Cone mode writes
 * its patterns so that this reading gives what its own matching does.
 */
int xg_snapshot_rules_sparse(const struct xg_snapshot_rules *r, const char *path, size_t len)
{
	int is_dir = 0, m;

	while (len) {
		if ((m = xg_snapshot_rules_match(r, path, len, is_dir)) >= 0)
			return m;
		while (len && path[len - 1] != '/')
			len--;
		if (len)
			len--;
		is_dir = 1;
	}
	return 0;
}
