#ifndef XG_SNAPSHOT_INTERNAL_H
#define XG_SNAPSHOT_INTERNAL_H
/*
 * Private to lib/snapshot/: nothing outside the folder includes this header.
 * The public entry is snapshot/snapshot.h; libgit2's table is
 * snapshot/git.h, which this includes.
 *
 * The index reader, the ignore rules, the scan of the working tree, the
 * object pack, and the state of one snapshot as take.c hands it to the
 * steps in untracked.c, blob.c, tree.c and commit.c.  The files, top
 * down: a file calls only files below it.
 *
 *   stage.c     xg-snapshot as a stage of a pipeline, around take and replay
 *   take.c      xg_snapshot_take: the early scan, libgit2 opening the
 *               repository meanwhile, then the steps in order
 *   replay.c    xg_snapshot_replay: a clone sharing the repository's
 *               objects, its working tree at the snapshot
 *   untracked.c the untracked walk: what the ignore rules and limits admit
 *   known.c     the untracked and edited files the last snapshot read, not
 *               read again unless an attribute converts them
 *   commit.c    the commit, and the writing of every new object
 *   blob.c      the changed and new files hashed into blobs
 *   driver.c    the clean commands of filter drivers (filter.NAME.clean),
 *               run on a file's content before libgit2's clean filters
 *   tree.c      the trees, a directory without changes keeping its own
 *   settled.c   a snapshot without libgit2 when the repository is as the
 *               last one found it (xg-settings), and HEAD read by hand
 *   step.c      what every step asks of the state: the deadline, the
 *               paths left out
 *   repo.c      the repository: found without libgit2, told apart from
 *               none, opened with libgit2, asked whether it has an object
 *   pack.c      the new objects in memory, written at the end as a pack
 *   odb.c       the object database without libgit2: whether an object is
 *               there, a loose one written, the zlib stored blocks, an
 *               object's id read from hex
 *   scan.c      the scan of the working tree against the index, on threads
 *   index.c     the reader of git's index file
 *   ignore.c    the ignore rules in gitignore syntax, and wildmatch
 *   git.c       libgit2 loaded when first needed, and its last error
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <pthread.h>
#include <sys/stat.h>
#include <git2.h>
#include "buf.h"
#include "snapshot/git.h"
#include "snapshot/snapshot.h"

/*
 * A read-only view of a git index file (versions 2, 3 and 4): its entries
 * with their stat data, and its cache tree (the TREE extension), which
 * names the tree of every directory whose entries did not change since the
 * tree was last written.  xg-snapshot reads the index itself, rather than
 * through git_index, to reach that cache and to read 10,000 entries
 * without allocating for each.
 */

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

/*
 * Patterns in gitignore syntax (gitignore(5)): the .gitignore files,
 * .git/info/exclude and core.excludesFile for what a snapshot leaves out,
 * and .worktreeinclude for what a replay copies.  Matching follows git's
 * rules: the last matching pattern of a list decides, "!" re-includes, a
 * trailing "/" matches directories only, a pattern without a "/" matches a
 * name at any depth, "**" spans directories.
 */

struct xg_snapshot_pattern {
	char *text;
	size_t len;
	size_t literal;		/* bytes before the first wildcard */
	unsigned flags;
};

struct xg_snapshot_rules {
	char *base;		/* the directory the file sits in: "" or "a/b" */
	size_t baselen;
	struct xg_snapshot_pattern *pat;
	size_t nr, alloc;
};

/* Adds the patterns in buf (a file's contents) to r. */
void xg_snapshot_rules_add(struct xg_snapshot_rules *r, const char *buf, size_t len);
/* Reads a file of patterns into r; a missing file adds nothing (0). */
int xg_snapshot_rules_load(struct xg_snapshot_rules *r, const char *base, const char *file);
void xg_snapshot_rules_release(struct xg_snapshot_rules *r);
/*
 * Whether path (relative to the top) matches r: 1 excluded, 0 re-included
 * by a "!" pattern, -1 no pattern matched.
 */
int xg_snapshot_rules_match(const struct xg_snapshot_rules *r, const char *path,
			    size_t len, int is_dir);
/* Whether path (relative to the top) is inside the sparse checkout
 * whose patterns r holds (.git/info/sparse-checkout): 1, else 0. */
