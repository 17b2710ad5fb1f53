/*
 * A snapshot without libgit2, when the repository is as the last one
 * found it.  libgit2 and the fifteen libraries it needs take some 2 ms of
 * CPU to load and relocate, the largest part of what a snapshot of an
 * unchanged tree does besides the lstat walk, and a snapshot needs from
 * it only what the configuration says and where the repository is.  So a
 * snapshot that libgit2 opened keeps, in the git directory's
 * xg-settings, the settings it read (core.filemode, core.trustctime,
 * core.checkStat, core.sparseCheckout, the global excludes file,
 * user.name and user.email) and the paths libgit2 gave, under a
 * fingerprint of everything they came
 * from: the configuration files' contents, the environment variables that
 * choose them, and the owners libgit2's safe.directory check looks at.
 * The next snapshot, where the repository is found the same way, computes
 * the fingerprint again and, when it matches, takes the settings from the
 * file and never loads libgit2 (unless a clean filter, or a nested
 * repository or submodule whose HEAD this cannot read, asks for it later).
 *
 * Nothing is kept when the answer could depend on what the fingerprint
 * does not cover: a configuration file that includes another, attributes
 * files (clean filters need libgit2), alternates, a configuration file
 * libgit2 reads from another place than ours, or a HEAD this file cannot
 * resolve as libgit2 does.  HEAD is read here each time: a loose ref, a
 * symbolic one, or packed-refs; so is the HEAD of a repository inside the
 * tree, for its gitlink.
 *
 *	xg-settings 1
 *	inputs HEX
 *	workdir PATH/		as libgit2 gave them
 *	gitdir PATH/
 *	commondir PATH/
 *	core FILEMODE TRUSTCTIME CHECKSTAT SPARSE
 *	excludes PATH		when there is one
 *	name NAME
 *	email EMAIL
 *	sha1 HEX		of everything before it
 */
#include "xg.h"
#include "snapshot/internal.h"
#include "sha1.h"

#define HEADER "xg-settings 1\n"

extern char **environ;

/* A ref file's or HEAD's text: 1 with the id, 2 with the target of a
 * symbolic ref in target, -1 otherwise. */
static int parse_ref(const struct xg_buf *b, unsigned char oid[20], char *target, size_t tlen)
{
	const char *p = b->buf;
	size_t n = b->len;

	while (n && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' '))
		n--;
	if (n == 40 && !xg_snapshot_oid_parse(p, oid))
		return 1;
	if (n > 5 && !memcmp(p, "ref: ", 5) && n - 5 < tlen && !memchr(p + 5, '\n', n - 5)) {
		memcpy(target, p + 5, n - 5);
		target[n - 5] = '\0';
		return 2;
	}
	return -1;
}

/* name's id in packed-refs: 1, 0 when not there, -1 when it cannot be
 * read. */
static int packed_ref(const char *commondir, const char *name, unsigned char oid[20])
{
	struct xg_buf b = XG_BUF_INIT(0);
	char *file = xg_path_join(commondir, "packed-refs");
	size_t nl = strlen(name);
	const char *p, *end;
	int rc = 0;

	if (xg_read_file(file, &b) < 0)
		rc = errno == ENOENT ? 0 : -1;
	for (p = b.buf, end = b.buf + b.len; rc == 0 && p && p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);

		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (len == 41 + nl && p[40] == ' ' && !memcmp(p + 41, name, nl) &&
		    !xg_snapshot_oid_parse(p, oid))
			rc = 1;
		p = eol ? eol + 1 : NULL;
	}
	free(file);
	xg_buf_release(&b);
	return rc;
}

