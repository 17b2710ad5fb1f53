#ifndef XG_SNAPSHOT_PACK_H
#define XG_SNAPSHOT_PACK_H
/*
 * The new objects of a snapshot, kept in memory until the snapshot is
 * complete and then written in one go: as loose objects when there are
 * few, else as one pack and its index (a loose object is a file to
 * create, which costs more than hashing it).  Nothing reaches the
 * repository before xg_snapshot_pack_write, so a snapshot that gives up
 * leaves no trace.  Packed objects are stored, not deflated: git gc
 * compresses them later.
 */
#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#define XG_SNAPSHOT_LOOSE_MAX 8

struct xg_snapshot_obj {
	unsigned char oid[20];
	git_object_t type;
	char *data;
	size_t len;
};

struct xg_snapshot_pack {
	git_odb *odb;
	struct xg_snapshot_obj *objs;
	size_t nr, alloc;
	size_t *slots;		/* open-addressed set of objs indices + 1 */
	size_t nslots;
	size_t bytes;
};

void xg_snapshot_pack_init(struct xg_snapshot_pack *pk, git_odb *odb);
void xg_snapshot_pack_release(struct xg_snapshot_pack *pk);
/*
 * Hashes len bytes of data as an object of the given type into oid and
 * keeps it unless the repository or the pack has it already.  Takes data
 * (malloc'd).  -1 with a libgit2 error.
 */
int xg_snapshot_pack_add(struct xg_snapshot_pack *pk, git_object_t type, char *data,
			 size_t len, unsigned char oid[20]);
/*
 * Writes what was added under objdir ("<gitdir>/objects"); -1 with err.
 * Past deadline (an xg_clock_ms() value; 0 for none), checked as the pack
 * is written and before it is put in place, it gives up and returns -2,
 * with its temporary files removed.
 */
int xg_snapshot_pack_write(struct xg_snapshot_pack *pk, const char *objdir,
			   int64_t deadline, char *err, size_t errlen);

#endif