int xg_snapshot_rules_sparse(const struct xg_snapshot_rules *r, const char *path, size_t len);
/* wildmatch: 1 when text matches pattern; pathname makes '*' stop at '/'. */
int xg_snapshot_wildmatch(const char *pattern, const char *text, int pathname);
/*
 * The path of git's global excludes file, in a new string: core.excludesFile
 * as cfg sets it, else (cfg NULL included) $XDG_CONFIG_HOME/git/ignore, or
 * ~/.config/git/ignore when XDG_CONFIG_HOME is unset or empty; NULL with
 * neither.
 */
char *xg_snapshot_excludes_path(git_config *cfg);
/* "$XDG_CONFIG_HOME/git/name", or "$HOME/.config/git/name" when
 * XDG_CONFIG_HOME is unset or empty, in a new string; NULL with neither. */
char *xg_snapshot_rules_user_file(const char *name);
/* Whether any attributes file outside the tree is there (the system's,
 * the user's, the repository's info/attributes): 1, else 0. */
int xg_snapshot_attributes_exist(const char *commondir);

/*
 * The scan of the working tree against the index: one job per directory
 * the index knows, run on a few threads.  A job lists its directory once,
 * compares each entry's lstat with the index's stat data, and keeps the
 * names the index does not know for the untracked walk that follows (which
 * runs on the calling thread, as it needs the ignore rules).
 */

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
/* The hash of a path (FNV-1a) that the scan's map is keyed by, and the
 * cache of trees too. */
size_t xg_snapshot_scan_hash(const char *path, size_t len);

/*
 * How a step that may give up at the deadline ends.  Giving up is not a
 * failure: the snapshot record says "timeout" and names no error, and
 * nothing of the step is left in the repository.
 */
enum {
	XG_SNAPSHOT_DONE = 0,
	XG_SNAPSHOT_FAILED = -1,	/* an error, with the message where the step says */
	XG_SNAPSHOT_TIMED_OUT = -2	/* the deadline passed: gave up, nothing written */
};

/*
 * The object database without libgit2 (odb.c): whether an object is in a
 * pack or loose, and the writing of a loose one.
 */

struct xg_snapshot_idx;

struct xg_snapshot_odb {
	char *objdir;		/* "<commondir>objects" */
	int dirfd;		/* open on objdir; -1 */
	int loaded;		/* the packs' indexes are mapped */
	struct xg_snapshot_idx *packs;
	size_t npacks, apacks, last;
};

void xg_snapshot_odb_init(struct xg_snapshot_odb *db, const char *commondir);
void xg_snapshot_odb_release(struct xg_snapshot_odb *db);
/* 1 when a pack or a loose file has oid, else 0. */
int xg_snapshot_odb_has(struct xg_snapshot_odb *db, const unsigned char oid[20]);
/* Writes data as a loose object named oid: 0, or -1 with err. */
int xg_snapshot_odb_write_loose(struct xg_snapshot_odb *db, git_object_t type, const char *data,
				size_t len, const unsigned char oid[20], char *err, size_t errlen);
/* "commit", "tree", "blob" or "tag". */
const char *xg_snapshot_type_name(git_object_t type);
/* Forty hex digits into oid: 0, or -1. */
int xg_snapshot_oid_parse(const char *hex, unsigned char oid[20]);
/* What a zlib stream of stored blocks is made of, a loose object's and
 * each of a pack's: the Adler-32 of the data, and the five bytes before a
 * block of take bytes. */
uint32_t xg_snapshot_adler32(const unsigned char *p, size_t n);
void xg_snapshot_zlib_block(unsigned char blk[5], size_t take, int last);

/*
 * The new objects of a snapshot, kept in memory until the snapshot is
 * complete and then written in one go: as loose objects when there are
 * few, else as one pack and its index (a loose object is a file to
 * create, which costs more than hashing it).  Nothing reaches the
 * repository before xg_snapshot_pack_write, so a snapshot that gives up
 * leaves no trace.  Packed objects are stored, not deflated: git gc
 * compresses them later.
 */

#define XG_SNAPSHOT_LOOSE_MAX 8

