/*
 * The files a snapshot knows from the last one.  The index holds the
 * stat data of tracked files, so an unchanged tracked file is never read;
 * nothing holds that of untracked ones, nor of edited tracked ones (their
 * stat data in the index is stale by definition), which every snapshot
 * would read and hash again.  So a snapshot that wrote its objects keeps,
 * in the git directory's xg-untracked, the blob of each such file with
 * the stat data it had just before it was read, and the next one takes a
 * file whose stat data is the same as known instead of reading it.
 *
 * What makes that safe is the reference time: before it reads any
 * such file a snapshot touches xg-untracked and reads its time back,
 * which is the filesystem's own clock (its granularity, a file server's
 * time).  A known file is trusted only when its ctime, which no program
 * can set back, is before the reference time of the snapshot that read
 * it: any write after that read then gave it a later ctime, even one in
 * the same clock tick as the read.  Also: the blob must still be in the
 * repository (git may have pruned it), the file must be on the working
 * tree's filesystem, as must xg-untracked, and a file that an attribute
 * may convert (a filter, ident, working-tree-encoding, or core.autocrlf)
 * is neither kept nor taken, as its blob depends on more than the file.
 * Line endings are the exception real repositories need (text, eol and
 * crlf rules, "* text=auto"): they change only bytes with a CR, so a file
 * whose bytes held none is kept with CR 0 and taken while its rules
 * convert at most line endings; one that held a CR is taken only while no
 * rule converts it.  The attributes are asked each time, for each file,
 * so a changed .gitattributes counts at once.
 *
 * The file is one line per file, then a line with the SHA-1 of all before
 * it; one that does not check out is ignored, and is written again when
 * the snapshot is done.  A path holding a newline or a backslash is not
 * kept.  Losing the file costs only time: it is written without a sync.
 *
 *	xg-untracked 2 REF.NS WORKDIR
 *	OID MODE SIZE MTIME.NS CTIME.NS INO DEV UID GID CR PATH
 *	sha1 HEX
 */
#include "xg.h"
#include "snapshot/internal.h"
#include "sha1.h"
#include <dirent.h>

#define HEADER "xg-untracked 2 "

