/*
 * xg_snapshot_take and what orchestrates it.  The scan of the working
 * tree (snapshot/scan.c) starts first, where discover() finds the
 * repository without libgit2, and runs on its threads while libgit2 opens
 * the repository; prepare() checks that libgit2 found the same one (else
 * the scan starts again there) and reads the settings and the ignore
 * files.  Then take() runs the steps in order, each of which may give up
 * at the deadline: the untracked walk (snapshot/untracked.c) finds what is
 * new, the changed and new files are hashed into blobs (snapshot/blob.c),
 * the trees are built reusing the cache tree (snapshot/tree.c), and the
 * commit is made and every object written at the very end
 * (snapshot/commit.c).  The untracked files the last snapshot read and
 * that did not change since are not read again (snapshot/known.c).  finish() puts the counts into the record.
 *
 * Also here: the options' defaults, the parsing of a duration, the state's
 * small helpers, xg_snapshot_not_found, which tells a directory without a
 * repository from one that libgit2 would not open, and the CA file that
 * libgit2's TLS set-up does not read.
 */
#include "xg.h"
#include "snapshot/snapshot.h"
#include "snapshot/internal.h"
#include <git2.h>

/*
 * A libgit2 built on mbedTLS (Debian's) parses every certificate of the
 * system's CA file in git_libgit2_init, about 3.5 ms of each snapshot's
 * start, for the TLS of remotes, which a snapshot never talks to.  This
 * definition takes the place of mbedTLS's own (a program's symbols come
 * before its libraries' for the libraries too): it reads nothing and adds
 * no certificate, so a TLS connection libgit2 might still make would
 * trust none.  A program that links this file talks to no remote through
 * libgit2; libcurl's TLS is OpenSSL's and is not touched.
 */
int mbedtls_x509_crt_parse_file(void *chain, const char *path);
int mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
	(void)chain;
	(void)path;
	return 0;
}

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

int xg_snapshot_timed_out(struct xg_snapshot_state *s)
{
	if (!s->timed_out && xg_clock_ms() > s->deadline)
		s->timed_out = 1;
	return s->timed_out;
}

void xg_snapshot_skip(struct xg_snapshot_state *s, const char *path, size_t len,
		      const char *reason)
{
	s->complete = 0;
	if (s->nskipped++ >= XG_SNAPSHOT_SKIPPED_MAX)
		return;
	s->skipped = jv_array_append(s->skipped,
		xg_json_set(xg_json_set(jv_object(), "path", xg_json_string_bytes(path, len)),
			    "reason", jv_string(reason)));
}

const char *xg_snapshot_git_message(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown error";
}

/* The core.* settings the scan and the blobs follow, whether a clean
 * filter may apply, and the global excludes file. */
static void read_config(struct xg_snapshot_state *s, git_config *cfg)
{
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
	xg_snapshot_rules_load_excludes_file(&s->excludes_file, cfg);
	if (!s->can_filter) {
		f = xg_snapshot_rules_user_file("attributes");
		if (f && !access(f, F_OK))
			s->can_filter = 1;
		free(f);
	}
}

/* The record's counts, and when there is no commit the reason and error. */
static jv finish(struct xg_snapshot_state *s, jv rec, const char *reason)
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
static int start_scan(struct xg_snapshot_state *s, const char *workdir, const char *gitdir)
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
static void drop_scan(struct xg_snapshot_state *s)
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

/* Starts the scan early, where discover finds the repository. */
static void prescan(struct xg_snapshot_state *s, const char *dir)
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
static const char *prepare(struct xg_snapshot_state *s, git_config *cfg)
{
	const char *common = git_repository_commondir(s->repo);
	char *p;

	if (s->prescanned && !(same_dir(s->pre_workdir, s->workdir) &&
			       same_dir(s->pre_gitdir, git_repository_path(s->repo))))
		drop_scan(s);
	if (!s->prescanned && start_scan(s, s->workdir, git_repository_path(s->repo)) < 0)
		return "unreadable";
	if (git_repository_odb(&s->odb, s->repo) < 0) {
		snprintf(s->err, sizeof(s->err), "%s", xg_snapshot_git_message());
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
static void drop_stages(struct xg_snapshot_state *s)
{
	size_t i;

	for (i = 1; i < s->ix.nr; i++)
		if (s->ix.entries[i].pathlen == s->ix.entries[i - 1].pathlen &&
		    !memcmp(s->ix.entries[i].path, s->ix.entries[i - 1].path, s->ix.entries[i].pathlen))
			s->sc.state[i] = XG_SNAPSHOT_SCAN_DROP;
}

/* The snapshot of an open repository with a working tree: NULL with the
 * commit in *rec, or the reason there is none. */
static const char *take(struct xg_snapshot_state *s, jv *rec, git_config *cfg)
{
	unsigned char tree[20], commit[20];
	const char *reason;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid head, id;
	int has_head, rc;

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
	xg_snapshot_tree_cache_build(s);
	xg_snapshot_untracked_walk(s);
	if (xg_snapshot_timed_out(s))
		return "timeout";
	xg_snapshot_known_apply(s);
	rc = xg_snapshot_blob_hash_tracked(s);
	if (rc == XG_SNAPSHOT_DONE)
		rc = xg_snapshot_blob_hash_untracked(s);
	if (rc == XG_SNAPSHOT_DONE && xg_snapshot_tree_write(s, tree) < 0)
		rc = XG_SNAPSHOT_FAILED;
	if (rc == XG_SNAPSHOT_DONE)
		rc = xg_snapshot_commit_write(s, cfg, tree, has_head ? &head : NULL, commit);
	if (rc != XG_SNAPSHOT_DONE)
		return rc == XG_SNAPSHOT_TIMED_OUT ? "timeout" : "error";
	xg_snapshot_known_save(s);
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
		snprintf(err, errlen, "cannot open the repository '%s': %s", at, xg_snapshot_git_message());
	free(workdir);
	free(gitdir);
	return owned ? 1 : -1;
}

/* Stops a scan still running and frees what the snapshot held. */
static void release(struct xg_snapshot_state *s)
{
	size_t i;

	if (s->sc.nthreads)
		drop_scan(s);
	xg_snapshot_scan_release(&s->sc);
	free(s->pre_workdir);
	free(s->pre_gitdir);
	xg_snapshot_index_release(&s->ix);
	xg_snapshot_pack_release(&s->pk);
	xg_snapshot_rules_release(&s->exclude);
	xg_snapshot_rules_release(&s->excludes_file);
	for (i = 0; i < s->nu; i++)
		free(s->u[i].path);
	free(s->u);
	xg_snapshot_known_release(&s->known);
	free(s->oids);
	free(s->modes);
	free(s->cache);
	jv_free(s->skipped);
	if (s->rootfd >= 0)
		close(s->rootfd);
	git_odb_free(s->odb);
	git_repository_free(s->repo);
}

jv xg_snapshot_take(const struct xg_snapshot_opts *o)
{
	struct xg_snapshot_state s;
	jv rec = xg_rec_new("snapshot");
	git_config *cfg = NULL;
	const char *reason = NULL, *dir = o->dir ? o->dir : ".";
	struct stat st;
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
				snprintf(s.err, sizeof(s.err), "%s", xg_snapshot_git_message());
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
	release(&s);
	git_config_free(cfg);
	git_libgit2_shutdown();
	return rec;
}
