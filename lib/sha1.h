#ifndef XG_SNAPSHOT_SHA1_H
#define XG_SNAPSHOT_SHA1_H
/*
 * Plain SHA-1 for the ids of the objects xg-snapshot writes and the
 * checksums of its packs, pack indexes and caches.  On x86-64 processors
 * with the SHA extensions the blocks go through them, about four times as
 * fast; elsewhere through portable C.
 */
#include <stddef.h>
#include <stdint.h>
#include "buf.h"

struct xg_snapshot_sha1 {
	uint32_t h[5];
	uint64_t len;
	unsigned char block[64];
	size_t used;
	void (*blocks)(uint32_t h[5], const unsigned char *p, size_t n);
};

void xg_snapshot_sha1_init(struct xg_snapshot_sha1 *c);
/* The same, never using the SHA extensions (for tests). */
void xg_snapshot_sha1_init_portable(struct xg_snapshot_sha1 *c);
void xg_snapshot_sha1_update(struct xg_snapshot_sha1 *c, const void *data, size_t n);
void xg_snapshot_sha1_final(struct xg_snapshot_sha1 *c, unsigned char out[20]);
/* Lowercase hex of a digest; out holds 41 bytes. */
void xg_snapshot_sha1_hex(const unsigned char sum[20], char out[41]);
/* The hex digest of one buffer. */
void xg_snapshot_sha1_hex_of(const void *data, size_t n, char out[41]);
/*
 * A file of lines sealed by a last line "sha1 HEX", the digest of all
 * before it (xg-snapshot's caches): _seal appends that line to b;
 * _unseal checks it and, when it holds, cuts it off b (0), else -1.
 */
void xg_snapshot_sha1_seal(struct xg_buf *b);
int xg_snapshot_sha1_unseal(struct xg_buf *b);

#endif
