/*
 * The repository a snapshot works in: found the way git finds it but
 * without libgit2, so the scan can start before libgit2 is loaded; told
 * apart from none when libgit2 will not open it; opened with libgit2 when
 * a step needs it; and asked whether it has an object.
 */
#include "xg.h"
#include "snapshot/snapshot.h"
#include "snapshot/internal.h"
#include <git2.h>

int xg_snapshot_discover(const char *dir, char **workdir, char **gitdir, int *plain)
{
	char *p = realpath(dir, NULL);
	struct xg_buf b = XG_BUF_INIT(4096);
	struct stat top;
	int first = 1;

	if (plain)
		*plain = 1;
	while (p) {
		char *dotgit = xg_asprintf("%s/.git", strcmp(p, "/") ? p : "");
		char *head = xg_asprintf("%s/HEAD", strcmp(p, "/") ? p : "");
		struct stat st;

		if (plain && (stat(p, &st) < 0 || (!first && st.st_dev != top.st_dev) ||
			      !access(head, F_OK)))
			*plain = 0;
		if (first && !stat(p, &top))
			first = 0;
		free(head);
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

int xg_snapshot_not_found(const char *dir, int rc, char *err, size_t errlen)
{
	char *workdir = NULL, *gitdir = NULL;
	const char *at = dir;
	struct stat st;
	int owned = rc == GIT_EOWNER;

	if (xg_snapshot_discover(dir, &workdir, &gitdir, NULL) < 0) {
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

int xg_snapshot_git_up(struct xg_snapshot_state *s)
{
	if (s->git_up)
		return 0;
	if (xg_snapshot_git_load(s->err, sizeof(s->err)) < 0)
		return -1;
	git_libgit2_init();
	s->git_up = 1;
	return 0;
}

int xg_snapshot_repo_open(struct xg_snapshot_state *s)
{
	if (s->repo)
		return 0;
	if (xg_snapshot_git_up(s) < 0)
		return -1;
	if (git_repository_open_ext(&s->repo, s->workdir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		snprintf(s->err, sizeof(s->err), "%s", xg_snapshot_git_message());
		s->repo = NULL;
		return -1;
	}
	return 0;
}

int xg_snapshot_has(struct xg_snapshot_state *s, const unsigned char oid[20])
{
	git_oid id;

	if (xg_snapshot_odb_has(&s->db, oid))
		return 1;
	/* Objects elsewhere: only libgit2 follows alternates. */
	if (!s->alternates || !s->odb)
		return 0;
	memcpy(id.id, oid, 20);
	return git_odb_exists_ext(s->odb, &id, GIT_ODB_LOOKUP_NO_REFRESH) != 0;
}
