/*
 * xg_snapshot_replay: a clone that borrows the repository's objects
 * through objects/info/alternates (as git clone --shared does), its
 * working tree at the snapshot, HEAD and index at the base, so that git
 * status in it shows the snapshot's uncommitted work as uncommitted.
 * Ignored files that .worktreeinclude names are copied in.
 */
#include "xg.h"
#include "snapshot/snapshot.h"
#include "snapshot/internal.h"
#include <dirent.h>
#include <ftw.h>
#include <git2.h>

struct replay {
	git_repository *src, *dst;
	const char *srcwork;		/* NULL for a bare source */
	char *target;
	int created;			/* target did not exist */
	int status;			/* the exit status of a failure, once known */
	struct xg_snapshot_index ix;	/* the source's index: what is tracked */
	struct xg_snapshot_rules include, exclude, excludes_file;
	jv included;
	struct xg_snapshot_rules **chain;	/* .gitignore rules, top down */
	size_t chain_alloc;
};

/* Reports a libgit2 failure, keeping errno for the exit status. */
static int lg_error(const char *what)
{
	int e = errno;

	xg_error("%s: %s", what, xg_snapshot_git_message());
	errno = e;
	return -1;
}

/* A failure of the source: what replay was asked for is not there. */
static int src_error(struct replay *r, int status)
{
	r->status = status;
	return -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level == 0)
		return 0;
	return remove(path) < 0 ? -1 : 0;
}

/* Removes what the replay made: the directory itself when it made it. */
static void clean_up(struct replay *r)
{
	nftw(r->target, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (r->created)
		rmdir(r->target);
}

/* 1 when dir may be used (absent or empty), with r->created set. */
static int claim_target(struct replay *r, const char *target)
{
	DIR *d = opendir(target);
	struct dirent *de;

	if (!d) {
		if (errno != ENOENT)
			return xg_error_errno("cannot use '%s'", target);
		if (xg_mkdir_p(target, 0777) < 0)
			return -1;
		r->created = 1;
	} else {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				closedir(d);
				r->status = XG_EX_DATAERR;
				return xg_error("refusing '%s': it exists and is not empty", target);
			}
		closedir(d);
	}
	r->target = realpath(target, NULL);
	if (!r->target)
		return xg_error_errno("cannot resolve '%s'", target);
	return 0;
}

static int resolve(git_repository *repo, const char *rev, git_oid *out)
{
	git_object *obj = NULL, *c = NULL;
	int rc;

	rc = git_revparse_single(&obj, repo, rev);
	if (!rc)
		rc = git_object_peel(&c, obj, GIT_OBJECT_COMMIT);
	if (!rc)
		git_oid_cpy(out, git_object_id(c));
	git_object_free(c);
	git_object_free(obj);
	return rc;
}

/* The clone's origin and its refs: branches as origin's, tags as tags. */
static int copy_refs(struct replay *r)
{
	static const char *const globs[] = { "refs/heads/*", "refs/tags/*" };
	git_config *cfg = NULL;
	const char *url = r->srcwork ? r->srcwork : git_repository_path(r->src);
	char *u = xg_strndup(url, strlen(url) - (url[strlen(url) - 1] == '/'));
	int i, rc = 0;

	/* Set as plain keys: git_remote_create goes through a regex-based
	 * multivar write that leaks in libgit2 1.5. */
	if (git_repository_config(&cfg, r->dst) < 0 ||
	    git_config_set_string(cfg, "remote.origin.url", u) < 0 ||
	    git_config_set_string(cfg, "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*") < 0)
		rc = lg_error("cannot add the remote 'origin'");
	git_config_free(cfg);
	free(u);
	for (i = 0; !rc && i < 2; i++) {
		git_reference_iterator *it = NULL;
		git_reference *ref, *made;

		if (git_reference_iterator_glob_new(&it, r->src, globs[i]) < 0)
			return lg_error("cannot list references");
		while (!rc && !git_reference_next(&ref, it)) {
			const char *name = git_reference_name(ref);
			char *dst_name;

			if (git_reference_type(ref) == GIT_REFERENCE_DIRECT) {
				dst_name = i ? xg_strdup(name) :
					xg_asprintf("refs/remotes/origin/%s", name + strlen("refs/heads/"));
				if (git_reference_create(&made, r->dst, dst_name,
							 git_reference_target(ref), 1, NULL) < 0)
					rc = lg_error("cannot copy a reference");
				else
					git_reference_free(made);
				free(dst_name);
			}
			git_reference_free(ref);
		}
		git_reference_iterator_free(it);
	}
	return rc;
}

