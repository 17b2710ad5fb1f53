#ifndef XG_SNAPSHOT_INDEX_H
#define XG_SNAPSHOT_INDEX_H
/*
 * A read-only view of a git index file (versions 2, 3 and 4): its entries
 * with their stat data, and its cache tree (the TREE extension), which
 * names the tree of every directory whose entries did not change since the
 * tree was last written.  xg-snapshot reads the index itself, rather than
 * through git_index, to reach that cache and to read 10,000 entries
 * without allocating for each.
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define XG_SNAPSHOT_ASSUME_VALID 0x8000	/* flags: "assume unchanged" */
#define XG_SNAPSHOT_SKIP_WORKTREE 0x4000	/* extended flags */
#define XG_SNAPSHOT_INTENT_TO_ADD 0x2000	/* extended flags */

struct xg_snapshot_entry {
	const char *path;	/* NUL-terminated, relative to the top */
	size_t pathlen;
	uint32_t ctime_s, ctime_ns, mtime_s, mtime_ns;
	uint32_t dev, ino, mode, uid, gid, size;
	unsigned char oid[20];
	uint16_t flags, xflags;
	int stage;
};

struct xg_snapshot_cache_tree {
	char *path;		/* "" for the top, "a/b" below */
	long entry_count;	/* -1 when this tree is out of date */
	unsigned char oid[20];
};

struct xg_snapshot_index {
	char *data;		/* the file's bytes */
	size_t len;
	struct timespec mtime;	/* the file's modification time; 0 when absent */
	int version;
	struct xg_snapshot_entry *entries;
	size_t nr;
	struct xg_snapshot_cache_tree *trees;	/* in the extension's order */
	size_t ntrees;
	char **owned;		/* paths built for version 4 */
	size_t nowned, owned_alloc;
};

/*
 * Reads path.  A missing file is an empty index (0).  -1 with a message in
 * err when it cannot be read or is not an index this code understands (a
 * split or sparse index).
 */
int xg_snapshot_index_read(struct xg_snapshot_index *ix, const char *path,
			   char *err, size_t errlen);
void xg_snapshot_index_release(struct xg_snapshot_index *ix);

#endif
