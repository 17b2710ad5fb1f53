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

static size_t chars_of(const char *p, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)p[i] & 0xc0) != 0x80)
			c++;
	return c;
}

static size_t trim_end(const char *p, size_t n)
{
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	return n;
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
	qsort(v, m->nr, sizeof(*v), by_file);
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

jv xg_prompt_notice(const char *text)
{
	jv n = xg_rec_new("notice");

	n = xg_json_set(n, "from", jv_string(xg_progname ? xg_progname : "xg"));
	return xg_json_set(n, "text", jv_string(text));
}

/* The value of a placeholder, or NULL when it has none. */
static const char *var_peek(jv vars, const char *name, size_t n)
{
	char key[64];

	if (n == 0 || n >= sizeof(key))
		return NULL;
	memcpy(key, name, n);
	key[n] = '\0';
	return xg_json_string_peek(vars, key);
}

char *xg_prompt_render(const char *tmpl, size_t len, jv vars)
{
	struct xg_buf out = XG_BUF_INIT(0);
	const char *p = tmpl, *end = tmpl + len;

	while (p < end) {
		const char *open = memmem(p, (size_t)(end - p), "{{", 2), *close, *name;
		size_t n;

		if (!open) {
			xg_buf_add(&out, p, (size_t)(end - p));
			break;
		}
		xg_buf_add(&out, p, (size_t)(open - p));
		close = memmem(open + 2, (size_t)(end - open - 2), "}}", 2);
		if (!close) {
			xg_buf_add(&out, open, (size_t)(end - open));
			break;
		}
		name = open + 2;
		n = (size_t)(close - name);
		p = close + 2;
		if (n > 1 && *name == '?') {
			const char *v = var_peek(vars, name + 1, n - 1);
			char *endtag = xg_asprintf("{{/%.*s}}", (int)(n - 1), name + 1);
			const char *stop = memmem(p, (size_t)(end - p), endtag, strlen(endtag));

			if (stop && !(v && *v)) {
				p = stop + strlen(endtag);
			} else if (stop) {
				char *inner = xg_prompt_render(p, (size_t)(stop - p), vars);

				xg_buf_addstr(&out, inner);
				free(inner);
				p = stop + strlen(endtag);
			}
			free(endtag);
		} else if (n > 1 && *name == '/') {
			/* a stray end tag: dropped */
		} else {
			const char *v = var_peek(vars, name, n);

			if (v)
				xg_buf_addstr(&out, v);
			else if (n == 0 || n >= 64)
				xg_buf_add(&out, open, (size_t)(p - open));
		}
	}
	return xg_buf_detach(&out, NULL);
}

char *xg_prompt_escape_data(const char *s)
{
	struct xg_buf out = XG_BUF_INIT(0);

	for (; *s; s++) {
		if (*s == '&')
			xg_buf_addstr(&out, "&amp;");
		else if (*s == '<')
			xg_buf_addstr(&out, "&lt;");
		else if (*s == '>')
			xg_buf_addstr(&out, "&gt;");
		else
			xg_buf_addch(&out, *s);
	}
	return xg_buf_detach(&out, NULL);
}

/*
 * Fits text into budget characters: whole when it fits, else up to the last
 * paragraph boundary (a blank line) that fits.  Returns the bytes kept.
 */
static size_t fit(const char *text, size_t len, size_t budget, size_t *chars, int *cut)
{
	size_t total = chars_of(text, len), best = 0, i;

	*cut = 0;
	if (total <= budget) {
		*chars = total;
		return len;
	}
	*cut = 1;
	for (i = 0; i < len; i++) {
		size_t j = i + 1, keep;

		if (text[i] != '\n')
			continue;
		while (j < len && (text[j] == ' ' || text[j] == '\t'))
			j++;
		if (j >= len || text[j] != '\n')
			continue;
		keep = trim_end(text, i);
		if (chars_of(text, keep) > budget)
			break;
		best = keep;
	}
	*chars = chars_of(text, best);
	return best;
}

struct part {
	const struct xg_prompt_section *s;
	char *text;
	size_t len, chars;
	int cut;
};

static int build_part(const struct xg_prompt_manifest *m, const struct xg_prompt_section *s,
		      jv vars, int render, struct part *p, jv *notices)
{
	char *full = render ? xg_prompt_render(s->text, s->len, vars) : xg_memdup(s->text, s->len);
	size_t len = trim_end(full, strlen(full)), all = chars_of(full, len);

	p->s = s;
	if (all > s->budget && !strcmp(s->name, "reporting")) {
		free(full);
		return bad_line(m, s->lineno,
				"section 'reporting' is %zu characters, over its budget of %zu; "
				"it is never cut", all, s->budget);
	}
	p->len = fit(full, len, s->budget, &p->chars, &p->cut);
	full[p->len] = '\0';
	p->text = full;
	if (p->cut) {
		char *msg = xg_asprintf("section '%s' is %zu characters, over its budget of %zu: "
					"cut at a paragraph boundary to %zu", s->name, all,
					s->budget, p->chars);

		*notices = jv_array_append(*notices, xg_prompt_notice(msg));
		free(msg);
	}
	return 0;
}

static jv section_entry(const struct part *p)
{
	jv e = jv_object();

	e = xg_json_set(e, "name", jv_string(p->s->name));
	e = xg_json_set(e, "chars", jv_number((double)p->chars));
	e = xg_json_set(e, "budget", jv_number((double)p->s->budget));
	e = xg_json_set(e, "cut", jv_bool(p->cut));
	return xg_json_set(e, "kind", jv_string(p->s->stable ? "stable" : "dynamic"));
}

static void join(struct xg_buf *b, const struct part *p)
{
	if (!p->len)
		return;
	if (b->len)
		xg_buf_addstr(b, "\n\n");
	xg_buf_add(b, p->text, p->len);
}

int xg_prompt_compile(const struct xg_prompt_manifest *m, const struct xg_prompt_target *t,
		      jv *pack, jv *notices)
{
	struct xg_buf sys = XG_BUF_INIT(0);
	jv vars = jv_object(), sections = jv_array(), templates = jv_object(), out;
	char sha[65];
	size_t i;
	int pass, rc = 0;

	if (t->model && *t->model)
		vars = xg_json_set(vars, "model", jv_string(t->model));
	/* Pass 0: the stable prefix; pass 1: the mode's sections; 2: templates. */
	for (pass = 0; pass < 3 && !rc; pass++) {
		for (i = 0; i < m->nr && !rc; i++) {
			const struct xg_prompt_section *s = &m->sec[i];
			int template = !strcmp(s->mode, "-");
			struct part p = { 0 };

			if (pass == 0 ? !s->stable :
			    pass == 1 ? (s->stable || template ||
					 (strcmp(s->mode, "all") && strcmp(s->mode, t->mode))) :
			    !template)
				continue;
			if ((rc = build_part(m, s, vars, pass < 2, &p, notices)))
				break;
			if (pass < 2) {
				join(&sys, &p);
				sections = jv_array_append(sections, section_entry(&p));
			} else {
				templates = xg_json_set(templates, s->name, jv_string(p.text));
			}
			free(p.text);
		}
		if (pass == 0)
			xg_sha256_hex_of(sys.buf, sys.len, sha);
	}
	jv_free(vars);
	if (rc) {
		jv_free(sections);
		jv_free(templates);
		xg_buf_release(&sys);
		return rc;
	}
	out = xg_rec_new("pack");
	out = xg_json_set(out, "variant", jv_string(t->variant));
	out = xg_json_set(out, "version", jv_string(t->version));
	out = xg_json_set(out, "model", t->model && *t->model ? jv_string(t->model) : jv_null());
	out = xg_json_set(out, "mode", jv_string(t->mode));
	out = xg_json_set(out, "stable_sha256", jv_string(sha));
	out = xg_json_set(out, "sections", sections);
	out = xg_json_set(out, "system", jv_string_sized(sys.buf, (int)sys.len));
	out = xg_json_set(out, "templates", templates);
	xg_buf_release(&sys);
	*pack = out;
	return 0;
}

/* Where the version comes from, for xg_prompt_pack. */
struct pick {
	char *name, *version;	/* version NULL: the head */
	char *head;
	int from_conversation;	/* the conversation's selection */
	int pin;		/* the conversation has no selection yet */
};

static void pick_release(struct pick *pk)
{
	free(pk->name);
	free(pk->version);
	free(pk->head);
}

/*
 * The selection order: the request's NAME@VERSION; else the conversation's
 * last variant_change (when the request names no variant or the same one);
 * else the head of the named variant, or of default.
 */
static int pick_version(const struct xg_prompt_request *rq, struct pick *pk)
{
	char *sel = NULL;
	int rc = 0;

	memset(pk, 0, sizeof(*pk));
	if (rq->variant && (rc = xg_variant_parse_ref(rq->variant, &pk->name, &pk->version)))
		return rc;
	if (rq->conversation && (rc = xg_variant_selected(rq->conversation, &sel)))
		return rc;
	pk->pin = rq->conversation && !sel;
	if (!pk->version && sel) {
		char *n, *v;

		if (xg_variant_parse_ref(sel, &n, &v) || !v) {
			free(n);
			free(v);
			xg_error("conversation '%s' selects '%s', which is not NAME@VERSION",
				 rq->conversation, sel);
			free(sel);
			return XG_EX_CONFIG;
		}
		if (!pk->name || !strcmp(pk->name, n)) {
			free(pk->name);
			pk->name = n;
			pk->version = v;
			pk->from_conversation = 1;
		} else {
			free(n);
			free(v);
		}
	}
	free(sel);
	if (!pk->name)
		pk->name = xg_strdup(XG_VARIANT_DEFAULT);
	return rc;
}

static void add_notice(jv *notices, char *text)
{
	*notices = jv_array_append(*notices, xg_prompt_notice(text));
	free(text);
}

/* The notices about the version itself: a head that moved since the
 * conversation pinned its version, a version tuned for another model. */
static int version_notices(const struct xg_prompt_request *rq, const struct pick *pk,
			   jv *notices)
{
	jv meta;
	const char *tuned;
	int rc = xg_variant_meta(pk->name, pk->version, &meta);

	if (rc)
		return rc;
	if (pk->from_conversation && pk->head && strcmp(pk->head, pk->version))
		add_notice(notices, xg_asprintf(
			"head of variant '%s' moved to %s; this conversation stays on %s@%s",
			pk->name, pk->head, pk->name, pk->version));
	tuned = xg_json_string_peek(meta, "tunedFor");
	if (tuned && rq->model && *rq->model && strcmp(tuned, rq->model))
		add_notice(notices, xg_asprintf("%s@%s is tuned for %s; this run uses %s",
						pk->name, pk->version, tuned, rq->model));
	jv_free(meta);
	return 0;
}

int xg_prompt_pack(const struct xg_prompt_request *rq, jv *pack, jv *notices)
{
	struct xg_prompt_manifest m;
	struct xg_prompt_target t;
	struct pick pk;
	char *loaded = NULL, *ref = NULL;
	const char *mode = rq->mode ? rq->mode : "normal";
	int rc;

	*pack = jv_invalid();
	memset(&m, 0, sizeof(m));
	if (!xg_conv_mode_valid(mode)) {
		xg_error("'%s' " XG_CONV_MODE_BAD, mode);
		return XG_EX_DATAERR;
	}
	if ((rc = pick_version(rq, &pk)))
		goto out;
	if ((rc = xg_variant_load(pk.name, pk.version, &m, &loaded, &pk.head))) {
		/* The selection is state this program wrote: it being gone is a
		 * broken installation, not bad input. */
		if (pk.from_conversation && rc == XG_EX_DATAERR) {
			xg_error("conversation '%s' is on %s@%s, which cannot be found",
				 rq->conversation, pk.name, pk.version);
			rc = XG_EX_CONFIG;
		}
		goto out;
	}
	free(pk.version);
	pk.version = loaded;
	if ((rc = version_notices(rq, &pk, notices)))
		goto out;
	t.variant = pk.name;
	t.version = pk.version;
	t.model = rq->model;
	t.mode = mode;
	if ((rc = xg_prompt_compile(&m, &t, pack, notices)))
		goto out;
	/* Pin only a version that compiled, so a broken one is not recorded. */
	if (pk.pin) {
		ref = xg_asprintf("%s@%s", pk.name, pk.version);
		rc = xg_variant_select(rq->conversation, ref, "first compile", NULL);
	}
out:
	if (rc) {
		jv_free(*pack);
		*pack = jv_invalid();
	}
	xg_prompt_manifest_release(&m);
	pick_release(&pk);
	free(ref);
	return rc;
}
