/*
 * Small JSON files of configuration (jsonfile.h): read whole and parsed,
 * with errors that name the file and the line but never quote the text.
 */
#include "xg.h"
#include "jsonfile.h"

int xg_jsonfile_read(const char *path, jv *out)
{
	struct xg_buf b = XG_BUF_INIT(XG_JSONFILE_MAX);
	int rc;

	*out = jv_null();
	if (xg_read_file(path, &b) < 0) {
		int e = errno;
		xg_buf_release(&b);
		if (e == ENOENT)
			return 0;	/* *out stays jv_null() */
		errno = e;
		if (e == EFBIG) {
			xg_error("'%s' is larger than %zu bytes", path, (size_t)XG_JSONFILE_MAX);
			return XG_EX_CONFIG;
		}
		xg_error_errno("cannot read '%s'", path);
		return e == EACCES ? XG_EX_NOPERM : XG_EX_IOERR;
	}
	rc = xg_jsonfile_parse(path, b.buf, b.len, out);
	xg_buf_release(&b);
	return rc;
}

int xg_jsonfile_parse(const char *path, const char *text, size_t len, jv *out)
{
	jv v = xg_json_parse(text, len);

	*out = jv_null();
	if (!jv_is_valid(v)) {
		char *why = xg_json_parse_error(v);
		xg_error("cannot parse '%s': %s", path, why);
		free(why);
		return XG_EX_CONFIG;
	}
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		xg_error("'%s' must hold a JSON object, not %s", path, xg_json_kind_peek(v));
		jv_free(v);
		return XG_EX_CONFIG;
	}
	*out = v;
	return 0;
}
