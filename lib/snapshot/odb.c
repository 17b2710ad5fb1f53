/*
 * The object database as a snapshot needs it, without libgit2: whether an
 * object is there, and writing one loose.  A snapshot only asks whether
 * the objects it names exist, to leave out those it need not write, and
 * writes a few objects loose at the end (more make a pack, pack.c).
 *
 * An object is there when a pack's index lists it and the pack is beside
 * its index, or when its loose file is.  The packs' indexes (version 2)
 * are mapped the first time one is asked, once per snapshot, and looked
 * up through their fan-out table.  A wrong "no" only writes an object
 * again, which git takes; a wrong "yes" would leave a commit naming an
 * object the repository lacks, so nothing is taken on a guess: an index
 * of another version, or one that does not check out, lists nothing.  A
 * repository with alternates asks libgit2 for what it does not find.
 *
 * A loose object is a zlib stream of stored blocks (git gc compresses it
 * later, as it does the pack's objects), written to a temporary file in
 * its directory, read-only, and renamed into place.  The pack's objects
 * are such streams too, so the Adler-32 and the blocks' headers are here,
 * beneath pack.c.
 */
#include "xg.h"
#include "snapshot/internal.h"
#include "sha1.h"
#include <dirent.h>
#include <sys/mman.h>

struct xg_snapshot_idx {
	const unsigned char *map;
	size_t len;
	uint32_t nr;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static const char *const type_names[] = {
	[GIT_OBJECT_COMMIT] = "commit", [GIT_OBJECT_TREE] = "tree",
	[GIT_OBJECT_BLOB] = "blob", [GIT_OBJECT_TAG] = "tag",
};

const char *xg_snapshot_type_name(git_object_t type)
{
	return type > 0 && (size_t)type < sizeof(type_names) / sizeof(*type_names) &&
	       type_names[type] ? type_names[type] : "blob";
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int xg_snapshot_oid_parse(const char *hex, unsigned char oid[20])
{
	int i;

	for (i = 0; i < 20; i++) {
		int h = hexval((unsigned char)hex[2 * i]), l = hexval((unsigned char)hex[2 * i + 1]);

		if (h < 0 || l < 0)
			return -1;
		oid[i] = (unsigned char)(h << 4 | l);
	}
	return 0;
}

/* Maps one pack's index; 0, or -1 when it is not one to trust. */
static int map_idx(int dirfd, const char *name, struct xg_snapshot_idx *x)
{
	char pack[NAME_MAX + 1];
	size_t n = strlen(name);
	struct stat st;
	int fd;

	if (n < 5 || n + 2 > sizeof(pack))
		return -1;
	memcpy(pack, name, n - 4);
	memcpy(pack + n - 4, ".pack", 6);
	if (faccessat(dirfd, pack, F_OK, 0) < 0)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < 8 + 1024 + 40) {
		close(fd);
		return -1;
	}
	x->len = (size_t)st.st_size;
	x->map = mmap(NULL, x->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (x->map == MAP_FAILED)
		return -1;
	x->nr = be32(x->map + 8 + 255 * 4);
	/* Version 2: the magic, then 256 counts, the names, their CRCs and
	 * offsets, and two checksums. */
	if (memcmp(x->map, "\377tOc\0\0\0\2", 8) ||
	    (uint64_t)x->nr * 28 + 8 + 1024 + 40 > x->len) {
		munmap((void *)x->map, x->len);
		return -1;
	}
	return 0;
}

static void load_packs(struct xg_snapshot_odb *db)
{
	char *dir = xg_path_join(db->objdir, "pack");
	DIR *dp;
	struct dirent *de;
	int fd;

	db->loaded = 1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0 || !(dp = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name);
		struct xg_snapshot_idx x;

		if (n < 9 || strncmp(de->d_name, "pack-", 5) || strcmp(de->d_name + n - 4, ".idx"))
			continue;
		if (map_idx(dirfd(dp), de->d_name, &x) < 0)
			continue;
		XG_ALLOC_GROW(db->packs, db->npacks + 1, db->apacks);
		db->packs[db->npacks++] = x;
	}
	closedir(dp);
}

static int cmp_oid(const void *a, const void *b)
{
	return memcmp(a, b, 20);
}

static int idx_has(const struct xg_snapshot_idx *x, const unsigned char *oid)
{
	const unsigned char *names = x->map + 8 + 1024;
	uint32_t lo = oid[0] ? be32(x->map + 8 + (oid[0] - 1) * 4) : 0;
	uint32_t hi = be32(x->map + 8 + oid[0] * 4);

	/* The fan-out bounds the names starting with oid's first byte. */
	if (hi > x->nr || lo >= hi)
		return 0;
	return bsearch(oid, names + (size_t)lo * 20, hi - lo, 20, cmp_oid) != NULL;
}

static int loose_has(const struct xg_snapshot_odb *db, const unsigned char *oid)
{
	char hex[41], path[48];
	struct stat st;

	xg_snapshot_sha1_hex(oid, hex);
	snprintf(path, sizeof(path), "%.2s/%s", hex, hex + 2);
	return db->dirfd >= 0 && !fstatat(db->dirfd, path, &st, 0) && S_ISREG(st.st_mode);
}

void xg_snapshot_odb_init(struct xg_snapshot_odb *db, const char *commondir)
{
	memset(db, 0, sizeof(*db));
	db->objdir = xg_asprintf("%sobjects", commondir);
	db->dirfd = open(db->objdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int xg_snapshot_odb_has(struct xg_snapshot_odb *db, const unsigned char oid[20])
{
	size_t i;

	if (!db->loaded)
		load_packs(db);
	for (i = 0; i < db->npacks; i++) {
		/* The pack that held the last one is likeliest to hold this. */
		size_t k = (db->last + i) % db->npacks;

		if (idx_has(&db->packs[k], oid)) {
			db->last = k;
			return 1;
		}
	}
	return loose_has(db, oid);
}

void xg_snapshot_odb_release(struct xg_snapshot_odb *db)
{
	size_t i;

	for (i = 0; i < db->npacks; i++)
		munmap((void *)db->packs[i].map, db->packs[i].len);
	free(db->packs);
	free(db->objdir);
	if (db->dirfd >= 0)
		close(db->dirfd);
	memset(db, 0, sizeof(*db));
	db->dirfd = -1;
}

/* 5552 bytes is the most whose sums cannot overflow 32 bits before they
 * are reduced (zlib's NMAX). */
uint32_t xg_snapshot_adler32(const unsigned char *p, size_t n)
{
	uint32_t a = 1, b = 0;

	while (n) {
		size_t k = n < 5552 ? n : 5552, i;

		for (i = 0; i < k; i++) {
			a += p[i];
			b += a;
		}
		a %= 65521;
		b %= 65521;
		p += k;
		n -= k;
	}
	return b << 16 | a;
}

void xg_snapshot_zlib_block(unsigned char blk[5], size_t take, int last)
{
	blk[0] = (unsigned char)last;
	blk[1] = (unsigned char)take;
	blk[2] = (unsigned char)(take >> 8);
	blk[3] = (unsigned char)~take;
	blk[4] = (unsigned char)(~take >> 8);
}

/* The object "TYPE LEN\0DATA" as a zlib stream of stored blocks. */
static void deflate_stored(struct xg_buf *z, const char *raw, size_t total)
{
	unsigned char blk[5], ad[4];
	uint32_t a = xg_snapshot_adler32((const unsigned char *)raw, total);
	size_t off = 0;

	xg_buf_add(z, "\x78\x01", 2);
	do {
		size_t take = total - off > 65535 ? 65535 : total - off;

		xg_snapshot_zlib_block(blk, take, off + take == total);
		xg_buf_add(z, blk, 5);
		xg_buf_add(z, raw + off, take);
		off += take;
	} while (off < total);
	ad[0] = (unsigned char)(a >> 24);
	ad[1] = (unsigned char)(a >> 16);
	ad[2] = (unsigned char)(a >> 8);
	ad[3] = (unsigned char)a;
	xg_buf_add(z, ad, 4);
}

int xg_snapshot_odb_write_loose(struct xg_snapshot_odb *db, git_object_t type, const char *data,
				size_t len, const unsigned char oid[20], char *err, size_t errlen)
{
	struct xg_buf raw = XG_BUF_INIT(0), z = XG_BUF_INIT(0);
	char hex[41], *dir, *tmp, *final;
	int fd, rc = -1;

	xg_buf_addf(&raw, "%s %zu", xg_snapshot_type_name(type), len);
	xg_buf_addch(&raw, '\0');
	xg_buf_add(&raw, data, len);
	xg_buf_grow(&z, raw.len + raw.len / 65535 * 5 + 16);
	deflate_stored(&z, raw.buf, raw.len);
	xg_snapshot_sha1_hex(oid, hex);
	dir = xg_asprintf("%s/%.2s", db->objdir, hex);
	tmp = xg_asprintf("%s/tmp_obj_XXXXXX", dir);
	final = xg_asprintf("%s/%s", dir, hex + 2);
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (xg_write_all(fd, z.buf, z.len) < 0 || fchmod(fd, 0444) < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, final) < 0) {
		snprintf(err, errlen, "cannot rename to '%s': %s", final, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	xg_buf_release(&raw);
	xg_buf_release(&z);
	free(dir);
	free(tmp);
	free(final);
	return rc;
}
