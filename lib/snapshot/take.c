/*
 * xg_snapshot_take: the scan (snapshot/scan.c) finds what changed, the
 * untracked walk here finds what is new, the changed and new files are
 * read and hashed, the trees are built from the merged entries reusing the
 * cache tree, and the objects are written at the very end
 * (snapshot/pack.c).
 */
#include "xg.h"
#include "snapshot/snapshot.h"
#include "snapshot/internal.h"
#include <dirent.h>
#include <git2.h>

struct ufile {			/* an untracked file to include */
	char *path;
	size_t len;
	unsigned char type;	/* DT_REG, DT_LNK, or DT_DIR for a nested repository */
	unsigned char oid[20];
	uint32_t mode;
	uint64_t size;
};

struct fent {			/* an entry of the snapshot's tree */
	const char *path;
	size_t len;
	uint32_t mode;
	const unsigned char *oid;
};

struct snap {
	const struct xg_snapshot_opts *o;
	int64_t start, deadline;
	git_repository *repo;
	git_odb *odb;
	const char *workdir;
	char *objdir;
	int rootfd;
	struct xg_snapshot_index ix;
	struct xg_snapshot_scan sc;
	struct xg_snapshot_rules exclude, excludes_file;
	int can_filter;
	unsigned char *oids;	/* per index entry: the hashed id */
	uint32_t *modes;	/* per index entry: the working tree's mode */
	struct ufile *u;
	size_t nu, au;
	uint64_t utotal;
	size_t ucount;
	jv skipped;
	size_t nskipped;
	long changed, deleted;
	uint64_t bytes;
	size_t files;
	int complete, timed_out;
	struct xg_snapshot_cache_tree **cache;	/* path -> cache tree */
	size_t ncache;
	struct xg_snapshot_pack pk;
	char *pre_workdir, *pre_gitdir;	/* where the early scan runs */
	int prescanned;
	char err[512];
};

void xg_snapshot_opts_init(struct xg_snapshot_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_file_size = XG_SNAPSHOT_MAX_FILE_SIZE;
	o->max_total_size = XG_SNAPSHOT_MAX_TOTAL_SIZE;
	o->max_files = XG_SNAPSHOT_MAX_FILES;
	o->timeout_ms = XG_SNAPSHOT_TIMEOUT_MS;
}

int xg_snapshot_parse_duration(const char *s, long long *ms)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)*s) && *s != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || v < 0 || v > 1e12)
		return -1;
	if (!strcmp(end, "ms"))
		*ms = (long long)v;
	else if (!*end || !strcmp(end, "s"))
		*ms = (long long)(v * 1000);
	else
		return -1;
	return 0;
}

static int timed_out(struct snap *s)
{
	if (!s->timed_out && xg_clock_ms() > s->deadline)
		s->timed_out = 1;
	return s->timed_out;
}

static void skip(struct snap *s, const char *path, size_t len, const char *reason)
{
	s->complete = 0;
	if (s->nskipped++ >= XG_SNAPSHOT_SKIPPED_MAX)
		return;
	s->skipped = jv_array_append(s->skipped,
		xg_json_set(xg_json_set(jv_object(), "path", xg_json_string_bytes(path, len)),
			    "reason", jv_string(reason)));
}

static const char *git_message(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown error";
}

/* ---- ignore rules ---- */

static const struct xg_snapshot_rules *dir_rules(struct snap *s, struct xg_snapshot_scan_dir *d)
{
	if (!d->rules_loaded) {
		d->rules_loaded = 1;
		if (d->has_gitignore) {
			char *f = xg_asprintf("%s%s%s.gitignore", s->workdir, d->path,
					      d->len ? "/" : "");

			xg_snapshot_rules_load(&d->rules, d->path, f);
			free(f);
		}
	}
	return d->rules.nr ? &d->rules : NULL;
}

/* Whether path, inside directory d, is ignored by its own name (the
 * caller has checked that d is not). */
static int ignored(struct snap *s, struct xg_snapshot_scan_dir *d, const char *path, size_t len,
		   int is_dir)
{
	int r;

	for (; d; d = d->parent) {
		const struct xg_snapshot_rules *rules = dir_rules(s, d);

		if (rules && (r = xg_snapshot_rules_match(rules, path, len, is_dir)) >= 0)
			return r;
	}
	if ((r = xg_snapshot_rules_match(&s->exclude, path, len, is_dir)) >= 0)
		return r;
	if ((r = xg_snapshot_rules_match(&s->excludes_file, path, len, is_dir)) >= 0)
		return r;
	return 0;
}

static int dir_excluded(struct snap *s, struct xg_snapshot_scan_dir *d)
{
	if (d->excluded < 0)
		d->excluded = !d->parent ? 0 :
			dir_excluded(s, d->parent) || ignored(s, d->parent, d->path, d->len, 1);
	return d->excluded;
}

/* ---- the untracked walk ---- */

