#ifndef XG_ALLOC_H
#define XG_ALLOC_H
/*
 * Allocators that never return NULL: out of memory is exit 70 with a
 * message, as there is nothing sensible a caller could do instead.
 */
void *xg_malloc(size_t n);
void *xg_calloc(size_t nmemb, size_t size);
void *xg_realloc(void *p, size_t n);
/* n zeroed bytes in pages of their own, which cost memory only once
 * written: for a large structure most of which stays zero.  Freed with
 * xg_unmap. */
void *xg_map_zeroed(size_t n);
void xg_unmap(void *p, size_t n);
char *xg_strdup(const char *s);
/* At most n bytes of the C string s (stops at a NUL, as strndup). */
char *xg_strndup(const char *s, size_t n);
/* Exactly n bytes of p, NULs included, with a NUL after them. */
char *xg_memdup(const void *p, size_t n);
/* A printf into a new string. */
__attribute__((format(printf, 1, 2)))
char *xg_asprintf(const char *fmt, ...);

/* Sorts the n elements of the array base: qsort's base must not be NULL
 * even for none, which an array not yet grown is. */
#define XG_QSORT(base, n, cmp) do { \
	if ((n) > 1) \
		qsort((base), (n), sizeof(*(base)), (cmp)); \
} while (0)

/* Grows an array to hold at least n elements, doubling (git's ALLOC_GROW). */
#define XG_ALLOC_GROW(p, n, alloc) do { \
	if ((n) > (alloc)) { \
		size_t xg_new_ = (alloc) ? (alloc) * 2 : 8; \
		if (xg_new_ < (n)) xg_new_ = (n); \
		(p) = xg_realloc((p), xg_new_ * sizeof(*(p))); \
		(alloc) = xg_new_; \
	} \
} while (0)

#endif
