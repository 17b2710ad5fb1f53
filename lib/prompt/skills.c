/*
 * Skills: procedures a person or a project writes down for the agent, each
 * a folder holding a SKILL.md whose front matter names it and says what it
 * is for (prompt.h, man 1 xg-prompt-compile).
 *
 *   read_skill     one SKILL.md read, bounded, its front matter parsed
 *   front_matter   the "name:" and "description:" between two "---" lines
 *   find           the person's folder, then the project's from the
 *                  workspace up to the top of its repository: the first of
 *                  a name wins, and each one left out is a notice
 *   lay_out        the section the pack carries, sorted, within its budget
 *   named          $NAME in a request: the SKILL.md text that goes with it
 *
 * Nothing here fails a compile: a skill that cannot be read or is
 * malformed is left out with one notice naming its file and line.  The
 * files are read once per pack, as the project instructions are.
 */
#include "xg.h"
#include "prompt/prompt.h"
#include "prompt/internal.h"
#include <dirent.h>

#define FILE_NAME "SKILL.md"
#define PROJECT_DIR ".agents/skills"
#define NAME_MAX_LEN 64

static const char intro[] =
	"# Skills\n"
	"\n"
	"The skills found for this workspace, by name: what each is for, then its "
	"SKILL.md. The person's own hold in every project; the others come from the "
	".agents/skills folders of the repository, from its root down to the working "
	"directory. A path outside the working directory is absolute: read that file "
	"with bash (cat), as the read tool stays inside the working directory.";

/* Where a cut list stops; %zu is how many are left out. */
static const char tail_fmt[] =
	"[Cut here for length: the skills list holds at most "
	XG_STR(XG_PROMPT_SKILLS_BUDGET) " characters, and %zu more skills are left "
	"out. Their SKILL.md files are in the same folders.]";

static void add_notice(jv *notices, char *text)
{
	*notices = jv_array_append(*notices, xg_prompt_notice(text));
	free(text);
}

static int name_valid(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > NAME_MAX_LEN || !(islower((unsigned char)*s) || isdigit((unsigned char)*s)))
		return 0;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-')
			return 0;
	return 1;
}

/* ---- the front matter ---- */

/* A line of the file: its bytes, less a carriage return at its end. */
struct line {
	const char *p;
	size_t n;
};

static int next_line(const char **pos, const char *end, struct line *l)
{
	const char *nl;

	if (*pos >= end)
		return 0;
	nl = memchr(*pos, '\n', (size_t)(end - *pos));
	l->p = *pos;
	l->n = (size_t)((nl ? nl : end) - *pos);
	*pos = nl ? nl + 1 : end;
	if (l->n && l->p[l->n - 1] == '\r')
		l->n--;
	return 1;
}

static int is_fence(const struct line *l)
{
	size_t n = l->n;

	while (n > 3 && (l->p[n - 1] == ' ' || l->p[n - 1] == '\t'))
		n--;
	return n == 3 && !memcmp(l->p, "---", 3);
}

static void trim(const char **p, size_t *n)
{
	while (*n && isspace((unsigned char)**p)) {
		(*p)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*p)[*n - 1]))
		(*n)--;
}

/* A quoted value's text into b: 0, or -1 when its quote is not closed. */
static int unquote(const char *p, size_t n, struct xg_buf *b)
{
	char q = *p;
	size_t i;

	for (i = 1; i < n; i++) {
		if (p[i] == q && q == '\'' && i + 1 < n && p[i + 1] == '\'') {
			xg_buf_addch(b, '\'');
			i++;
		} else if (p[i] == q) {
			return i + 1 == n ? 0 : -1;
		} else if (q == '"' && p[i] == '\\' && i + 1 < n) {
			i++;
			xg_buf_addch(b, p[i] == 'n' || p[i] == 't' ? ' ' : p[i]);
		} else {
			xg_buf_addch(b, p[i]);
		}
	}
	return -1;
}

/* What a front matter gave, and where. */
struct fm {
	char *name, *description;
	size_t name_line, close_line;
};