static int is_tracked(const struct replay *r, const char *path)
{
	size_t lo = 0, hi = r->ix.nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->ix.entries[mid].path, path);

		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int copy_file(struct replay *r, const char *path, const struct stat *st)
{
	char *from = xg_asprintf("%s%s", r->srcwork, path);
	char *to = xg_asprintf("%s/%s", r->target, path);
	char *slash = strrchr(to, '/');
	struct xg_buf b = XG_BUF_INIT(0);
	int rc = -1;

	*slash = '\0';
	if (xg_mkdir_p(to, 0777) < 0)
		goto out;
	*slash = '/';
	if (S_ISLNK(st->st_mode)) {
		char link[PATH_MAX];
		ssize_t n = readlink(from, link, sizeof(link) - 1);

		if (n < 0 || (link[n] = '\0', symlink(link, to) < 0)) {
			xg_error_errno("cannot copy '%s'", path);
			goto out;
		}
	} else if (xg_read_file(from, &b) < 0 ||
		   xg_write_atomic(to, b.buf, b.len, st->st_mode & 0777) < 0) {
		xg_error_errno("cannot copy '%s'", path);
		goto out;
	}
	r->included = jv_array_append(r->included, xg_json_string_bytes(path, strlen(path)));
	rc = 0;
out:
	xg_buf_release(&b);
	free(from);
	free(to);
	return rc;
}

static int ignored_by(struct replay *r, size_t depth, const char *path, int is_dir)
{
	struct xg_snapshot_rules **chain = r->chain;
	size_t i = depth;
	int m;

	while (i-- > 0)
		if (chain[i] && (m = xg_snapshot_rules_match(chain[i], path, strlen(path), is_dir)) >= 0)
			return m;
	if ((m = xg_snapshot_rules_match(&r->exclude, path, strlen(path), is_dir)) >= 0)
		return m;
	if ((m = xg_snapshot_rules_match(&r->excludes_file, path, strlen(path), is_dir)) >= 0)
		return m;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted, without . and .. and .git; NULL-terminated. */
static char **sorted_names(const char *dir)
{
	char **names = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ".git"))
			continue;
		XG_ALLOC_GROW(names, n + 2, alloc);
		names[n++] = xg_strdup(de->d_name);
	}
	if (d)
		closedir(d);
	XG_ALLOC_GROW(names, n + 1, alloc);
	names[n] = NULL;
	XG_QSORT(names, n, cmp_str);
	return names;
}

/* Walks directory rel ("" for the top) copying the files that git ignores
 * and .worktreeinclude names, in byte order. */
static int walk_includes(struct replay *r, const char *rel, size_t depth, int ignored_dir,
			 int included_dir)
{
	char *dir = xg_asprintf("%s%s", r->srcwork, rel);
	char *gi = xg_asprintf("%s/.gitignore", dir);
	struct xg_snapshot_rules rules = { 0 };
	char **names = sorted_names(dir), **n;
	int rc = 0;

	xg_snapshot_rules_load(&rules, rel, gi);
	XG_ALLOC_GROW(r->chain, depth + 1, r->chain_alloc);
	r->chain[depth] = &rules;
	for (n = names; *n && !rc; n++) {
		char *path = *rel ? xg_asprintf("%s/%s", rel, *n) : xg_strdup(*n);
		char *full = xg_asprintf("%s/%s", dir, *n);
		struct stat st;
		int ig, inc;

		if (lstat(full, &st) < 0) {
			/* gone meanwhile */
		} else if (S_ISDIR(st.st_mode)) {
			char *dotgit = xg_asprintf("%s/.git", full);

			if (access(dotgit, F_OK)) {	/* not a nested repository */
				ig = ignored_dir || ignored_by(r, depth + 1, path, 1) == 1;
				inc = included_dir ||
				      xg_snapshot_rules_match(&r->include, path, strlen(path), 1) == 1;
				rc = walk_includes(r, path, depth + 1, ig, inc);
			}
			free(dotgit);
		} else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && !is_tracked(r, path)) {
			ig = ignored_dir || ignored_by(r, depth + 1, path, 0) == 1;
			inc = included_dir ||
			      xg_snapshot_rules_match(&r->include, path, strlen(path), 0) == 1;
			if (ig && inc)
				rc = copy_file(r, path, &st);
		}
		free(full);
		free(path);
	}
	for (n = names; *n; n++)
		free(*n);
	free(names);
	xg_snapshot_rules_release(&rules);
	free(gi);
	free(dir);
	return rc;
}

