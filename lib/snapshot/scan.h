#ifndef XG_SNAPSHOT_SCAN_H
#define XG_SNAPSHOT_SCAN_H
/*
 * The scan of the working tree against the index: one job per directory
 * the index knows, run on a few threads.  A job lists its directory once,
 * compares each entry's lstat with the index's stat data, and keeps the
 * names the index does not know for the untracked walk that follows (which
 * runs on the calling thread, as it needs the ignore rules).
 */
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include "snapshot/index.h"
#include "snapshot/ignore.h"

enum {
	XG_SNAPSHOT_SCAN_SAME,		/* stat data matches: not read */
	XG_SNAPSHOT_SCAN_HASH,		/* to read and hash */
	XG_SNAPSHOT_SCAN_GONE,		/* deleted from the working tree */
	XG_SNAPSHOT_SCAN_KEEP,		/* kept as the index has it (gitlink, skip-worktree) */
	XG_SNAPSHOT_SCAN_DROP,		/* a further stage of a conflicted path */
	XG_SNAPSHOT_SCAN_SPECIAL,	/* a fifo, socket or device now */
	XG_SNAPSHOT_SCAN_ERROR,		/* its directory could not be read */
	XG_SNAPSHOT_SCAN_STAT		/* lstat done; classify decides */
};

/* The lstat fields git's index compares, as the index stores them. */
struct xg_snapshot_scan_stat {
	uint32_t mode, mtime_s, ctime_s, ino, uid, gid, size;
};

struct xg_snapshot_scan_name {
	char *name;
	unsigned char type;	/* DT_* */
};

struct xg_snapshot_scan_dir {
	char *path;		/* "" for the top */
	size_t len;
	struct xg_snapshot_scan_dir *parent;
	size_t *files;		/* index entries directly inside */
	size_t nfiles, afiles;
	struct xg_snapshot_scan_name *names;	/* what the index does not know */
	size_t nnames, anames;
	unsigned char seen;	/* its type in the parent's listing; 0: not there */
	unsigned char gone;	/* no longer a directory */
	unsigned char has_gitignore, has_gitattributes;
	int err;		/* errno when it could not be listed */
	int excluded;		/* -1 until known */
	int rules_loaded;
	struct xg_snapshot_rules rules;
};

struct xg_snapshot_scan {
	const struct xg_snapshot_index *ix;
	int rootfd;
	int filemode, trustctime, checkstat;	/* core.* settings */
	int64_t deadline;	/* xg_clock_ms() value */
	int timed_out;
	unsigned char *state;	/* per index entry */
	struct xg_snapshot_scan_stat *st;	/* per index entry, for STAT */
	struct xg_snapshot_scan_dir **dirs;	/* sorted by path; dirs[0] is the top */
	size_t ndirs;
	/* path -> dir, open addressing */
	struct xg_snapshot_scan_dir **map;
	size_t nmap;
	size_t next;		/* the next job, taken atomically */
	pthread_t tid[8];
	int nthreads;		/* started by xg_snapshot_scan_start */
};

/* Builds the directory jobs from the index. */
void xg_snapshot_scan_init(struct xg_snapshot_scan *sc, const struct xg_snapshot_index *ix,
			   int rootfd);
/*
 * Starts the jobs on threads threads (0: one per CPU, at most 4) and
 * returns at once, so the caller can open the repository meanwhile.
 * xg_snapshot_scan_finish waits for them (running them itself if no
 * thread could start): -1 on timeout.  xg_snapshot_scan_classify then
 * compares the stat data with the index under the core.* settings, which
 * the caller sets in between.
 */
void xg_snapshot_scan_start(struct xg_snapshot_scan *sc, int threads);
int xg_snapshot_scan_finish(struct xg_snapshot_scan *sc);
void xg_snapshot_scan_classify(struct xg_snapshot_scan *sc);
struct xg_snapshot_scan_dir *xg_snapshot_scan_lookup(const struct xg_snapshot_scan *sc,
						     const char *path, size_t len);
void xg_snapshot_scan_release(struct xg_snapshot_scan *sc);
int xg_snapshot_scan_name_cmp(const void *a, const void *b);

#endif
