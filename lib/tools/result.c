/*
 * The result object every tool returns, {"ok": bool, "output": text, ...}:
 * what the model reads of the call, a failure included, which is a result
 * with ok false rather than an error of the run.
 */
#include "xg.h"
#include "tools/internal.h"

jv xg_tool_result(int ok, jv output)
{
	jv r = jv_object();

	r = xg_json_set(r, "ok", jv_bool(ok));
	return xg_json_set(r, "output", output);
}

jv xg_tool_fail(const char *fmt, ...)
{
	va_list ap;
	char *s;
	jv r;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		xg_die(XG_EX_SOFTWARE, "out of memory");
	va_end(ap);
	r = xg_tool_result(0, xg_json_string_bytes(s, strlen(s)));
	free(s);
	return r;
}