struct xg_snapshot_obj {
	unsigned char oid[20];
	git_object_t type;
	char *data;
	size_t len;
};

struct xg_snapshot_pack {
	/* Whether the repository has an object already (xg_snapshot_has). */
	int (*has)(void *arg, const unsigned char oid[20]);
	void *arg;
	struct xg_snapshot_obj *objs;
	size_t nr, alloc;
	size_t *slots;		/* open-addressed set of objs indices + 1 */
	size_t nslots;
	size_t bytes;
};

void xg_snapshot_pack_init(struct xg_snapshot_pack *pk,
			   int (*has)(void *arg, const unsigned char oid[20]), void *arg);
void xg_snapshot_pack_release(struct xg_snapshot_pack *pk);
/*
 * Hashes len bytes of data as an object of the given type into oid and
 * keeps it unless the repository or the pack has it already.  Takes data
 * (malloc'd).  0.
 */
int xg_snapshot_pack_add(struct xg_snapshot_pack *pk, git_object_t type, char *data,
			 size_t len, unsigned char oid[20]);
/*
 * Writes what was added under objdir ("<gitdir>/objects"): XG_SNAPSHOT_DONE,
 * or XG_SNAPSHOT_FAILED with the message in err.  Past deadline (an
 * xg_clock_ms() value; 0 for none), checked as the pack is written and
 * before it is put in place, it gives up and returns XG_SNAPSHOT_TIMED_OUT,
 * with its temporary files removed.
 */
int xg_snapshot_pack_write(struct xg_snapshot_pack *pk, struct xg_snapshot_odb *db,
			   int64_t deadline, char *err, size_t errlen);

/*
 * One snapshot as it is taken (take.c): the options and the deadline, the
 * repository and its index, the scan, the ignore rules, and what the steps
 * find and make on the way: untracked.c the untracked files admitted
 * within the limits, blob.c their contents and those of the changed files
 * hashed into blobs, tree.c the trees, commit.c the commit and the writing
 * of every new object at the end.  Counts and skipped paths go into the
 * record; err holds the message of an error that stopped it.
 */

struct xg_snapshot_ufile {	/* an untracked file to include */
	char *path;
	size_t len;
	unsigned char type;	/* DT_REG, DT_LNK, DT_DIR for a nested repository; 0: left out */
	unsigned char known;	/* oid comes from the last snapshot (known.c) */
	unsigned char plain;	/* no attribute converts it: it may be known */
	unsigned char eol_only;	/* only its line endings: without a CR, none */
	unsigned char cr;	/* its bytes hold a CR: eol_only converts them */
	unsigned char oid[20];
	uint32_t mode;
	uint64_t size;
	struct stat st;		/* as last seen: by the walk, then before the read */
};

struct xg_snapshot_tfile {	/* a tracked file whose stat data changed */
	size_t i;		/* its index entry */
	unsigned char known;	/* s->oids' comes from the last snapshot */
	unsigned char plain;	/* no attribute converts it: it may be known */
	unsigned char eol_only;	/* only its line endings: without a CR, none */
	unsigned char cr;	/* its bytes hold a CR: eol_only converts them */
	unsigned char hashed;	/* its blob is in s->oids */
	struct stat st;		/* before it was read; st_mode 0: not seen */
};

/* The untracked files the last snapshot read (known.c). */
struct xg_snapshot_known_file {
	char *path;		/* into text */
	unsigned char oid[20];
	unsigned char cr;	/* the bytes held a CR: the blob is theirs only
				   while no attribute converts line endings */
	uint32_t mode, uid, gid;
	uint64_t size, ino, dev;
	int64_t mtime_s, ctime_s;
	long mtime_ns, ctime_ns;
};

struct xg_snapshot_known {
	struct xg_buf text;
	int ok;			/* there is a reference time: apply and save */
	struct timespec ref;	/* this snapshot's reference time (known.c) */
	struct timespec old;	/* the last snapshot's, which files are judged by */
	uint64_t dev;		/* the working tree's filesystem */
	struct xg_snapshot_known_file *files;	/* sorted by path */
	size_t nr, alloc, used;
	struct xg_snapshot_attr_file *attrs;	/* .gitattributes read so far */
	size_t nattrs, aattrs;
};

