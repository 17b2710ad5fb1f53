/*
 * SHA-1 (FIPS 180-4), written for speed with the rounds unrolled by macro
 * and the message schedule kept in a 16-word ring.
 */
#include "xg.h"
#include "snapshot/sha1.h"

#define ROL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define LOAD(p) ((uint32_t)(p)[0] << 24 | (uint32_t)(p)[1] << 16 | (uint32_t)(p)[2] << 8 | (p)[3])
#define W(i) (w[(i) & 15] = ROL(w[((i) + 13) & 15] ^ w[((i) + 8) & 15] ^ \
			   w[((i) + 2) & 15] ^ w[(i) & 15], 1))
#define F1(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define F2(b, c, d) ((b) ^ (c) ^ (d))
#define F3(b, c, d) (((b) & (c)) | ((d) & ((b) | (c))))
#define R(a, b, c, d, e, f, k, x) do { \
	(e) += ROL(a, 5) + f(b, c, d) + (k) + (x); (b) = ROL(b, 30); } while (0)
#define R5(i, f, k, x) do { \
	R(a, b, c, d, e, f, k, x(i)); R(e, a, b, c, d, f, k, x((i) + 1)); \
	R(d, e, a, b, c, f, k, x((i) + 2)); R(c, d, e, a, b, f, k, x((i) + 3)); \
	R(b, c, d, e, a, f, k, x((i) + 4)); } while (0)
#define X0(i) w[i]

static void sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[16], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	int i;

	for (i = 0; i < 16; i++)
		w[i] = LOAD(p + 4 * i);
	R5(0, F1, 0x5A827999, X0);
	R5(5, F1, 0x5A827999, X0);
	R5(10, F1, 0x5A827999, X0);
	R(a, b, c, d, e, F1, 0x5A827999, w[15]);
	R(e, a, b, c, d, F1, 0x5A827999, W(16));
	R(d, e, a, b, c, F1, 0x5A827999, W(17));
	R(c, d, e, a, b, F1, 0x5A827999, W(18));
	R(b, c, d, e, a, F1, 0x5A827999, W(19));
	R5(20, F2, 0x6ED9EBA1, W); R5(25, F2, 0x6ED9EBA1, W);
	R5(30, F2, 0x6ED9EBA1, W); R5(35, F2, 0x6ED9EBA1, W);
	R5(40, F3, 0x8F1BBCDC, W); R5(45, F3, 0x8F1BBCDC, W);
	R5(50, F3, 0x8F1BBCDC, W); R5(55, F3, 0x8F1BBCDC, W);
	R5(60, F2, 0xCA62C1D6, W); R5(65, F2, 0xCA62C1D6, W);
	R5(70, F2, 0xCA62C1D6, W); R5(75, F2, 0xCA62C1D6, W);
	h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e;
}

void xg_snapshot_sha1_init(struct xg_snapshot_sha1 *c)
{
	static const uint32_t iv[5] = {
		0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0
	};

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
	c->used = 0;
}

void xg_snapshot_sha1_update(struct xg_snapshot_sha1 *c, const void *data, size_t n)
{
	const unsigned char *p = data;

	c->len += n;
	if (c->used) {
		size_t take = 64 - c->used < n ? 64 - c->used : n;

		memcpy(c->block + c->used, p, take);
		c->used += take;
		p += take;
		n -= take;
		if (c->used < 64)
			return;
		sha1_block(c->h, c->block);
		c->used = 0;
	}
	for (; n >= 64; p += 64, n -= 64)
		sha1_block(c->h, p);
	memcpy(c->block, p, n);
	c->used = n;
}

void xg_snapshot_sha1_final(struct xg_snapshot_sha1 *c, unsigned char out[20])
{
	uint64_t bits = c->len * 8;
	unsigned char pad[72] = { 0x80 };
	size_t padlen = (c->used < 56 ? 56 : 120) - c->used;
	int i;

	for (i = 0; i < 8; i++)
		pad[padlen + i] = (unsigned char)(bits >> (56 - 8 * i));
	xg_snapshot_sha1_update(c, pad, padlen + 8);
	for (i = 0; i < 5; i++) {
		out[4 * i] = (unsigned char)(c->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)c->h[i];
	}
}