int xg_snapshot_head(const char *gitdir, const char *commondir, unsigned char oid[20])
{
	struct xg_buf b = XG_BUF_INIT(0);
	char name[1024], *file;
	int depth, rc;

	file = xg_path_join(gitdir, "HEAD");
	rc = xg_read_file(file, &b) < 0 ? -1 : parse_ref(&b, oid, name, sizeof(name));
	free(file);
	for (depth = 0; rc == 2 && depth < 5; depth++) {
		/* Refs of a worktree's own, and anything odd, are libgit2's. */
		if (strncmp(name, "refs/", 5) || strstr(name, "..") || strstr(name, "//") ||
		    !strncmp(name, "refs/bisect/", 12) || !strncmp(name, "refs/worktree/", 14) ||
		    !strncmp(name, "refs/rewritten/", 15)) {
			rc = -1;
			break;
		}
		file = xg_path_join(commondir, name);
		xg_buf_reset(&b);
		if (xg_read_file(file, &b) == 0)
			rc = parse_ref(&b, oid, name, sizeof(name));
		else if (errno == ENOENT || errno == ENOTDIR)
			rc = packed_ref(commondir, name, oid);
		else
			rc = -1;
		free(file);
	}
	xg_buf_release(&b);
	return rc == 2 ? -1 : rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the environment variables that choose the configuration files: 0,
 * or -1 without HOME (libgit2 would look it up elsewhere). */
static int add_env(struct xg_snapshot_sha1 *c)
{
	char **v = NULL, **e;
	size_t n = 0, a = 0, i;

	if (!getenv("HOME"))
		return -1;
	for (e = environ; *e; e++)
		if (!strncmp(*e, "GIT_", 4) || !strncmp(*e, "HOME=", 5) ||
		    !strncmp(*e, "XDG_CONFIG_HOME=", 16)) {
			XG_ALLOC_GROW(v, n + 1, a);
			v[n++] = *e;
		}
	XG_QSORT(v, n, cmp_str);
	for (i = 0; i < n; i++)
		xg_snapshot_sha1_update(c, v[i], strlen(v[i]) + 1);
	free(v);
	return 0;
}

static int add_owner(struct xg_snapshot_sha1 *c, const char *path)
{
	struct stat st;
	char line[64];

	if (stat(path, &st) < 0)
		return -1;
	snprintf(line, sizeof(line), "uid %u\n", (unsigned)st.st_uid);
	xg_snapshot_sha1_update(c, line, strlen(line));
	return 0;
}

/* The configuration files libgit2 reads for this repository, as it would
 * find them; NULL-terminated, in new strings.  NULL without HOME. */
static char **config_files(const char *gitdir, const char *commondir)
{
	char **f = xg_calloc(6, sizeof(*f));
	const char *home = getenv("HOME");

	if (!home) {
		free(f);
		return NULL;
	}
	f[0] = xg_strdup("/etc/gitconfig");
	f[1] = xg_snapshot_rules_user_file("config");
	f[2] = xg_asprintf("%s/.gitconfig", home);
	f[3] = xg_path_join(commondir, "config");
	f[4] = xg_path_join(gitdir, "config.worktree");
	return f;
}

static void free_list(char **f)
{
	size_t i;

	for (i = 0; f && f[i]; i++)
		free(f[i]);
	free(f);
}

/* Whether a file may be there that would bring clean filters or objects
 * from elsewhere: 1, or 0 when none is. */
static int has_extras(const char *commondir)
{
	char *p = xg_path_join(commondir, "objects/info/alternates");
	int any = xg_snapshot_attributes_exist(commondir) || access(p, F_OK) == 0;

	free(p);
	return any;
}

int xg_snapshot_settled_inputs(const char *workdir, const char *gitdir, const char *commondir,
			       char hex[41])
{
	struct xg_snapshot_sha1 c;
	struct xg_buf b = XG_BUF_INIT(0);
	unsigned char sum[20];
	char **files, line[64];
	size_t i;
	int rc = -1;

	if (has_extras(commondir) || !(files = config_files(gitdir, commondir)))
		return -1;
	xg_snapshot_sha1_init(&c);
	snprintf(line, sizeof(line), "euid %u\n", (unsigned)geteuid());
	xg_snapshot_sha1_update(&c, line, strlen(line));
	if (add_env(&c) < 0 || add_owner(&c, workdir) < 0 || add_owner(&c, gitdir) < 0 ||
	    add_owner(&c, commondir) < 0)
		goto out;
	for (i = 0; files[i]; i++) {
		xg_buf_reset(&b);
		xg_snapshot_sha1_update(&c, files[i], strlen(files[i]) + 1);
		if (xg_read_file(files[i], &b) < 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				goto out;
			xg_snapshot_sha1_update(&c, "-", 2);
			continue;
		}
		/* An include names files this does not follow. */
		if (strcasestr(b.buf, "include"))
			goto out;
		snprintf(line, sizeof(line), "%zu\n", b.len);
		xg_snapshot_sha1_update(&c, line, strlen(line));
		xg_snapshot_sha1_update(&c, b.buf, b.len);
	}
	xg_snapshot_sha1_final(&c, sum);
	xg_snapshot_sha1_hex(sum, hex);
	rc = 0;
out:
	xg_buf_release(&b);
	free_list(files);
	return rc;
}

int xg_snapshot_settled_config_ours(const char *gitdir, const char *commondir,
				    const char *const *found)
{
	char **files = config_files(gitdir, commondir);
	size_t i, k;
	int ok = files != NULL;

	for (i = 0; ok && found[i]; i++) {
		for (k = 0; files[k] && strcmp(files[k], found[i]); k++)
			;
		ok = files[k] != NULL;
	}
	free_list(files);
	return ok;
}

/* The value after "key " on the line at *p, which moves to the next; NULL
 * when the line is another. */
static char *take_line(char **p, const char *key)
{
	size_t n = strlen(key);
	char *nl, *v;

	if (!*p || strncmp(*p, key, n) || (*p)[n] != ' ')
		return NULL;
	v = *p + n + 1;
	nl = strchr(v, '\n');
	if (!nl)
		return NULL;
	*nl = '\0';
	*p = nl + 1;
	return v;
}

static char *with_slash(const char *p)
{
	return xg_asprintf("%s%s", p, strcmp(p, "/") ? "/" : "");
}

/* The git directory the common one is: its commondir file's, else itself. */
static char *common_of(const char *gitdir)
{
	struct xg_buf b = XG_BUF_INIT(0);
	char *file = xg_path_join(gitdir, "commondir"), *c = NULL, *rel;

	if (xg_read_file(file, &b) < 0) {
		free(file);
		xg_buf_release(&b);
		return errno == ENOENT ? xg_strdup(gitdir) : NULL;
	}
	free(file);
	b.buf[strcspn(b.buf, "\r\n")] = '\0';
	rel = b.buf[0] == '/' ? xg_strdup(b.buf) : xg_path_join(gitdir, b.buf);
	c = realpath(rel, NULL);
	free(rel);
	xg_buf_release(&b);
	return c;
}

/* HEAD's commit of the repository at path with libgit2, when the hand
 * reading cannot tell: as xg_snapshot_repo_head. */
static int repo_head_git(struct xg_snapshot_state *s, const char *full, unsigned char oid[20])
{
	git_repository *sub = NULL;
	git_oid id;
	int found = 0;

	/* A snapshot that started without libgit2 loads it now (and tells no
	 * repository without it). */
	if (xg_snapshot_git_up(s) < 0)
		return 0;
	if (!git_repository_open_ext(&sub, full, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		if (!git_reference_name_to_id(&id, sub, "HEAD")) {
			memcpy(oid, id.id, 20);
			found = 1;
		} else {
			found = -1;
		}
		git_repository_free(sub);
	}
	return found;
}

int xg_snapshot_repo_head(struct xg_snapshot_state *s, const char *path, unsigned char oid[20])
{
	char *full = xg_asprintf("%s%s", s->workdir, path), *dotgit = xg_path_join(full, ".git");
	char *w = NULL, *g = NULL, *c = NULL, *real = NULL, *realw = NULL;
	struct stat st;
	int rc = -2;

	if (lstat(dotgit, &st) < 0) {
		rc = 0;
		goto out;
	}
	/* Found where it sits, not above it, and HEAD readable by hand. */
	if (!xg_snapshot_discover(full, &w, &g, NULL) && (real = realpath(full, NULL)) &&
	    (realw = realpath(w, NULL)) && !strcmp(real, realw) && (c = common_of(g)))
		rc = xg_snapshot_head(g, c, oid);
	if (rc == 0)
		rc = -1;	/* a branch not yet born: no commit */
	else if (rc < 0)
		rc = repo_head_git(s, full, oid);
out:
	free(full);
	free(dotgit);
	free(w);
	free(g);
	free(c);
	free(real);
	free(realw);
	return rc;
}

/* The paths as discover found them, each ending in a slash as libgit2
 * gives them: 0, or -1 when the common directory cannot be told. */
static int found_paths(const struct xg_snapshot_state *s, char **w, char **g, char **c)
{
	char *common = common_of(s->pre_gitdir);

	if (!common)
		return -1;
	*w = with_slash(s->pre_workdir);
	*g = with_slash(s->pre_gitdir);
	*c = with_slash(common);
	free(common);
	return 0;
}

int xg_snapshot_settled_inputs_of(const struct xg_snapshot_state *s, char hex[41])
{
	char *w, *g, *c;
	int rc;

	if (found_paths(s, &w, &g, &c) < 0)
		return -1;
	rc = xg_snapshot_settled_inputs(w, g, c, hex);
	free(w);
	free(g);
	free(c);
	return rc;
}

int xg_snapshot_settled_load(struct xg_snapshot_state *s, unsigned char head[20], int *has_head)
{
	struct xg_buf b = XG_BUF_INIT(0);
	char hex[41], inputs[41], *file, *p, *v, *w = NULL, *g = NULL, *cd = NULL;
	const char *excludes, *name, *email;
	int fm, tc, cs, sp, n = -1, rc = -1, got;

	if (!s->pre_plain)
		return -1;
	file = xg_path_join(s->pre_gitdir, "xg-settings");
	got = xg_read_file(file, &b) == 0 && xg_snapshot_sha1_unseal(&b) == 0 &&
	      !strncmp(b.buf, HEADER, strlen(HEADER));
	free(file);
	if (!got)
		goto out;
	p = b.buf + strlen(HEADER);
	if (!(v = take_line(&p, "inputs")) || strlen(v) != 40)
		goto out;
	memcpy(inputs, v, 41);
	if (found_paths(s, &w, &g, &cd) < 0 || !(v = take_line(&p, "workdir")) || strcmp(v, w) ||
	    !(v = take_line(&p, "gitdir")) || strcmp(v, g) ||
	    !(v = take_line(&p, "commondir")) || strcmp(v, cd))
		goto out;
	if (xg_snapshot_settled_inputs(w, g, cd, hex) < 0 || strcmp(hex, inputs))
		goto out;
	if (!(v = take_line(&p, "core")) || sscanf(v, "%d %d %d %d%n", &fm, &tc, &cs, &sp, &n) != 4 ||
	    v[n])
		goto out;
	excludes = take_line(&p, "excludes");
	if (!(name = take_line(&p, "name")) || !(email = take_line(&p, "email")) || *p)
		goto out;
	/* A HEAD this cannot read is libgit2's to read, with the rest. */
	if ((*has_head = xg_snapshot_head(g, cd, head)) < 0)
		goto out;
	s->excludes = excludes ? xg_strdup(excludes) : NULL;
	s->name = xg_strdup(name);
	s->email = xg_strdup(email);
	s->sc.filemode = fm;
	s->sc.trustctime = tc;
	s->sc.checkstat = cs;
	s->sparse = sp;
	s->workdir = w;
	s->gitdir = g;
	s->commondir = cd;
	w = g = cd = NULL;
	rc = 0;
out:
	free(w);
	free(g);
	free(cd);
	xg_buf_release(&b);
	return rc;
}

void xg_snapshot_settled_save(struct xg_snapshot_state *s, const char *inputs)
{
	struct xg_buf b = XG_BUF_INIT(0), old = XG_BUF_INIT(0);
	char *file;

	if (strchr(s->workdir, '\n') || strchr(s->gitdir, '\n') || strchr(s->commondir, '\n') ||
	    strchr(s->name, '\n') || strchr(s->email, '\n') ||
	    (s->excludes && strchr(s->excludes, '\n')))
		return;
	xg_buf_addf(&b, HEADER "inputs %s\nworkdir %s\ngitdir %s\ncommondir %s\ncore %d %d %d %d\n",
		    inputs, s->workdir, s->gitdir, s->commondir, s->sc.filemode, s->sc.trustctime,
		    s->sc.checkstat, s->sparse);
	if (s->excludes)
		xg_buf_addf(&b, "excludes %s\n", s->excludes);
	xg_buf_addf(&b, "name %s\nemail %s\n", s->name, s->email);
	xg_snapshot_sha1_seal(&b);
	file = xg_path_join(s->gitdir, "xg-settings");
	/* Written once, not at every snapshot. */
	if (xg_read_file(file, &old) < 0 || old.len != b.len || memcmp(old.buf, b.buf, b.len))
		xg_write_cache(file, b.buf, b.len, 0644);
	free(file);
	xg_buf_release(&b);
	xg_buf_release(&old);
}

int xg_snapshot_settled_paths_are(const struct xg_snapshot_state *s)
{
	char *w, *g, *c;
	int same;

	if (found_paths(s, &w, &g, &c) < 0)
		return 0;
	same = !strcmp(w, s->workdir) && !strcmp(g, s->gitdir) && !strcmp(c, s->commondir);
	free(w);
	free(g);
	free(c);
	return same;
}