/*
 * Parses the front matter at the start of text (YAML's simple part: one
 * "key: value" a line, a value plain, quoted, or a '|' or '>' block, and
 * indented lines going on with the key before).  Keys other than name and
 * description are passed over.  0, or -1 with *why and *lineno set.
 */
static int front_matter(const char *text, size_t len, struct fm *fm, char **why, size_t *lineno)
{
	const char *pos = text, *end = text + len;
	struct xg_buf val = XG_BUF_INIT(0);
	char **into = NULL;
	struct line l;
	size_t n = 1;

	memset(fm, 0, sizeof(*fm));
	*lineno = 1;
	if (!next_line(&pos, end, &l) || !is_fence(&l)) {
		*why = xg_strdup("no front matter: a SKILL.md starts with a '---' line, then "
				 "'name:' and 'description:' lines, then '---'");
		return -1;
	}
	for (;;) {
		const char *k, *v, *colon;
		size_t kn, vn;

		if (!next_line(&pos, end, &l)) {
			*why = xg_strdup("the front matter that starts here has no closing '---' "
					 "line");
			*lineno = 1;
			goto bad;
		}
		n++;
		if (!is_fence(&l) && (!l.n || *l.p == ' ' || *l.p == '\t')) {
			/* A blank or indented line goes on with the key before. */
			k = l.p;
			kn = l.n;
			trim(&k, &kn);
			if (into && kn && val.len)
				xg_buf_addch(&val, ' ');
			if (into)
				xg_buf_add(&val, k, kn);
			continue;
		}
		if (into)
			*into = xg_buf_detach(&val, NULL);
		into = NULL;
		if (is_fence(&l))
			break;
		if (*l.p == '#')
			continue;
		colon = memchr(l.p, ':', l.n);
		k = l.p;
		kn = colon ? (size_t)(colon - l.p) : 0;
		*lineno = n;
		if (!kn || (colon + 1 < l.p + l.n && colon[1] != ' ' && colon[1] != '\t')) {
			*why = xg_asprintf("'%.*s' is not a 'key: value' line",
					   (int)(l.n > 60 ? 60 : l.n), l.p);
			goto bad;
		}
		if (!(kn == 4 && !memcmp(k, "name", 4)) &&
		    !(kn == 11 && !memcmp(k, "description", 11)))
			continue;
		into = kn == 4 ? &fm->name : &fm->description;
		if (*into) {
			*why = xg_asprintf("'%.*s' is given twice", (int)kn, k);
			into = NULL;
			goto bad;
		}
		if (kn == 4)
			fm->name_line = n;
		v = colon + 1;
		vn = (size_t)(l.p + l.n - v);
		trim(&v, &vn);
		xg_buf_reset(&val);
		/* A '|' or '>' block: the indented lines after it. */
		if (vn && (*v == '|' || *v == '>'))
			continue;
		if (vn && (*v == '"' || *v == '\'') && unquote(v, vn, &val) < 0) {
			*why = xg_asprintf("the %.*s's quote is not closed on its line", (int)kn, k);
			into = NULL;
			goto bad;
		}
		if (vn && *v != '"' && *v != '\'')
			xg_buf_add(&val, v, vn);
	}
	fm->close_line = n;
	xg_buf_release(&val);
	return 0;
bad:
	xg_buf_release(&val);
	free(fm->name);
	free(fm->description);
	fm->name = fm->description = NULL;
	return -1;
}

/* Checks what the front matter gave: 0, or -1 with *why and *lineno. */
static int check(const struct fm *fm, char **why, size_t *lineno)
{
	size_t chars;

	*lineno = fm->close_line;
	if (!fm->name || !*fm->name) {
		*why = xg_strdup("the front matter has no 'name'");
		return -1;
	}
	if (!fm->description || !*fm->description) {
		*why = xg_strdup("the front matter has no 'description'");
		return -1;
	}
	chars = xg_prompt_chars(fm->description, strlen(fm->description));
	if (chars > XG_PROMPT_SKILL_DESCRIPTION_MAX) {
		*why = xg_asprintf("the description is %zu characters, more than %d", chars,
				   XG_PROMPT_SKILL_DESCRIPTION_MAX);
		return -1;
	}
	if (!name_valid(fm->name, strlen(fm->name))) {
		*why = xg_asprintf("the name '%s' is not 1 to %d lower-case letters, digits and "
				   "hyphens, starting with a letter or digit", fm->name,
				   NAME_MAX_LEN);
		*lineno = fm->name_line;
		return -1;
	}
	return 0;
}

