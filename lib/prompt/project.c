/*
 * Project instructions: the AGENTS.md files a pack carries right after its
 * stable prefix, so the cached prefix stays the same in every project.
 *
 *   find_sources  which files, in order: the person's own, then the
 *                 repository's from its root down to the workspace (the
 *                 walk, xg_prompt_project_dirs, serves skills.c too)
 *   read_source   one file read, bounded, its bytes made valid UTF-8
 *   assemble      the section's text fitted into its budget, the notice
 *                 and the sections[] entry
 *
 * Nothing here fails a compile: a file that is missing is skipped, and one
 * that cannot be read or is not a regular file is a notice.  The files are
 * read once per pack, so a run's requests all carry the same text.
 */
#include "xg.h"
#include "prompt/prompt.h"
#include "prompt/internal.h"

#define FILE_NAME "AGENTS.md"
/* A code point is at most 4 bytes, and so is what becomes one U+FFFD, so
 * this many bytes always hold more characters than the budget. */
#define READ_MAX (4 * (size_t)XG_PROMPT_PROJECT_BUDGET + 4)

static const char intro[] =
	"# Project instructions\n"
	"\n"
	"Instructions for working here, from AGENTS.md files: the person's own file "
	"first, when they have one, which holds in every project; then the "
	"repository's, from its root down to the working directory. Each file stands "
	"between <file> tags giving its path relative to the working directory, and "
	"what it says covers the directory it sits in and everything under it. Where "
	"two files disagree, the one deeper in the tree wins, and what the person asks "
	"in the conversation wins over them all.";

/* Where a cut file stops. */
static const char tail[] =
	"[Cut here for length: project instructions hold at most "
	XG_STR(XG_PROMPT_PROJECT_BUDGET) " characters in all. The rest of this file, "
	"and any AGENTS.md files after it on the way down to the working directory, "
	"are left out; read them from disk when they bear on the work.]";

struct source {
	char *file;		/* the path read */
	char *shown;		/* the path the model is given */
	char *text;		/* valid UTF-8, trailing space trimmed */
	size_t len, chars;	/* of text */
	size_t size;		/* bytes on disk */
	int partial;		/* only READ_MAX bytes of it were read */
	size_t kept, kept_chars;	/* of text, in the section */
	dev_t dev;
	ino_t ino;
};

struct sources {
	struct source *v;
	size_t nr, alloc;
};

static void add_notice(jv *notices, char *text)
{
	*notices = jv_array_append(*notices, xg_prompt_notice(text));
	free(text);
}

