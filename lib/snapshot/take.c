/*
 * xg_snapshot_take and what orchestrates it.  The scan of the working
 * tree (snapshot/scan.c) starts first, where xg_snapshot_discover
 * (snapshot/repo.c) finds the repository without libgit2, and runs on its threads while libgit2 opens
 * the repository; prepare() checks that libgit2 found the same one (else
 * the scan starts again there) and reads the settings and the ignore
 * files.  Then take() runs the steps in order, each of which may give up
 * at the deadline: the untracked walk (snapshot/untracked.c) finds what is
 * new, the changed and new files are hashed into blobs (snapshot/blob.c),
 * the trees are built reusing the cache tree (snapshot/tree.c), and the
 * commit is made and every object written at the very end
 * (snapshot/commit.c).  The untracked files the last snapshot read and
 * that did not change since are not read again (snapshot/known.c).
 * finish() puts the counts into the record.
 *
 * Also here: the options' defaults, the parsing of a duration, and the CA
 * file that libgit2's TLS set-up does not read.  What the steps ask of the
 * state lives beneath them, so that no step calls back up here: the
 * deadline and the skipped paths (snapshot/step.c), the repository
 * (snapshot/repo.c), libgit2's last error (snapshot/git.c).
 */
#include "xg.h"
#include "snapshot/snapshot.h"
#include "snapshot/internal.h"
#include "sha1.h"
#include <git2.h>

/*
 * A libgit2 built on mbedTLS (Debian's) parses every certificate of the
 * system's CA file in git_libgit2_init, about 3.5 ms of each snapshot's
 * start, for the TLS of remotes, which a snapshot never talks to.  This
 * definition takes the place of mbedTLS's own (the program exports it, see
 * config.mk, and a program's symbols come before those of the libraries it
 * loads, for the libraries too): it reads nothing and adds
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

/* The core.* settings the scan, the walk and the blobs follow, and
 * whether a clean filter may apply, as cfg sets them. */
static void read_core(struct xg_snapshot_state *s, git_config *cfg)
{
	const char *v;
	int b;

	if (!git_config_get_bool(&b, cfg, "core.filemode"))
		s->sc.filemode = b;
	if (!git_config_get_bool(&b, cfg, "core.trustctime"))
		s->sc.trustctime = b;
	if (!git_config_get_string(&v, cfg, "core.checkstat"))
		s->sc.checkstat = strcmp(v, "minimal") != 0;
	if (!git_config_get_bool(&b, cfg, "core.sparsecheckout"))
		s->sparse = b;
	if (!git_config_get_string(&v, cfg, "core.autocrlf") && strcasecmp(v, "false") &&
	    strcasecmp(v, "no") && strcasecmp(v, "off") && strcmp(v, "0"))
		s->can_filter = s->autocrlf = 1;
	if (!git_config_get_string(&v, cfg, "core.attributesfile"))
		s->can_filter = 1;
}

/* The settings: the core.* ones, the global excludes file and the
 * identity. */