/* ---- reading ---- */

struct found {
	struct xg_prompt_skill *v;
	size_t nr, alloc;
};

/* The file's text, valid UTF-8 without a byte-order mark, into s; 0, or -1
 * after a notice. */
static int read_text(const char *path, struct xg_prompt_skill *s, jv *notices)
{
	struct xg_buf b = XG_BUF_INIT(XG_PROMPT_SKILL_MAX);
	struct stat st;
	const char *p;
	size_t n;
	jv str;
	/* O_NONBLOCK: a FIFO put in the file's place must not hang the run. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		add_notice(notices, fd < 0 ? xg_asprintf("cannot read skill '%s': %s; it is left "
							 "out", path, strerror(errno)) :
				    xg_asprintf("skill '%s' is not a regular file; it is left out",
						path));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (xg_read_fd(fd, &b) < 0) {
		add_notice(notices, errno == EFBIG ?
			   xg_asprintf("skill '%s' is more than %zu bytes; it is left out", path,
				       XG_PROMPT_SKILL_MAX) :
			   xg_asprintf("cannot read skill '%s': %s; it is left out", path,
				       strerror(errno)));
		close(fd);
		xg_buf_release(&b);
		return -1;
	}
	close(fd);
	p = b.buf;
	n = b.len;
	if (n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) {
		p += 3;
		n -= 3;
	}
	str = xg_json_string_bytes(p, n);
	n = (size_t)jv_string_length_bytes(jv_copy(str));
	p = jv_string_value(str);
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	s->text = xg_memdup(p, n);
	s->len = n;
	jv_free(str);
	xg_buf_release(&b);
	return 0;
}

/* Reads dir/FILE_NAME into s: 1 when it is a skill, 0 when it is not (no
 * such file), -1 when it is left out (after a notice). */
static int read_skill(const char *dir, struct xg_prompt_skill *s, jv *notices)
{
	char *path = xg_path_join(dir, FILE_NAME), *why = NULL;
	struct fm fm;
	size_t lineno;
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (stat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		free(path);
		return 0;
	}
	if (read_text(path, s, notices) < 0) {
		free(path);
		return -1;
	}
	if (front_matter(s->text, s->len, &fm, &why, &lineno) < 0 || check(&fm, &why, &lineno) < 0) {
		add_notice(notices, xg_asprintf("%s:%zu: %s; the skill is left out", path,
						lineno, why));
		free(why);
		free(fm.name);
		free(fm.description);
		free(s->text);
		free(path);
		s->text = NULL;
		return -1;
	}
	s->name = fm.name;
	s->description = fm.description;
	s->file = path;
	return 1;
}

static void skill_release(struct xg_prompt_skill *s)
{
	free(s->name);
	free(s->description);
	free(s->file);
	free(s->shown);
	free(s->text);
}

static struct xg_prompt_skill *find_name(struct found *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nr; i++)
		if (!strcmp(f->v[i].name, name))
			return &f->v[i];
	return NULL;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The skills of one folder, by folder name; a name taken already is left
 * out with a notice saying which one has it. */
static void read_folder(const char *dir, int person, const char *workspace, struct found *f,
			jv *notices)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, alloc = 0, i, wl = strlen(workspace);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		XG_ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = xg_strdup(de->d_name);
	}
	closedir(d);
	XG_QSORT(names, nr, by_string);
	for (i = 0; i < nr; i++) {
		char *sub = xg_path_join(dir, names[i]);
		struct xg_prompt_skill s, *had;

		if (read_skill(sub, &s, notices) == 1 && (had = find_name(f, s.name))) {
			add_notice(notices, xg_asprintf(
				"skill '%s' is %s '%s'; '%s', of the same name, is left out", s.name,
				had->person ? "the person's own" : "the project's",
				had->file, s.file));
			skill_release(&s);
		} else if (s.name) {
			s.person = person;
			/* Inside the workspace, as the model's tools name it. */
			if (!strncmp(s.file, workspace, wl) && s.file[wl] == '/' && wl > 1)
				s.shown = xg_strdup(s.file + wl + 1);
			else
				s.shown = xg_strdup(s.file);
			XG_ALLOC_GROW(f->v, f->nr + 1, f->alloc);
			f->v[f->nr++] = s;
		}
		free(sub);
		free(names[i]);
	}
	free(names);
}