struct xg_snapshot_attr_file {	/* a directory's .gitattributes (known.c) */
	char *dir;		/* "" for the top, "a/b" below */
	struct xg_buf text;	/* empty: none */
	int opaque;		/* what libgit2 must read: in the index only, a macro */
};

struct xg_snapshot_driver;	/* a filter driver (driver.c) */

struct xg_snapshot_state {
	const struct xg_snapshot_opts *o;
	int64_t start, deadline;
	git_repository *repo;	/* NULL until libgit2 opens it, if ever */
	git_odb *odb;		/* with repo, for alternates */
	int git_up;		/* libgit2 loaded and initialised */
	struct xg_snapshot_odb db;
	int alternates;		/* objects/info/alternates is there */
	char *workdir, *gitdir, *commondir;	/* as libgit2 gives them: "/a/b/" */
	char *excludes;		/* the global excludes file; NULL: none */
	char *name, *email;	/* the commit's author and committer */
	int rootfd;
	struct xg_snapshot_index ix;
	struct xg_snapshot_scan sc;
	struct xg_snapshot_rules exclude, excludes_file;
	int sparse;		/* core.sparseCheckout */
	int sparse_on;		/* and its patterns read: what is outside stays */
	struct xg_snapshot_rules sparse_rules;
	int can_filter;
	unsigned char *oids;	/* per index entry: the hashed id */
	uint32_t *modes;	/* per index entry: the working tree's mode */
	struct xg_snapshot_ufile *u;
	size_t nu, au;
	struct xg_snapshot_tfile *t;	/* in index order (known.c, blob.c) */
	size_t nt, at;
	int autocrlf;		/* core.autocrlf asks for conversion */
	struct xg_snapshot_known known;
	uint64_t utotal;
	size_t ucount;
	jv skipped;
	size_t nskipped;
	long changed, deleted;
	uint64_t bytes;
	size_t files;
	int complete, timed_out;
	struct xg_snapshot_cache_tree **cache;	/* path -> cache tree */
	size_t ncache;
	struct xg_snapshot_pack pk;
	char *pre_workdir, *pre_gitdir;	/* where the early scan runs */
	int prescanned;
	int pre_plain;		/* libgit2 would find the same (discover) */
	int config_filter;	/* clean filters from the configuration */
	struct xg_snapshot_driver *drivers;	/* driver.c's, once read */
	size_t ndrivers, adrivers;
	int drivers_loaded;
	char err[512];
};

/* What every step asks of the state (step.c).  Whether the deadline has
 * passed; once it has, it stays so. */
int xg_snapshot_timed_out(struct xg_snapshot_state *s);
/* Leaves path out, with its reason in the record's skipped[]. */
void xg_snapshot_skip(struct xg_snapshot_state *s, const char *path, size_t len,
		      const char *reason);

/*
 * The repository (repo.c).  _discover finds the working tree and git
 * directory above dir the way git does for a plain repository or a linked
 * worktree (a .git directory, or a .git file naming one), without
 * libgit2, into new strings: 0, or -1.  The early scan runs there while
 * libgit2 starts, and take.c checks that libgit2 found the same.  *plain
 * (unless NULL) says whether libgit2 could have found nothing else: the
 * walk up stayed on one filesystem, which libgit2 does not leave, and
 * passed no directory with a HEAD, which it could take for a repository
 * of its own.
 */
int xg_snapshot_discover(const char *dir, char **workdir, char **gitdir, int *plain);
/* Loads and initialises libgit2 once; then opens the repository at the
 * working tree, when the snapshot started without it: 0, or -1 with
 * s->err. */
int xg_snapshot_git_up(struct xg_snapshot_state *s);
int xg_snapshot_repo_open(struct xg_snapshot_state *s);
/* Whether the repository has the object: 1 or 0. */
int xg_snapshot_has(struct xg_snapshot_state *s, const unsigned char oid[20]);

/*
 * The repository as the last snapshot found it (settled.c).  _load takes
 * the settings and paths from xg-settings when the fingerprint of what
 * they came from is the same, and reads HEAD (*has_head 0: unborn): 0,
 * else -1 (a HEAD this cannot read included).  _inputs computes that
 * fingerprint for the paths discover found (-1 when the settings could
 * depend on more than it covers); _paths_are says whether libgit2 gave
 * the same paths, and _config_ours whether the configuration files it
 * found (NULL-terminated) are among those the fingerprint covers.  _save
 * writes xg-settings when it changed.
 */