static void read_config(struct xg_snapshot_state *s, git_config *cfg)
{
	git_config *wt = NULL;
	const char *v;
	char *p;
	int b;

	if (cfg)
		read_core(s, cfg);
	/* libgit2 1.5 does not read a worktree's own config.worktree, where
	 * git sparse-checkout puts core.sparseCheckout: its core.* settings
	 * come last, as git takes them. */
	if (cfg && !git_config_get_bool(&b, cfg, "extensions.worktreeconfig") && b) {
		p = xg_asprintf("%sconfig.worktree", s->gitdir);
		if (!access(p, F_OK) && !git_config_open_ondisk(&wt, p)) {
			read_core(s, wt);
			git_config_free(wt);
		}
		free(p);
	}
	s->excludes = xg_snapshot_excludes_path(cfg);
	/* user.name and user.email, or xg's own when the config has none. */
	if (!cfg || git_config_get_string(&v, cfg, "user.name") < 0 || !*v)
		v = "xg";
	s->name = xg_strdup(v);
	if (!cfg || git_config_get_string(&v, cfg, "user.email") < 0 || !*v)
		v = "xg@localhost";
	s->email = xg_strdup(v);
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
	if (xg_snapshot_discover(dir, &s->pre_workdir, &s->pre_gitdir, &s->pre_plain) < 0)
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

static int has_object(void *arg, const unsigned char oid[20])
{
	return xg_snapshot_has(arg, oid);
}

/* Reads the index and the settings (from cfg when libgit2 opened the
 * repository, else from xg-settings already); a reason when that fails. */
static const char *prepare(struct xg_snapshot_state *s, git_config *cfg)
{
	char *p;

	if (s->repo && s->prescanned && !(same_dir(s->pre_workdir, s->workdir) &&
					  same_dir(s->pre_gitdir, s->gitdir)))
		drop_scan(s);
	if (!s->prescanned && start_scan(s, s->workdir, s->gitdir) < 0)
		return "unreadable";
	xg_snapshot_odb_init(&s->db, s->commondir);
	xg_snapshot_pack_init(&s->pk, has_object, s);
	if (s->db.dirfd < 0) {
		snprintf(s->err, sizeof(s->err), "cannot open '%s': %s", s->db.objdir,
			 strerror(errno));
		return "unreadable";
	}
	p = xg_asprintf("%sobjects/info/alternates", s->commondir);
	s->alternates = !access(p, F_OK);
	free(p);
	if (s->repo)
		read_config(s, cfg);
	if (xg_snapshot_attributes_exist(s->commondir))
		s->can_filter = 1;
	/* What the tree's .gitattributes files add is the walk's. */
	s->config_filter = s->can_filter;
	if (s->excludes)
		xg_snapshot_rules_load(&s->excludes_file, "", s->excludes);
	p = xg_asprintf("%sinfo/exclude", s->commondir);
	xg_snapshot_rules_load(&s->exclude, "", p);
	free(p);
	/* A worktree's own patterns; without the file git takes in every path. */
	p = xg_asprintf("%sinfo/sparse-checkout", s->gitdir);
	s->sparse_on = s->sparse && !access(p, F_OK) &&
		       !xg_snapshot_rules_load(&s->sparse_rules, "", p);
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

/* git add -A leaves what lies outside a sparse checkout as the index has
 * it, whether edited, deleted or present at all. */
static void keep_outside_sparse(struct xg_snapshot_state *s)
{
	size_t i;

	for (i = 0; s->sparse_on && i < s->ix.nr; i++) {
		unsigned char *st = &s->sc.state[i];

		if ((*st == XG_SNAPSHOT_SCAN_HASH || *st == XG_SNAPSHOT_SCAN_GONE ||
		     *st == XG_SNAPSHOT_SCAN_SPECIAL || *st == XG_SNAPSHOT_SCAN_ERROR) &&
		    !xg_snapshot_rules_sparse(&s->sparse_rules, s->ix.entries[i].path,
					      s->ix.entries[i].pathlen))
			*st = XG_SNAPSHOT_SCAN_KEEP;
	}
}

/* The snapshot of a repository with a working tree, its HEAD as given
 * (has_head 0: unborn): NULL with the commit in *rec, or the reason there
 * is none. */
static const char *take(struct xg_snapshot_state *s, jv *rec, git_config *cfg, int has_head,
			const unsigned char head[20])
{
	unsigned char tree[20], commit[20];
	const char *reason;
	char hex[41];
	int rc;

	if (has_head)
		xg_snapshot_sha1_hex(head, hex);
	*rec = xg_json_set(*rec, "base", has_head ? jv_string(hex) : jv_null());
	if ((reason = prepare(s, cfg)))
		return reason;
	if (xg_snapshot_scan_finish(&s->sc) < 0)
		return "timeout";
	xg_snapshot_scan_classify(&s->sc);
	drop_stages(s);
	keep_outside_sparse(s);
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
		rc = xg_snapshot_commit_write(s, tree, has_head ? head : NULL, commit);
	if (rc != XG_SNAPSHOT_DONE)
		return rc == XG_SNAPSHOT_TIMED_OUT ? "timeout" : "error";
	xg_snapshot_known_save(s);
	xg_snapshot_sha1_hex(commit, hex);
	*rec = xg_json_set(*rec, "commit", jv_string(hex));
	return NULL;
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
	xg_snapshot_rules_release(&s->sparse_rules);
	for (i = 0; i < s->nu; i++)
		free(s->u[i].path);
	free(s->u);
	free(s->t);
	xg_snapshot_known_release(&s->known);
	xg_snapshot_driver_release(s);
	xg_snapshot_odb_release(&s->db);
	free(s->workdir);
	free(s->gitdir);
	free(s->commondir);
	free(s->excludes);
	free(s->name);
	free(s->email);
	free(s->oids);
	free(s->modes);
	free(s->cache);
	jv_free(s->skipped);
	if (s->rootfd >= 0)
		close(s->rootfd);
	/* Nothing was opened when libgit2 could not be loaded. */
	if (s->odb)
		git_odb_free(s->odb);
	if (s->repo)
		git_repository_free(s->repo);
}

/* Opens the repository with libgit2 and takes the snapshot; the reason
 * when there is none.  Its settings are kept for the next (settled.c)
 * when they can be. */
static const char *take_opened(struct xg_snapshot_state *s, jv *rec, const char *dir)
{
	char inputs[41];
	const char *reason = NULL, *found[5];
	unsigned char head[20], own[20];
	git_config *cfg = NULL;
	git_buf bufs[4] = { { 0 } };
	git_oid id;
	int rc, has_head, settled, i, n = 0;

	/* Before libgit2 reads the files: should they change meanwhile, the
	 * next snapshot sees another fingerprint. */
	settled = s->prescanned && !xg_snapshot_settled_inputs_of(s, inputs);
	if (xg_snapshot_git_up(s) < 0) {
		*rec = xg_json_set(*rec, "repo", jv_null());
		*rec = xg_json_set(*rec, "base", jv_null());
		return "error";
	}
	if ((rc = git_repository_open_ext(&s->repo, dir, 0, NULL)) < 0) {
		s->repo = NULL;
		*rec = xg_json_set(*rec, "repo", jv_null());
		*rec = xg_json_set(*rec, "base", jv_null());
		if ((rc == GIT_ENOTFOUND || rc == GIT_EOWNER) &&
		    !xg_snapshot_not_found(dir, rc, s->err, sizeof(s->err)))
			return "not-a-repository";
		if (!s->err[0])
			snprintf(s->err, sizeof(s->err), "%s", xg_snapshot_git_message());
		return "unreadable";
	}
	if (git_repository_is_bare(s->repo)) {
		const char *gd = git_repository_path(s->repo);

		*rec = xg_json_set(*rec, "repo", xg_json_string_bytes(gd, strlen(gd) - 1));
		*rec = xg_json_set(*rec, "base", jv_null());
		return "bare-repository";
	}
	s->workdir = xg_strdup(git_repository_workdir(s->repo));
	s->gitdir = xg_strdup(git_repository_path(s->repo));
	s->commondir = xg_strdup(git_repository_commondir(s->repo));
	*rec = xg_json_set(*rec, "repo", xg_json_string_bytes(s->workdir, strlen(s->workdir) - 1));
	if (git_repository_odb(&s->odb, s->repo) < 0) {
		snprintf(s->err, sizeof(s->err), "%s", xg_snapshot_git_message());
		s->odb = NULL;
		*rec = xg_json_set(*rec, "base", jv_null());
		return "unreadable";
	}
	if (git_repository_config_snapshot(&cfg, s->repo) < 0)
		cfg = NULL;
	has_head = !git_reference_name_to_id(&id, s->repo, "HEAD");
	memcpy(head, id.id, 20);
	/* Kept only where the next snapshot would find what libgit2 did:
	 * the same paths, the same configuration files, the same HEAD. */
	if (settled) {
		if (!git_config_find_system(&bufs[0]))
			found[n++] = bufs[0].ptr;
		if (!git_config_find_xdg(&bufs[1]))
			found[n++] = bufs[1].ptr;
		if (!git_config_find_global(&bufs[2]))
			found[n++] = bufs[2].ptr;
		if (!git_config_find_programdata(&bufs[3]))
			found[n++] = bufs[3].ptr;
		found[n] = NULL;
		rc = xg_snapshot_head(s->gitdir, s->commondir, own);
		settled = xg_snapshot_settled_paths_are(s) &&
			  xg_snapshot_settled_config_ours(s->gitdir, s->commondir, found) &&
			  rc == has_head && (!has_head || !memcmp(own, head, 20));
		for (i = 0; i < 4; i++)
			git_buf_dispose(&bufs[i]);
	}
	reason = take(s, rec, cfg, has_head, head);
	if (!reason && settled && !s->config_filter && !s->alternates)
		xg_snapshot_settled_save(s, inputs);
	git_config_free(cfg);
	return reason;
}

jv xg_snapshot_take(const struct xg_snapshot_opts *o)
{
	struct xg_snapshot_state s;
	jv rec = xg_rec_new("snapshot");
	const char *reason = NULL, *dir = o->dir ? o->dir : ".";
	unsigned char head[20];
	struct stat st;
	int has_head, e;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.start = xg_clock_ms();
	s.deadline = s.start + o->timeout_ms;
	s.complete = 1;
	s.rootfd = -1;
	s.db.dirfd = -1;
	s.skipped = jv_array();
	/* The scan needs no libgit2: it starts first, and runs while libgit2
	 * loads and opens the repository, unless the repository is as the
	 * last snapshot found it and libgit2 is not needed at all. */
	prescan(&s, dir);
	e = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e) {
		/* Not "not a repository": there is no directory to look in. */
		snprintf(s.err, sizeof(s.err), "cannot open '%s': %s", dir, strerror(e));
		rec = xg_json_set(rec, "repo", jv_null());
		rec = xg_json_set(rec, "base", jv_null());
		reason = "unreadable";
	} else if (s.prescanned && !xg_snapshot_settled_load(&s, head, &has_head)) {
		rec = xg_json_set(rec, "repo",
				  xg_json_string_bytes(s.workdir, strlen(s.workdir) - 1));
		reason = take(&s, &rec, NULL, has_head, head);
	} else {
		reason = take_opened(&s, &rec, dir);
	}
	if (reason && strcmp(reason, "timeout"))
		s.complete = 0;
	rec = finish(&s, rec, reason);
	release(&s);
	if (s.git_up)
		git_libgit2_shutdown();
	return rec;
}
