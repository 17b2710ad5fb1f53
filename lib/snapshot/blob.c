/*
 * Blobs: the contents of the files a snapshot reads, as git would store
 * them.  Only the tracked files whose stat data changed are read, and the
 * untracked files the walk admitted; a symlink's blob is its target, a
 * file's its bytes through the clean filters when attributes or the config
 * may ask for them: a filter driver's clean command (snapshot/driver.c),
 * then libgit2's autocrlf, text, eol and ident.  Each blob is hashed
 * into the snapshot's pack (snapshot/pack.c), which keeps it in memory
 * until the end.  A tracked file that differs from the index, or is gone,
 * marks its directories' cache trees as changed (snapshot/tree.c).
 */
#include "xg.h"
#include "snapshot/internal.h"
#include <dirent.h>

static int read_link(struct xg_snapshot_state *s, const char *path, size_t size,
		     struct xg_buf *b)
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
static int read_file(struct xg_snapshot_state *s, const char *path, size_t size,
		     struct xg_buf *b)
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
		if (b->len > (8u << 20) && xg_snapshot_timed_out(s)) {
			close(fd);
			errno = ETIMEDOUT;
			return -1;
		}
	}
	close(fd);
	return 0;
}

/* The clean filters as git add runs them: a filter driver's clean
 * command first, then core.autocrlf, text, eol and ident on its output.
 * XG_SNAPSHOT_DONE, or the driver's failure or time-out. */
static int clean_filters(struct xg_snapshot_state *s, const char *path, struct xg_buf *b)
{
	git_filter_list *fl = NULL;
	git_buf out = { 0 };
	int rc;

	/* A snapshot that started without libgit2 opens the repository now. */
	if (xg_snapshot_repo_open(s) < 0)
		return XG_SNAPSHOT_DONE;
	if ((rc = xg_snapshot_driver_clean(s, path, b)) != XG_SNAPSHOT_DONE)
		return rc;
	if (git_filter_list_load(&fl, s->repo, NULL, path, GIT_FILTER_TO_ODB,
				 GIT_FILTER_DEFAULT) < 0 || !fl)
		return XG_SNAPSHOT_DONE;
	if (!git_filter_list_apply_to_buffer(&out, fl, b->buf, b->len)) {
		xg_buf_reset(b);
		xg_buf_add(b, out.ptr, out.size);
	}
	git_buf_dispose(&out);
	git_filter_list_free(fl);
	return XG_SNAPSHOT_DONE;
}

/* Reads path's content as git would store it: a symlink's target, a file's
 * bytes through the clean filters when attributes or core.autocrlf may ask
 * for them, and its stat data, as read just before, into *stp unless NULL.
 * eol_only: the attributes convert only line endings (known.c), so bytes
 * without a CR stay as they are and need no filter; *cr says whether a
 * file's bytes held one (a symlink's never count: no attribute converts
 * it).  1 done, 0 gone or not a file any more, -1 unreadable (or the time
 * ran out, s->timed_out set), -2 its filter driver failed. */
