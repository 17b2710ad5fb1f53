/*
 * JSON (json.h): libjq's jv behind accessors that follow one ownership
 * rule (consume, or *_peek), parsing with errors that name the line, and
 * the dump that writes a record's bytes.
 */
#include "xg.h"
#include <math.h>
#include <stdint.h>

jv xg_json_get_peek(jv obj, const char *key)
{
	jv v;

	if (jv_get_kind(obj) != JV_KIND_OBJECT)
		return jv_invalid();
	v = jv_object_get(jv_copy(obj), jv_string(key));
	/* The object still holds a reference, so dropping ours leaves v
	 * valid for as long as obj lives: a borrowed value. */
	jv_free(v);
	return v;
}

const char *xg_json_string_peek(jv obj, const char *key)
{
	jv v = xg_json_get_peek(obj, key);

	if (jv_get_kind(v) != JV_KIND_STRING)
		return NULL;
	return jv_string_value(v);
}

int xg_json_string_has_nul_peek(jv obj, const char *key)
{
	jv v = xg_json_get_peek(obj, key);

	if (jv_get_kind(v) != JV_KIND_STRING)
		return 0;
	return memchr(jv_string_value(v), 0, (size_t)jv_string_length_bytes(jv_copy(v))) != NULL;
}

int xg_json_number_peek(jv obj, const char *key, double *out)
{
	jv v = xg_json_get_peek(obj, key);

	if (jv_get_kind(v) != JV_KIND_NUMBER)
		return -1;
	*out = jv_number_value(v);
	return 0;
}

int xg_json_int_peek(jv obj, const char *key, long long *out)
{
	double d;

	if (xg_json_number_peek(obj, key, &d) < 0)
		return -1;
	if (d != d || d < -9007199254740992.0 || d > 9007199254740992.0 ||
	    d != (double)(long long)d)
		return -1;
	*out = (long long)d;
	return 0;
}

int xg_json_bool_peek(jv obj, const char *key, bool *out)
{
	jv v = xg_json_get_peek(obj, key);

	switch (jv_get_kind(v)) {
	case JV_KIND_TRUE:
		*out = true;
		return 0;
	case JV_KIND_FALSE:
		*out = false;
		return 0;
	default:
		return -1;
	}
}

const char *xg_json_kind_peek(jv v)
{
	switch (jv_get_kind(v)) {
	case JV_KIND_INVALID: return "nothing";
	case JV_KIND_NULL: return "null";
	case JV_KIND_FALSE:
	case JV_KIND_TRUE: return "a boolean";
	case JV_KIND_NUMBER: return "a number";
	case JV_KIND_STRING: return "a string";
	case JV_KIND_ARRAY: return "an array";
	case JV_KIND_OBJECT: return "an object";
	}
	return "something unknown";
}

int xg_json_length_peek(jv v)
{
	switch (jv_get_kind(v)) {
	case JV_KIND_ARRAY:
		return jv_array_length(jv_copy(v));
	case JV_KIND_OBJECT:
		return jv_object_length(jv_copy(v));
	default:
		return -1;
	}
}

