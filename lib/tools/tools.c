/*
 * The tools xg-run offers the model, as one table: each tool's name, the
 * function that runs it (in its own file: bash.c, files.c, todo.c,
 * ask_user.c), and the description and JSON schema a provider is sent.
 * Then the dispatch, which finds a call's tool in the table.
 */
#include "xg.h"
#include "tools/internal.h"

/*
 * The table, in the order the model is shown the tools.  Each description
 * is what the model reads to decide how to use the tool, so it states the
 * limits it will meet.
 */
static const struct tool {
	const char *name;
	jv (*run_peek)(const struct xg_tool_ctx *ctx, jv args);
	const char *description;
	const char *parameters;
} tools[] = {
	{ "bash", xg_tool_bash_peek,
	  "Run a shell command with /bin/sh -c in the workspace directory. "
	  "Standard input is empty; standard output and standard error come back "
	  "merged, with the exit code. Long output keeps its last 2000 lines or "
	  "50 KB, whichever is less, and says where the full output was saved. "
	  "The command is stopped, with everything it started, after timeout "
	  "seconds (120 unless given, at most 600). Background jobs keep "
	  "running after the call returns but their output is lost: redirect "
	  "it to a file.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"command\":{\"type\":\"string\",\"description\":\"The command line.\"},"
	  "\"timeout\":{\"type\":\"number\",\"description\":\"Seconds before the command is stopped (default 120, at most 600).\"}},"
	  "\"required\":[\"command\"],\"additionalProperties\":false}" },
	{ "read", xg_tool_read_peek,
	  "Read a text file, each line prefixed with its number and a tab. "
	  "At most 2000 lines or 50 KB come back at once; when there is more "
	  "the result says which offset to read next. Binary files are refused. "
	  "Paths are relative to the workspace and must stay inside it.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\",\"description\":\"The file, relative to the workspace.\"},"
	  "\"offset\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"The first line to show, from 1 (default 1).\"},"
	  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"How many lines to show at most (default and ceiling 2000).\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}" },
	{ "write", xg_tool_write_peek,
	  "Write a whole file, replacing it if it exists and creating missing "
	  "parent directories. The file is replaced in one step, so no reader "
	  "sees half of it. Paths must stay inside the workspace. Prefer edit "
	  "for changing part of an existing file.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\",\"description\":\"The file, relative to the workspace.\"},"
	  "\"content\":{\"type\":\"string\",\"description\":\"The file's complete new text.\"}},"
	  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}" },
	{ "edit", xg_tool_edit_peek,
	  "Change a file by replacing pieces of its text. Each old_text must "
	  "occur exactly once in the file as it is now, and no two edits may "
	  "touch the same text; otherwise nothing is changed and the result "
	  "names the edit at fault. Include enough surrounding lines to make "
	  "old_text unique. The file's line endings and byte order mark are "
	  "kept. Paths must stay inside the workspace.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\",\"description\":\"The file, relative to the workspace.\"},"
	  "\"edits\":{\"type\":\"array\",\"minItems\":1,\"description\":\"The replacements, applied together.\","
	  "\"items\":{\"type\":\"object\",\"properties\":{"
	  "\"old_text\":{\"type\":\"string\",\"description\":\"Text that occurs exactly once in the file.\"},"
	  "\"new_text\":{\"type\":\"string\",\"description\":\"What replaces it.\"}},"
	  "\"required\":[\"old_text\",\"new_text\"],\"additionalProperties\":false}}},"
	  "\"required\":[\"path\",\"edits\"],\"additionalProperties\":false}" },
	{ "todo_write", xg_tool_todo_write_peek,
	  "Replace the todo list that shows the progress of the work. Send the "
	  "whole list each time. It records progress; it does not limit what "
	  "the work may include.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"items\":{\"type\":\"array\",\"maxItems\":100,\"items\":{\"type\":\"object\",\"properties\":{"
	  "\"content\":{\"type\":\"string\",\"description\":\"What the step is.\"},"
	  "\"status\":{\"type\":\"string\",\"enum\":[\"pending\",\"in_progress\",\"completed\"]}},"
	  "\"required\":[\"content\",\"status\"],\"additionalProperties\":false}}},"
	  "\"required\":[\"items\"],\"additionalProperties\":false}" },
	{ "ask_user", xg_tool_ask_user_peek,
	  "Ask the person a question. Often nobody is there to answer: then "
	  "the result says so, and you proceed on your best judgement and state "
	  "in your reply what you assumed.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"question\":{\"type\":\"string\",\"description\":\"The question, complete enough to answer without context.\"}},"
	  "\"required\":[\"question\"],\"additionalProperties\":false}" },
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

jv xg_tool_schemas(void)
{
	jv list = jv_array();
	size_t i;

	for (i = 0; i < NTOOLS; i++) {
		jv t = jv_object();
		jv params = jv_parse(tools[i].parameters);

		if (!jv_is_valid(params))
			xg_die(XG_EX_SOFTWARE, "the schema of tool '%s' is not JSON", tools[i].name);
		t = xg_json_set(t, "name", jv_string(tools[i].name));
		t = xg_json_set(t, "description", jv_string(tools[i].description));
		t = xg_json_set(t, "parameters", params);
		list = jv_array_append(list, t);
	}
	return list;
}

static const struct tool *find(const char *name)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

int xg_tool_exists(const char *name)
{
	return find(name) != NULL;
}

jv xg_tool_run(const struct xg_tool_ctx *ctx, const char *name, jv args)
{
	const struct tool *t = find(name);
	jv r;

	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		r = xg_tool_fail("%s: the arguments must be a JSON object, found %s",
				 name, xg_json_kind_peek(args));
	} else if (t) {
		r = t->run_peek(ctx, args);
	} else {
		struct xg_buf names = XG_BUF_INIT(0);
		size_t i;

		for (i = 0; i < NTOOLS; i++)
			xg_buf_addf(&names, "%s%s", i ? ", " : "", tools[i].name);
		r = xg_tool_fail("there is no tool '%s'; the tools are %s", name, names.buf);
		xg_buf_release(&names);
	}
	jv_free(args);
	return r;
}
