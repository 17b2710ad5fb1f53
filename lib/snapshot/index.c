/*
 * The reader of git's index file (see snapshot/internal.h): the header,
 * the entries of versions 2 and 3, and of version 4 with its paths
 * compressed against the one before, then the extensions.  Of those only
 * TREE, the cache tree, is read; one we cannot parse is dropped, as it is
 * only a cache.  A split index (link) or another extension git requires
 * (a lowercase name) is refused, since the entries alone would be wrong.
 */
#include "xg.h"
#include "snapshot/internal.h"

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int bad(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return -1;
}

/* Version 4 compresses each path against the one before: a varint of bytes
 * to drop from its end, then the new suffix up to a NUL. */
static const unsigned char *v4_path(struct xg_snapshot_index *ix, const unsigned char *p,
				    const unsigned char *end, const char *prev,
				    size_t prevlen, struct xg_snapshot_entry *e)
{
	const unsigned char *nul;
	uint64_t drop;
	unsigned char c;
	size_t keep, sfx;
	char *path;

	if (p >= end)
		return NULL;
	c = *p++;
	drop = c & 0x7f;
	while (c & 0x80) {
		if (p >= end || drop > (1u << 24))
			return NULL;
		c = *p++;
		drop = ((drop + 1) << 7) | (c & 0x7f);
	}
	if (drop > prevlen)
		return NULL;
	nul = memchr(p, 0, (size_t)(end - p));
	if (!nul)
		return NULL;
	keep = prevlen - (size_t)drop;
	sfx = (size_t)(nul - p);
	path = xg_malloc(keep + sfx + 1);
	memcpy(path, prev, keep);
	memcpy(path + keep, p, sfx);
	path[keep + sfx] = '\0';
	XG_ALLOC_GROW(ix->owned, ix->nowned + 1, ix->owned_alloc);
	ix->owned[ix->nowned++] = path;
	e->path = path;
	e->pathlen = keep + sfx;
	return nul + 1;
}

static int parse_entries(struct xg_snapshot_index *ix, const unsigned char **pp,
			 const unsigned char *end, char *err, size_t errlen)
{
	const unsigned char *p = *pp;
	const char *prev = "";
	size_t i, prevlen = 0;

	for (i = 0; i < ix->nr; i++) {
		struct xg_snapshot_entry *e = &ix->entries[i];
		const unsigned char *start = p, *nul;
		size_t fixed = 62;

		if ((size_t)(end - p) < fixed)
			return bad(err, errlen, "truncated entry");
		e->ctime_s = be32(p);
		e->ctime_ns = be32(p + 4);
		e->mtime_s = be32(p + 8);
		e->mtime_ns = be32(p + 12);
		e->dev = be32(p + 16);
		e->ino = be32(p + 20);
		e->mode = be32(p + 24);
		e->uid = be32(p + 28);
		e->gid = be32(p + 32);
		e->size = be32(p + 36);
		memcpy(e->oid, p + 40, 20);
		e->flags = (uint16_t)(p[60] << 8 | p[61]);
		e->stage = (e->flags >> 12) & 3;
		e->xflags = 0;
		p += 62;
		if (e->flags & 0x4000) {
			if (ix->version < 3 || end - p < 2)
				return bad(err, errlen, "bad extended flags");
			e->xflags = (uint16_t)(p[0] << 8 | p[1]);
			p += 2;
			fixed += 2;
		}
		if (ix->version == 4) {
			p = v4_path(ix, p, end, prev, prevlen, e);
			if (!p)
				return bad(err, errlen, "bad path");
		} else {
			nul = memchr(p, 0, (size_t)(end - p));
			if (!nul)
				return bad(err, errlen, "bad path");
			e->path = (const char *)p;
			e->pathlen = (size_t)(nul - p);
			/* Entries are padded with 1 to 8 NULs to a multiple of 8. */
			p = start + ((fixed + e->pathlen + 8) & ~(size_t)7);
			if (p > end)
				return bad(err, errlen, "truncated entry");
		}
		/* Only a split index has entries without a path. */
		if (!e->pathlen)
			return bad(err, errlen, "a split index is not supported");
		prev = e->path;
		prevlen = e->pathlen;
	}
	*pp = p;
	return 0;
}

/* TREE: for each directory, in pre-order, "name NUL count SP subtrees LF"
 * then the tree's id when count is not -1. */
