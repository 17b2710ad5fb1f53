/*
 * Allocators that never return NULL (alloc.h): out of memory is exit 70
 * with a message, and a string copy is never a NULL check for the caller.
 */
#include "xg.h"
#include <sys/mman.h>

static void *check(void *p, size_t n)
{
	if (!p && n)
		xg_die(XG_EX_SOFTWARE, "out of memory allocating %zu bytes", n);
	return p;
}

void *xg_malloc(size_t n)
{
	return check(malloc(n ? n : 1), n ? n : 1);
}

void *xg_calloc(size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		xg_die(XG_EX_SOFTWARE, "out of memory: %zu elements of %zu bytes", nmemb, size);
	return check(calloc(nmemb ? nmemb : 1, size ? size : 1), nmemb * size + 1);
}

void *xg_realloc(void *p, size_t n)
{
	return check(realloc(p, n ? n : 1), n ? n : 1);
}

void *xg_map_zeroed(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return check(p == MAP_FAILED ? NULL : p, n);
}

void xg_unmap(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}

char *xg_strdup(const char *s)
{
	return xg_strndup(s, strlen(s));
}

char *xg_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xg_malloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xg_memdup(const void *p, size_t n)
{
	char *q = xg_malloc(n + 1);

	if (n)
		memcpy(q, p, n);
	q[n] = '\0';
	return q;
}

char *xg_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		xg_die(XG_EX_SOFTWARE, "out of memory formatting a string");
	va_end(ap);
	return s;
}
