/*
 * The pack of a snapshot's new objects (see snapshot/internal.h): the
 * in-memory set that xg_snapshot_pack_add fills, hashing each object and
 * dropping those the repository or the set has already, then the writing
 * at the end.  A few objects are written loose (odb.c); more make one
 * pack file (version 2, objects stored in zlib blocks without compression,
 * their headers and checksums made by odb.c) and its index (version 2),
 * each written to a temporary file with a running SHA-1 and CRC-32 and
 * renamed into place, the pack first.  The deadline is checked at every
 * buffer written and once more before the renames: giving up removes the
 * temporary files.
 */
#include "xg.h"
#include "snapshot/internal.h"
#include "sha1.h"

void xg_snapshot_pack_init(struct xg_snapshot_pack *pk,
			   int (*has)(void *arg, const unsigned char oid[20]), void *arg)
{
	memset(pk, 0, sizeof(*pk));
	pk->has = has;
	pk->arg = arg;
}

void xg_snapshot_pack_release(struct xg_snapshot_pack *pk)
{
	size_t i;

	for (i = 0; i < pk->nr; i++)
		free(pk->objs[i].data);
	free(pk->objs);
	free(pk->slots);
	memset(pk, 0, sizeof(*pk));
}

static size_t slot_of(const unsigned char *oid, size_t nslots)
{
	size_t h;

	memcpy(&h, oid, sizeof(h));
	return h & (nslots - 1);
}

static void rehash(struct xg_snapshot_pack *pk)
{
	size_t i, n = pk->nslots ? pk->nslots * 2 : 64;

	free(pk->slots);
	pk->slots = xg_calloc(n, sizeof(*pk->slots));
	pk->nslots = n;
	for (i = 0; i < pk->nr; i++) {
		size_t s = slot_of(pk->objs[i].oid, n);

		while (pk->slots[s])
			s = (s + 1) & (n - 1);
		pk->slots[s] = i + 1;
	}
}

/* 1 when the pack holds oid already; else *slot is where it would go. */
static int pack_has(struct xg_snapshot_pack *pk, const unsigned char *oid, size_t *slot)
{
	size_t s = slot_of(oid, pk->nslots);

	while (pk->slots[s]) {
		if (!memcmp(pk->objs[pk->slots[s] - 1].oid, oid, 20))
			return 1;
		s = (s + 1) & (pk->nslots - 1);
	}
	*slot = s;
	return 0;
}

/*
 * The object's name: the SHA-1 of its header and data, as git_odb_hash
 * computes it, with the SHA extensions where the processor has them.
 * libgit2's own SHA-1 detects the known collision attacks and is several
 * times slower; a snapshot hashes every untracked file each time, so its
 * hash is the one most of an unchanged tree's snapshot waits on.  git
 * reads what is written with its own checks.
 */
static void object_id(git_object_t type, const char *data, size_t len, unsigned char oid[20])
{
	struct xg_snapshot_sha1 c;
	char hdr[64];
	int n = snprintf(hdr, sizeof(hdr), "%s %zu", xg_snapshot_type_name(type), len);

	xg_snapshot_sha1_init(&c);
	xg_snapshot_sha1_update(&c, hdr, (size_t)n + 1);
	xg_snapshot_sha1_update(&c, data, len);
	xg_snapshot_sha1_final(&c, oid);
}

int xg_snapshot_pack_add(struct xg_snapshot_pack *pk, git_object_t type, char *data,
			 size_t len, unsigned char oid[20])
{
	struct xg_snapshot_obj *o;
	size_t slot;

	object_id(type, data, len, oid);
	if ((pk->nr + 1) * 2 > pk->nslots)
		rehash(pk);
	if (pack_has(pk, oid, &slot) || pk->has(pk->arg, oid)) {
		free(data);
		return 0;
	}
	XG_ALLOC_GROW(pk->objs, pk->nr + 1, pk->alloc);
	o = &pk->objs[pk->nr++];
	memcpy(o->oid, oid, 20);
	o->type = type;
	o->data = data;
	o->len = len;
	pk->slots[slot] = pk->nr;
	pk->bytes += len;
	return 0;
}