/* The person's skills, then the project's from the workspace up, so the
 * first of a name is the one that wins. */
static void find(const char *workspace, struct found *f, jv *notices)
{
	char *own = xg_path_config("skills"), **dirs;
	size_t nr, i;

	read_folder(own, 1, workspace, f, notices);
	free(own);
	dirs = xg_prompt_project_dirs(workspace, &nr);
	for (i = nr; i-- > 0;) {
		char *d = xg_path_join(dirs[i], PROJECT_DIR);

		read_folder(d, 0, workspace, f, notices);
		free(d);
	}
	for (i = 0; i < nr; i++)
		free(dirs[i]);
	free(dirs);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct xg_prompt_skill *)a)->name,
		      ((const struct xg_prompt_skill *)b)->name);
}

/* ---- the section ---- */

static char *entry_text(const struct xg_prompt_skill *s)
{
	return xg_asprintf("\n- %s: %s (SKILL.md: %s)", s->name, s->description, s->shown);
}

/* Lays the entries out in b within the budget, whole; returns how many
 * went in. */
static size_t lay_out(const struct xg_prompt_skills *sk, struct xg_buf *b)
{
	size_t left = XG_PROMPT_SKILLS_BUDGET - xg_prompt_chars(intro, strlen(intro)), i;
	char tail[sizeof(tail_fmt) + 24];

	xg_buf_addstr(b, intro);
	xg_buf_addch(b, '\n');
	left--;
	for (i = 0; i < sk->nr; i++) {
		char *e = entry_text(&sk->v[i]);
		size_t c = xg_prompt_chars(e, strlen(e)), room = 0;

		if (i + 1 < sk->nr) {
			snprintf(tail, sizeof(tail), tail_fmt, sk->nr - i - 1);
			room = 2 + strlen(tail);
		}
		if (c + room > left) {
			free(e);
			break;
		}
		xg_buf_addstr(b, e);
		left -= c;
		free(e);
	}
	if (i < sk->nr) {
		snprintf(tail, sizeof(tail), tail_fmt, sk->nr - i);
		xg_buf_addf(b, "\n\n%s", tail);
	}
	return i;
}

static jv section_entry(const struct xg_prompt_skills *sk, size_t kept)
{
	jv e = jv_object(), list = jv_array();
	size_t i;

	for (i = 0; i < sk->nr; i++) {
		jv s = jv_object();

		s = xg_json_set(s, "name", jv_string(sk->v[i].name));
		s = xg_json_set(s, "from", jv_string(sk->v[i].person ? "person" : "project"));
		s = xg_json_set(s, "path", jv_string(sk->v[i].shown));
		s = xg_json_set(s, "file", jv_string(sk->v[i].file));
		s = xg_json_set(s, "cut", jv_bool(i >= kept));
		list = jv_array_append(list, s);
	}
	e = xg_json_set(e, "name", jv_string("skills"));
	e = xg_json_set(e, "chars", jv_number((double)xg_prompt_chars(sk->text, sk->len)));
	e = xg_json_set(e, "budget", jv_number(XG_PROMPT_SKILLS_BUDGET));
	e = xg_json_set(e, "cut", jv_bool(kept < sk->nr));
	e = xg_json_set(e, "kind", jv_string("dynamic"));
	return xg_json_set(e, "skills", list);
}

static void cut_notice(const struct xg_prompt_skills *sk, size_t kept, jv *notices)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t i;

	xg_buf_addf(&b, "the skills list is over its budget of %d characters: %zu of %zu skills "
		    "are listed; left out:", XG_PROMPT_SKILLS_BUDGET, kept, sk->nr);
	for (i = kept; i < sk->nr; i++)
		xg_buf_addf(&b, "%s '%s'", i > kept ? "," : "", sk->v[i].name);
	add_notice(notices, xg_buf_detach(&b, NULL));
}

