/*
 * The untracked files a snapshot knows from the last one.  The index
 * holds the stat data of tracked files, so an unchanged tracked file is
 * never read; nothing holds that of untracked ones, which every snapshot
 * would read and hash again.  So a snapshot that wrote its objects keeps,
 * in the git directory's xg-untracked, each untracked file's blob with
 * the stat data it had just before it was read, and the next one takes a
 * file whose stat data is the same as known instead of reading it.
 *
 * What makes that safe is the reference time: before it reads any
 * untracked file a snapshot touches xg-untracked and reads its time back,
 * which is the filesystem's own clock (its granularity, a file server's
 * time).  A known file is trusted only when its ctime, which no program
 * can set back, is before the reference time of the snapshot that read
 * it: any write after that read then gave it a later ctime, even one in
 * the same clock tick as the read.  Also: the blob must still be in the
 * repository (git may have pruned it), the file must be on the working
 * tree's filesystem, as must xg-untracked, and nothing is known when clean
 * filters may apply, as their result depends on more than the file.
 *
 * The file is one line per file, then a line with the SHA-1 of all before
 * it; one that does not check out is ignored, and is written again when
 * the snapshot is done.  A path holding a newline or a backslash is not
 * kept.  Losing the file costs only time: it is written without a sync.
 *
 *	xg-untracked 1 REF.NS WORKDIR
 *	OID MODE SIZE MTIME.NS CTIME.NS INO DEV UID GID PATH
 *	sha1 HEX
 */
#include "xg.h"
#include "snapshot/internal.h"
#include "sha1.h"
#include <dirent.h>

#define HEADER "xg-untracked 1 "

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
	unsigned mode, uid, gid;
	int n = -1;

	if (strlen(line) < 42 || line[40] != ' ' || xg_snapshot_oid_parse(line, f->oid) < 0)
		return -1;
	if (sscanf(line + 41, "%o %llu %lld.%ld %lld.%ld %llu %llu %u %u %n", &mode, &size, &ms,
		   &mns, &cs, &cns, &ino, &dev, &uid, &gid, &n) != 10 || n < 0 ||
	    !line[41 + n])
		return -1;
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
	qsort(k->files, k->nr, sizeof(*k->files), cmp_known);
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

void xg_snapshot_known_apply(struct xg_snapshot_state *s)
{
	struct xg_snapshot_known *k = &s->known;
	size_t i;

	if (s->can_filter || !s->nu || open_known(s) < 0)
		return;
	k->ok = 1;
	parse(s);
	for (i = 0; i < s->nu; i++) {
		struct xg_snapshot_ufile *u = &s->u[i];
		const struct xg_snapshot_known_file *f;

		if (u->type != DT_REG && u->type != DT_LNK)
			continue;
		if (!(f = lookup(k, u->path)) || !same_stat(f, &u->st) || !settled(k, f))
			continue;
		if (!xg_snapshot_has(s, f->oid))
			continue;
		memcpy(u->oid, f->oid, 20);
		u->known = 1;
		k->used++;
	}
}

void xg_snapshot_known_save(struct xg_snapshot_state *s)
{
	struct xg_snapshot_known *k = &s->known;
	struct xg_buf b = XG_BUF_INIT(0);
	char hex[41], *file;
	size_t i, n = 0;

	if (!k->ok || s->can_filter || strchr(s->workdir, '\n'))
		return;
	for (i = 0; i < s->nu; i++)
		if (s->u[i].type == DT_REG || s->u[i].type == DT_LNK)
			n++;
	/* Nothing new to say: each file came from what was known. */
	if (n == k->used && n == k->nr)
		return;
	xg_buf_addf(&b, HEADER "%lld.%09ld %s\n", (long long)k->ref.tv_sec, (long)k->ref.tv_nsec,
		    s->workdir);
	for (i = 0; i < s->nu; i++) {
		const struct xg_snapshot_ufile *u = &s->u[i];
		const struct stat *st = &u->st;

		if ((u->type != DT_REG && u->type != DT_LNK) || strpbrk(u->path, "\n\\"))
			continue;
		xg_snapshot_sha1_hex(u->oid, hex);
		xg_buf_addf(&b, "%s %o %llu %lld.%09ld %lld.%09ld %llu %llu %u %u %s\n", hex,
			    (unsigned)st->st_mode, (unsigned long long)st->st_size,
			    (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec,
			    (long long)st->st_ctim.tv_sec, (long)st->st_ctim.tv_nsec,
			    (unsigned long long)st->st_ino, (unsigned long long)st->st_dev,
			    (unsigned)st->st_uid, (unsigned)st->st_gid, u->path);
	}
	xg_snapshot_sha1_seal(&b);
	file = xg_path_join(s->gitdir, "xg-untracked");
	xg_write_cache(file, b.buf, b.len, 0644);
	free(file);
	xg_buf_release(&b);
}

void xg_snapshot_known_release(struct xg_snapshot_known *k)
{
	free(k->files);
	xg_buf_release(&k->text);
	memset(k, 0, sizeof(*k));
}