/* A writer that keeps the SHA-1 of everything written and the CRC-32 of
 * the current object. */
struct out {
	int fd;
	struct xg_snapshot_sha1 sha;
	uint32_t crc, crctab[8][256];	/* slicing-by-8 */
	unsigned char buf[1 << 16];
	size_t used;
	uint64_t off;
	int failed;			/* errno; ETIMEDOUT past the deadline */
	int64_t deadline;		/* xg_clock_ms() value; 0: none */
};

static void out_flush(struct out *w)
{
	size_t done = 0;

	/* Checked at every buffer written: a large pack must not overrun. */
	if (w->deadline && !w->failed && xg_clock_ms() > w->deadline)
		w->failed = ETIMEDOUT;
	while (!w->failed && done < w->used) {
		ssize_t n = write(w->fd, w->buf + done, w->used - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			w->failed = errno;
			break;
		}
		done += (size_t)n;
	}
	w->used = 0;
}

/* CRC-32 (the zlib polynomial) eight bytes at a time. */
static uint32_t crc_update(uint32_t (*t)[256], uint32_t crc, const unsigned char *p, size_t n)
{
	while (n >= 8) {
		uint32_t a = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);

		crc = t[7][a & 0xff] ^ t[6][(a >> 8) & 0xff] ^ t[5][(a >> 16) & 0xff] ^
		      t[4][a >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static void out_add(struct out *w, const void *data, size_t n)
{
	const unsigned char *p = data;

	xg_snapshot_sha1_update(&w->sha, p, n);
	w->crc = crc_update(w->crctab, w->crc, p, n);
	w->off += n;
	while (n) {
		size_t take = sizeof(w->buf) - w->used < n ? sizeof(w->buf) - w->used : n;

		memcpy(w->buf + w->used, p, take);
		w->used += take;
		p += take;
		n -= take;
		if (w->used == sizeof(w->buf))
			out_flush(w);
	}
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* One object: its type and size, then a zlib stream of stored blocks. */
static void write_object(struct out *w, const struct xg_snapshot_obj *o)
{
	unsigned char hdr[16], blk[5], z[2] = { 0x78, 0x01 }, ad[4];
	size_t n = 0, len = o->len, off = 0;

	hdr[n++] = (unsigned char)((o->type << 4) | (len & 15));
	len >>= 4;
	while (len) {
		hdr[n - 1] |= 0x80;
		hdr[n++] = (unsigned char)(len & 0x7f);
		len >>= 7;
	}
	out_add(w, hdr, n);
	out_add(w, z, 2);
	do {
		size_t take = o->len - off > 65535 ? 65535 : o->len - off;

		xg_snapshot_zlib_block(blk, take, off + take == o->len);
		out_add(w, blk, 5);
		out_add(w, o->data + off, take);
		off += take;
	} while (off < o->len);
	put32(ad, xg_snapshot_adler32((const unsigned char *)o->data, o->len));
	out_add(w, ad, 4);
}

static int cmp_oid(const void *a, const void *b)
{
	const struct xg_snapshot_obj *const *x = a, *const *y = b;

	return memcmp((*x)->oid, (*y)->oid, 20);
}

static int write_idx(struct out *w, struct xg_snapshot_pack *pk, uint32_t *crcs,
		     uint64_t *offs, const unsigned char packsum[20])
{
	struct xg_snapshot_obj **sorted = xg_malloc(pk->nr * sizeof(*sorted));
	unsigned char b[8], sum[20];
	uint32_t fan[256] = { 0 }, nlarge = 0;
	size_t i;

	for (i = 0; i < pk->nr; i++)
		sorted[i] = &pk->objs[i];
	XG_QSORT(sorted, pk->nr, cmp_oid);
	out_add(w, "\377tOc\0\0\0\2", 8);
	for (i = 0; i < pk->nr; i++)
		fan[sorted[i]->oid[0]]++;
	for (i = 1; i < 256; i++)
		fan[i] += fan[i - 1];
	for (i = 0; i < 256; i++) {
		put32(b, fan[i]);
		out_add(w, b, 4);
	}
	for (i = 0; i < pk->nr; i++)
		out_add(w, sorted[i]->oid, 20);
	for (i = 0; i < pk->nr; i++) {
		put32(b, crcs[sorted[i] - pk->objs]);
		out_add(w, b, 4);
	}
	for (i = 0; i < pk->nr; i++) {
		uint64_t o = offs[sorted[i] - pk->objs];

		put32(b, o < 0x80000000u ? (uint32_t)o : 0x80000000u | nlarge++);
		out_add(w, b, 4);
	}
	for (i = 0; i < pk->nr; i++) {
		uint64_t o = offs[sorted[i] - pk->objs];

		if (o >= 0x80000000u) {
			put32(b, (uint32_t)(o >> 32));
			put32(b + 4, (uint32_t)o);
			out_add(w, b, 8);
		}
	}
	out_add(w, packsum, 20);
	xg_snapshot_sha1_final(&w->sha, sum);
	out_add(w, sum, 20);
	out_flush(w);
	free(sorted);
	return w->failed ? -1 : 0;
}

static int open_tmp(struct out *w, char *tmpl)
{
	uint32_t c, k;
	int i;

	w->crc = 0;
	w->off = 0;
	w->failed = 0;
	for (c = 0; c < 256; c++) {
		for (k = c, i = 0; i < 8; i++)
			k = k & 1 ? 0xEDB88320u ^ (k >> 1) : k >> 1;
		w->crctab[0][c] = k;
	}
	for (c = 0; c < 256; c++)
		for (i = 1; i < 8; i++)
			w->crctab[i][c] = w->crctab[0][w->crctab[i - 1][c] & 0xff] ^
					  (w->crctab[i - 1][c] >> 8);
	xg_snapshot_sha1_init(&w->sha);
	w->used = 0;
	w->fd = mkstemp(tmpl);
	return w->fd;
}

static int close_fd(struct out *w)
{
	int rc = close(w->fd);

	w->fd = -1;
	return rc;
}

/* Each object as a loose file: XG_SNAPSHOT_DONE, _FAILED or _TIMED_OUT. */
static int write_loose(struct xg_snapshot_pack *pk, struct xg_snapshot_odb *db, int64_t deadline,
		       char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < pk->nr; i++) {
		const struct xg_snapshot_obj *o = &pk->objs[i];

		/* An object already written is whole, and unreachable: gc
		 * removes it as it removes any other. */
		if (deadline && xg_clock_ms() > deadline)
			return XG_SNAPSHOT_TIMED_OUT;
		if (xg_snapshot_odb_write_loose(db, o->type, o->data, o->len, o->oid, err, errlen) < 0)
			return XG_SNAPSHOT_FAILED;
	}
	return XG_SNAPSHOT_DONE;
}

/* Writes a temporary file from tmpl (a mkstemp template, replaced by the
 * name made) with what fill writes; read-only when done.  XG_SNAPSHOT_DONE,
 * or _FAILED or _TIMED_OUT with the file removed. */
static int write_tmp(struct out *w, char *tmpl, char *err, size_t errlen,
		     int (*fill)(struct out *, void *), void *arg)
{
	if (open_tmp(w, tmpl) < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", tmpl, strerror(errno));
		return XG_SNAPSHOT_FAILED;
	}
	if (fill(w, arg) < 0 || fchmod(w->fd, 0444) < 0 || close_fd(w) < 0) {
		int timed_out = w->failed == ETIMEDOUT;

		snprintf(err, errlen, "cannot write '%s': %s", tmpl,
			 strerror(w->failed ? w->failed : errno));
		if (w->fd >= 0)
			close_fd(w);
		unlink(tmpl);
		return timed_out ? XG_SNAPSHOT_TIMED_OUT : XG_SNAPSHOT_FAILED;
	}
	return XG_SNAPSHOT_DONE;
}

struct pack_job {
	struct xg_snapshot_pack *pk;
	uint32_t *crcs;
	uint64_t *offs;
	unsigned char sum[20];
};

static int fill_pack(struct out *w, void *arg)
{
	struct pack_job *j = arg;
	unsigned char hdr[12];
	size_t i;

	memcpy(hdr, "PACK", 4);
	put32(hdr + 4, 2);
	put32(hdr + 8, (uint32_t)j->pk->nr);
	out_add(w, hdr, 12);
	for (i = 0; i < j->pk->nr && !w->failed; i++) {
		j->offs[i] = w->off;
		w->crc = 0xFFFFFFFFu;
		write_object(w, &j->pk->objs[i]);
		j->crcs[i] = w->crc ^ 0xFFFFFFFFu;
	}
	xg_snapshot_sha1_final(&w->sha, j->sum);
	out_add(w, j->sum, 20);
	out_flush(w);
	return w->failed ? -1 : 0;
}

static int fill_idx(struct out *w, void *arg)
{
	struct pack_job *j = arg;

	return write_idx(w, j->pk, j->crcs, j->offs, j->sum);
}

int xg_snapshot_pack_write(struct xg_snapshot_pack *pk, struct xg_snapshot_odb *db,
			   int64_t deadline, char *err, size_t errlen)
{
	struct pack_job j = { pk, NULL, NULL, { 0 } };
	char *dir, *tmp_pack, *tmp_idx, *name = NULL, hex[41];
	struct out *w;
	int rc = XG_SNAPSHOT_FAILED;

	if (!pk->nr)
		return XG_SNAPSHOT_DONE;
	if (pk->nr <= XG_SNAPSHOT_LOOSE_MAX)
		return write_loose(pk, db, deadline, err, errlen);
	dir = xg_path_join(db->objdir, "pack");
	if (xg_mkdir_p(dir, 0777) < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
		free(dir);
		return XG_SNAPSHOT_FAILED;
	}
	w = xg_malloc(sizeof(*w));
	w->deadline = deadline;
	j.crcs = xg_malloc(pk->nr * sizeof(*j.crcs));
	j.offs = xg_malloc(pk->nr * sizeof(*j.offs));
	tmp_pack = xg_asprintf("%s/tmp_pack_XXXXXX", dir);
	tmp_idx = xg_asprintf("%s/tmp_idx_XXXXXX", dir);
	if ((rc = write_tmp(w, tmp_pack, err, errlen, fill_pack, &j)) != XG_SNAPSHOT_DONE)
		goto out;
	if ((rc = write_tmp(w, tmp_idx, err, errlen, fill_idx, &j)) != XG_SNAPSHOT_DONE) {
		unlink(tmp_pack);
		goto out;
	}
	rc = XG_SNAPSHOT_FAILED;
	/* The last moment to give up: the renames make the objects real. */
	if (deadline && xg_clock_ms() > deadline) {
		unlink(tmp_pack);
		unlink(tmp_idx);
		rc = XG_SNAPSHOT_TIMED_OUT;
		goto out;
	}
	xg_snapshot_sha1_hex(j.sum, hex);
	/* The pack before its index: readers find packs by their index. */
	name = xg_asprintf("%s/pack-%s.pack", dir, hex);
	if (rename(tmp_pack, name) < 0) {
		snprintf(err, errlen, "cannot rename to '%s': %s", name, strerror(errno));
		unlink(tmp_pack);
		unlink(tmp_idx);
		goto out;
	}
	free(name);
	name = xg_asprintf("%s/pack-%s.idx", dir, hex);
	if (rename(tmp_idx, name) < 0) {
		snprintf(err, errlen, "cannot rename to '%s': %s", name, strerror(errno));
		unlink(tmp_idx);
		goto out;
	}
	rc = XG_SNAPSHOT_DONE;
out:
	free(name);
	free(tmp_pack);
	free(tmp_idx);
	free(j.crcs);
	free(j.offs);
	free(w);
	free(dir);
	return rc;
}
