/*
 * Trees: the snapshot's entries, the index's as the working tree has them
 * merged with the untracked files in path order, are written as git trees,
 * one per directory, bottom up, into the snapshot's pack.  A directory
 * whose cache tree (the index's TREE extension) is still valid, none of
 * its paths having changed and its entry count matching, keeps that tree
 * and is not written again: a snapshot of a large, mostly clean tree
 * writes only the trees on the paths to what changed.
 */
#include "xg.h"
#include "snapshot/internal.h"

struct fent {			/* an entry of the snapshot's tree */
	const char *path;
	size_t len;
	uint32_t mode;
	const unsigned char *oid;
};

static size_t cache_slot(struct xg_snapshot_state *s, const char *path, size_t len)
{
	return xg_snapshot_scan_hash(path, len) & (s->ncache - 1);
}

static struct xg_snapshot_cache_tree *cache_get(struct xg_snapshot_state *s, const char *path,
						size_t len)
{
	size_t k;

	if (!s->ncache)
		return NULL;
	for (k = cache_slot(s, path, len); s->cache[k]; k = (k + 1) & (s->ncache - 1))
		if (strlen(s->cache[k]->path) == len && !memcmp(s->cache[k]->path, path, len))
			return s->cache[k];
	return NULL;
}

void xg_snapshot_tree_cache_build(struct xg_snapshot_state *s)
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
void xg_snapshot_tree_invalidate(struct xg_snapshot_state *s, const char *path, size_t len)
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
	const struct xg_snapshot_ufile *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* The index's entries as the working tree has them, merged with the
 * untracked files, in index order. */
static struct fent *merge_entries(struct xg_snapshot_state *s, size_t *nr)
{
	struct fent *f = xg_malloc((s->ix.nr + s->nu + 1) * sizeof(*f));
	size_t i = 0, k = 0, n = 0;

	XG_QSORT(s->u, s->nu, cmp_ufile);
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

/* The mode of a tree entry as the tree spells it, with its space. */
static const char *tree_mode(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return mode & 0100 ? "100755 " : "100644 ";
	case S_IFLNK:
		return "120000 ";
	case 0160000:
		return "160000 ";
	default:
		return "40000 ";
	}
}

/* Whether entry f lies inside directory dir (dirlen bytes; "" for the top). */
static int in_dir(const struct fent *f, const char *dir, size_t dirlen)
{
	return !dirlen || (f->len > dirlen && f->path[dirlen] == '/' &&
			   !memcmp(f->path, dir, dirlen));
}

/* 1 with oid and *pos past dir's entries when the cache tree of dir is
 * still valid: no change below it and as many entries as it counts. */
static int reuse_cached(struct xg_snapshot_state *s, const struct fent *f, size_t nr, size_t *pos,
			const char *dir, size_t dirlen, unsigned char oid[20])
{
	struct xg_snapshot_cache_tree *t = cache_get(s, dir, dirlen);
	size_t end = *pos;

	if (!t || t->entry_count < 0)
		return 0;
	while (end < nr && in_dir(&f[end], dir, dirlen))
		end++;
	if ((long)(end - *pos) != t->entry_count)
		return 0;
	memcpy(oid, t->oid, 20);
	*pos = end;
	return 1;
}

/* Writes the tree of directory dir (dirlen bytes; "" for the top) from the
 * entries at *pos on. */
static int build_tree(struct xg_snapshot_state *s, const struct fent *f, size_t nr, size_t *pos,
		      const char *dir, size_t dirlen, unsigned char oid[20])
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t i = *pos, skip_len = dirlen ? dirlen + 1 : 0, len;
	const char *last = NULL;
	size_t lastlen = 0;
	char *data;

	if (reuse_cached(s, f, nr, pos, dir, dirlen, oid))
		return 0;
	while (i < nr && in_dir(&f[i], dir, dirlen)) {
		const char *name = f[i].path + skip_len;
		const char *slash = memchr(name, '/', f[i].len - skip_len);
		size_t namelen = slash ? (size_t)(slash - name) : f[i].len - skip_len;
		unsigned char sub[20];
		const unsigned char *id;
		const char *mode;

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
			mode = "40000 ";
		} else {
			id = f[i].oid;
			mode = tree_mode(f[i].mode);
			i++;
		}
		xg_buf_addstr(&b, mode);
		xg_buf_add(&b, name, namelen);
		xg_buf_addch(&b, '\0');
		xg_buf_add(&b, id, 20);
		last = name;
		lastlen = namelen;
	}
	*pos = i;
	data = xg_buf_detach(&b, &len);
	if (xg_snapshot_pack_add(&s->pk, GIT_OBJECT_TREE, data, len, oid) < 0) {
		snprintf(s->err, sizeof(s->err), "cannot hash a tree: %s",
			 xg_snapshot_git_message());
		return -1;
	}
	return 0;
}

int xg_snapshot_tree_write(struct xg_snapshot_state *s, unsigned char tree[20])
{
	size_t nf, pos = 0;
	struct fent *f = merge_entries(s, &nf);
	int rc;

	s->files = nf;
	rc = build_tree(s, f, nf, &pos, "", 0, tree);
	free(f);
	return rc;
}
