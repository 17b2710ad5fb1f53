/*
 * The commit at the end of a snapshot: its object (the top tree, HEAD as
 * its parent, the user's identity from the config or xg's own, the time
 * now), then the writing of every object the snapshot made, in one go
 * (snapshot/pack.c).  Up to the moment the objects are put in place the
 * deadline is checked; a snapshot that gives up there leaves nothing.
 */
#include "xg.h"
#include "snapshot/internal.h"
#include "sha1.h"

/* Hashes the commit of tree on parent (NULL: none) into oid. */
static int make_commit(struct xg_snapshot_state *s, const unsigned char tree[20],
		       const unsigned char *parent, unsigned char oid[20])
{
	struct xg_buf b = XG_BUF_INIT(0);
	const char *name = s->name, *email = s->email;
	char hex[41];
	time_t now = time(NULL);
	struct tm tm;
	long off;
	size_t len;
	char *data;
	int i;

	localtime_r(&now, &tm);
	off = tm.tm_gmtoff / 60;
	xg_snapshot_sha1_hex(tree, hex);
	xg_buf_addf(&b, "tree %s\n", hex);
	if (parent) {
		xg_snapshot_sha1_hex(parent, hex);
		xg_buf_addf(&b, "parent %s\n", hex);
	}
	for (i = 0; i < 2; i++) {
		xg_buf_addstr(&b, i ? "committer " : "author ");
		/* Angle brackets and newlines would break the header line. */
		for (const char *p = name; *p; p++)
			if (*p != '<' && *p != '>' && *p != '\n')
				xg_buf_addch(&b, *p);
		xg_buf_addstr(&b, " <");
		for (const char *p = email; *p; p++)
			if (*p != '<' && *p != '>' && *p != '\n')
				xg_buf_addch(&b, *p);
		xg_buf_addf(&b, "> %lld %c%02ld%02ld\n", (long long)now, off < 0 ? '-' : '+',
			    labs(off) / 60, labs(off) % 60);
	}
	xg_buf_addstr(&b, "\nxg snapshot of the working tree\n");
	data = xg_buf_detach(&b, &len);
	if (xg_snapshot_pack_add(&s->pk, GIT_OBJECT_COMMIT, data, len, oid) < 0) {
		snprintf(s->err, sizeof(s->err), "cannot hash the commit: %s",
			 xg_snapshot_git_message());
		return -1;
	}
	return 0;
}

int xg_snapshot_commit_write(struct xg_snapshot_state *s, const unsigned char tree[20],
			     const unsigned char *parent, unsigned char oid[20])
{
	int rc;

	if (make_commit(s, tree, parent, oid) < 0)
		return XG_SNAPSHOT_FAILED;
	if (xg_snapshot_timed_out(s))
		return XG_SNAPSHOT_TIMED_OUT;
	/* The writing checks the deadline too, up to the moment the pack is
	 * put in place; what it gave up on it removes. */
	rc = xg_snapshot_pack_write(&s->pk, &s->db, s->deadline, s->err, sizeof(s->err));
	if (rc == XG_SNAPSHOT_TIMED_OUT) {
		s->timed_out = 1;
		s->err[0] = '\0';
	}
	return rc;
}
