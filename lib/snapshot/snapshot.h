#ifndef XG_SNAPSHOT_H
#define XG_SNAPSHOT_H
/*
 * Turn snapshots (design.md B3, ADR-0066).
 *
 * xg_snapshot_take commits the working tree as it is, through a throwaway
 * index that lives only in memory: tracked files with their edits,
 * deletions, modes and symlinks, untracked files that the ignore rules let
 * through within the limits, submodules as the gitlinks the index holds.
 * It never writes the working tree, the index, HEAD, a ref or the config;
 * it writes only new objects, all at the end, so a snapshot that gives up
 * (the timeout) leaves nothing behind.
 *
 * Unchanged files are not read: the index's stat data is trusted as git
 * trusts it, with the real index's timestamp deciding which entries are
 * racy (an entry modified in the second the index was written is hashed).
 * Directories without changes reuse the index's cache tree.
 *
 * xg_snapshot_replay makes a clone sharing the repository's objects, with
 * the working tree at a snapshot and HEAD and the index at its base.
 */
#include <jv.h>
#include <stddef.h>
#include "rec.h"

#define XG_SNAPSHOT_MAX_FILE_SIZE (5ULL << 20)
#define XG_SNAPSHOT_MAX_TOTAL_SIZE (100ULL << 20)
#define XG_SNAPSHOT_MAX_FILES 10000ULL
#define XG_SNAPSHOT_TIMEOUT_MS 2000LL
/* The most skipped[] entries a record lists; skipped_total counts all. */
#define XG_SNAPSHOT_SKIPPED_MAX 1000

struct xg_snapshot_opts {
	const char *dir;		/* where to look for the repository; NULL is "." */
	unsigned long long max_file_size;	/* per untracked file, bytes */
	unsigned long long max_total_size;	/* all untracked files, bytes */
	unsigned long long max_files;		/* untracked files */
	long long timeout_ms;
	int threads;			/* 0: one per CPU, at most 4 */
};

void xg_snapshot_opts_init(struct xg_snapshot_opts *o);

/*
 * Takes a snapshot and returns its "snapshot" record.  It does not fail:
 * when there is no commit (not a repository, a bare one, an unreadable
 * one, the timeout) the record's commit is null and its reason says why.
 */
jv xg_snapshot_take(const struct xg_snapshot_opts *o);

/* Parses a duration: a number of seconds ("2", "0.5") or of milliseconds
 * with "ms" ("1500ms").  -1 when s is not one. */
int xg_snapshot_parse_duration(const char *s, long long *ms);

struct xg_snapshot_replay_opts {
	const char *dir;	/* the source repository; NULL is "." */
	const char *commit;	/* the snapshot */
	const char *base;	/* HEAD and index of the clone; NULL: commit's parent */
	const char *target;	/* the clone's directory: absent or empty */
};

/*
 * Makes the replay clone and hands its "replay" record to emit (which
 * consumes it and returns -1 when it could not be written) as the last
 * step.  Returns 0, or, after reporting the error (xg_error) and removing
 * what it made, the exit status that fits the failure: XG_EX_DATAERR when
 * the commit, the base or the source repository is not there or DIR is
 * not empty, XG_EX_NOPERM for a permission refused (a repository owned by
 * another user included), XG_EX_IOERR for another failure to read or
 * write, or for emit failing.
 */
int xg_snapshot_replay(const struct xg_snapshot_replay_opts *o,
		       int (*emit)(jv record, void *arg), void *arg);

/*
 * For a dir where libgit2 found no repository (rc GIT_ENOTFOUND or
 * GIT_EOWNER): 1 with a message in err when there is one that another user
 * owns (libgit2's safe.directory check refused it), -1 with a message when
 * there is one it could not open for another reason, 0 when there is none.
 */
int xg_snapshot_not_found(const char *dir, int rc, char *err, size_t errlen);

/*
 * xg-snapshot as a stage of a pipeline (snapshot/stage.c).  Each returns
 * 0 or, after reporting, an exit status; a write error on w is
 * XG_EX_IOERR, reported as "cannot write standard output".
 *
 * xg_snapshot_stage_take passes every record of r (NULL: no input) on to
 * w, each request followed by its snapshot record, flushed, taken in the
 * request's cwd unless o->dir is set; without a request it takes one
 * snapshot.  XG_EX_FAIL when strict and a snapshot has no commit,
 * XG_EX_DATAERR for a request whose cwd is not a string (checked before
 * the request goes on).
 */
int xg_snapshot_stage_take(struct xg_rec_reader *r, struct xg_rec_writer *w,
			   const struct xg_snapshot_opts *o, int strict);
/* 0 with *cwd the request's cwd (NULL when it has none), or XG_EX_DATAERR
 * after saying so, with input (the reader's name) and the line number. */
int xg_snapshot_stage_cwd(const struct xg_rec *rec, const char *input, const char **cwd);
/*
 * xg_snapshot_stage_replay runs xg_snapshot_replay and writes its record
 * to w.  When o->commit is "-", the records of r are passed on to w first,
 * and the last snapshot record with a commit gives the commit, and the
 * base unless o->base is set; XG_EX_DATAERR when there is none.
 */
int xg_snapshot_stage_replay(struct xg_rec_reader *r, struct xg_rec_writer *w,
			     const struct xg_snapshot_replay_opts *o);

#endif