static int nested_repository(struct snap *s, const char *path, unsigned char oid[20])
{
	char *full = xg_asprintf("%s%s", s->workdir, path);
	git_repository *sub = NULL;
	git_oid id;
	int found = 0;

	if (!git_repository_open_ext(&sub, full, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		if (!git_reference_name_to_id(&id, sub, "HEAD")) {
			memcpy(oid, id.id, 20);
			found = 1;
		} else {
			found = -1;
		}
		git_repository_free(sub);
	}
	free(full);
	return found;
}

static int has_dotgit(struct snap *s, const char *path)
{
	struct stat st;
	char *p = xg_asprintf("%s/.git", path);
	int r = fstatat(s->rootfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0;

	free(p);
	return r;
}

static void add_untracked(struct snap *s, const char *path, size_t len, unsigned char type)
{
	struct ufile *f;
	struct stat st;
	unsigned char oid[20];
	uint64_t size = 0;

	/* Past the count nothing else needs looking at. */
	if (s->ucount >= s->o->max_files) {
		skip(s, path, len, "max-files");
		return;
	}
	if (type == DT_DIR) {	/* a nested repository: a gitlink to its HEAD */
		int r = nested_repository(s, path, oid);

		if (r == 0)
			return;
		if (r < 0) {
			skip(s, path, len, "repository-without-commit");
			return;
		}
	} else {
		if (fstatat(s->rootfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return;
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
			return;	/* fifos and sockets are not files git adds */
		size = (uint64_t)st.st_size;
	}
	if (type != DT_DIR && size > s->o->max_file_size) {
		skip(s, path, len, "max-file-size");
		return;
	}
	if (s->utotal + size > s->o->max_total_size) {
		skip(s, path, len, "max-total-size");
		return;
	}
	s->ucount++;
	s->utotal += size;
	XG_ALLOC_GROW(s->u, s->nu + 1, s->au);
	f = &s->u[s->nu++];
	memset(f, 0, sizeof(*f));
	f->path = xg_strndup(path, len);
	f->len = len;
	f->type = type;
	f->size = size;
	if (type == DT_DIR) {
		memcpy(f->oid, oid, 20);
		f->mode = 0160000;
	} else {
		f->mode = S_ISLNK(st.st_mode) ? 0120000 : (st.st_mode & 0100) ? 0100755 : 0100644;
	}
}

static void walk_untracked_dir(struct snap *s, struct xg_snapshot_scan_dir *d);

/* One name the index does not know, found in directory d. */
static void consider(struct snap *s, struct xg_snapshot_scan_dir *d, const char *name,
		     unsigned char type)
{
	struct xg_buf p = XG_BUF_INIT(0);

	if (timed_out(s))
		return;
	if (d->len) {
		xg_buf_add(&p, d->path, d->len);
		xg_buf_addch(&p, '/');
	}
	xg_buf_addstr(&p, name);
	if (type == DT_DIR) {
		if (has_dotgit(s, p.buf)) {
			if (!ignored(s, d, p.buf, p.len, 1))
				add_untracked(s, p.buf, p.len, DT_DIR);
		} else if (!ignored(s, d, p.buf, p.len, 1)) {
			if (s->ucount >= s->o->max_files) {
				xg_buf_addch(&p, '/');
				skip(s, p.buf, p.len, "max-files");
			} else {
				struct xg_snapshot_scan_dir sub;

				memset(&sub, 0, sizeof(sub));
				sub.path = p.buf;
				sub.len = p.len;
				sub.parent = d;
				sub.excluded = 0;
				walk_untracked_dir(s, &sub);
				xg_snapshot_rules_release(&sub.rules);
			}
		}
	} else if (type == DT_REG || type == DT_LNK) {
		if (!ignored(s, d, p.buf, p.len, 0))
			add_untracked(s, p.buf, p.len, type);
	}
	xg_buf_release(&p);
}

static void walk_untracked_dir(struct snap *s, struct xg_snapshot_scan_dir *d)
{
	struct xg_snapshot_scan_name *ls = NULL;
	size_t nls = 0, als = 0, i;
	struct dirent *de;
	DIR *dp;
	int fd;

	fd = openat(s->rootfd, d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(dp = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		skip(s, d->path, d->len, "unreadable");
		return;
	}
	while ((de = readdir(dp))) {
		const char *n = de->d_name;
		unsigned char t = de->d_type;

		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
			continue;
		if (!strcmp(n, ".git"))
			continue;
		if (!strcmp(n, ".gitignore"))
			d->has_gitignore = 1;
		if (!strcmp(n, ".gitattributes"))
			s->can_filter = 1;
		if (t == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(dirfd(dp), n, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG :
			    S_ISLNK(st.st_mode) ? DT_LNK : DT_FIFO;
		}
		XG_ALLOC_GROW(ls, nls + 1, als);
		ls[nls].name = xg_strdup(n);
		ls[nls++].type = t;
	}
	closedir(dp);
	if (nls)
		qsort(ls, nls, sizeof(*ls), xg_snapshot_scan_name_cmp);
	for (i = 0; i < nls; i++) {
		consider(s, d, ls[i].name, ls[i].type);
		free(ls[i].name);
	}
	free(ls);
}

static void walk_untracked(struct snap *s)
{
	size_t i, k;

	for (i = 0; i < s->sc.ndirs && !timed_out(s); i++) {
		struct xg_snapshot_scan_dir *d = s->sc.dirs[i];

		if (d->has_gitattributes)
			s->can_filter = 1;
		if (d->gone || d->err || !d->nnames || dir_excluded(s, d))
			continue;
		for (k = 0; k < d->nnames; k++)
			consider(s, d, d->names[k].name, d->names[k].type);
	}
}

/* ---- reading and hashing ---- */

static int read_link(struct snap *s, const char *path, size_t size, struct xg_buf *b)
{
	size_t cap = size + 1;

	for (;;) {
		ssize_t n;

		xg_buf_grow(b, cap);
		n = readlinkat(s->rootfd, path, b->buf, b->alloc);
		if (n < 0)
			return -1;
		if ((size_t)n < b->alloc) {
			b->len = (size_t)n;
			b->buf[n] = '\0';
			return 0;
		}
		cap = b->alloc * 2;
	}
}

/* 0, or -1 with errno (ETIMEDOUT when the time ran out meanwhile). */
static int read_file(struct snap *s, const char *path, size_t size, struct xg_buf *b)
{
	int fd = openat(s->rootfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	xg_buf_grow(b, size + 1);
	for (;;) {
		ssize_t n;

		if (xg_buf_grow(b, 1 << 16) < 0)
			break;
		n = read(fd, b->buf + b->len, b->alloc - b->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return n < 0 ? -1 : 0;
		}
		b->len += (size_t)n;
		b->buf[b->len] = '\0';
		/* A big file is read in pieces, each a chance to give up. */
		if (b->len > (8u << 20) && timed_out(s)) {
			close(fd);
			errno = ETIMEDOUT;
			return -1;
		}
	}
	close(fd);
	return 0;
}

/* The clean filters (core.autocrlf, text, eol, ident) as git add runs them. */
static void clean_filters(struct snap *s, const char *path, struct xg_buf *b)
{
	git_filter_list *fl = NULL;
	git_buf out = { 0 };

	if (git_filter_list_load(&fl, s->repo, NULL, path, GIT_FILTER_TO_ODB,
				 GIT_FILTER_DEFAULT) < 0 || !fl)
		return;
	if (!git_filter_list_apply_to_buffer(&out, fl, b->buf, b->len)) {
		xg_buf_reset(b);
		xg_buf_add(b, out.ptr, out.size);
	}
	git_buf_dispose(&out);
	git_filter_list_free(fl);
}

/* Reads path's content as git would store it: a symlink's target, a file's
 * bytes through the clean filters when attributes or core.autocrlf may ask
 * for them.  1 done, 0 gone or not a file any more, -1 unreadable. */
static int read_blob(struct snap *s, const char *path, char **data, size_t *len,
		     uint32_t *mode)
{
	struct xg_buf b = XG_BUF_INIT(0);
	struct stat st;

	if (fstatat(s->rootfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (S_ISLNK(st.st_mode)) {
		*mode = 0120000;
		if (read_link(s, path, (size_t)st.st_size, &b) < 0)
			goto fail;
	} else if (S_ISREG(st.st_mode)) {
		*mode = (st.st_mode & 0100) ? 0100755 : 0100644;
		if (read_file(s, path, (size_t)st.st_size, &b) < 0)
			goto fail;
		if (s->can_filter)
			clean_filters(s, path, &b);
	} else {
		return 0;
	}
	*data = xg_buf_detach(&b, len);
	return 1;
fail:
	xg_buf_release(&b);
	return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

static void invalidate(struct snap *s, const char *path, size_t len);

static int hash_tracked(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->ix.nr; i++) {
		const struct xg_snapshot_entry *e = &s->ix.entries[i];
		unsigned char *st = &s->sc.state[i];
		char *data;
		size_t len;
		uint32_t mode;
		int r;

		if (*st == XG_SNAPSHOT_SCAN_GONE || *st == XG_SNAPSHOT_SCAN_SPECIAL) {
			if (*st == XG_SNAPSHOT_SCAN_SPECIAL)
				skip(s, e->path, e->pathlen, "special-file");
			s->deleted += *st == XG_SNAPSHOT_SCAN_GONE;
			invalidate(s, e->path, e->pathlen);
			continue;
		}
		if (*st == XG_SNAPSHOT_SCAN_ERROR) {
			skip(s, e->path, e->pathlen, "unreadable");
			*st = XG_SNAPSHOT_SCAN_KEEP;
			continue;
		}
		if (*st != XG_SNAPSHOT_SCAN_HASH)
			continue;
		if (timed_out(s))
			return -1;
		r = read_blob(s, e->path, &data, &len, &mode);
		if (r < 0 && s->timed_out)
			return -1;
		if (r < 0) {
			skip(s, e->path, e->pathlen, "unreadable");
			*st = e->stage ? XG_SNAPSHOT_SCAN_GONE : XG_SNAPSHOT_SCAN_KEEP;
			continue;
		}
		if (r == 0) {
			*st = XG_SNAPSHOT_SCAN_GONE;
			s->deleted++;
			invalidate(s, e->path, e->pathlen);
			continue;
		}
		if (mode != 0120000 && !s->sc.filemode)
			mode = (e->mode & S_IFMT) == S_IFREG ? (e->mode & 0100 ? 0100755 : 0100644)
							     : 0100644;
		s->bytes += len;
		if (xg_snapshot_pack_add(&s->pk, GIT_OBJECT_BLOB, data, len, s->oids + 20 * i) < 0) {
			snprintf(s->err, sizeof(s->err), "cannot hash '%s': %s", e->path, git_message());
			return -2;
		}
		s->modes[i] = mode;
		if (e->stage || mode != e->mode || memcmp(s->oids + 20 * i, e->oid, 20)) {
			s->changed++;
			invalidate(s, e->path, e->pathlen);
		}
	}
	return 0;
}

static int hash_untracked(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->nu; i++) {
		struct ufile *f = &s->u[i];
		char *data;
		size_t len;
		int r;

		invalidate(s, f->path, f->len);
		if (f->type == DT_DIR)
			continue;
		if (timed_out(s))
			return -1;
		r = read_blob(s, f->path, &data, &len, &f->mode);
		if (r <= 0) {
			if (s->timed_out)
				return -1;
			if (r < 0)
				skip(s, f->path, f->len, "unreadable");
			f->type = 0;	/* left out */
			continue;
		}
		f->size = len;
		if (xg_snapshot_pack_add(&s->pk, GIT_OBJECT_BLOB, data, len, f->oid) < 0) {
			snprintf(s->err, sizeof(s->err), "cannot hash '%s': %s", f->path, git_message());
			return -2;
		}
		s->bytes += len;
	}
	return 0;
}

/* ---- trees ---- */

static size_t cache_slot(struct snap *s, const char *path, size_t len)
{
	size_t h = 14695981039346656037ULL, i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)path[i]) * 1099511628211ULL;
	return h & (s->ncache - 1);
}

static struct xg_snapshot_cache_tree *cache_get(struct snap *s, const char *path, size_t len)
{
	size_t k;

	if (!s->ncache)
		return NULL;
	for (k = cache_slot(s, path, len); s->cache[k]; k = (k + 1) & (s->ncache - 1))
		if (strlen(s->cache[k]->path) == len && !memcmp(s->cache[k]->path, path, len))
			return s->cache[k];
	return NULL;
}

static void cache_build(struct snap *s)
{
	size_t i;

	if (!s->ix.ntrees)
		return;
	for (s->ncache = 64; s->ncache < s->ix.ntrees * 2; s->ncache *= 2)
		;
	s->cache = xg_calloc(s->ncache, sizeof(*s->cache));
	for (i = 0; i < s->ix.ntrees; i++) {
		struct xg_snapshot_cache_tree *t = &s->ix.trees[i];
		size_t k = cache_slot(s, t->path, strlen(t->path));

		while (s->cache[k])
			k = (k + 1) & (s->ncache - 1);
		s->cache[k] = t;
	}
}

/* A change at path makes the cached trees of its directories stale. */
static void invalidate(struct snap *s, const char *path, size_t len)
{
	for (;;) {
		const char *slash = memrchr(path, '/', len);
		struct xg_snapshot_cache_tree *t;

		len = slash ? (size_t)(slash - path) : 0;
		t = cache_get(s, path, len);
		if (t)
			t->entry_count = -1;
		if (!len)
			break;
	}
}

static int cmp_ufile(const void *a, const void *b)
{
	const struct ufile *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* The index's entries as the working tree has them, merged with the
 * untracked files, in index order. */
static struct fent *merge_entries(struct snap *s, size_t *nr)
{
	struct fent *f = xg_malloc((s->ix.nr + s->nu + 1) * sizeof(*f));
	size_t i = 0, k = 0, n = 0;

	if (s->nu)
		qsort(s->u, s->nu, sizeof(*s->u), cmp_ufile);
	while (i < s->ix.nr || k < s->nu) {
		const struct xg_snapshot_entry *e = i < s->ix.nr ? &s->ix.entries[i] : NULL;
		unsigned char st = e ? s->sc.state[i] : 0;
		int c;

		if (e && (st == XG_SNAPSHOT_SCAN_GONE || st == XG_SNAPSHOT_SCAN_SPECIAL ||
			  st == XG_SNAPSHOT_SCAN_DROP ||
			  (n && f[n - 1].len == e->pathlen && !memcmp(f[n - 1].path, e->path, e->pathlen)))) {
			i++;
			continue;
		}
		if (k < s->nu && !s->u[k].type) {
			k++;
			continue;
		}
		c = !e ? 1 : k == s->nu ? -1 : strcmp(e->path, s->u[k].path);
		if (c <= 0) {
			f[n].path = e->path;
			f[n].len = e->pathlen;
			if (st == XG_SNAPSHOT_SCAN_HASH) {
				f[n].mode = s->modes[i];
				f[n].oid = s->oids + 20 * i;
			} else {
				f[n].mode = e->mode;
				f[n].oid = e->oid;
				s->bytes += e->size;
			}
			n++;
			i++;
			if (c == 0)
				k++;	/* cannot happen: the scan knew the index */
		} else {
			f[n].path = s->u[k].path;
			f[n].len = s->u[k].len;
			f[n].mode = s->u[k].mode;
			f[n].oid = s->u[k].oid;
			n++;
			k++;
		}
	}
	*nr = n;
	return f;
}

static uint32_t tree_mode(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return mode & 0100 ? 0100755 : 0100644;
	case S_IFLNK:
		return 0120000;
	case 0160000:
		return 0160000;
	default:
		return 040000;
	}
}

/* Writes the tree of directory dir (dirlen bytes; "" for the top) from the
 * entries at *pos on. */
static int build_tree(struct snap *s, const struct fent *f, size_t nr, size_t *pos,
		      const char *dir, size_t dirlen, unsigned char oid[20])
{
	struct xg_snapshot_cache_tree *t = cache_get(s, dir, dirlen);
	struct xg_buf b = XG_BUF_INIT(0);
	size_t i = *pos, skip_len = dirlen ? dirlen + 1 : 0;
	const char *last = NULL;
	size_t lastlen = 0;

	if (t && t->entry_count >= 0) {
		size_t end = i;

		while (end < nr && (!dirlen || (f[end].len > dirlen && f[end].path[dirlen] == '/' &&
						!memcmp(f[end].path, dir, dirlen))))
			end++;
		if ((long)(end - i) == t->entry_count) {
			memcpy(oid, t->oid, 20);
			*pos = end;
			return 0;
		}
	}
	while (i < nr && (!dirlen || (f[i].len > dirlen && f[i].path[dirlen] == '/' &&
				      !memcmp(f[i].path, dir, dirlen)))) {
		const char *name = f[i].path + skip_len;
		const char *slash = memchr(name, '/', f[i].len - skip_len);
		size_t namelen = slash ? (size_t)(slash - name) : f[i].len - skip_len;
		unsigned char sub[20];
		const unsigned char *id;
		uint32_t mode;

		if (last && lastlen == namelen && !memcmp(last, name, namelen)) {
			snprintf(s->err, sizeof(s->err), "the working tree changed while it was read");
			xg_buf_release(&b);
			return -1;
		}
		if (slash) {
			if (build_tree(s, f, nr, &i, f[i].path, (size_t)(slash - f[i].path), sub) < 0) {
				xg_buf_release(&b);
				return -1;
			}
			id = sub;
			mode = 040000;
		} else {
			id = f[i].oid;
			mode = tree_mode(f[i].mode);
			i++;
		}
		xg_buf_addf(&b, "%o ", (unsigned)mode);
		xg_buf_add(&b, name, namelen);
		xg_buf_addch(&b, '\0');
		xg_buf_add(&b, id, 20);
		last = name;
		lastlen = namelen;
	}
	*pos = i;
	{
		size_t len;
		char *data = xg_buf_detach(&b, &len);

		if (xg_snapshot_pack_add(&s->pk, GIT_OBJECT_TREE, data, len, oid) < 0) {
			snprintf(s->err, sizeof(s->err), "cannot hash a tree: %s", git_message());
			return -1;
		}
	}
	return 0;
}

/* ---- the commit ---- */

static void identity(git_config *cfg, const char **name, const char **email)
{
	*name = "xg";
	*email = "xg@localhost";
	if (!cfg)
		return;
	if (git_config_get_string(name, cfg, "user.name") < 0 || !**name)
		*name = "xg";
	if (git_config_get_string(email, cfg, "user.email") < 0 || !**email)
		*email = "xg@localhost";
}

static int make_commit(struct snap *s, git_config *cfg, const unsigned char tree[20],
		       const git_oid *parent, unsigned char oid[20])
{
	struct xg_buf b = XG_BUF_INIT(0);
	const char *name, *email;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid t;
	time_t now = time(NULL);
	struct tm tm;
	long off;
	size_t len;
	char *data;
	int i;

	identity(cfg, &name, &email);
	localtime_r(&now, &tm);
	off = tm.tm_gmtoff / 60;
	memcpy(t.id, tree, 20);
	git_oid_tostr(hex, sizeof(hex), &t);
	xg_buf_addf(&b, "tree %s\n", hex);
	if (parent)
		xg_buf_addf(&b, "parent %s\n", git_oid_tostr(hex, sizeof(hex), parent));
	for (i = 0; i < 2; i++) {
		xg_buf_addstr(&b, i ? "committer " : "author ");
		/* Angle brackets and newlines would break the header line. */
		for (const char *p = name; *p; p++)
			if (*p != '<' && *p != '>' && *p != '\n')
				xg_buf_addch(&b, *p);
		xg_buf_addstr(&b, " <");
		for (const char *p = email; *p; p++)
			if (*p != '<' && *p != '>' && *p != '\n')
				xg_buf_addch(&b, *p);
		xg_buf_addf(&b, "> %lld %c%02ld%02ld\n", (long long)now, off < 0 ? '-' : '+',
			    labs(off) / 60, labs(off) % 60);
	}
	xg_buf_addstr(&b, "\nxg snapshot of the working tree\n");
	data = xg_buf_detach(&b, &len);
	if (xg_snapshot_pack_add(&s->pk, GIT_OBJECT_COMMIT, data, len, oid) < 0) {
		snprintf(s->err, sizeof(s->err), "cannot hash the commit: %s", git_message());
		return -1;
	}
	return 0;
}

/* ---- taking a snapshot ---- */

static void read_config(struct snap *s, git_config *cfg)
{
	git_buf path = { 0 };
	const char *v;
	int b;
	char *f;

	if (!cfg)
		return;
	if (!git_config_get_bool(&b, cfg, "core.filemode"))
		s->sc.filemode = b;
	if (!git_config_get_bool(&b, cfg, "core.trustctime"))
		s->sc.trustctime = b;
	if (!git_config_get_string(&v, cfg, "core.checkstat") && !strcmp(v, "minimal"))
		s->sc.checkstat = 0;
	if (!git_config_get_string(&v, cfg, "core.autocrlf") && strcasecmp(v, "false") &&
	    strcasecmp(v, "no") && strcasecmp(v, "off") && strcmp(v, "0"))
		s->can_filter = 1;
	if (!git_config_get_string(&v, cfg, "core.attributesfile") ||
	    !access("/etc/gitattributes", F_OK))
		s->can_filter = 1;
	if (!git_config_get_path(&path, cfg, "core.excludesfile")) {
		xg_snapshot_rules_load(&s->excludes_file, "", path.ptr);
		git_buf_dispose(&path);
	} else {
		const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

		f = xdg && *xdg ? xg_asprintf("%s/git/ignore", xdg)
				: home ? xg_asprintf("%s/.config/git/ignore", home) : NULL;
		if (f)
			xg_snapshot_rules_load(&s->excludes_file, "", f);
		free(f);
	}
	if (!s->can_filter) {
		const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

		f = xdg && *xdg ? xg_asprintf("%s/git/attributes", xdg)
				: home ? xg_asprintf("%s/.config/git/attributes", home) : NULL;
		if (f && !access(f, F_OK))
			s->can_filter = 1;
		free(f);
	}
}

static jv finish(struct snap *s, jv rec, const char *reason)
{
	if (reason) {
		rec = xg_json_set(rec, "commit", jv_null());
		rec = xg_json_set(rec, "reason", jv_string(reason));
		s->complete = 0;
		if (s->err[0])
			rec = xg_json_set(rec, "error", jv_string(s->err));
	}
	rec = xg_json_set(rec, "files", jv_number((double)s->files));
	rec = xg_json_set(rec, "bytes", jv_number((double)s->bytes));
	rec = xg_json_set(rec, "changed", jv_number((double)s->changed));
	rec = xg_json_set(rec, "deleted", jv_number((double)s->deleted));
	rec = xg_json_set(rec, "untracked", jv_number((double)s->ucount));
	rec = xg_json_set(rec, "skipped", jv_copy(s->skipped));
	rec = xg_json_set(rec, "skipped_total", jv_number((double)s->nskipped));
	rec = xg_json_set(rec, "complete", jv_bool(s->complete));
	rec = xg_json_set(rec, "elapsed_ms", jv_number((double)(xg_clock_ms() - s->start)));
	return rec;
}

/*
 * Finds the working tree and git directory above dir the way git does for
 * a plain repository or a linked worktree (a .git directory, or a .git
 * file naming one), without libgit2.  The early scan runs there while
 * libgit2 starts; prescan_matches checks libgit2 found the same.
 */
static int discover(const char *dir, char **workdir, char **gitdir)
{
	char *p = realpath(dir, NULL);
	struct xg_buf b = XG_BUF_INIT(4096);

	while (p) {
		char *dotgit = xg_asprintf("%s/.git", strcmp(p, "/") ? p : "");
		struct stat st;

		xg_buf_reset(&b);
		if (!lstat(dotgit, &st) && S_ISDIR(st.st_mode)) {
			*gitdir = dotgit;
			*workdir = p;
			return 0;
		}
		if (!lstat(dotgit, &st) && S_ISREG(st.st_mode) && !xg_read_file(dotgit, &b) &&
		    !strncmp(b.buf, "gitdir: ", 8)) {
			char *g = b.buf + 8, *rel;

			g[strcspn(g, "\r\n")] = '\0';
			rel = *g == '/' ? xg_strdup(g) : xg_asprintf("%s/%s", p, g);
			*gitdir = realpath(rel, NULL);
			free(rel);
			free(dotgit);
			xg_buf_release(&b);
			if (!*gitdir) {
				free(p);
				return -1;
			}
			*workdir = p;
			return 0;
		}
		free(dotgit);
		if (!strcmp(p, "/"))
			break;
		*strrchr(p, '/') = '\0';
		if (!*p) {
			p[0] = '/';
			p[1] = '\0';
		}
	}
	free(p);
	xg_buf_release(&b);
	return -1;
}

/* Reads the index and starts the scan of the working tree it describes. */
static int start_scan(struct snap *s, const char *workdir, const char *gitdir)
{
	char *p = xg_path_join(gitdir, "index");
	int rc = xg_snapshot_index_read(&s->ix, p, s->err, sizeof(s->err));

	free(p);
	if (rc < 0)
		return -1;
	s->rootfd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->rootfd < 0) {
		snprintf(s->err, sizeof(s->err), "cannot open '%s': %s", workdir, strerror(errno));
		return -1;
	}
	xg_snapshot_scan_init(&s->sc, &s->ix, s->rootfd);
	s->sc.deadline = s->deadline;
	xg_snapshot_scan_start(&s->sc, s->o->threads);
	return 0;
}

/* Stops and forgets a scan (the early one, when libgit2 disagrees). */
static void drop_scan(struct snap *s)
{
	__atomic_store_n(&s->sc.timed_out, 1, __ATOMIC_RELAXED);
	xg_snapshot_scan_finish(&s->sc);
	xg_snapshot_scan_release(&s->sc);
	xg_snapshot_index_release(&s->ix);
	if (s->rootfd >= 0)
		close(s->rootfd);
	s->rootfd = -1;
	s->prescanned = 0;
	s->err[0] = '\0';
}

static void prescan(struct snap *s, const char *dir)
{
	if (discover(dir, &s->pre_workdir, &s->pre_gitdir) < 0)
		return;
	s->prescanned = 1;
	if (start_scan(s, s->pre_workdir, s->pre_gitdir) < 0)
		drop_scan(s);
}

static int same_dir(const char *a, const char *b)
{
	char *x = realpath(a, NULL), *y = realpath(b, NULL);
	int same = x && y && !strcmp(x, y);

	free(x);
	free(y);
	return same;
}

/* Reads the index and the settings; a reason when that fails. */
static const char *prepare(struct snap *s, git_config *cfg)
{
	const char *common = git_repository_commondir(s->repo);
	char *p;

	if (s->prescanned && !(same_dir(s->pre_workdir, s->workdir) &&
			       same_dir(s->pre_gitdir, git_repository_path(s->repo))))
		drop_scan(s);
	if (!s->prescanned && start_scan(s, s->workdir, git_repository_path(s->repo)) < 0)
		return "unreadable";
	if (git_repository_odb(&s->odb, s->repo) < 0) {
		snprintf(s->err, sizeof(s->err), "%s", git_message());
		return "unreadable";
	}
	xg_snapshot_pack_init(&s->pk, s->odb);
	read_config(s, cfg);
	p = xg_asprintf("%sinfo/exclude", common);
	xg_snapshot_rules_load(&s->exclude, "", p);
	free(p);
	p = xg_asprintf("%sinfo/attributes", common);
	if (!access(p, F_OK))
		s->can_filter = 1;
	free(p);
	return NULL;
}

/* A conflicted path has several stages: the first one stands for all. */
static void drop_stages(struct snap *s)
{
	size_t i;

	for (i = 1; i < s->ix.nr; i++)
		if (s->ix.entries[i].pathlen == s->ix.entries[i - 1].pathlen &&
		    !memcmp(s->ix.entries[i].path, s->ix.entries[i - 1].path, s->ix.entries[i].pathlen))
			s->sc.state[i] = XG_SNAPSHOT_SCAN_DROP;
}

static const char *take(struct snap *s, jv *rec, git_config *cfg)
{
	unsigned char tree[20], commit[20];
	const char *reason;
	char hex[GIT_OID_HEXSZ + 1];
	struct fent *f;
	size_t nf, pos = 0;
	git_oid head, id;
	int has_head, rc;
	char *p;

	has_head = !git_reference_name_to_id(&head, s->repo, "HEAD");
	*rec = xg_json_set(*rec, "base", has_head ? jv_string(git_oid_tostr(hex, sizeof(hex), &head))
						 : jv_null());
	if ((reason = prepare(s, cfg)))
		return reason;
	if (xg_snapshot_scan_finish(&s->sc) < 0)
		return "timeout";
	xg_snapshot_scan_classify(&s->sc);
	drop_stages(s);
	s->oids = xg_malloc(20 * (s->ix.nr ? s->ix.nr : 1));
	s->modes = xg_malloc(sizeof(*s->modes) * (s->ix.nr ? s->ix.nr : 1));
	cache_build(s);
	walk_untracked(s);
	if (timed_out(s))
		return "timeout";
	rc = hash_tracked(s);
	if (!rc)
		rc = hash_untracked(s);
	if (rc)
		return rc == -1 ? "timeout" : "error";
	f = merge_entries(s, &nf);
	s->files = nf;
	rc = build_tree(s, f, nf, &pos, "", 0, tree);
	free(f);
	if (rc < 0 || make_commit(s, cfg, tree, has_head ? &head : NULL, commit) < 0)
		return "error";
	if (timed_out(s))
		return "timeout";
	/* The writing checks the deadline too, up to the moment the pack is
	 * put in place; what it gave up on it removes. */
	p = xg_asprintf("%sobjects", git_repository_commondir(s->repo));
	rc = xg_snapshot_pack_write(&s->pk, p, s->deadline, s->err, sizeof(s->err));
	free(p);
	if (rc == -2) {
		s->timed_out = 1;
		s->err[0] = '\0';
		return "timeout";
	}
	if (rc < 0)
		return "error";
	memcpy(id.id, commit, 20);
	*rec = xg_json_set(*rec, "commit", jv_string(git_oid_tostr(hex, sizeof(hex), &id)));
	return NULL;
}

int xg_snapshot_not_found(const char *dir, int rc, char *err, size_t errlen)
{
	char *workdir = NULL, *gitdir = NULL;
	const char *at = dir;
	struct stat st;
	int owned = rc == GIT_EOWNER;

	if (discover(dir, &workdir, &gitdir) < 0) {
		if (!owned)
			return 0;
	} else {
		at = workdir;
		owned |= (!stat(workdir, &st) && st.st_uid != geteuid()) ||
			 (!stat(gitdir, &st) && st.st_uid != geteuid());
	}
	if (owned)
		snprintf(err, errlen, "cannot open the repository '%s': it is owned by another "
			 "user and safe.directory does not list it", at);
	else
		snprintf(err, errlen, "cannot open the repository '%s': %s", at, git_message());
	free(workdir);
	free(gitdir);
	return owned ? 1 : -1;
}

jv xg_snapshot_take(const struct xg_snapshot_opts *o)
{
	struct snap s;
	jv rec = xg_rec_new("snapshot");
	git_config *cfg = NULL;
	const char *reason = NULL, *dir = o->dir ? o->dir : ".";
	struct stat st;
	size_t i;
	int rc, e;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.start = xg_clock_ms();
	s.deadline = s.start + o->timeout_ms;
	s.complete = 1;
	s.rootfd = -1;
	s.skipped = jv_array();
	/* The scan needs no libgit2: it starts first and runs while libgit2
	 * loads and opens the repository. */
	prescan(&s, dir);
	git_libgit2_init();
	e = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e) {
		/* Not "not a repository": there is no directory to look in. */
		snprintf(s.err, sizeof(s.err), "cannot open '%s': %s", dir, strerror(e));
		rec = xg_json_set(rec, "repo", jv_null());
		rec = xg_json_set(rec, "base", jv_null());
		reason = "unreadable";
	} else if ((rc = git_repository_open_ext(&s.repo, dir, 0, NULL)) < 0) {
		rec = xg_json_set(rec, "repo", jv_null());
		if ((rc == GIT_ENOTFOUND || rc == GIT_EOWNER) &&
		    !xg_snapshot_not_found(dir, rc, s.err, sizeof(s.err))) {
			reason = "not-a-repository";
		} else {
			if (!s.err[0])
				snprintf(s.err, sizeof(s.err), "%s", git_message());
			reason = "unreadable";
		}
		rec = xg_json_set(rec, "base", jv_null());
	} else if (git_repository_is_bare(s.repo)) {
		char *gd = xg_strndup(git_repository_path(s.repo), strlen(git_repository_path(s.repo)) - 1);

		rec = xg_json_set(rec, "repo", jv_string(gd));
		rec = xg_json_set(rec, "base", jv_null());
		free(gd);
		reason = "bare-repository";
	} else {
		s.workdir = git_repository_workdir(s.repo);
		rec = xg_json_set(rec, "repo",
				  xg_json_string_bytes(s.workdir, strlen(s.workdir) - 1));
		if (git_repository_config_snapshot(&cfg, s.repo) < 0)
			cfg = NULL;
		reason = take(&s, &rec, cfg);
	}
	if (reason && strcmp(reason, "timeout"))
		s.complete = 0;
	rec = finish(&s, rec, reason);
	if (s.sc.nthreads)
		drop_scan(&s);
	xg_snapshot_scan_release(&s.sc);
	free(s.pre_workdir);
	free(s.pre_gitdir);
	xg_snapshot_index_release(&s.ix);
	xg_snapshot_pack_release(&s.pk);
	xg_snapshot_rules_release(&s.exclude);
	xg_snapshot_rules_release(&s.excludes_file);
	for (i = 0; i < s.nu; i++)
		free(s.u[i].path);
	free(s.u);
	free(s.oids);
	free(s.modes);
	free(s.cache);
	jv_free(s.skipped);
	if (s.rootfd >= 0)
		close(s.rootfd);
	git_config_free(cfg);
	git_odb_free(s.odb);
	git_repository_free(s.repo);
	git_libgit2_shutdown();
	return rec;
}