static int load_rules(struct replay *r)
{
	git_config *cfg = NULL;
	char *p, *f;
	char err[256];

	if (xg_snapshot_index_read(&r->ix, p = xg_asprintf("%sindex", git_repository_path(r->src)),
				   err, sizeof(err)) < 0) {
		xg_error("cannot read '%s': %s", p, err);
		free(p);
		return -1;
	}
	free(p);
	xg_snapshot_rules_load(&r->include, "", p = xg_asprintf("%s.worktreeinclude", r->srcwork));
	free(p);
	xg_snapshot_rules_load(&r->exclude, "",
			       p = xg_asprintf("%sinfo/exclude", git_repository_commondir(r->src)));
	free(p);
	if (git_repository_config_snapshot(&cfg, r->src) < 0)
		cfg = NULL;
	f = xg_snapshot_excludes_path(cfg);
	if (f)
		xg_snapshot_rules_load(&r->excludes_file, "", f);
	free(f);
	git_config_free(cfg);
	return 0;
}

/* The working tree at the snapshot, then the index at the base. */
static int check_out(struct replay *r, const git_oid *commit, const git_oid *base)
{
	git_checkout_options co;
	git_commit *c = NULL, *b = NULL;
	git_tree *t = NULL, *bt = NULL;
	git_index *ix = NULL;
	int rc = -1;

	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_commit_lookup(&c, r->dst, commit) < 0 || git_commit_tree(&t, c) < 0) {
		lg_error("cannot read the snapshot");
		goto out;
	}
	if (git_checkout_tree(r->dst, (git_object *)t, &co) < 0) {
		lg_error("cannot check out the snapshot");
		goto out;
	}
	if (git_repository_index(&ix, r->dst) < 0) {
		lg_error("cannot open the clone's index");
		goto out;
	}
	if (base) {
		if (git_commit_lookup(&b, r->dst, base) < 0 || git_commit_tree(&bt, b) < 0 ||
		    git_index_read_tree(ix, bt) < 0) {
			lg_error("cannot read the base");
			goto out;
		}
	} else if (git_index_clear(ix) < 0) {
		lg_error("cannot clear the index");
		goto out;
	}
	if (git_index_write(ix) < 0) {
		lg_error("cannot write the clone's index");
		goto out;
	}
	rc = 0;
out:
	git_index_free(ix);
	git_tree_free(bt);
	git_tree_free(t);
	git_commit_free(b);
	git_commit_free(c);
	return rc;
}

/* HEAD on the source's branch (or detached, as the source is) at base. */
static int set_head(struct replay *r, const git_oid *base)
{
	git_reference *h = NULL, *made = NULL;
	char *branch = NULL;
	int rc = 0;

	if (!git_reference_lookup(&h, r->src, "HEAD") &&
	    git_reference_type(h) == GIT_REFERENCE_SYMBOLIC)
		branch = xg_strdup(git_reference_symbolic_target(h));
	git_reference_free(h);
	if (branch) {
		if (base && git_reference_create(&made, r->dst, branch, base, 1, "xg-snapshot replay") < 0)
			rc = lg_error("cannot create the branch");
		git_reference_free(made);
		if (!rc && git_repository_set_head(r->dst, branch) < 0)
			rc = lg_error("cannot set HEAD");
	} else if (base && git_repository_set_head_detached(r->dst, base) < 0) {
		rc = lg_error("cannot set HEAD");
	}
	free(branch);
	return rc;
}

