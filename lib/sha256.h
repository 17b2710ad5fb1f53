#ifndef XG_SHA256_H
#define XG_SHA256_H
/*
 * SHA-256 (FIPS 180-4), dependency-free: the prompt pack's stable_sha256
 * and the hash that names a variant version.  On x86-64 processors with
 * the SHA extensions the blocks go through them (cpu.h); elsewhere through
 * portable C.
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
	void (*blocks)(uint32_t h[8], const unsigned char *p, size_t n);
};

void xg_sha256_init(struct xg_sha256 *c);
/* The same, never using the SHA extensions (for tests). */
void xg_sha256_init_portable(struct xg_sha256 *c);
void xg_sha256_update(struct xg_sha256 *c, const void *data, size_t n);
void xg_sha256_final(struct xg_sha256 *c, unsigned char digest[XG_SHA256_LEN]);
/* Lowercase hex of a digest; out holds 65 bytes. */
void xg_sha256_hex(const unsigned char digest[XG_SHA256_LEN], char out[65]);
/* The hex digest of one buffer. */
void xg_sha256_hex_of(const void *data, size_t n, char out[65]);

#endif