static int parse_tree(struct xg_snapshot_index *ix, const unsigned char **pp,
		      const unsigned char *end, const char *parent, size_t *alloc)
{
	const unsigned char *p = *pp, *nul;
	struct xg_snapshot_cache_tree *t;
	long count, subtrees, i;
	char *ep, num[64];
	size_t n;
	char *path;

	nul = memchr(p, 0, (size_t)(end - p));
	if (!nul)
		return -1;
	if (!parent)
		path = xg_strdup("");
	else if (!*parent)
		path = xg_strndup((const char *)p, (size_t)(nul - p));
	else
		path = xg_asprintf("%s/%.*s", parent, (int)(nul - p), (const char *)p);
	p = nul + 1;
	n = (size_t)(end - p) < sizeof(num) - 1 ? (size_t)(end - p) : sizeof(num) - 1;
	memcpy(num, p, n);
	num[n] = '\0';
	count = strtol(num, &ep, 10);
	if (*ep != ' ')
		goto fail;
	subtrees = strtol(ep + 1, &ep, 10);
	if (*ep != '\n' || subtrees < 0)
		goto fail;
	p += (size_t)(ep + 1 - num);
	XG_ALLOC_GROW(ix->trees, ix->ntrees + 1, *alloc);
	t = &ix->trees[ix->ntrees++];
	t->path = path;
	t->entry_count = count;
	if (count >= 0) {
		if (end - p < 20)
			return -1;
		memcpy(t->oid, p, 20);
		p += 20;
	}
	for (i = 0; i < subtrees; i++) {
		*pp = p;
		if (parse_tree(ix, pp, end, path, alloc) < 0)
			return -1;
		p = *pp;
	}
	*pp = p;
	return 0;
fail:
	free(path);
	return -1;
}

static int parse_extensions(struct xg_snapshot_index *ix, const unsigned char *p,
			    const unsigned char *end, char *err, size_t errlen)
{
	size_t alloc = 0;

	while (end - p >= 8) {
		uint32_t size = be32(p + 4);
		const unsigned char *data = p + 8;

		if ((size_t)(end - data) < size)
			return bad(err, errlen, "truncated extension");
		if (!memcmp(p, "TREE", 4)) {
			const unsigned char *q = data;

			if (size && parse_tree(ix, &q, data + size, NULL, &alloc) < 0) {
				/* A cache we cannot read is only a cache. */
				while (ix->ntrees)
					free(ix->trees[--ix->ntrees].path);
			}
		} else if (!memcmp(p, "link", 4)) {
			return bad(err, errlen, "a split index is not supported");
		} else if (p[0] < 'A' || p[0] > 'Z') {
			snprintf(err, errlen, "unsupported index extension '%.4s'",
				 (const char *)p);
			return -1;
		}
		p = data + size;
	}
	return 0;
}

static int read_index(struct xg_snapshot_index *ix, const char *path,
		      char *err, size_t errlen)
{
	struct xg_buf b = XG_BUF_INIT(0);
	const unsigned char *p, *end;
	struct stat st;
	int fd;

	memset(ix, 0, sizeof(*ix));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	/* The time comes from the descriptor the bytes are read from, so the
	 * two belong together even if git replaces the file meanwhile. */
	if (fstat(fd, &st) < 0 || xg_buf_grow(&b, (size_t)st.st_size + 1) < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	ix->mtime = st.st_mtim;
	for (;;) {
		ssize_t n;

		if (xg_buf_grow(&b, 65536) < 0)
			break;
		n = read(fd, b.buf + b.len, b.alloc - b.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
			close(fd);
			xg_buf_release(&b);
			return -1;
		}
		if (!n)
			break;
		b.len += (size_t)n;
		b.buf[b.len] = '\0';
	}
	close(fd);
	ix->data = xg_buf_detach(&b, &ix->len);
	p = (const unsigned char *)ix->data;
	if (ix->len < 32 || memcmp(p, "DIRC", 4))
		return bad(err, errlen, "not an index file");
	ix->version = (int)be32(p + 4);
	if (ix->version < 2 || ix->version > 4)
		return bad(err, errlen, "unsupported index version");
	ix->nr = be32(p + 8);
	if (ix->nr > ix->len / 8)
		return bad(err, errlen, "bad entry count");
	ix->entries = xg_calloc(ix->nr ? ix->nr : 1, sizeof(*ix->entries));
	p += 12;
	end = (const unsigned char *)ix->data + ix->len - 20;
	if (parse_entries(ix, &p, end, err, errlen) < 0)
		return -1;
	return parse_extensions(ix, p, end, err, errlen);
}

void xg_snapshot_index_release(struct xg_snapshot_index *ix)
{
	size_t i;

	for (i = 0; i < ix->nowned; i++)
		free(ix->owned[i]);
	for (i = 0; i < ix->ntrees; i++)
		free(ix->trees[i].path);
	free(ix->owned);
	free(ix->trees);
	free(ix->entries);
	free(ix->data);
	memset(ix, 0, sizeof(*ix));
}

int xg_snapshot_index_read(struct xg_snapshot_index *ix, const char *path,
			   char *err, size_t errlen)
{
	int rc = read_index(ix, path, err, errlen);

	/* A parse error says what is wrong; name the file it is in. */
	if (rc < 0 && strncmp(err, "cannot ", 7)) {
		char *what = xg_strdup(err);

		snprintf(err, errlen, "cannot read the index '%s': %s", path, what);
		free(what);
	}
	return rc;
}
