#ifndef XG_JSON_H
#define XG_JSON_H
/*
 * JSON values are libjq's jv.  The ownership rule, stated once for all of
 * libxg:
 *
 *   A function that takes a jv consumes it: the caller's reference is gone,
 *   and the caller passes jv_copy(v) to keep its own.  A function whose name
 *   ends in _peek only looks: it consumes nothing, and what it returns
 *   (a C string, a borrowed jv) lives only as long as the value it looked at,
 *   so the caller jv_copy()s a borrowed jv it wants to keep.
 *
 * jq's own accessors are not uniform (jv_string_value borrows,
 * jv_array_length consumes), which is why libxg code reads fields through
 * the helpers below.
 */
#include <jv.h>
#include <stdbool.h>
#include <stddef.h>

struct xg_buf;

/* The value under key, borrowed; jv_invalid() when obj is not an object or
 * has no such key. */
jv xg_json_get_peek(jv obj, const char *key);
/* The string under key, or NULL when absent or not a string. */
const char *xg_json_string_peek(jv obj, const char *key);
/* Whether the string under key holds a NUL byte, so that its C string is
 * only a part of it (a path or a command that must be refused). */
int xg_json_string_has_nul_peek(jv obj, const char *key);
/* 0 and *out set when key holds a number (an integer for _int), else -1. */
int xg_json_number_peek(jv obj, const char *key, double *out);
int xg_json_int_peek(jv obj, const char *key, long long *out);
/* 0 and *out set when key holds true or false, else -1. */
int xg_json_bool_peek(jv obj, const char *key, bool *out);
/* "object", "string", ... for messages. */
const char *xg_json_kind_peek(jv v);
/* The length of an array or object, or -1. */
int xg_json_length_peek(jv v);

/* Where a cut at n bytes of the UTF-8 text s may fall: back to the start
 * of the character byte n is inside, so no character is split. */
size_t xg_utf8_start(const char *s, size_t n);
/* A string from bytes that need not be valid UTF-8: bad sequences become
 * U+FFFD, so every string xg writes is valid UTF-8. */
jv xg_json_string_bytes(const char *p, size_t n);
/* Appends v's compact text to b (consumes v), byte for byte as libjq's
 * jv_dump_string writes it, about ten times as fast; -1 past b's ceiling. */
int xg_json_dump(struct xg_buf *b, jv v);
/* The bytes v's compact JSON text takes (only looked at). */
size_t xg_json_dump_len_peek(jv v);
/* Appends bytes as a JSON string, as libjq writes a string (a sequence that
 * is not UTF-8 becomes U+FFFD as libjq would read it); -1 past b's
 * ceiling. */
int xg_json_write_string(struct xg_buf *b, const char *s, size_t n);
/*
 * Parses len bytes of JSON text, as jv_parse_sized does, but refuses a NUL
 * byte (JSON text cannot hold one unescaped) without handing it to libjq,
 * whose 1.6 parser leaks on some (found by make fuzz), and text longer than
 * an int can count.  Every reader parses through it.
 */
jv xg_json_parse(const char *text, size_t len);
/* jq's message for a value that failed to parse, without the copy of the
 * whole input that jq 1.6 appends to it (a line may hold a key, and may be
 * megabytes long); the caller frees it.  Consumes v. */
char *xg_json_parse_error(jv v);
/* Sets key to value in obj; consumes obj and value, returns the object. */
jv xg_json_set(jv obj, const char *key, jv value);

#endif
