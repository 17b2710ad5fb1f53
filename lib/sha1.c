/*
 * SHA-1 (FIPS 180-4), written for speed with the rounds unrolled by macro
 * and the message schedule kept in a 16-word ring.
 */
#include "xg.h"
#include "cpu.h"
#include "sha1.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define XG_SHA_NI 1
#endif

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

static void blocks_portable(uint32_t h[5], const unsigned char *p, size_t n)
{
	for (; n; n--, p += 64)
		sha1_block(h, p);
}

#ifdef XG_SHA_NI
/*
 * Four rounds at a time with the SHA instructions.  The message words sit
 * in four registers that roll: in group i (rounds 4i..4i+3) the register
 * i%4 feeds the rounds, the next one is finished (msg2), the one after
 * that gets its xor, and the one before is started (msg1).  E alternates
 * between two registers.  Extra schedule work in the last groups is
 * harmless, and keeps every group the same.
 */
#define GROUP(ein, eout, m, mn, mn2, mp, f) do { \
	ein = _mm_sha1nexte_epu32(ein, m); \
	eout = abcd; \
	mn = _mm_sha1msg2_epu32(mn, m); \
	abcd = _mm_sha1rnds4_epu32(abcd, ein, f); \
	mp = _mm_sha1msg1_epu32(mp, m); \
	mn2 = _mm_xor_si128(mn2, m); } while (0)

__attribute__((target("sha,sse4.1,ssse3")))
static void blocks_ni(uint32_t h[5], const unsigned char *p, size_t n)
{
	const __m128i swap = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
	__m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0x1B);
	__m128i e0 = _mm_set_epi32((int)h[4], 0, 0, 0), e1;

	for (; n; n--, p += 64) {
		__m128i abcd0 = abcd, e00 = e0;
		__m128i m0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), swap);
		__m128i m1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), swap);
		__m128i m2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), swap);
		__m128i m3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), swap);

		e0 = _mm_add_epi32(e0, m0);
		e1 = abcd;
		abcd = _mm_sha1rnds4_epu32(abcd, e0, 0);
		e1 = _mm_sha1nexte_epu32(e1, m1);
		e0 = abcd;
		abcd = _mm_sha1rnds4_epu32(abcd, e1, 0);
		m0 = _mm_sha1msg1_epu32(m0, m1);
		e0 = _mm_sha1nexte_epu32(e0, m2);
		e1 = abcd;
		abcd = _mm_sha1rnds4_epu32(abcd, e0, 0);
		m1 = _mm_sha1msg1_epu32(m1, m2);
		m0 = _mm_xor_si128(m0, m2);
		GROUP(e1, e0, m3, m0, m1, m2, 0);	/* group 3 */
		GROUP(e0, e1, m0, m1, m2, m3, 0);
		GROUP(e1, e0, m1, m2, m3, m0, 1);	/* group 5 */
		GROUP(e0, e1, m2, m3, m0, m1, 1);
		GROUP(e1, e0, m3, m0, m1, m2, 1);
		GROUP(e0, e1, m0, m1, m2, m3, 1);
		GROUP(e1, e0, m1, m2, m3, m0, 1);
		GROUP(e0, e1, m2, m3, m0, m1, 2);	/* group 10 */
		GROUP(e1, e0, m3, m0, m1, m2, 2);
		GROUP(e0, e1, m0, m1, m2, m3, 2);
		GROUP(e1, e0, m1, m2, m3, m0, 2);
		GROUP(e0, e1, m2, m3, m0, m1, 2);
		GROUP(e1, e0, m3, m0, m1, m2, 3);	/* group 15 */
		GROUP(e0, e1, m0, m1, m2, m3, 3);
		GROUP(e1, e0, m1, m2, m3, m0, 3);
		GROUP(e0, e1, m2, m3, m0, m1, 3);
		GROUP(e1, e0, m3, m0, m1, m2, 3);	/* group 19 */
		e0 = _mm_sha1nexte_epu32(e0, e00);
		abcd = _mm_add_epi32(abcd, abcd0);
	}
	_mm_storeu_si128((__m128i *)h, _mm_shuffle_epi32(abcd, 0x1B));
	h[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}
#endif

void xg_snapshot_sha1_init_portable(struct xg_snapshot_sha1 *c)
{
	static const uint32_t iv[5] = {
		0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0
	};

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
	c->used = 0;
	c->blocks = blocks_portable;
}

void xg_snapshot_sha1_init(struct xg_snapshot_sha1 *c)
{
	xg_snapshot_sha1_init_portable(c);
#ifdef XG_SHA_NI
	if (xg_cpu_sha_ni())
		c->blocks = blocks_ni;
#endif
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
		c->blocks(c->h, c->block, 1);
		c->used = 0;
	}
	if (n >= 64) {
		c->blocks(c->h, p, n / 64);
		p += n / 64 * 64;
		n %= 64;
	}
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

void xg_snapshot_sha1_hex(const unsigned char sum[20], char out[41])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 20; i++) {
		out[2 * i] = hex[sum[i] >> 4];
		out[2 * i + 1] = hex[sum[i] & 15];
	}
	out[40] = '\0';
}

void xg_snapshot_sha1_hex_of(const void *data, size_t n, char out[41])
{
	struct xg_snapshot_sha1 c;
	unsigned char sum[20];

	xg_snapshot_sha1_init(&c);
	xg_snapshot_sha1_update(&c, data, n);
	xg_snapshot_sha1_final(&c, sum);
	xg_snapshot_sha1_hex(sum, out);
}

void xg_snapshot_sha1_seal(struct xg_buf *b)
{
	char hex[41];

	xg_snapshot_sha1_hex_of(b->buf, b->len, hex);
	xg_buf_addf(b, "sha1 %s\n", hex);
}

int xg_snapshot_sha1_unseal(struct xg_buf *b)
{
	char hex[41], *last;

	if (b->len < 46 || b->buf[b->len - 1] != '\n')
		return -1;
	last = memrchr(b->buf, '\n', b->len - 1);
	last = last ? last + 1 : b->buf;
	xg_snapshot_sha1_hex_of(b->buf, (size_t)(last - b->buf), hex);
	if (b->buf + b->len - last != 46 || memcmp(last, "sha1 ", 5) || memcmp(last + 5, hex, 40))
		return -1;
	xg_buf_setlen(b, (size_t)(last - b->buf));
	return 0;
}
