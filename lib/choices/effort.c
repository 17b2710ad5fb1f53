/*
 * A model's efforts, read from its catalog entry: whether it accepts one,
 * its default, and the list of them for messages (choices.h).
 */
#include "xg.h"
#include "choices/choices.h"

int xg_catalog_accepts_effort_peek(jv model, const char *effort)
{
	jv efforts = xg_json_get_peek(model, "efforts");
	int i, len = xg_json_length_peek(efforts), found = 0;

	for (i = 0; effort && i < len && !found; i++) {
		jv e = jv_array_get(jv_copy(efforts), i);
		found = jv_get_kind(e) == JV_KIND_STRING && !strcmp(jv_string_value(e), effort);
		jv_free(e);
	}
	return found;
}

const char *xg_catalog_default_effort_peek(jv model)
{
	return xg_json_string_peek(model, "default_effort");
}

char *xg_catalog_efforts_text(jv model)
{
	jv efforts = xg_json_get_peek(model, "efforts");
	struct xg_buf b = XG_BUF_INIT(0);
	int i, len = xg_json_length_peek(efforts);

	for (i = 0; i < len; i++) {
		jv e = jv_array_get(jv_copy(efforts), i);
		if (jv_get_kind(e) == JV_KIND_STRING)
			xg_buf_addf(&b, "%s%s", i ? ", " : "", jv_string_value(e));
		jv_free(e);
	}
	if (b.len == 0)
		xg_buf_addstr(&b, "none");
	jv_free(model);
	return xg_buf_detach(&b, NULL);
}
