/*
 * Templates: the text of a section with its placeholders filled in.
 * {{NAME}} is replaced by a value and {{?NAME}}...{{/NAME}} is kept only
 * when NAME has a non-empty value (the rules are in prompt.h).  Compiling
 * renders the system prompt's sections with them; the other programs
 * render the pack's templates with their own values.  Values that come
 * from outside go in escaped, xg_prompt_escape_data, so they cannot close
 * the tagged block they stand in.
 */
#include "xg.h"
#include "prompt/prompt.h"

/* The value of a placeholder, or NULL when it has none. */
static const char *var_peek(jv vars, const char *name, size_t n)
{
	char key[64];

	if (n == 0 || n >= sizeof(key))
		return NULL;
	memcpy(key, name, n);
	key[n] = '\0';
	return xg_json_string_peek(vars, key);
}

char *xg_prompt_render_peek(const char *tmpl, size_t len, jv vars)
{
	struct xg_buf out = XG_BUF_INIT(0);
	const char *p = tmpl, *end = tmpl + len;

	while (p < end) {
		const char *open = memmem(p, (size_t)(end - p), "{{", 2), *close, *name;
		size_t n;

		if (!open) {
			xg_buf_add(&out, p, (size_t)(end - p));
			break;
		}
		xg_buf_add(&out, p, (size_t)(open - p));
		close = memmem(open + 2, (size_t)(end - open - 2), "}}", 2);
		if (!close) {
			xg_buf_add(&out, open, (size_t)(end - open));
			break;
		}
		name = open + 2;
		n = (size_t)(close - name);
		p = close + 2;
		if (n > 1 && *name == '?') {
			const char *v = var_peek(vars, name + 1, n - 1);
			char *endtag = xg_asprintf("{{/%.*s}}", (int)(n - 1), name + 1);
			const char *stop = memmem(p, (size_t)(end - p), endtag, strlen(endtag));

			if (stop && !(v && *v)) {
				p = stop + strlen(endtag);
			} else if (stop) {
				char *inner = xg_prompt_render_peek(p, (size_t)(stop - p), vars);

				xg_buf_addstr(&out, inner);
				free(inner);
				p = stop + strlen(endtag);
			}
			free(endtag);
		} else if (n > 1 && *name == '/') {
			/* a stray end tag: dropped */
		} else {
			const char *v = var_peek(vars, name, n);

			if (v)
				xg_buf_addstr(&out, v);
			else if (n == 0 || n >= 64)
				xg_buf_add(&out, open, (size_t)(p - open));
		}
	}
	return xg_buf_detach(&out, NULL);
}

char *xg_prompt_escape_data(const char *s)
{
	struct xg_buf out = XG_BUF_INIT(0);

	for (; *s; s++) {
		if (*s == '&')
			xg_buf_addstr(&out, "&amp;");
		else if (*s == '<')
			xg_buf_addstr(&out, "&lt;");
		else if (*s == '>')
			xg_buf_addstr(&out, "&gt;");
		else
			xg_buf_addch(&out, *s);
	}
	return xg_buf_detach(&out, NULL);
}
