#ifndef XG_SHA256_H
#define XG_SHA256_H
/*
 * SHA-256 (FIPS 180-4), small and dependency-free: the prompt pack's
 * stable_sha256 and the hash that names a variant version.
 *
 *   struct xg_sha256 c;
 *   xg_sha256_init(&c);
 *   xg_sha256_update(&c, data, n);   (as often as needed)
 *   xg_sha256_final(&c, digest);
 */
#include <stddef.h>
#include <stdint.h>

#define XG_SHA256_LEN 32

struct xg_sha256 {
	uint32_t h[8];
	uint64_t bytes;		/* message length so far */
	unsigned char block[64];
	size_t fill;		/* bytes waiting in block */
};

void xg_sha256_init(struct xg_sha256 *c);
void xg_sha256_update(struct xg_sha256 *c, const void *data, size_t n);
void xg_sha256_final(struct xg_sha256 *c, unsigned char digest[XG_SHA256_LEN]);
/* Lowercase hex of a digest; out holds 65 bytes. */
void xg_sha256_hex(const unsigned char digest[XG_SHA256_LEN], char out[65]);
/* Set, the block function is the plain C one even where the CPU has SHA
 * instructions (the tests compare the two). */
extern int xg_sha256_plain;
/* The hex digest of one buffer. */
void xg_sha256_hex_of(const void *data, size_t n, char out[65]);

#endif