static int cmp_known(const void *a, const void *b)
{
	const struct xg_snapshot_known_file *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* One line (NUL-terminated, without its newline); -1 when malformed. */
static int parse_line(char *line, struct xg_snapshot_known_file *f)
{
	unsigned long long size, ino, dev;
	long long ms, cs;
	long mns, cns;
	unsigned mode, uid, gid, cr;
	int n = -1;

	if (strlen(line) < 42 || line[40] != ' ' || xg_snapshot_oid_parse(line, f->oid) < 0)
		return -1;
	if (sscanf(line + 41, "%o %llu %lld.%ld %lld.%ld %llu %llu %u %u %u %n", &mode, &size, &ms,
		   &mns, &cs, &cns, &ino, &dev, &uid, &gid, &cr, &n) != 11 || n < 0 ||
	    !line[41 + n] || cr > 1)
		return -1;
	f->cr = (unsigned char)cr;
	f->mode = mode;
	f->size = size;
	f->mtime_s = ms;
	f->mtime_ns = mns;
	f->ctime_s = cs;
	f->ctime_ns = cns;
	f->ino = ino;
	f->dev = dev;
	f->uid = uid;
	f->gid = gid;
	f->path = line + 41 + n;
	return 0;
}

/* The files the text of xg-untracked names, when it checks out and is
 * for this working tree; else none. */
static void parse(struct xg_snapshot_state *s)
{
	struct xg_snapshot_known *k = &s->known;
	char *p, *nl;
	long long sec;
	long nsec;
	int n = -1;
	size_t nr;

	if (xg_snapshot_sha1_unseal(&k->text) < 0)
		return;
	p = k->text.buf;
	if (!(nl = strchr(p, '\n')) || strncmp(p, HEADER, strlen(HEADER)))
		return;
	*nl = '\0';
	if (sscanf(p + strlen(HEADER), "%lld.%ld %n", &sec, &nsec, &n) != 2 || n < 0 ||
	    strcmp(p + strlen(HEADER) + n, s->workdir))
		return;
	for (nr = 0, p = nl + 1; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		XG_ALLOC_GROW(k->files, nr + 1, k->alloc);
		if (parse_line(p, &k->files[nr++]) < 0)
			return;
	}
	k->old.tv_sec = sec;
	k->old.tv_nsec = nsec;
	k->nr = nr;
	XG_QSORT(k->files, k->nr, cmp_known);
}

/* Reads xg-untracked, creating it when missing, and touches it for the
 * reference time; 0, or -1 when there is none to be had. */
static int open_known(struct xg_snapshot_state *s)
{
	struct xg_snapshot_known *k = &s->known;
	char *file = xg_path_join(s->gitdir, "xg-untracked");
	int fd = open(file, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	struct stat st, root;
	int rc = -1;

	free(file);
	if (fd < 0)
		return -1;
	/* Some 150 bytes a file: 16 MiB is some 100,000 files, ten times what
	 * a snapshot admits by default.  One that cannot be read, or is
	 * longer, is nothing known, and is written again. */
	xg_buf_init(&k->text, (size_t)16 << 20);
	if (xg_read_fd(fd, &k->text) < 0)
		xg_buf_setlen(&k->text, 0);
	if (!futimens(fd, NULL) && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    !fstat(s->rootfd, &root) && st.st_dev == root.st_dev) {
		k->ref = st.st_mtim;
		k->dev = (uint64_t)root.st_dev;
		rc = 0;
	}
	close(fd);
	return rc;
}

static const struct xg_snapshot_known_file *lookup(const struct xg_snapshot_known *k,
						   const char *path)
{
	struct xg_snapshot_known_file key;

	key.path = (char *)path;
	return k->nr ? bsearch(&key, k->files, k->nr, sizeof(*k->files), cmp_known) : NULL;
}

static int same_stat(const struct xg_snapshot_known_file *f, const struct stat *st)
{
	return f->mode == (uint32_t)st->st_mode && f->size == (uint64_t)st->st_size &&
	       f->mtime_s == (int64_t)st->st_mtim.tv_sec && f->mtime_ns == st->st_mtim.tv_nsec &&
	       f->ctime_s == (int64_t)st->st_ctim.tv_sec && f->ctime_ns == st->st_ctim.tv_nsec &&
	       f->ino == (uint64_t)st->st_ino && f->dev == (uint64_t)st->st_dev &&
	       f->uid == (uint32_t)st->st_uid && f->gid == (uint32_t)st->st_gid;
}

/* Whether f last changed before the reference time of the snapshot that
 * read it, on the working tree's filesystem. */
static int settled(const struct xg_snapshot_known *k, const struct xg_snapshot_known_file *f)
{
	if (f->dev != k->dev)
		return 0;
	return f->ctime_s < (int64_t)k->old.tv_sec ||
	       (f->ctime_s == (int64_t)k->old.tv_sec && f->ctime_ns < k->old.tv_nsec);
}

/*
 * The attributes that convert, as the tree's .gitattributes files say
 * them, read here rather than by libgit2, whose look-up costs a dozen
 * system calls a path.  It answers only what it knows as git does: when
 * no file outside the tree may say anything (config_filter), each file in
 * the working tree, without a macro of its own, and each pattern plain
 * (not quoted); else libgit2 is asked.
 */
enum { ATTR_FILTER, ATTR_TEXT, ATTR_EOL, ATTR_CRLF, ATTR_IDENT, ATTR_WTE, ATTR_N };
enum { VAL_UNSPECIFIED, VAL_UNSET, VAL_SET };	/* a value counts as set */

static const char *const attr_names[ATTR_N] = { "filter", "text", "eol", "crlf", "ident",
						"working-tree-encoding" };

/* The .gitattributes of dir (len bytes of a path), read once. */
static struct xg_snapshot_attr_file *attr_file(struct xg_snapshot_state *s, const char *dir,
					       size_t len)
{
	struct xg_snapshot_known *k = &s->known;
	struct xg_snapshot_attr_file *f;
	struct xg_snapshot_scan_dir *d;
	char *p;
	size_t i;
	int fd;

	for (i = 0; i < k->nattrs; i++)
		if (strlen(k->attrs[i].dir) == len && !memcmp(k->attrs[i].dir, dir, len))
			return &k->attrs[i];
	XG_ALLOC_GROW(k->attrs, k->nattrs + 1, k->aattrs);
	f = &k->attrs[k->nattrs++];
	memset(f, 0, sizeof(*f));
	f->dir = xg_strndup(dir, len);
	xg_buf_init(&f->text, 0);
	p = len ? xg_asprintf("%s/.gitattributes", f->dir) : xg_strdup(".gitattributes");
	fd = openat(s->rootfd, p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(p);
	if (fd < 0) {
		/* One the index has and the tree does not: libgit2 reads it. */
		d = xg_snapshot_scan_lookup(&s->sc, dir, len);
		f->opaque = errno != ENOENT || (d && d->has_gitattributes);
		return f;
	}
	if (xg_read_fd(fd, &f->text) < 0)
		f->opaque = 1;
	close(fd);
	/* A macro, or a quoted pattern, is libgit2's to read. */
	for (p = f->text.buf; p && p < f->text.buf + f->text.len; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		p += strspn(p, " \t\r");
		if (*p == '"' || !strncmp(p, "[attr]", 6))
			f->opaque = 1;
	}
	return f;
}

/* Applies one token of a matching line to val. */
static void attr_token(const char *tok, size_t len, unsigned char val[ATTR_N])
{
	unsigned char v = VAL_SET;
	size_t n, i;

	if (len == 6 && !memcmp(tok, "binary", 6)) {	/* -diff -merge -text */
		val[ATTR_TEXT] = VAL_UNSET;
		return;
	}
	if (*tok == '-' || *tok == '!') {
		v = *tok == '-' ? VAL_UNSET : VAL_UNSPECIFIED;
		tok++;
		len--;
	}
	n = strcspn(tok, "=");
	if (n > len)
		n = len;
	for (i = 0; i < ATTR_N; i++)
		if (strlen(attr_names[i]) == n && !memcmp(tok, attr_names[i], n))
			val[i] = v;
}

/* Whether pattern (len bytes) matches path, relative to the file's
 * directory, as gitattributes patterns do; lower: both in lower case. */
static int attr_match(const char *pat, size_t len, const char *rel, int lower)
{
	char p[512], r[PATH_MAX];
	const char *base = strrchr(rel, '/');
	size_t i;

	if (len >= sizeof(p) || strlen(rel) >= sizeof(r))
		return -1;
	memcpy(p, pat, len);
	p[len] = '\0';
	memcpy(r, rel, strlen(rel) + 1);
	for (i = 0; lower && p[i]; i++)
		p[i] = (char)tolower((unsigned char)p[i]);
	for (i = 0; lower && r[i]; i++)
		r[i] = (char)tolower((unsigned char)r[i]);
	if (p[0] == '!' || p[len - 1] == '/')	/* git and libgit2 may differ */
		return -1;
	if (!memchr(p, '/', len))
		return xg_snapshot_wildmatch(p, r + (base ? base - rel + 1 : 0), 0);
	return xg_snapshot_wildmatch(p[0] == '/' ? p + 1 : p, r, 1);
}

/* The six attributes of path from the tree's files, top down, each line in
 * turn, the last to say one deciding it: 0, or -1 when libgit2 must. */
static int attr_eval(struct xg_snapshot_state *s, const char *path, int lower,
		     unsigned char val[ATTR_N])
{
	const char *slash = path;
	size_t dlen = 0;

	memset(val, VAL_UNSPECIFIED, ATTR_N);
	for (;;) {
		struct xg_snapshot_attr_file *f = attr_file(s, path, dlen);
		const char *rel = dlen ? path + dlen + 1 : path, *p, *end;

		if (f->opaque)
			return -1;
		for (p = f->text.buf, end = p + f->text.len; p && p < end;) {
			const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
			size_t n;
			int m;

			if (!eol)
				eol = end;
			p += strspn(p, " \t\r");
			n = strcspn(p, " \t\r\n");
			if (p < eol && *p != '#' && n) {
				if ((m = attr_match(p, n, rel, lower)) < 0)
					return -1;
				for (q = p + n; m && q < eol;) {
					q += strspn(q, " \t\r");
					n = strcspn(q, " \t\r\n");
					if (q + n > eol)
						n = (size_t)(eol - q);
					if (n)
						attr_token(q, n, val);
					q += n;
				}
			}
			p = eol + 1;
		}
		if (!(slash = strchr(slash, '/')))
			return 0;
		dlen = (size_t)(slash - path);
		slash++;
	}
}

/* What the tree's files say of path: 1 it converts, 2 only its line
 * endings (text, eol, crlf), 0 it does not, -1 they cannot tell
 * (core.ignorecase could change the answer included). */
static int attr_converts(struct xg_snapshot_state *s, const char *path)
{
	unsigned char a[ATTR_N], b[ATTR_N];
	int i, eol = 0;

	if (s->config_filter || attr_eval(s, path, 0, a) < 0 || attr_eval(s, path, 1, b) < 0 ||
	    memcmp(a, b, ATTR_N))
		return -1;
	for (i = 0; i < ATTR_N; i++) {
		if (a[i] != VAL_SET)
			continue;
		if (i != ATTR_TEXT && i != ATTR_EOL && i != ATTR_CRLF)
			return 1;
		eol = 1;
	}
	return eol ? 2 : 0;
}

/* Whether an attribute may convert path's content on its way in: a
 * filter, text (core.autocrlf when text is not unset), eol, crlf, ident
 * or working-tree-encoding that is set or has a value.  1 too when the
 * attributes cannot be read; 2 when the tree's files say only its line
 * endings are converted, which leaves a file without a CR as it is. */
static int converts(struct xg_snapshot_state *s, const char *path)
{
	static const char *names[] = { "filter", "text", "eol", "crlf", "ident",
				       "working-tree-encoding" };
	const char *v[6];
	int i, off[6];

	if (!s->can_filter)
		return 0;
	if ((i = attr_converts(s, path)) >= 0)
		return i;
	if (xg_snapshot_repo_open(s) < 0 ||
	    git_attr_get_many(v, s->repo, GIT_ATTR_CHECK_FILE_THEN_INDEX, path, 6, names) < 0)
		return 1;
	for (i = 0; i < 6; i++) {
		git_attr_value_t t = git_attr_value(v[i]);

		if (t != GIT_ATTR_VALUE_UNSPECIFIED && t != GIT_ATTR_VALUE_FALSE)
			return 1;
		off[i] = t == GIT_ATTR_VALUE_FALSE;
	}
	/* core.autocrlf converts a file whose text (or crlf) is not unset. */
	return s->autocrlf && !off[1] && !off[3];
}

/* What is known of a file whose stat data is st (its blob), or NULL;
 * eol_only: its rules convert line endings, so one that held a CR is not. */
static const struct xg_snapshot_known_file *known(struct xg_snapshot_state *s,
						   const char *path, const struct stat *st,
						   int eol_only)
{
	const struct xg_snapshot_known_file *f = lookup(&s->known, path);

	if (!f || (eol_only && f->cr) || !same_stat(f, st) || !settled(&s->known, f) ||
	    !xg_snapshot_has(s, f->oid))
		return NULL;
	return f;
}

/* The tracked files to hash, each with its stat data, and whether no
 * attribute converts it; 0 when there is none. */
static size_t list_tracked(struct xg_snapshot_state *s)
{
	size_t i;

	for (i = 0; i < s->ix.nr; i++) {
		struct xg_snapshot_tfile *t;

		if (s->sc.state[i] != XG_SNAPSHOT_SCAN_HASH)
			continue;
		XG_ALLOC_GROW(s->t, s->nt + 1, s->at);
		t = &s->t[s->nt++];
		memset(t, 0, sizeof(*t));
		t->i = i;
	}
	return s->nt;
}

void xg_snapshot_known_apply(struct xg_snapshot_state *s)
{
	struct xg_snapshot_known *k = &s->known;
	const struct xg_snapshot_known_file *f;
	size_t i;
	int c;

	if ((!list_tracked(s) && !s->nu) || open_known(s) < 0)
		return;
	k->ok = 1;
	parse(s);
	for (i = 0; i < s->nu; i++) {
		struct xg_snapshot_ufile *u = &s->u[i];

		if (u->type != DT_REG && u->type != DT_LNK)
			continue;
		c = converts(s, u->path);
		u->eol_only = c == 2;
		if (!(u->plain = !c) && !u->eol_only)
			continue;
		if (!(f = known(s, u->path, &u->st, u->eol_only)))
			continue;
		memcpy(u->oid, f->oid, 20);
		u->cr = f->cr;
		u->known = 1;
		k->used++;
	}
	/* An edited tracked file is stale in the index by definition: what
	 * the last snapshot read of it is known the same way. */
	for (i = 0; i < s->nt; i++) {
		struct xg_snapshot_tfile *t = &s->t[i];
		const char *path = s->ix.entries[t->i].path;

		c = converts(s, path);
		t->eol_only = c == 2;
		if (!(t->plain = !c) && !t->eol_only)
			continue;
		if (fstatat(s->rootfd, path, &t->st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    (!S_ISREG(t->st.st_mode) && !S_ISLNK(t->st.st_mode)) ||
		    !(f = known(s, path, &t->st, t->eol_only)))
			continue;
		memcpy(s->oids + 20 * t->i, f->oid, 20);
		t->cr = f->cr;
		t->known = 1;
		k->used++;
	}
}

static void add_line(struct xg_buf *b, const unsigned char oid[20], const struct stat *st,
		     int cr, const char *path)
{
	char hex[41];

	xg_snapshot_sha1_hex(oid, hex);
	xg_buf_addf(b, "%s %o %llu %lld.%09ld %lld.%09ld %llu %llu %u %u %d %s\n", hex,
		    (unsigned)st->st_mode, (unsigned long long)st->st_size,
		    (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec,
		    (long long)st->st_ctim.tv_sec, (long)st->st_ctim.tv_nsec,
		    (unsigned long long)st->st_ino, (unsigned long long)st->st_dev,
		    (unsigned)st->st_uid, (unsigned)st->st_gid, cr, path);
}

/* Whether a file's blob is its own bytes: no attribute converts it, or
 * only its line endings and it held no CR. */
static int own_bytes(int plain, int eol_only, int cr)
{
	return plain || (eol_only && !cr);
}

/* Whether the file is kept: read or known, its blob its own bytes. */
static int keep_u(const struct xg_snapshot_ufile *u)
{
	return (u->type == DT_REG || u->type == DT_LNK) && own_bytes(u->plain, u->eol_only, u->cr) &&
	       !strpbrk(u->path, "\n\\");
}

static int keep_t(const struct xg_snapshot_state *s, const struct xg_snapshot_tfile *t)
{
	return t->hashed && own_bytes(t->plain, t->eol_only, t->cr) &&
	       !strpbrk(s->ix.entries[t->i].path, "\n\\");
}

void xg_snapshot_known_save(struct xg_snapshot_state *s)
{
	struct xg_snapshot_known *k = &s->known;
	struct xg_buf b = XG_BUF_INIT(0);
	char *file;
	size_t i, n = 0;

	if (!k->ok || strchr(s->workdir, '\n'))
		return;
	for (i = 0; i < s->nu; i++)
		n += keep_u(&s->u[i]);
	for (i = 0; i < s->nt; i++)
		n += keep_t(s, &s->t[i]);
	/* Nothing new to say: each file came from what was known. */
	if (n == k->used && n == k->nr)
		return;
	xg_buf_addf(&b, HEADER "%lld.%09ld %s\n", (long long)k->ref.tv_sec, (long)k->ref.tv_nsec,
		    s->workdir);
	for (i = 0; i < s->nu; i++)
		if (keep_u(&s->u[i]))
			add_line(&b, s->u[i].oid, &s->u[i].st, s->u[i].cr, s->u[i].path);
	for (i = 0; i < s->nt; i++)
		if (keep_t(s, &s->t[i]))
			add_line(&b, s->oids + 20 * s->t[i].i, &s->t[i].st, s->t[i].cr,
				 s->ix.entries[s->t[i].i].path);
	xg_snapshot_sha1_seal(&b);
	file = xg_path_join(s->gitdir, "xg-untracked");
	xg_write_cache(file, b.buf, b.len, 0644);
	free(file);
	xg_buf_release(&b);
}

void xg_snapshot_known_release(struct xg_snapshot_known *k)
{
	size_t i;

	for (i = 0; i < k->nattrs; i++) {
		free(k->attrs[i].dir);
		xg_buf_release(&k->attrs[i].text);
	}
	free(k->attrs);
	free(k->files);
	xg_buf_release(&k->text);
	memset(k, 0, sizeof(*k));
}
