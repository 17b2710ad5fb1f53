#include "xg.h"

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

jv xg_json_string_bytes(const char *p, size_t n)
{
	if (n > INT_MAX)
		n = INT_MAX;
	/* jv_string_sized replaces invalid UTF-8 with U+FFFD. */
	return jv_string_sized(p, (int)n);
}

int xg_json_dump(struct xg_buf *b, jv v)
{
	jv s = jv_dump_string(v, 0);
	int rc = xg_buf_add(b, jv_string_value(s), (size_t)jv_string_length_bytes(jv_copy(s)));

	jv_free(s);
	return rc;
}

jv xg_json_set(jv obj, const char *key, jv value)
{
	return jv_object_set(obj, jv_string(key), value);
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
