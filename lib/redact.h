#ifndef XG_REDACT_H
#define XG_REDACT_H
/*
 * The secrets of this process, and their redaction: the last line of
 * defence between a key and a record, a request, a trace or a message.
 *
 * The set is the process's own, as the program's name is: the writers of
 * bytes (the run's records, the provider's trace and error messages) each
 * consult it without being handed it.  Secrets are added as they are read,
 * never removed but all at once; the functions may be called from any
 * thread.  A secret shorter than XG_REDACT_MIN bytes is not kept: it would
 * redact ordinary words.  Each occurrence becomes XG_REDACTED.
 */
#include <stddef.h>
#include "buf.h"
#include "json.h"

#define XG_REDACTED "<redacted>"
#define XG_REDACT_MIN 8

/* Adds a copy of secret to the set; a short or repeated one is ignored. */
void xg_redact_add(const char *secret);
/* Forgets every secret, zeroing the copies. */
void xg_redact_clear(void);
/* The longest secret's length, 0 when the set is empty. */
size_t xg_redact_longest(void);
/* The first occurrence of any secret in s[0..n): its offset, with *len its
 * length; n when there is none. */
size_t xg_redact_find(const char *s, size_t n, size_t *len);
/* Appends s[0..n) to out with every secret replaced. */
void xg_redact_mem(const char *s, size_t n, struct xg_buf *out);
/* Replaces every secret in b, in place. */
void xg_redact_buf(struct xg_buf *b);
/* The same for b's bytes [at, end) alone, the rest kept where it is
 * relative to them; returns where that range now ends. */
size_t xg_redact_buf_range(struct xg_buf *b, size_t at, size_t end);
/* v (consumed) with every secret replaced in its strings and keys. */
jv xg_redact_jv(jv v);

#endif