size_t xg_utf8_start(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

jv xg_json_string_bytes(const char *p, size_t n)
{
	if (n > INT_MAX)
		n = INT_MAX;
	/* jv_string_sized replaces invalid UTF-8 with U+FFFD. */
	return jv_string_sized(p, (int)n);
}

/*
 * The bytes of a UTF-8 sequence at p (of n > 0 bytes left) and whether it
 * is valid; an invalid one is as long as libjq takes it to be, so a reply
 * comes out with the same U+FFFD marks either way: a bad lead or stray
 * continuation byte alone, a truncated sequence to the end, else up to the
 * first byte that does not continue it.
 */
static size_t utf8_sequence(const unsigned char *p, size_t n, int *valid)
{
	unsigned c = p[0];
	size_t len, i;
	uint32_t cp;

	*valid = 0;
	if (c < 0xc2 || c > 0xf4)
		return 1;
	len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (len > n)
		return n;
	cp = c & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return i;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	*valid = !(len == 3 && cp < 0x800) && !(len == 4 && cp < 0x10000) &&
		 !(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff;
	return len;
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)
#define HAS_ZERO(v) (((v) - ONES) & ~(v) & HIGHS)

/* Whether none of the eight bytes needs escaping or checking: no control
 * character, DEL, quote, backslash or byte over 0x7f. */
static int plain8(uint64_t x)
{
	uint64_t bad = x & HIGHS;

	bad |= (x - ONES * 0x20) & ~x & HIGHS;
	bad |= HAS_ZERO(x ^ (ONES * 0x7f));
	bad |= HAS_ZERO(x ^ (ONES * '"'));
	bad |= HAS_ZERO(x ^ (ONES * '\\'));
	return bad == 0;
}

/*
 * Appends the bytes as a JSON string the way libjq's dump writes it.  It
 * works in slices, reserving the worst case of each (six bytes out for one
 * in) so the inner loop writes without checks.  The slices are small: a
 * buffer grows to what it reserves, and one that is kept (a request's
 * bytes, between rounds) would hold six times its longest string.
 */
int xg_json_write_string(struct xg_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *e = p + n;

	xg_buf_addch(b, '"');
	while (p < e) {
		size_t slice = (size_t)(e - p) < 2048 ? (size_t)(e - p) : 2048;
		const unsigned char *se = p + slice;
		char *o;

		/* A sequence may run three bytes past the slice. */
		if (xg_buf_grow(b, 6 * slice + 8) < 0)
			return -1;
		o = b->buf + b->len;
		while (p < se) {
			unsigned c;
			size_t len;
			int valid;

			/* Eight plain ASCII bytes at a time, the common case. */
			while (se - p >= 8) {
				uint64_t x;

				memcpy(&x, p, 8);
				if (!plain8(x))
					break;
				memcpy(o, p, 8);
				o += 8;
				p += 8;
			}
			if (p == se)
				break;
			c = *p;

			if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
				*o++ = (char)c;
				p++;
				continue;
			}
			if (c >= 0x80) {
				len = utf8_sequence(p, (size_t)(e - p), &valid);
				if (valid) {
					memcpy(o, p, len);
					o += len;
				} else {
					memcpy(o, "\xef\xbf\xbd", 3);
					o += 3;
				}
				p += len;
				continue;
			}
			*o++ = '\\';
			switch (c) {
			case '"': *o++ = '"'; break;
			case '\\': *o++ = '\\'; break;
			case '\b': *o++ = 'b'; break;
			case '\f': *o++ = 'f'; break;
			case '\n': *o++ = 'n'; break;
			case '\r': *o++ = 'r'; break;
			case '\t': *o++ = 't'; break;
			default:
				memcpy(o, "u00", 3);
				o[3] = hex[c >> 4];
				o[4] = hex[c & 15];
				o += 5;
			}
			p++;
		}
		b->len = (size_t)(o - b->buf);
		b->buf[b->len] = '\0';
	}
	return xg_buf_addch(b, '"');
}

/*
 * A number as libjq writes it: integers of up to 15 digits here, the rest
 * (fractions, exponents, -0, NaN as null) by libjq itself.
 */
static int dump_number(struct xg_buf *b, jv v)
{
	double d = jv_number_value(v);
	jv s;
	int rc;

	/* The range first: the cast of a NaN or a huge value is undefined. */
	if (d > -1e15 && d < 1e15 && d == (double)(long long)d && !(d == 0 && signbit(d)))
		return xg_buf_addf(b, "%lld", (long long)d);
	s = jv_dump_string(jv_copy(v), 0);
	rc = xg_buf_add(b, jv_string_value(s), (size_t)jv_string_length_bytes(jv_copy(s)));
	jv_free(s);
	return rc;
}

/* v is borrowed. */
static int dump(struct xg_buf *b, jv v)
{
	int rc = 0, first = 1;

	switch (jv_get_kind(v)) {
	case JV_KIND_NULL:
		return xg_buf_add(b, "null", 4);
	case JV_KIND_TRUE:
		return xg_buf_add(b, "true", 4);
	case JV_KIND_FALSE:
		return xg_buf_add(b, "false", 5);
	case JV_KIND_NUMBER:
		return dump_number(b, v);
	case JV_KIND_STRING:
		return xg_json_write_string(b, jv_string_value(v),
					    (size_t)jv_string_length_bytes(jv_copy(v)));
	case JV_KIND_ARRAY:
		rc = xg_buf_addch(b, '[');
		jv_array_foreach(v, i, e) {
			(void)i;
			if (!rc && !first)
				rc = xg_buf_addch(b, ',');
			if (!rc)
				rc = dump(b, e);
			jv_free(e);
			first = 0;
		}
		return rc ? rc : xg_buf_addch(b, ']');
	case JV_KIND_OBJECT:
		rc = xg_buf_addch(b, '{');
		jv_object_foreach(v, k, e) {
			if (!rc && !first)
				rc = xg_buf_addch(b, ',');
			if (!rc)
				rc = dump(b, k);
			if (!rc)
				rc = xg_buf_addch(b, ':');
			if (!rc)
				rc = dump(b, e);
			jv_free(k);
			jv_free(e);
			first = 0;
		}
		return rc ? rc : xg_buf_addch(b, '}');
	default:
		return -1;
	}
}

int xg_json_dump(struct xg_buf *b, jv v)
{
	int rc = dump(b, v);

	jv_free(v);
	return rc;
}

jv xg_json_set(jv obj, const char *key, jv value)
{
	return jv_object_set(obj, jv_string(key), value);
}

jv xg_json_parse(const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);

	if (nul)
		return jv_invalid_with_msg(jv_string_fmt("a NUL byte at byte %zu, which JSON "
							 "text cannot hold",
							 (size_t)(nul - text) + 1));
	if (len > INT_MAX)
		return jv_invalid_with_msg(jv_string("the text is longer than 2 GiB"));
	return jv_parse_sized(text, (int)len);
}

char *xg_json_parse_error(jv v)
{
	jv msg = jv_invalid_get_msg(v);
	char *s, *cut;

	if (jv_get_kind(msg) != JV_KIND_STRING) {
		jv_free(msg);
		return xg_strdup("no JSON value in it");
	}
	s = xg_strdup(jv_string_value(msg));
	jv_free(msg);
	if ((cut = strstr(s, " (while parsing")))
		*cut = '\0';
	return s;
}

size_t xg_json_dump_len_peek(jv v)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t n;

	xg_json_dump(&b, jv_copy(v));
	n = b.len;
	xg_buf_release(&b);
	return n;
}