int xg_snapshot_settled_load(struct xg_snapshot_state *s, unsigned char head[20], int *has_head);
int xg_snapshot_settled_inputs(const char *workdir, const char *gitdir, const char *commondir,
			       char hex[41]);
int xg_snapshot_settled_inputs_of(const struct xg_snapshot_state *s, char hex[41]);
int xg_snapshot_settled_paths_are(const struct xg_snapshot_state *s);
int xg_snapshot_settled_config_ours(const char *gitdir, const char *commondir,
				    const char *const *found);
void xg_snapshot_settled_save(struct xg_snapshot_state *s, const char *inputs);
/* HEAD's commit read without libgit2: 1 with oid, 0 when HEAD names a
 * branch not yet born, -1 when it is one for libgit2 to read. */
int xg_snapshot_head(const char *gitdir, const char *commondir, unsigned char oid[20]);
/* HEAD's commit of the repository at path inside the working tree (a
 * submodule, a nested repository): 1 with oid, -1 when it has no commit,
 * 0 when there is no repository there.  Read by hand, else by libgit2. */
int xg_snapshot_repo_head(struct xg_snapshot_state *s, const char *path, unsigned char oid[20]);

/* Finds the untracked files the ignore rules let through, within the
 * limits, into s->u; what the limits leave out is skipped. */
void xg_snapshot_untracked_walk(struct xg_snapshot_state *s);

/* Takes the blobs of the untracked files, and lists the tracked ones to
 * hash (s->t) with theirs, whose stat data is as the last snapshot knew
 * it and no attribute converts; after a snapshot is written, keeps what
 * this one knows for the next (known.c). */
void xg_snapshot_known_apply(struct xg_snapshot_state *s);
void xg_snapshot_known_save(struct xg_snapshot_state *s);
void xg_snapshot_known_release(struct xg_snapshot_known *k);

/*
 * Read the changed tracked files and the untracked ones and hash them into
 * blobs (kept in s->pk), noting changes and deletions: XG_SNAPSHOT_DONE,
 * XG_SNAPSHOT_TIMED_OUT, or XG_SNAPSHOT_FAILED with s->err.  A file that
 * cannot be read is skipped, not a failure.
 */
int xg_snapshot_blob_hash_tracked(struct xg_snapshot_state *s);
int xg_snapshot_blob_hash_untracked(struct xg_snapshot_state *s);

/*
 * Runs the clean command of the filter driver that path's "filter"
 * attribute names, if any, on b's content, which it replaces
 * (driver.c): XG_SNAPSHOT_DONE (also when no driver applies, or when one
 * not required failed and the content stays raw, as git keeps it),
 * XG_SNAPSHOT_FAILED when a required driver failed or one cannot be run,
 * XG_SNAPSHOT_TIMED_OUT with s->timed_out set.
 */
int xg_snapshot_driver_clean(struct xg_snapshot_state *s, const char *path, struct xg_buf *b);
void xg_snapshot_driver_release(struct xg_snapshot_state *s);

/* The index's cache tree by path, so that a directory without changes
 * keeps its tree; xg_snapshot_tree_invalidate marks the directories above
 * a changed path as changed. */
void xg_snapshot_tree_cache_build(struct xg_snapshot_state *s);
void xg_snapshot_tree_invalidate(struct xg_snapshot_state *s, const char *path, size_t len);
/* Builds the snapshot's top tree into tree, setting s->files; -1 with
 * s->err. */
int xg_snapshot_tree_write(struct xg_snapshot_state *s, unsigned char tree[20]);

/*
 * Makes the commit of tree on parent (NULL: none) into oid and writes every
 * new object: XG_SNAPSHOT_DONE, XG_SNAPSHOT_TIMED_OUT (nothing put in place,
 * s->timed_out set), or XG_SNAPSHOT_FAILED with s->err.
 */
int xg_snapshot_commit_write(struct xg_snapshot_state *s, const unsigned char tree[20],
			     const unsigned char *parent, unsigned char oid[20]);

#endif
