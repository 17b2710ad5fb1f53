/*
 * The untracked walk: after the scan (snapshot/scan.c) has listed each
 * directory the index knows and kept the names the index does not, this
 * walks those names, and the directories below them that the index knows
 * nothing of, on the calling thread.  The ignore rules decide what is
 * considered: a directory's .gitignore (read when first needed) and those
 * above it, then .git/info/exclude, then the global excludes file.  What
 * passes is admitted in byte order until a limit (files, bytes per file,
 * bytes in all) is reached; what a limit leaves out is skipped, with the
 * limit as its reason.  A directory with a .git of its own is a nested
 * repository: it is admitted as a gitlink to its HEAD.  In a sparse
 * checkout, what lies outside its patterns is not admitted, as git add -A
 * adds none of it.  The walk also
 * notes any .gitattributes it meets, as attributes may ask for the clean
 * filters that blob.c then runs.
 */
#include "xg.h"
#include "snapshot/internal.h"
#include <dirent.h>

/* The rules of d's .gitignore, read the first time they are asked for. */
static const struct xg_snapshot_rules *dir_rules(struct xg_snapshot_state *s,
						 struct xg_snapshot_scan_dir *d)
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
static int ignored(struct xg_snapshot_state *s, struct xg_snapshot_scan_dir *d, const char *path,
		   size_t len, int is_dir)
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

static int dir_excluded(struct xg_snapshot_state *s, struct xg_snapshot_scan_dir *d)
{
	if (d->excluded < 0)
		d->excluded = !d->parent ? 0 :
			dir_excluded(s, d->parent) || ignored(s, d->parent, d->path, d->len, 1);
	return d->excluded;
}

static int has_dotgit(struct xg_snapshot_state *s, const char *path)
{
	struct stat st;
	char *p = xg_asprintf("%s/.git", path);
	int r = fstatat(s->rootfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0;

	free(p);
	return r;
}

/* Admits one untracked file, or a nested repository (type DT_DIR), unless
 * a limit leaves it out. */
static void add_untracked(struct xg_snapshot_state *s, const char *path, size_t len,
			  unsigned char type)
{
	struct xg_snapshot_ufile *f;
	struct stat st;
	unsigned char oid[20];
	uint64_t size = 0;

	/* git add -A adds nothing outside a sparse checkout, and says so only
	 * as advice: it is left out as an ignored file is. */
	if (s->sparse_on && !xg_snapshot_rules_sparse(&s->sparse_rules, path, len))
		return;
	/* Past the count nothing else needs looking at. */
	if (s->ucount >= s->o->max_files) {
		xg_snapshot_skip(s, path, len, "max-files");
		return;
	}
	if (type == DT_DIR) {	/* a nested repository: a gitlink to its HEAD */
		int r = xg_snapshot_repo_head(s, path, oid);

		if (r == 0)
			return;
		if (r < 0) {
			xg_snapshot_skip(s, path, len, "repository-without-commit");
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
		xg_snapshot_skip(s, path, len, "max-file-size");
		return;
	}
	if (s->utotal + size > s->o->max_total_size) {
		xg_snapshot_skip(s, path, len, "max-total-size");
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
		/* With core.fileMode false git trusts no executable bit: a new
		 * file goes in as 100644. */
		f->mode = S_ISLNK(st.st_mode) ? 0120000 :
			  s->sc.filemode && (st.st_mode & 0100) ? 0100755 : 0100644;
		f->st = st;
	}
}

static void walk_untracked_dir(struct xg_snapshot_state *s, struct xg_snapshot_scan_dir *d);

/* One name the index does not know, found in directory d. */
static void consider(struct xg_snapshot_state *s, struct xg_snapshot_scan_dir *d,
		     const char *name, unsigned char type)
{
	struct xg_buf p = XG_BUF_INIT(0);

	if (xg_snapshot_timed_out(s))
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
				xg_snapshot_skip(s, p.buf, p.len, "max-files");
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

static void walk_untracked_dir(struct xg_snapshot_state *s, struct xg_snapshot_scan_dir *d)
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
		xg_snapshot_skip(s, d->path, d->len, "unreadable");
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
	XG_QSORT(ls, nls, xg_snapshot_scan_name_cmp);
	for (i = 0; i < nls; i++) {
		consider(s, d, ls[i].name, ls[i].type);
		free(ls[i].name);
	}
	free(ls);
}

void xg_snapshot_untracked_walk(struct xg_snapshot_state *s)
{
	size_t i, k;

	for (i = 0; i < s->sc.ndirs && !xg_snapshot_timed_out(s); i++) {
		struct xg_snapshot_scan_dir *d = s->sc.dirs[i];

		if (d->has_gitattributes)
			s->can_filter = 1;
		if (d->gone || d->err || !d->nnames || dir_excluded(s, d))
			continue;
		for (k = 0; k < d->nnames; k++)
			consider(s, d, d->names[k].name, d->names[k].type);
	}
}