void xg_prompt_skills_read(const char *cwd, struct xg_prompt_skills *sk, jv *notices)
{
	struct xg_buf b = XG_BUF_INIT(0);
	struct found f = { 0 };
	char *workspace = realpath(cwd ? cwd : ".", NULL);
	struct stat st;
	size_t kept;

	memset(sk, 0, sizeof(*sk));
	sk->entry = jv_invalid();
	/* A workspace that is not a directory: project.c says so. */
	if (!workspace || stat(workspace, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(workspace);
		return;
	}
	find(workspace, &f, notices);
	free(workspace);
	sk->v = f.v;
	sk->nr = f.nr;
	sk->alloc = f.alloc;
	if (!sk->nr)
		return;
	XG_QSORT(sk->v, sk->nr, by_name);
	kept = lay_out(sk, &b);
	if (kept < sk->nr)
		cut_notice(sk, kept, notices);
	sk->text = xg_buf_detach(&b, &sk->len);
	sk->entry = section_entry(sk, kept);
}

void xg_prompt_skills_release(struct xg_prompt_skills *sk)
{
	size_t i;

	for (i = 0; i < sk->nr; i++)
		skill_release(&sk->v[i]);
	free(sk->v);
	free(sk->text);
	jv_free(sk->entry);
	memset(sk, 0, sizeof(*sk));
	sk->entry = jv_invalid();
}

/* ---- $NAME in a request ---- */

static int word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

static const struct xg_prompt_skill *skill_named(const struct xg_prompt_skills *sk,
						 const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < sk->nr; i++)
		if (strlen(sk->v[i].name) == n && !memcmp(sk->v[i].name, name, n))
			return &sk->v[i];
	return NULL;
}

/* Whether name (n bytes) is in the array of strings seen. */
static int seen_peek(jv seen, const char *name, size_t n)
{
	jv_array_foreach(seen, i, v) {
		const char *s = jv_string_value(v);
		int hit = strlen(s) == n && !memcmp(s, name, n);

		(void)i;
		jv_free(v);
		if (hit)
			return 1;
	}
	return 0;
}

char *xg_prompt_skills_named(const struct xg_prompt_skills *sk, const char *text, jv *named,
			     jv *notices)
{
	struct xg_buf b = XG_BUF_INIT(0);
	jv missing = jv_array();
	const char *p;

	*named = jv_array();
	for (p = text ? strchr(text, '$') : NULL; p; p = strchr(p + 1, '$')) {
		const char *name = p + 1;
		const struct xg_prompt_skill *s;
		size_t n = 0;

		/* "a$b", "$$x" and "\$x" are not a skill's name. */
		if (p > text && (word_char(p[-1]) || p[-1] == '$' || p[-1] == '\\'))
			continue;
		while (word_char(name[n]))
			n++;
		/* A trailing hyphen is the sentence's ("use $release-"). */
		while (n && name[n - 1] == '-')
			n--;
		if (!n)
			continue;
		if ((s = skill_named(sk, name, n))) {
			if (seen_peek(*named, name, n))
				continue;
			*named = jv_array_append(*named, jv_string(s->name));
			xg_buf_addf(&b, "\n\nThe skill %s, named in this request as $%s: its SKILL.md "
				    "(%s) follows.\n<skill name=\"%s\" path=\"%s\">\n", s->name,
				    s->name, s->shown, s->name, s->shown);
			xg_buf_add(&b, s->text, s->len);
			xg_buf_addstr(&b, "\n</skill>");
		} else if (islower((unsigned char)*name) && name_valid(name, n) &&
			   !seen_peek(missing, name, n)) {
			missing = jv_array_append(missing, jv_string_sized(name, (int)n));
			add_notice(notices, xg_asprintf("$%.*s names no skill here, so it is sent as "
							"typed; 'xg skills' lists the skills",
							(int)n, name));
		}
	}
	jv_free(missing);
	if (!b.len) {
		xg_buf_release(&b);
		return NULL;
	}
	return xg_buf_detach(&b, NULL);
}