static int read_blob(struct xg_snapshot_state *s, const char *path, int eol_only, char **data,
		     size_t *len, uint32_t *mode, struct stat *stp, unsigned char *cr)
{
	struct xg_buf b = XG_BUF_INIT(0);
	struct stat st;
	int rc;

	*cr = 0;
	if (fstatat(s->rootfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (stp)
		*stp = st;
	if (S_ISLNK(st.st_mode)) {
		*mode = 0120000;
		if (read_link(s, path, (size_t)st.st_size, &b) < 0)
			goto fail;
	} else if (S_ISREG(st.st_mode)) {
		*mode = (st.st_mode & 0100) ? 0100755 : 0100644;
		if (read_file(s, path, (size_t)st.st_size, &b) < 0)
			goto fail;
		*cr = b.len && memchr(b.buf, '\r', b.len);
		if (s->can_filter && !(eol_only && !*cr) &&
		    (rc = clean_filters(s, path, &b)) != XG_SNAPSHOT_DONE) {
			xg_buf_release(&b);
			return rc == XG_SNAPSHOT_TIMED_OUT ? -1 : -2;
		}
	} else {
		return 0;
	}
	*data = xg_buf_detach(&b, len);
	return 1;
fail:
	xg_buf_release(&b);
	return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

/* A submodule goes in at the commit its HEAD names, as git add -A
 * records it.  One not checked out or without a commit keeps the index's
 * gitlink, as do one marked to be kept and one outside a sparse checkout. */
static void gitlink_head(struct xg_snapshot_state *s, size_t i)
{
	const struct xg_snapshot_entry *e = &s->ix.entries[i];
	unsigned char oid[20];

	if ((e->xflags & XG_SNAPSHOT_SKIP_WORKTREE) || (e->flags & XG_SNAPSHOT_ASSUME_VALID) ||
	    (s->sparse_on && !xg_snapshot_rules_sparse(&s->sparse_rules, e->path, e->pathlen)))
		return;
	if (xg_snapshot_repo_head(s, e->path, oid) != 1 || !memcmp(oid, e->oid, 20))
		return;
	memcpy(s->oids + 20 * i, oid, 20);
	s->modes[i] = 0160000;
	s->sc.state[i] = XG_SNAPSHOT_SCAN_HASH;
	s->changed++;
	xg_snapshot_tree_invalidate(s, e->path, e->pathlen);
}

/* The mode of a file whose stat data is st, as read_blob gives it. */
static uint32_t mode_of(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return 0120000;
	return (st->st_mode & 0100) ? 0100755 : 0100644;
}

int xg_snapshot_blob_hash_tracked(struct xg_snapshot_state *s)
{
	struct xg_snapshot_tfile *t = s->t, *tend = s->t + s->nt;
	size_t i;

	for (i = 0; i < s->ix.nr; i++) {
		const struct xg_snapshot_entry *e = &s->ix.entries[i];
		unsigned char *st = &s->sc.state[i];
		struct xg_snapshot_tfile *tf = NULL;
		char *data;
		size_t len;
		uint32_t mode;
		unsigned char cr;
		int r;

		/* known.c's list of the files to hash, in index order. */
		while (t < tend && t->i < i)
			t++;
		if (t < tend && t->i == i)
			tf = t;

		if (*st == XG_SNAPSHOT_SCAN_GONE || *st == XG_SNAPSHOT_SCAN_SPECIAL) {
			if (*st == XG_SNAPSHOT_SCAN_SPECIAL)
				xg_snapshot_skip(s, e->path, e->pathlen, "special-file");
			s->deleted += *st == XG_SNAPSHOT_SCAN_GONE;
			xg_snapshot_tree_invalidate(s, e->path, e->pathlen);
			continue;
		}
		if (*st == XG_SNAPSHOT_SCAN_ERROR) {
			xg_snapshot_skip(s, e->path, e->pathlen, "unreadable");
			*st = XG_SNAPSHOT_SCAN_KEEP;
			continue;
		}
		if (*st == XG_SNAPSHOT_SCAN_KEEP && (e->mode & S_IFMT) == 0160000 && !e->stage) {
			gitlink_head(s, i);
			continue;
		}
		if (*st != XG_SNAPSHOT_SCAN_HASH)
			continue;
		if (tf && tf->known) {	/* the blob the last snapshot read */
			mode = mode_of(&tf->st);
			len = (size_t)tf->st.st_size;
			data = NULL;
			r = 1;
		} else if (xg_snapshot_timed_out(s)) {
			return XG_SNAPSHOT_TIMED_OUT;
		} else {
			r = read_blob(s, e->path, tf && tf->eol_only, &data, &len, &mode,
				      tf ? &tf->st : NULL, tf ? &tf->cr : &cr);
		}
		if (r < 0 && s->timed_out)
			return XG_SNAPSHOT_TIMED_OUT;
		if (r < 0) {
			xg_snapshot_skip(s, e->path, e->pathlen, r == -2 ? "filter-failed" : "unreadable");
			*st = e->stage ? XG_SNAPSHOT_SCAN_GONE : XG_SNAPSHOT_SCAN_KEEP;
			continue;
		}
		if (r == 0) {
			*st = XG_SNAPSHOT_SCAN_GONE;
			s->deleted++;
			xg_snapshot_tree_invalidate(s, e->path, e->pathlen);
			continue;
		}
		if (mode != 0120000 && !s->sc.filemode)
			mode = (e->mode & S_IFMT) == S_IFREG ? (e->mode & 0100 ? 0100755 : 0100644)
							     : 0100644;
		s->bytes += len;
		if (tf)
			tf->hashed = 1;
		if (data && xg_snapshot_pack_add(&s->pk, GIT_OBJECT_BLOB, data, len,
						 s->oids + 20 * i) < 0) {
			snprintf(s->err, sizeof(s->err), "cannot hash '%s': %s", e->path,
				 xg_snapshot_git_message());
			return XG_SNAPSHOT_FAILED;
		}
		s->modes[i] = mode;
		if (e->stage || mode != e->mode || memcmp(s->oids + 20 * i, e->oid, 20)) {
			s->changed++;
			xg_snapshot_tree_invalidate(s, e->path, e->pathlen);
		}
	}
	return XG_SNAPSHOT_DONE;
}

int xg_snapshot_blob_hash_untracked(struct xg_snapshot_state *s)
{
	size_t i;

	for (i = 0; i < s->nu; i++) {
		struct xg_snapshot_ufile *f = &s->u[i];
		char *data;
		size_t len;
		int r;

		xg_snapshot_tree_invalidate(s, f->path, f->len);
		if (f->type == DT_DIR)
			continue;
		if (f->known) {	/* its blob is the one the last snapshot read */
			s->bytes += f->size;
			continue;
		}
		if (xg_snapshot_timed_out(s))
			return XG_SNAPSHOT_TIMED_OUT;
		r = read_blob(s, f->path, f->eol_only, &data, &len, &f->mode, &f->st, &f->cr);
		if (r <= 0) {
			if (s->timed_out)
				return XG_SNAPSHOT_TIMED_OUT;
			if (r < 0)
				xg_snapshot_skip(s, f->path, f->len,
						 r == -2 ? "filter-failed" : "unreadable");
			f->type = 0;	/* left out */
			continue;
		}
		if (f->mode != 0120000 && !s->sc.filemode)
			f->mode = 0100644;
		f->size = len;
		if (xg_snapshot_pack_add(&s->pk, GIT_OBJECT_BLOB, data, len, f->oid) < 0) {
			snprintf(s->err, sizeof(s->err), "cannot hash '%s': %s", f->path,
				 xg_snapshot_git_message());
			return XG_SNAPSHOT_FAILED;
		}
		s->bytes += len;
	}
	return XG_SNAPSHOT_DONE;
}
