/*
 * Helps tests/xg-snapshot.bats stage what git itself cannot: an index entry
 * whose stat data matches the file in the working tree while its id is
 * that of other content (the state a racy edit leaves behind).
 *
 *   xg-test snapshot stale-entry path oid
 *
 * and prints the SHA-1 of its standard input the way the pack writer
 * computes it (with the SHA extensions when the processor has them, or
 * the portable code):
 *
 *   xg-test snapshot sha1 [--portable]
 */
#include "xg.h"
#include "xg-test.h"
#include "sha1.h"
#include <git2.h>

static const char *const usage[] = {
	"xg-test-snapshot stale-entry path oid",
	"xg-test-snapshot sha1 [--portable]",
	NULL
};

enum { OPT_PORTABLE = 1 };

static const struct xg_option options[] = {
	{ OPT_PORTABLE, 0, "portable", NULL, "never use the SHA extensions" },
	{ 0 }
};
static const struct xg_command cmd = {
	"xg-test-snapshot", "Stage index states for the snapshot tests.", usage, options
};

static void check(int rc, const char *what)
{
	const git_error *e = git_error_last();

	if (rc < 0)
		xg_die(XG_EX_SOFTWARE, "%s: %s", what, e && e->message ? e->message : "error");
}

static int sha1_stdin(int portable)
{
	struct xg_snapshot_sha1 c;
	unsigned char buf[65536], out[20];
	ssize_t n;
	int i;

	if (portable)
		xg_snapshot_sha1_init_portable(&c);
	else
		xg_snapshot_sha1_init(&c);
	/* Odd-sized pieces, so partial blocks are exercised. */
	while ((n = read(0, buf, 4093)) > 0)
		xg_snapshot_sha1_update(&c, buf, (size_t)n);
	xg_snapshot_sha1_final(&c, out);
	for (i = 0; i < 20; i++)
		printf("%02x", out[i]);
	printf("\n");
	return xg_prog_exit(0);
}

int cmd__snapshot(int argc, char **argv)
{
	git_repository *repo;
	git_index *ix;
	const git_index_entry *old;
	git_index_entry e;
	struct stat st;
	struct xg_opts o;
	const char *arg;
	int portable = 0;

	xg_prog_init("xg-test-snapshot");
	xg_opt_init(&o, &cmd, argc, argv);
	while (xg_opt_next(&o, &arg) != -1)
		portable = 1;
	if (o.nargs == 1 && !strcmp(o.args[0], "sha1"))
		return sha1_stdin(portable);
	if (o.nargs != 3 || strcmp(o.args[0], "stale-entry"))
		xg_usage_error(&cmd, "expected: stale-entry path oid");
	git_libgit2_init();
	check(git_repository_open(&repo, "."), "open");
	check(git_repository_index(&ix, repo), "index");
	old = git_index_get_bypath(ix, o.args[1], 0);
	if (!old)
		xg_die(XG_EX_DATAERR, "'%s' is not in the index", o.args[1]);
	if (lstat(o.args[1], &st) < 0)
		xg_die_errno(XG_EX_IOERR, "cannot stat '%s'", o.args[1]);
	e = *old;
	e.ctime.seconds = (int32_t)st.st_ctim.tv_sec;
	e.ctime.nanoseconds = (uint32_t)st.st_ctim.tv_nsec;
	e.mtime.seconds = (int32_t)st.st_mtim.tv_sec;
	e.mtime.nanoseconds = (uint32_t)st.st_mtim.tv_nsec;
	e.dev = (uint32_t)st.st_dev;
	e.ino = (uint32_t)st.st_ino;
	e.uid = st.st_uid;
	e.gid = st.st_gid;
	e.file_size = (uint32_t)st.st_size;
	check(git_oid_fromstr(&e.id, o.args[2]), "oid");
	check(git_index_add(ix, &e), "add");
	check(git_index_write(ix), "write");
	git_index_free(ix);
	git_repository_free(repo);
	git_libgit2_shutdown();
	xg_opt_release(&o);
	return xg_prog_exit(0);
}