static int replay(struct replay *r, const struct xg_snapshot_replay_opts *o,
		  int (*emit)(jv record, void *arg), void *arg)
{
	jv record;
	git_repository_init_options io;
	git_oid commit, base;
	git_commit *c = NULL;
	const char *dir = o->dir ? o->dir : ".";
	int has_base = 0, rc;
	char hex[GIT_OID_HEXSZ + 1], *p;

	rc = git_repository_open_ext(&r->src, dir, 0, NULL);
	if (rc < 0) {
		char err[1024];

		if (rc != GIT_ENOTFOUND && rc != GIT_EOWNER) {
			xg_error("cannot open the repository '%s': %s", dir,
				 xg_snapshot_git_message());
			return src_error(r, XG_EX_IOERR);
		}
		/* libgit2 says "not found" for a repository another user owns. */
		rc = xg_snapshot_not_found(dir, rc, err, sizeof(err));
		if (rc < 0) {
			xg_error("%s", err);
			return src_error(r, XG_EX_IOERR);
		}
		if (rc > 0) {
			xg_error("%s", err);
			return src_error(r, XG_EX_NOPERM);
		}
		xg_error("not a git repository: '%s'", dir);
		return src_error(r, XG_EX_DATAERR);
	}
	r->srcwork = git_repository_workdir(r->src);
	if (resolve(r->src, o->commit, &commit) < 0) {
		xg_error("cannot find the snapshot '%s': %s", o->commit,
			 xg_snapshot_git_message());
		return src_error(r, XG_EX_DATAERR);
	}
	if (o->base) {
		if (resolve(r->src, o->base, &base) < 0) {
			xg_error("cannot find the base '%s': %s", o->base,
				 xg_snapshot_git_message());
			return src_error(r, XG_EX_DATAERR);
		}
		has_base = 1;
	} else {
		if (git_commit_lookup(&c, r->src, &commit) < 0) {
			lg_error("cannot read the snapshot");
			return src_error(r, XG_EX_DATAERR);
		}
		if (git_commit_parentcount(c) > 0) {
			git_oid_cpy(&base, git_commit_parent_id(c, 0));
			has_base = 1;
		}
		git_commit_free(c);
	}
	if (claim_target(r, o->target) < 0)
		return -1;
	git_repository_init_options_init(&io, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	io.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_REINIT;
	if (git_repository_init_ext(&r->dst, r->target, &io) < 0)
		return lg_error("cannot create the clone");
	git_repository_free(r->dst);
	r->dst = NULL;
	/* Borrow the objects: the clone stores none of its own. */
	p = xg_asprintf("%s/.git/objects/info/alternates", r->target);
	{
		char *line = xg_asprintf("%sobjects\n", git_repository_commondir(r->src));
		int w = xg_write_atomic(p, line, strlen(line), 0644);

		free(line);
		free(p);
		if (w < 0)
			return -1;
	}
	if (git_repository_open(&r->dst, r->target) < 0)
		return lg_error("cannot open the clone");
	if (copy_refs(r) < 0 || check_out(r, &commit, has_base ? &base : NULL) < 0 ||
	    set_head(r, has_base ? &base : NULL) < 0)
		return -1;
	r->included = jv_array();
	if (r->srcwork) {
		if (load_rules(r) < 0)
			return -1;
		if (r->include.nr && walk_includes(r, "", 0, 0, 0) < 0)
			return -1;
	}
	record = xg_rec_new("replay");
	record = xg_json_set(record, "dir", jv_string(r->target));
	record = xg_json_set(record, "commit", jv_string(git_oid_tostr(hex, sizeof(hex), &commit)));
	record = xg_json_set(record, "base", has_base ?
			      jv_string(git_oid_tostr(hex, sizeof(hex), &base)) : jv_null());
	record = xg_json_set(record, "included", r->included);
	r->included = jv_invalid();
	/* The record is the last step: a clone nobody hears of is removed. */
	if (emit(record, arg) < 0) {
		r->status = XG_EX_IOERR;
		return -1;
	}
	return 0;
}

int xg_snapshot_replay(const struct xg_snapshot_replay_opts *o,
		       int (*emit)(jv record, void *arg), void *arg)
{
	struct replay r;
	char err[256];
	int rc;

	memset(&r, 0, sizeof(r));
	if (xg_snapshot_git_load(err, sizeof(err)) < 0) {
		xg_error("%s", err);
		return XG_EX_SOFTWARE;
	}
	r.included = jv_invalid();
	git_libgit2_init();
	rc = replay(&r, o, emit, arg);
	if (rc < 0 && !r.status)
		r.status = errno == EACCES || errno == EPERM ? XG_EX_NOPERM : XG_EX_IOERR;
	git_repository_free(r.dst);
	if (rc < 0 && r.target)
		clean_up(&r);
	git_repository_free(r.src);
	xg_snapshot_index_release(&r.ix);
	xg_snapshot_rules_release(&r.include);
	xg_snapshot_rules_release(&r.exclude);
	xg_snapshot_rules_release(&r.excludes_file);
	jv_free(r.included);
	free(r.chain);
	free(r.target);
	git_libgit2_shutdown();
	return rc < 0 ? r.status : XG_EX_OK;
}