/* Reads at most max bytes of fd into b. */
static int read_bounded(int fd, struct xg_buf *b, size_t max)
{
	char chunk[16384];

	while (b->len < max) {
		size_t want = max - b->len < sizeof(chunk) ? max - b->len : sizeof(chunk);
		ssize_t n = read(fd, chunk, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		xg_buf_add(b, chunk, (size_t)n);
	}
	return 0;
}

/* Its text made valid UTF-8 the way all text in xg is (invalid bytes
 * become U+FFFD), without a byte-order mark or trailing space. */
static void take_text(struct source *s, const char *p, size_t n)
{
	jv str;
	const char *v;
	size_t len;

	if (n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) {
		p += 3;
		n -= 3;
	}
	str = xg_json_string_bytes(p, n);
	v = jv_string_value(str);
	len = (size_t)jv_string_length_bytes(jv_copy(str));
	while (len > 0 && isspace((unsigned char)v[len - 1]))
		len--;
	s->text = xg_memdup(v, len);
	s->len = len;
	s->chars = xg_prompt_chars(v, len);
	jv_free(str);
}

/*
 * Reads path into s: 1 when it has text, 0 when there is none (missing,
 * empty, unreadable or not a regular file; the last two with a notice).
 */
static int read_source(const char *path, struct source *s, jv *notices)
{
	struct xg_buf b = XG_BUF_INIT(0);
	struct stat st;
	int fd, rc;

	if (stat(path, &st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			add_notice(notices, xg_asprintf("cannot read project instructions '%s': "
							"%s; going on without them", path,
							strerror(errno)));
		return 0;
	}
	/* O_NONBLOCK: a FIFO put in the file's place must not hang the run. */
	fd = S_ISREG(st.st_mode) ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -2;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -2;
	}
	if (fd == -2) {
		add_notice(notices, xg_asprintf("project instructions '%s' are not a regular "
						"file; going on without them", path));
		return 0;
	}
	if (fd < 0 || read_bounded(fd, &b, READ_MAX) < 0) {
		add_notice(notices, xg_asprintf("cannot read project instructions '%s': %s; "
						"going on without them", path, strerror(errno)));
		if (fd >= 0)
			close(fd);
		xg_buf_release(&b);
		return 0;
	}
	close(fd);
	take_text(s, b.buf, b.len);
	xg_buf_release(&b);
	s->size = (size_t)st.st_size;
	s->partial = s->size > READ_MAX;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	rc = s->len > 0;
	if (!rc) {
		free(s->text);
		s->text = NULL;
	}
	return rc;
}

/* Adds the file at path, shown to the model as shown (both taken), unless
 * it has no text or is a file already added. */
static void add_source(struct sources *ss, char *path, char *shown, jv *notices)
{
	struct source s = { 0 };
	size_t i;

	s.file = path;
	s.shown = shown;
	if (read_source(path, &s, notices)) {
		for (i = 0; i < ss->nr; i++)
			if (ss->v[i].dev == s.dev && ss->v[i].ino == s.ino)
				break;
		if (i == ss->nr) {
			XG_ALLOC_GROW(ss->v, ss->nr + 1, ss->alloc);
			ss->v[ss->nr++] = s;
			return;
		}
		free(s.text);
	}
	free(path);
	free(shown);
}

char *xg_prompt_path_shown(const char *path)
{
	const char *home = getenv("HOME");
	size_t n = home ? strlen(home) : 0;

	while (n > 1 && home[n - 1] == '/')
		n--;
	if (n > 1 && !strncmp(path, home, n) && path[n] == '/')
		return xg_asprintf("~%s", path + n);
	return xg_strdup(path);
}

/* The top of the git work tree holding dir (a real path), or NULL. */
static char *repo_root(const char *dir)
{
	char *d = xg_strdup(dir);

	for (;;) {
		char *git = xg_path_join(d, ".git"), *slash;
		struct stat st;
		int found = lstat(git, &st) == 0;

		free(git);
		if (found)
			return d;
		slash = strrchr(d, '/');
		if (!slash || !strcmp(d, "/")) {
			free(d);
			return NULL;
		}
		if (slash == d)
			slash[1] = '\0';	/* up from "/a" is "/" */
		else
			*slash = '\0';
	}
}

/* The number of names in an absolute path: 0 for "/". */
static size_t components(const char *path)
{
	size_t n = 0;

	for (; *path; path++)
		n += *path == '/' && path[1];
	return n;
}

char **xg_prompt_project_dirs(const char *workspace, size_t *nr)
{
	char *root = repo_root(workspace), **dirs;
	/* How many levels the root is above the workspace. */
	size_t depth = root ? components(workspace) - components(root) : 0, up, i = 0;

	dirs = xg_calloc(depth + 2, sizeof(*dirs));
	for (up = depth + 1; up-- > 0;) {
		size_t k = strlen(workspace), n = up;

		while (n > 0 && k > 0) {
			if (workspace[--k] == '/')
				n--;
		}
		dirs[i++] = xg_strndup(workspace, k ? k : 1);
	}
	free(root);
	*nr = i;
	return dirs;
}

/* The files, in the order they go in. */
static void find_sources(const char *workspace, struct sources *ss, jv *notices)
{
	char *own = xg_path_config(FILE_NAME);
	size_t nr, i, n;
	char **dirs = xg_prompt_project_dirs(workspace, &nr);

	add_source(ss, own, xg_prompt_path_shown(own), notices);
	for (i = 0; i < nr; i++) {
		struct xg_buf shown = XG_BUF_INIT(0);

		/* The directory nr - 1 - i levels above the workspace. */
		for (n = i + 1; n < nr; n++)
			xg_buf_addstr(&shown, "../");
		xg_buf_addstr(&shown, FILE_NAME);
		add_source(ss, xg_path_join(dirs[i], FILE_NAME), xg_buf_detach(&shown, NULL), notices);
		free(dirs[i]);
	}
	free(dirs);
}

/* Bytes of text that fit in avail characters: up to the last blank line
 * that does, else the last line end, else none. */
static size_t fit_cut(const char *text, size_t len, size_t avail)
{
	size_t i, j, c = 0, para = 0, line = 0, keep;

	for (i = 0; i < len; i++) {
		if (text[i] != '\n') {
			c += ((unsigned char)text[i] & 0xc0) != 0x80;
			continue;
		}
		/* What comes before a line end, less trailing space (ASCII:
		 * one character a byte). */
		keep = i;
		while (keep > 0 && isspace((unsigned char)text[keep - 1]))
			keep--;
		if (c - (i - keep) > avail)
			break;
		line = keep;
		for (j = i + 1; j < len && (text[j] == ' ' || text[j] == '\t'); j++)
			;
		if (j < len && text[j] == '\n')
			para = keep;
		c++;
	}
	return para ? para : line;
}

/* The characters a file takes besides its text: its tags, and the blank
 * line before them. */
static size_t frame_chars(const struct source *s)
{
	return strlen("\n\n<file path=\"\">\n") + xg_prompt_chars(s->shown, strlen(s->shown)) +
	       strlen("\n</file>");
}

/*
 * Lays the files out in b within the budget.  A file goes in whole when
 * what is left holds it and still leaves room to cut the next one (its
 * tags and the tail); the first that does not is cut there, ends with the
 * tail, and is the last.  Returns the index of the cut file, or ss->nr
 * when nothing was cut.
 */
static size_t lay_out(struct sources *ss, struct xg_buf *b)
{
	size_t left = XG_PROMPT_PROJECT_BUDGET - xg_prompt_chars(intro, strlen(intro));
	size_t tailc = 2 + strlen(tail), i;

	xg_buf_addstr(b, intro);
	for (i = 0; i < ss->nr; i++) {
		struct source *s = &ss->v[i];
		size_t fc = frame_chars(s);
		size_t room = i + 1 < ss->nr ? frame_chars(&ss->v[i + 1]) + tailc : 0;

		if (fc + s->chars + room <= left) {
			s->kept = s->len;
			s->kept_chars = s->chars;
		} else if (left >= fc + tailc) {
			s->kept = fit_cut(s->text, s->len, left - fc - tailc);
			s->kept_chars = xg_prompt_chars(s->text, s->kept);
		} else {
			/* Only a path longer than the budget gets here. */
			return i;
		}
		left -= fc + s->kept_chars;
		xg_buf_addf(b, "\n\n<file path=\"%s\">\n", s->shown);
		xg_buf_add(b, s->text, s->kept);
		if (s->kept < s->len)
			xg_buf_addf(b, "%s%s", s->kept ? "\n\n" : "", tail);
		xg_buf_addstr(b, "\n</file>");
		if (s->kept < s->len)
			return i;
	}
	return ss->nr;
}

static jv files_entry(const struct sources *ss, size_t cut_at)
{
	jv files = jv_array();
	size_t i;

	for (i = 0; i < ss->nr; i++) {
		const struct source *s = &ss->v[i];
		jv f = jv_object();

		f = xg_json_set(f, "path", jv_string(s->shown));
		f = xg_json_set(f, "file", jv_string(s->file));
		f = xg_json_set(f, "bytes", jv_number((double)s->size));
		f = xg_json_set(f, "chars", jv_number((double)s->kept_chars));
		f = xg_json_set(f, "cut", jv_bool(i >= cut_at));
		files = jv_array_append(files, f);
	}
	return files;
}

/* The notice for a cut: how long it all was, where it was cut, what is out.
 * A file too big to read whole was counted as far as it was read. */
static void cut_notice(const struct sources *ss, size_t cut_at, jv *notices)
{
	struct xg_buf b = XG_BUF_INIT(0);
	const struct source *c = &ss->v[cut_at];
	size_t total = xg_prompt_chars(intro, strlen(intro)), i;
	int partial = 0;

	for (i = 0; i < ss->nr; i++) {
		total += frame_chars(&ss->v[i]) + ss->v[i].chars;
		partial |= ss->v[i].partial;
	}
	xg_buf_addf(&b, "project instructions are %s%zu characters, over their budget of %d: ",
		    partial ? "more than " : "", total, XG_PROMPT_PROJECT_BUDGET);
	if (c->kept_chars && c->partial)
		xg_buf_addf(&b, "'%s' is cut at a paragraph boundary to %zu characters of its %zu "
			    "bytes", c->shown, c->kept_chars, c->size);
	else if (c->kept_chars)
		xg_buf_addf(&b, "'%s' is cut at a paragraph boundary to %zu of its %zu characters",
			    c->shown, c->kept_chars, c->chars);
	else
		xg_buf_addf(&b, "'%s' is left out", c->shown);
	for (i = cut_at + 1; i < ss->nr; i++)
		xg_buf_addf(&b, "%s'%s'", i == cut_at + 1 ? "; left out: " : ", ", ss->v[i].shown);
	add_notice(notices, xg_buf_detach(&b, NULL));
}

void xg_prompt_project_read(const char *cwd, struct xg_prompt_project *pj, jv *notices)
{
	struct sources ss = { 0 };
	struct xg_buf b = XG_BUF_INIT(0);
	char *workspace = realpath(cwd ? cwd : ".", NULL);
	struct stat st;
	size_t cut_at, i;
	jv e;

	memset(pj, 0, sizeof(*pj));
	pj->entry = jv_invalid();
	if (!workspace || stat(workspace, &st) < 0 || !S_ISDIR(st.st_mode)) {
		add_notice(notices, xg_asprintf("cannot use '%s' as the workspace: %s; no project "
						"instructions", cwd ? cwd : ".",
						workspace ? "Not a directory" : strerror(errno)));
		free(workspace);
		return;
	}
	find_sources(workspace, &ss, notices);
	free(workspace);
	if (!ss.nr)
		return;
	cut_at = lay_out(&ss, &b);
	if (cut_at < ss.nr)
		cut_notice(&ss, cut_at, notices);
	pj->text = xg_buf_detach(&b, &pj->len);
	e = jv_object();
	e = xg_json_set(e, "name", jv_string("project"));
	e = xg_json_set(e, "chars", jv_number((double)xg_prompt_chars(pj->text, pj->len)));
	e = xg_json_set(e, "budget", jv_number(XG_PROMPT_PROJECT_BUDGET));
	e = xg_json_set(e, "cut", jv_bool(cut_at < ss.nr));
	e = xg_json_set(e, "kind", jv_string("dynamic"));
	pj->entry = xg_json_set(e, "files", files_entry(&ss, cut_at));
	for (i = 0; i < ss.nr; i++) {
		free(ss.v[i].file);
		free(ss.v[i].shown);
		free(ss.v[i].text);
	}
	free(ss.v);
}

void xg_prompt_project_release(struct xg_prompt_project *pj)
{
	free(pj->text);
	jv_free(pj->entry);
	memset(pj, 0, sizeof(*pj));
	pj->entry = jv_invalid();
}
