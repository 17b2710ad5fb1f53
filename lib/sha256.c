/*
 * SHA-256 (FIPS 180-4): the rounds in portable C, and the same rounds
 * with the x86-64 SHA instructions, which xg_sha256_init picks where the
 * CPU has them.
 */
#include "xg.h"
#include "cpu.h"
#include "sha256.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define XG_SHA_NI 1
#endif

static const uint32_t k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void blocks_portable(uint32_t st[8], const unsigned char *p, size_t nblocks)
{
	uint32_t w[64], a, b, cc, d, e, f, g, h, t1, t2;
	int i;

	for (; nblocks; nblocks--, p += 64) {
		for (i = 0; i < 16; i++)
			w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
			       (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
		for (; i < 64; i++) {
			uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
			uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
			w[i] = w[i - 16] + s0 + w[i - 7] + s1;
		}
		a = st[0]; b = st[1]; cc = st[2]; d = st[3];
		e = st[4]; f = st[5]; g = st[6]; h = st[7];
		for (i = 0; i < 64; i++) {
			t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
			t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
			h = g; g = f; f = e; e = d + t1;
			d = cc; cc = b; b = a; a = t1 + t2;
		}
		st[0] += a; st[1] += b; st[2] += cc; st[3] += d;
		st[4] += e; st[5] += f; st[6] += g; st[7] += h;
	}
}

#ifdef XG_SHA_NI
/*
 * The same blocks with the CPU's SHA extensions (SHA-NI), several times
 * faster.  The instructions keep the state as two vectors, (A,B,E,F) and
 * (C,D,G,H), highest lane first; SHA256RNDS2 does two rounds from the
 * first two lanes of its message operand (the words plus their constants)
 * and returns the new (A,B,E,F), whose old value is the new (C,D,G,H).
 * Each group of four rounds takes the next four message words; from the
 * fifth group on, SHA256MSG1, the add of W[t-7] and SHA256MSG2 extend the
 * schedule from the four groups before.
 */
__attribute__((target("sha,sse4.1,ssse3")))
static void blocks_ni(uint32_t st[8], const unsigned char *p, size_t nblocks)
{
	/* Reverses the bytes of each 32-bit word: the message is big-endian. */
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i abef, cdgh, t, w[4], m, abef0, cdgh0;
	int g;

	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&st[0]), 0xB1);	/* b a d c */
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&st[4]), 0x1B);	/* h g f e */
	abef = _mm_alignr_epi8(t, cdgh, 8);		/* f e b a */
	cdgh = _mm_blend_epi16(cdgh, t, 0xF0);		/* h g d c */
	for (; nblocks; nblocks--, p += 64) {
		abef0 = abef;
		cdgh0 = cdgh;
		for (g = 0; g < 16; g++) {
			if (g < 4) {
				w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), swap);
			} else {
				/* w[g & 3] holds the words of four groups back. */
				m = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
				m = _mm_add_epi32(m, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
				w[g & 3] = _mm_sha256msg2_epu32(m, w[(g + 3) & 3]);
			}
			m = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)&k[4 * g]));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	t = _mm_shuffle_epi32(abef, 0x1B);		/* a b e f */
	cdgh = _mm_shuffle_epi32(cdgh, 0xB1);		/* g h c d */
	_mm_storeu_si128((__m128i *)&st[0], _mm_blend_epi16(t, cdgh, 0xF0));	/* a b c d */
	_mm_storeu_si128((__m128i *)&st[4], _mm_alignr_epi8(cdgh, t, 8));	/* e f g h */
}
#endif

void xg_sha256_init_portable(struct xg_sha256 *c)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
	};

	memcpy(c->h, iv, sizeof(iv));
	c->bytes = 0;
	c->fill = 0;
	c->blocks = blocks_portable;
}

void xg_sha256_init(struct xg_sha256 *c)
{
	xg_sha256_init_portable(c);
#ifdef XG_SHA_NI
	if (xg_cpu_sha_ni())
		c->blocks = blocks_ni;
#endif
}

void xg_sha256_update(struct xg_sha256 *c, const void *data, size_t n)
{
	const unsigned char *p = data;

	c->bytes += n;
	if (c->fill) {
		size_t take = 64 - c->fill < n ? 64 - c->fill : n;

		memcpy(c->block + c->fill, p, take);
		c->fill += take;
		p += take;
		n -= take;
		if (c->fill < 64)
			return;
		c->blocks(c->h, c->block, 1);
		c->fill = 0;
	}
	if (n >= 64) {
		c->blocks(c->h, p, n / 64);
		p += n / 64 * 64;
		n %= 64;
	}
	memcpy(c->block, p, n);
	c->fill = n;
}

void xg_sha256_final(struct xg_sha256 *c, unsigned char digest[XG_SHA256_LEN])
{
	uint64_t bits = c->bytes * 8;
	int i;

	c->block[c->fill++] = 0x80;
	if (c->fill > 56) {
		memset(c->block + c->fill, 0, 64 - c->fill);
		c->blocks(c->h, c->block, 1);
		c->fill = 0;
	}
	memset(c->block + c->fill, 0, 56 - c->fill);
	for (i = 0; i < 8; i++)
		c->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
	c->blocks(c->h, c->block, 1);
	for (i = 0; i < 8; i++) {
		digest[4 * i] = (unsigned char)(c->h[i] >> 24);
		digest[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
		digest[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
		digest[4 * i + 3] = (unsigned char)c->h[i];
	}
}

void xg_sha256_hex(const unsigned char digest[XG_SHA256_LEN], char out[65])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < XG_SHA256_LEN; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[64] = '\0';
}

void xg_sha256_hex_of(const void *data, size_t n, char out[65])
{
	struct xg_sha256 c;
	unsigned char d[XG_SHA256_LEN];

	xg_sha256_init(&c);
	xg_sha256_update(&c, data, n);
	xg_sha256_final(&c, d);
	xg_sha256_hex(d, out);
}
