/*
 * Where a key is in a JSON file: the line of a path of object keys
 * ("providers", "llamacpp", "models", "tiny", "context_window"), for
 * messages about the catalog.
 */
#include "xg.h"
#include "choices/internal.h"

/*
 * libjq's parser keeps no positions, so this walks the text itself: a
 * small scanner that skips values, counts lines, and descends only into
 * the object under each key of the path.  It runs only when something is
 * wrong, on a file already known to parse.
 *
 * As jq does, the last of duplicate keys wins.  Keys are compared as jq
 * reads them: a key written with escapes is decoded by jv_parse first.
 */

#define MAX_DEPTH 64

struct scan {
	const char *p, *end;
	size_t line;
};

static void blank(struct scan *s)
{
	for (; s->p < s->end && strchr(" \t\r\n", *s->p); s->p++)
		if (*s->p == '\n')
			s->line++;
}

/* Skips a string at s->p (its opening quote); 0, or -1 for one not closed. */
static int skip_string(struct scan *s)
{
	for (s->p++; s->p < s->end; s->p++) {
		if (*s->p == '\\' && s->p + 1 < s->end)
			s->p++;
		else if (*s->p == '"') {
			s->p++;
			return 0;
		} else if (*s->p == '\n')
			s->line++;
	}
	return -1;
}

/* Whether the string token [start, end) reads as key. */
static int key_is(const char *start, const char *end, const char *key)
{
	size_t n = (size_t)(end - start) - 2;
	jv v;
	int same;

	if (!memchr(start, '\\', (size_t)(end - start)))
		return n == strlen(key) && !memcmp(start + 1, key, n);
	v = xg_json_parse(start, (end - start));
	same = jv_get_kind(v) == JV_KIND_STRING && !strcmp(jv_string_value(v), key);
	jv_free(v);
	return same;
}

static int skip_value(struct scan *s, int depth);

/* Skips an object or an array, its opening bracket at s->p. */
static int skip_nested(struct scan *s, int depth)
{
	char close = *s->p == '{' ? '}' : ']';

	if (depth > MAX_DEPTH)
		return -1;
	s->p++;
	for (;;) {
		blank(s);
		if (s->p >= s->end)
			return -1;
		if (*s->p == close) {
			s->p++;
			return 0;
		}
		if (*s->p == ',' || *s->p == ':') {
			s->p++;
			continue;
		}
		if (skip_value(s, depth + 1) < 0)
			return -1;
	}
}

static int skip_value(struct scan *s, int depth)
{
	blank(s);
	if (s->p >= s->end)
		return -1;
	if (*s->p == '"')
		return skip_string(s);
	if (*s->p == '{' || *s->p == '[')
		return skip_nested(s, depth);
	while (s->p < s->end && !strchr(" \t\r\n,:]}", *s->p))
		s->p++;
	return 0;
}

/*
 * In the object at s->p, the line of the deepest key of path found (0 when
 * not even path[0] is there); s->p ends past the object.
 */
static size_t find(struct scan *s, const char *const *path, size_t n, int depth)
{
	size_t found = 0, line;
	const char *start, *kend;

	blank(s);
	if (s->p >= s->end || *s->p != '{' || depth > MAX_DEPTH) {
		skip_value(s, depth);
		return 0;
	}
	s->p++;
	for (;;) {
		blank(s);
		if (s->p >= s->end)
			return found;
		if (*s->p == '}') {
			s->p++;
			return found;
		}
		if (*s->p == ',') {
			s->p++;
			continue;
		}
		if (*s->p != '"')
			return found;
		start = s->p;
		line = s->line;
		if (skip_string(s) < 0)
			return found;
		kend = s->p;
		blank(s);
		if (s->p < s->end && *s->p == ':')
			s->p++;
		if (key_is(start, kend, path[0])) {
			size_t deeper = 0;

			if (n > 1) {
				blank(s);
				if (s->p < s->end && *s->p == '{')
					deeper = find(s, path + 1, n - 1, depth + 1);
				else if (skip_value(s, depth + 1) < 0)
					return line;
			} else if (skip_value(s, depth + 1) < 0) {
				return line;
			}
			found = deeper ? deeper : line;
		} else if (skip_value(s, depth + 1) < 0) {
			return found;
		}
	}
}

size_t xg_catalog_line(const char *text, size_t len, const char *const *path, size_t n)
{
	struct scan s = { text, text + len, 1 };

	if (!text || n == 0)
		return 0;
	return find(&s, path, n, 0);
}
