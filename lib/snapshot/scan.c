/*
 * The scan of the working tree against the index (see snapshot/internal.h).
 * init makes one job per directory the index knows, kept sorted and in a
 * map by path; the workers take jobs in turn until the deadline, each
 * listing its directory once and walking the listing beside the index's
 * entries there, both in byte order: an entry is kept as it is, gone, or
 * lstat'ed for classify, which compares the stat data as git does once
 * the core.* settings are known; a name the index does not know is kept
 * for the untracked walk.  finish waits for the workers and settles the
 * directories that are gone or could not be read.
 */
#include "xg.h"
#include "snapshot/internal.h"
#include <dirent.h>

size_t xg_snapshot_scan_hash(const char *p, size_t len)
{
	size_t h = 14695981039346656037ULL;

	while (len--)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

struct xg_snapshot_scan_dir *xg_snapshot_scan_lookup(const struct xg_snapshot_scan *sc,
						     const char *path, size_t len)
{
	size_t s = xg_snapshot_scan_hash(path, len) & (sc->nmap - 1);

	for (; sc->map[s]; s = (s + 1) & (sc->nmap - 1))
		if (sc->map[s]->len == len && !memcmp(sc->map[s]->path, path, len))
			return sc->map[s];
	return NULL;
}

static void map_grow(struct xg_snapshot_scan *sc)
{
	size_t i, n = sc->nmap ? sc->nmap * 2 : 256;
	struct xg_snapshot_scan_dir **m = xg_calloc(n, sizeof(*m));

	for (i = 0; i < sc->ndirs; i++) {
		size_t s = xg_snapshot_scan_hash(sc->dirs[i]->path, sc->dirs[i]->len) & (n - 1);

		while (m[s])
			s = (s + 1) & (n - 1);
		m[s] = sc->dirs[i];
	}
	free(sc->map);
	sc->map = m;
	sc->nmap = n;
}


static struct xg_snapshot_scan_dir *get_dir(struct xg_snapshot_scan *sc, const char *path,
					    size_t len,
				   size_t *alloc)
{
	struct xg_snapshot_scan_dir *d = sc->nmap ? xg_snapshot_scan_lookup(sc, path, len) : NULL;
	const char *slash;
	size_t s;

	if (d)
		return d;
	d = xg_calloc(1, sizeof(*d));
	d->path = xg_strndup(path, len);
	d->len = len;
	d->excluded = -1;
	if (len) {
		slash = memrchr(path, '/', len);
		d->parent = get_dir(sc, path, slash ? (size_t)(slash - path) : 0, alloc);
	}
	XG_ALLOC_GROW(sc->dirs, sc->ndirs + 1, *alloc);
	sc->dirs[sc->ndirs++] = d;
	if (sc->ndirs * 2 > sc->nmap) {
		map_grow(sc);
	} else {
		s = xg_snapshot_scan_hash(path, len) & (sc->nmap - 1);
		while (sc->map[s])
			s = (s + 1) & (sc->nmap - 1);
		sc->map[s] = d;
	}
	return d;
}

static int cmp_dir(const void *a, const void *b)
{
	const struct xg_snapshot_scan_dir *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

void xg_snapshot_scan_init(struct xg_snapshot_scan *sc, const struct xg_snapshot_index *ix,
			   int rootfd)
{
	struct xg_snapshot_scan_dir *d = NULL;
	size_t i, alloc = 0;

	memset(sc, 0, sizeof(*sc));
	sc->ix = ix;
	sc->rootfd = rootfd;
	sc->filemode = sc->trustctime = sc->checkstat = 1;
	sc->state = xg_calloc(ix->nr ? ix->nr : 1, 1);
	sc->st = xg_malloc((ix->nr ? ix->nr : 1) * sizeof(*sc->st));
	get_dir(sc, "", 0, &alloc);
	for (i = 0; i < ix->nr; i++) {
		const struct xg_snapshot_entry *e = &ix->entries[i];
		const char *slash = memrchr(e->path, '/', e->pathlen);
		size_t dl = slash ? (size_t)(slash - e->path) : 0;

		if (!d || d->len != dl || memcmp(d->path, e->path, dl))
			d = get_dir(sc, e->path, dl, &alloc);
		XG_ALLOC_GROW(d->files, d->nfiles + 1, d->afiles);
		d->files[d->nfiles++] = i;
	}
	XG_QSORT(sc->dirs, sc->ndirs, cmp_dir);
}

void xg_snapshot_scan_release(struct xg_snapshot_scan *sc)
{
	size_t i, k;

	for (i = 0; i < sc->ndirs; i++) {
		struct xg_snapshot_scan_dir *d = sc->dirs[i];

		for (k = 0; k < d->nnames; k++)
			free(d->names[k].name);
		free(d->names);
		free(d->files);
		free(d->path);
		xg_snapshot_rules_release(&d->rules);
		free(d);
	}
	free(sc->dirs);
	free(sc->map);
	free(sc->state);
	free(sc->st);
	memset(sc, 0, sizeof(*sc));
}

int xg_snapshot_scan_name_cmp(const void *a, const void *b)
{
	const struct xg_snapshot_scan_name *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static const unsigned char empty_blob[20] = {
	0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6, 0x43, 0x4b, 0x8b,
	0x29, 0xae, 0x77, 0x5a, 0xd8, 0xc2, 0xe4, 0x8c, 0x53, 0x91
};

/* git's ie_match_stat without the content check: whether the stat data
 * says the file changed.  Times compare to the second, as git built without
 * USE_NSEC does. */
static int stat_changed(const struct xg_snapshot_scan *sc, const struct xg_snapshot_entry *e,
			const struct xg_snapshot_scan_stat *st)
{
	switch (e->mode & S_IFMT) {
	case S_IFREG:
		if (!S_ISREG(st->mode))
			return 1;
		if (sc->filemode && ((e->mode ^ st->mode) & 0100))
			return 1;
		break;
	case S_IFLNK:
		if (!S_ISLNK(st->mode))
			return 1;
		break;
	default:
		return 1;
	}
	if (e->mtime_s != st->mtime_s)
		return 1;
	if (sc->checkstat && sc->trustctime && e->ctime_s != st->ctime_s)
		return 1;
	if (sc->checkstat && (e->uid != st->uid || e->gid != st->gid || e->ino != st->ino))
		return 1;
	return e->size != st->size;
}

/* What the listing and one lstat tell of an entry; XG_SNAPSHOT_SCAN_STAT
 * leaves the comparison with the index to xg_snapshot_scan_classify. */
static unsigned char check_entry(struct xg_snapshot_scan *sc, size_t i, int fd,
				 const char *name, unsigned char type)
{
	const struct xg_snapshot_entry *e = &sc->ix->entries[i];
	struct xg_snapshot_scan_stat *out = &sc->st[i];
	struct stat st;

	if ((e->mode & S_IFMT) == 0160000)
		return type == DT_DIR || type == DT_UNKNOWN ? XG_SNAPSHOT_SCAN_KEEP : XG_SNAPSHOT_SCAN_HASH;
	if (e->stage || (e->xflags & XG_SNAPSHOT_INTENT_TO_ADD))
		return XG_SNAPSHOT_SCAN_HASH;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return XG_SNAPSHOT_SCAN_GONE;
	if (S_ISDIR(st.st_mode))
		return XG_SNAPSHOT_SCAN_GONE;
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return XG_SNAPSHOT_SCAN_SPECIAL;
	out->mode = (uint32_t)st.st_mode;
	out->mtime_s = (uint32_t)st.st_mtim.tv_sec;
	out->ctime_s = (uint32_t)st.st_ctim.tv_sec;
	out->ino = (uint32_t)st.st_ino;
	out->uid = (uint32_t)st.st_uid;
	out->gid = (uint32_t)st.st_gid;
	out->size = (uint32_t)st.st_size;
	return XG_SNAPSHOT_SCAN_STAT;
}

void xg_snapshot_scan_classify(struct xg_snapshot_scan *sc)
{
	const struct timespec *ts = &sc->ix->mtime;
	size_t i;

	for (i = 0; i < sc->ix->nr; i++) {
		const struct xg_snapshot_entry *e = &sc->ix->entries[i];

		if (sc->state[i] != XG_SNAPSHOT_SCAN_STAT)
			continue;
		if (stat_changed(sc, e, &sc->st[i]))
			sc->state[i] = XG_SNAPSHOT_SCAN_HASH;
		/* Smudged by git as racily clean when the index was written. */
		else if (!e->size && memcmp(e->oid, empty_blob, 20))
			sc->state[i] = XG_SNAPSHOT_SCAN_HASH;
		/* Racy: modified in the second the index was written. */
		else if (ts->tv_sec && (uint32_t)ts->tv_sec <= e->mtime_s)
			sc->state[i] = XG_SNAPSHOT_SCAN_HASH;
		else
			sc->state[i] = XG_SNAPSHOT_SCAN_SAME;
	}
}

static void add_name(struct xg_snapshot_scan_dir *d, char *name, unsigned char type)
{
	XG_ALLOC_GROW(d->names, d->nnames + 1, d->anames);
	d->names[d->nnames].name = name;
	d->names[d->nnames++].type = type;
}

static unsigned char type_at(int fd, const char *name)
{
	struct stat st;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	if (S_ISDIR(st.st_mode))
		return DT_DIR;
	if (S_ISREG(st.st_mode))
		return DT_REG;
	if (S_ISLNK(st.st_mode))
		return DT_LNK;
	return DT_FIFO;
}

/* Lists directory d, sorted, the names in one buffer (names, released by
 * the caller); NULL (with d->gone or d->err) when it cannot be opened as a
 * directory. */
static DIR *list_dir(struct xg_snapshot_scan *sc, struct xg_snapshot_scan_dir *d,
		     struct xg_snapshot_scan_name **out, size_t *nout, struct xg_buf *names)
{
	struct xg_snapshot_scan_name *ls = NULL;
	size_t nls = 0, als = 0, i;
	struct dirent *de;
	DIR *dp;
	int fd;

	fd = d->len ? openat(sc->rootfd, d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		    : openat(sc->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(dp = fdopendir(fd))) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
			d->gone = 1;
		else
			d->err = errno;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((de = readdir(dp))) {
		const char *n = de->d_name;

		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
			continue;
		XG_ALLOC_GROW(ls, nls + 1, als);
		/* The offset for now: the buffer moves as it grows. */
		ls[nls].name = (char *)(uintptr_t)names->len;
		ls[nls++].type = de->d_type;
		xg_buf_add(names, n, strlen(n) + 1);
	}
	for (i = 0; i < nls; i++)
		ls[i].name = names->buf + (uintptr_t)ls[i].name;
	XG_QSORT(ls, nls, xg_snapshot_scan_name_cmp);
	*out = ls;
	*nout = nls;
	return dp;
}

/* A name in d that the index does not know as a file: a tracked
 * directory, or a candidate for the untracked walk. */
static void unknown_name(struct xg_snapshot_scan *sc, struct xg_snapshot_scan_dir *d, int fd,
			 struct xg_snapshot_scan_name *n, struct xg_buf *sub)
{
	struct xg_snapshot_scan_dir *child;
	unsigned char t = n->type;

	if (!strcmp(n->name, ".git"))	/* never content */
		return;
	if (!strcmp(n->name, ".gitignore"))
		d->has_gitignore = 1;
	if (!strcmp(n->name, ".gitattributes"))
		d->has_gitattributes = 1;
	xg_buf_reset(sub);
	if (d->len) {
		xg_buf_add(sub, d->path, d->len);
		xg_buf_addch(sub, '/');
	}
	xg_buf_addstr(sub, n->name);
	child = xg_snapshot_scan_lookup(sc, sub->buf, sub->len);
	if (t == DT_UNKNOWN)
		t = type_at(fd, n->name);
	if (child) {
		child->seen = t;
		if (t == DT_DIR)
			return;
	}
	add_name(d, xg_strdup(n->name), t);
}

static int keep_as_is(const struct xg_snapshot_entry *e)
{
	return (e->xflags & XG_SNAPSHOT_SKIP_WORKTREE) || (e->flags & XG_SNAPSHOT_ASSUME_VALID);
}

static void scan_dir(struct xg_snapshot_scan *sc, struct xg_snapshot_scan_dir *d)
{
	struct xg_snapshot_scan_name *ls = NULL;
	struct xg_buf sub = XG_BUF_INIT(0), names = XG_BUF_INIT(0);
	size_t nls = 0, i, k, skip = d->len ? d->len + 1 : 0;
	DIR *dp = list_dir(sc, d, &ls, &nls, &names);
	int fd;

	if (!dp) {
		xg_buf_release(&names);
		return;
	}
	fd = dirfd(dp);
	/* The index's files here and the listing are both in byte order. */
	for (i = 0, k = 0; i < d->nfiles || k < nls;) {
		const struct xg_snapshot_entry *e = i < d->nfiles ? &sc->ix->entries[d->files[i]] : NULL;
		const char *base = e ? e->path + skip : NULL;
		int c = !e ? 1 : k == nls ? -1 : strcmp(base, ls[k].name);
		unsigned char st;

		if (c > 0) {
			unknown_name(sc, d, fd, &ls[k++], &sub);
			continue;
		}
		if (base[0] == '.' && !strcmp(base, ".gitignore"))
			d->has_gitignore = 1;
		if (base[0] == '.' && !strcmp(base, ".gitattributes"))
			d->has_gitattributes = 1;
		if (c < 0) {	/* in the index, not in the directory */
			sc->state[d->files[i++]] = keep_as_is(e) ? XG_SNAPSHOT_SCAN_KEEP : XG_SNAPSHOT_SCAN_GONE;
			continue;
		}
		st = keep_as_is(e) ? XG_SNAPSHOT_SCAN_KEEP : check_entry(sc, d->files[i], fd, base, ls[k].type);
		sc->state[d->files[i++]] = st;
		/* A file that became a directory: its contents are untracked. */
		if (st == XG_SNAPSHOT_SCAN_GONE && type_at(fd, base) == DT_DIR)
			add_name(d, xg_strdup(ls[k].name), DT_DIR);
		/* Conflict stages repeat the path: the name serves them all. */
		if (i < d->nfiles && sc->ix->entries[d->files[i]].stage &&
		    !strcmp(sc->ix->entries[d->files[i]].path, e->path))
			continue;
		k++;
	}
	free(ls);
	xg_buf_release(&names);
	xg_buf_release(&sub);
	closedir(dp);
}

static void *worker(void *arg)
{
	struct xg_snapshot_scan *sc = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&sc->next, 1, __ATOMIC_RELAXED)) < sc->ndirs) {
		if (__atomic_load_n(&sc->timed_out, __ATOMIC_RELAXED))
			break;
		if (xg_clock_ms() > sc->deadline) {
			__atomic_store_n(&sc->timed_out, 1, __ATOMIC_RELAXED);
			break;
		}
		scan_dir(sc, sc->dirs[i]);
	}
	return NULL;
}

/* A directory whose parent no longer lists it as a directory is gone, and
 * so is everything the index has below it. */
static void settle_gone(struct xg_snapshot_scan *sc)
{
	size_t i, k;

	for (i = 1; i < sc->ndirs; i++) {
		struct xg_snapshot_scan_dir *d = sc->dirs[i];

		if (d->parent->gone || d->parent->err || d->seen != DT_DIR)
			d->gone = 1;
		if (d->parent->err && !d->err)
			d->err = d->parent->err;
	}
	for (i = 0; i < sc->ndirs; i++) {
		struct xg_snapshot_scan_dir *d = sc->dirs[i];

		if (!d->gone && !d->err)
			continue;
		for (k = 0; k < d->nfiles; k++) {
			const struct xg_snapshot_entry *e = &sc->ix->entries[d->files[k]];

			if (keep_as_is(e))
				sc->state[d->files[k]] = XG_SNAPSHOT_SCAN_KEEP;
			else
				sc->state[d->files[k]] = d->err ? XG_SNAPSHOT_SCAN_ERROR : XG_SNAPSHOT_SCAN_GONE;
		}
		for (k = 0; k < d->nnames; k++)
			free(d->names[k].name);
		d->nnames = 0;
	}
}

void xg_snapshot_scan_start(struct xg_snapshot_scan *sc, int threads)
{
	if (threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		threads = n < 1 ? 1 : n > 4 ? 4 : (int)n;
	}
	if (threads > 8)
		threads = 8;
	/* Small trees are not worth a thread. */
	if (sc->ix->nr < 2000 || sc->ndirs < 4)
		threads = 1;
	for (sc->nthreads = 0; sc->nthreads < threads; sc->nthreads++)
		if (pthread_create(&sc->tid[sc->nthreads], NULL, worker, sc))
			break;
}

int xg_snapshot_scan_finish(struct xg_snapshot_scan *sc)
{
	int i;

	/* Whatever no thread took (or all of it, when none started). */
	worker(sc);
	for (i = 0; i < sc->nthreads; i++)
		pthread_join(sc->tid[i], NULL);
	sc->nthreads = 0;
	if (sc->timed_out)
		return -1;
	sc->dirs[0]->seen = DT_DIR;
	settle_gone(sc);
	return 0;
}
