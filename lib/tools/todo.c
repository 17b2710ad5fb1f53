/*
 * The todo_write tool: the model sends the whole progress list each time;
 * it is checked item by item (all or nothing), and the result carries the
 * list in items, which the loop writes as a todo record, and the list as
 * text with one mark a state for the model to read back.
 */
#include "xg.h"
#include "tools/internal.h"

static const char *const todo_states[] = { "pending", "in_progress", "completed" };

/* The state's index in todo_states, or -1 when the item is not valid (then
 * *why says why). */
static int item_state_peek(jv it, const char **why)
{
	const char *content = xg_json_string_peek(it, "content");
	const char *status = xg_json_string_peek(it, "status");
	const char *s;
	int k;

	if (!content) {
		*why = "'content' must be a string";
		return -1;
	}
	for (s = content; isspace((unsigned char)*s); s++)
		;
	if (!*s) {
		*why = "'content' is empty";
		return -1;
	}
	for (k = 0; k < 3; k++)
		if (status && !strcmp(status, todo_states[k]))
			return k;
	*why = "'status' must be pending, in_progress or completed";
	return -1;
}

jv xg_tool_todo_write_peek(const struct xg_tool_ctx *ctx, jv args)
{
	static const char marks[] = { ' ', '~', 'x' };
	jv items = xg_json_get_peek(args, "items");
	struct xg_buf text = XG_BUF_INIT(0);
	const char *why;
	jv list, r;
	int i, n, k, open = 0;

	if (jv_get_kind(items) != JV_KIND_ARRAY)
		return xg_tool_fail("todo_write: 'items' must be an array, found %s",
				    xg_json_kind_peek(items));
	n = xg_json_length_peek(items);
	if (n > XG_TOOL_TODO_MAX_ITEMS)
		return xg_tool_fail("todo_write: %d items; the list holds at most %d",
				    n, XG_TOOL_TODO_MAX_ITEMS);
	/* All or nothing: check every item before keeping any. */
	for (i = 0; i < n; i++) {
		jv it = jv_array_get(jv_copy(items), i);
		k = item_state_peek(it, &why);
		jv_free(it);
		if (k < 0)
			return xg_tool_fail("todo_write: items[%d]: %s", i, why);
	}
	list = jv_array();
	for (i = 0; i < n; i++) {
		jv it = jv_array_get(jv_copy(items), i);
		const char *content = xg_json_string_peek(it, "content");

		k = item_state_peek(it, &why);
		open += k != 2;
		xg_buf_addf(&text, "[%c] %s\n", marks[k], content);
		list = jv_array_append(list, xg_json_set(xg_json_set(jv_object(),
			"content", jv_string(content)), "status", jv_string(todo_states[k])));
		jv_free(it);
	}
	if (n == 0)
		xg_buf_addstr(&text, "The todo list is now empty.\n");
	else
		xg_buf_addf(&text, "%d of %d done.\n", n - open, n);
	xg_buf_setlen(&text, text.len - 1);
	r = xg_tool_result(1, xg_json_string_bytes(text.buf, text.len));
	xg_buf_release(&text);
	return xg_json_set(r, "items", list);
}

