/*
 * The subagent profiles (man 1 xg-run, Subagents): which tools a child run
 * is offered, as one table, and the words its system prompt gets.  A
 * profile's tools are a subset of the tool table (tools.c); a call of a
 * tool its profile does not offer is refused (loop.c).
 *
 * explore is read-only: read always, and bash only where the sandbox
 * runs it with the workspace read-only (confine.c); without the sandbox
 * it has no bash at all, since nothing else would keep bash from writing.
 */
#include "xg.h"
#include "run/internal.h"
#include "prompt/prompt.h"

static const struct profile {
	const char *name;
	int read_only;
	const char *tools[8];	/* NULL-terminated; none at all: every tool */
	const char *sandboxed[4];	/* and these, in a read-only sandbox */
	const char *what;	/* for the child's system prompt */
} profiles[] = {
	{ "explore", 1, { "read", NULL }, { "bash", NULL },
	  "You run with the explore profile: you can look, not change anything." },
	{ "worker", 0, { NULL }, { NULL },
	  "You run with the worker profile: you have every tool of the run that "
	  "started you, and may change the workspace as the brief asks." },
};

static const struct profile *find(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(profiles) / sizeof(*profiles); i++)
		if (!strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}

const char *const *xg_run_profile_tools(const char *profile, int *read_only)
{
	const struct profile *p = find(profile);

	if (!p)
		return NULL;
	if (read_only)
		*read_only = p->read_only;
	return p->tools;
}

int xg_run_profile_allows(const char *profile, const char *tool, int sandboxed)
{
	const struct profile *p = find(profile);
	const char *const *t;

	if (!profile || !p || !p->tools[0])
		return 1;
	for (t = p->tools; *t; t++)
		if (!strcmp(*t, tool))
			return 1;
	for (t = p->sandboxed; sandboxed && *t; t++)
		if (!strcmp(*t, tool))
			return 1;
	return 0;
}

int xg_run_profile_read_only(const char *profile)
{
	const struct profile *p = find(profile);

	return p && p->read_only;
}

jv xg_run_profile_schemas(const char *profile, int sandboxed)
{
	jv all = xg_tool_schemas(), out;

	if (!profile || !find(profile) || !find(profile)->tools[0])
		return all;
	out = jv_array();
	jv_array_foreach(all, i, t) {
		(void)i;
		if (xg_run_profile_allows(profile, xg_json_string_peek(t, "name"), sandboxed))
			out = jv_array_append(out, t);
		else
			jv_free(t);
	}
	jv_free(all);
	return out;
}

/* The tools of profile as a list for people: "read, bash". */
static char *tool_list(const char *profile, int sandboxed)
{
	jv t = xg_run_profile_schemas(profile, sandboxed);
	struct xg_buf b = XG_BUF_INIT(0);

	jv_array_foreach(t, i, s) {
		xg_buf_addf(&b, "%s%s", i ? ", " : "", xg_json_string_peek(s, "name"));
		jv_free(s);
	}
	jv_free(t);
	return xg_buf_detach(&b, NULL);
}

char *xg_run_profile_prompt(const struct run *r, const char *profile)
{
	const struct profile *p = find(profile);
	jv tmpl = xg_json_get_peek(xg_json_get_peek(r->pack, "templates"), "subagent");
	struct xg_buf b = XG_BUF_INIT(0);
	char *tools = tool_list(profile, r->sandbox.bwrap != NULL);

	if (p && p->read_only)
		/* First, so it is read before the brief (ADR-0069 item 7). */
		xg_buf_addf(&b, "%s Your tools are: %s. When the brief needs a tool you do not "
			    "have (to run a command, or to change a file), say so in the first "
			    "line of your reply, naming the tool, and do the part you can.\n\n",
			    p->what, tools);
	else if (p)
		xg_buf_addf(&b, "%s Your tools are: %s.\n\n", p->what, tools);
	if (r->o->parent && jv_get_kind(tmpl) == JV_KIND_STRING) {
		jv vars = jv_object();
		char *text = xg_prompt_render_peek(jv_string_value(tmpl),
						   (size_t)jv_string_length_bytes(jv_copy(tmpl)), vars);

		xg_buf_addstr(&b, text);
		free(text);
		jv_free(vars);
	}
	free(tools);
	while (b.len && b.buf[b.len - 1] == '\n')
		xg_buf_setlen(&b, b.len - 1);
	return xg_buf_detach(&b, NULL);
}
