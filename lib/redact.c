/*
 * The process's secrets (redact.h): the set, kept under a mutex, then the
 * search for the first secret in some bytes, and the three ways of
 * replacing them: bytes into a buffer, a buffer in place, a JSON value's
 * strings.
 */
#include "xg.h"
#include "redact.h"
#include <pthread.h>

#define MAX_SECRETS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *secrets[MAX_SECRETS];
static size_t lens[MAX_SECRETS];
static size_t count, longest;

void xg_redact_add(const char *secret)
{
	size_t n = secret ? strlen(secret) : 0, i;

	if (n < XG_REDACT_MIN)
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < count; i++)
		if (lens[i] == n && !memcmp(secrets[i], secret, n))
			break;
	if (i == count && count < MAX_SECRETS) {
		secrets[count] = xg_strdup(secret);
		lens[count++] = n;
		if (n > longest)
			longest = n;
	}
	pthread_mutex_unlock(&lock);
}

void xg_redact_clear(void)
{
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < count; i++) {
		explicit_bzero(secrets[i], lens[i]);
		free(secrets[i]);
		secrets[i] = NULL;
	}
	count = longest = 0;
	pthread_mutex_unlock(&lock);
}

size_t xg_redact_longest(void)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = longest;
	pthread_mutex_unlock(&lock);
	return n;
}

size_t xg_redact_find(const char *s, size_t n, size_t *len)
{
	size_t best = n, i;
	const char *hit;

	*len = 0;
	pthread_mutex_lock(&lock);
	for (i = 0; i < count; i++) {
		hit = memmem(s, n, secrets[i], lens[i]);
		if (hit && (size_t)(hit - s) < best) {
			best = (size_t)(hit - s);
			*len = lens[i];
		} else if (hit && (size_t)(hit - s) == best && lens[i] > *len) {
			*len = lens[i];
		}
	}
	pthread_mutex_unlock(&lock);
	return best;
}

void xg_redact_mem(const char *s, size_t n, struct xg_buf *out)
{
	size_t at, len;

	while (n && (at = xg_redact_find(s, n, &len)) < n) {
		xg_buf_add(out, s, at);
		xg_buf_addstr(out, XG_REDACTED);
		s += at + len;
		n -= at + len;
	}
	xg_buf_add(out, s, n);
}

size_t xg_redact_buf_range(struct xg_buf *b, size_t at, size_t end)
{
	struct xg_buf out = XG_BUF_INIT(0);
	size_t len, rest = b->len - end;

	if (at >= end || xg_redact_find(b->buf + at, end - at, &len) == end - at)
		return end;
	xg_redact_mem(b->buf + at, end - at, &out);
	end = at + out.len;
	xg_buf_add(&out, b->buf + b->len - rest, rest);
	explicit_bzero(b->buf + at, b->len - at);
	xg_buf_setlen(b, at);
	xg_buf_add(b, out.buf, out.len);
	explicit_bzero(out.buf, out.len);
	xg_buf_release(&out);
	return end;
}

void xg_redact_buf(struct xg_buf *b)
{
	xg_redact_buf_range(b, 0, b->len);
}

static jv redact_string(jv s)
{
	const char *p = jv_string_value(s);
	size_t n = (size_t)jv_string_length_bytes(jv_copy(s)), len;
	struct xg_buf out = XG_BUF_INIT(0);

	if (xg_redact_find(p, n, &len) == n)
		return s;
	xg_redact_mem(p, n, &out);
	jv_free(s);
	s = xg_json_string_bytes(out.buf, out.len);
	xg_buf_release(&out);
	return s;
}

/* Whether some string in v (only looked at) holds a secret. */
static int holds_secret_peek(jv v)
{
	size_t len;
	int found = 0;

	switch (jv_get_kind(v)) {
	case JV_KIND_STRING:
		return xg_redact_find(jv_string_value(v), (size_t)jv_string_length_bytes(jv_copy(v)),
				      &len) < (size_t)jv_string_length_bytes(jv_copy(v));
	case JV_KIND_ARRAY:
		jv_array_foreach(v, i, x) {
			(void)i;
			found = found || holds_secret_peek(x);
			jv_free(x);
		}
		return found;
	case JV_KIND_OBJECT:
		jv_object_foreach(v, k, x) {
			found = found || holds_secret_peek(k) || holds_secret_peek(x);
			jv_free(k);
			jv_free(x);
		}
		return found;
	default:
		return 0;
	}
}

jv xg_redact_jv(jv v)
{
	jv out;

	if (!xg_redact_longest() || !holds_secret_peek(v))
		return v;
	switch (jv_get_kind(v)) {
	case JV_KIND_STRING:
		return redact_string(v);
	case JV_KIND_ARRAY:
		out = jv_array();
		jv_array_foreach(v, i, x) {
			(void)i;
			out = jv_array_append(out, xg_redact_jv(x));
		}
		jv_free(v);
		return out;
	case JV_KIND_OBJECT:
		out = jv_object();
		jv_object_foreach(v, k, x)
			out = jv_object_set(out, redact_string(k), xg_redact_jv(x));
		jv_free(v);
		return out;
	default:
		return v;
	}
}
