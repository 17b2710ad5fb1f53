/*
 * The subagent profiles (man 1 xg-run, Subagents): which tools a child run
 * is offered, as one table.  A profile's tools are a subset of the tool
 * table (tools.c); explore is read-only: read always, and bash only where
 * the sandbox runs it with the workspace read-only.
 */
#include "xg.h"
#include "tools/internal.h"

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

const char *const *xg_tool_profile_tools(const char *profile, int *read_only)
{
	const struct profile *p = find(profile);

	if (!p)
		return NULL;
	if (read_only)
		*read_only = p->read_only;
	return p->tools;
}

int xg_tool_profile_allows(const char *profile, const char *tool, int sandboxed)
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

int xg_tool_profile_read_only(const char *profile)
{
	const struct profile *p = find(profile);

	return p && p->read_only;
}

jv xg_tool_profile_schemas(const char *profile, int sandboxed)
{
	jv all = xg_tool_schemas(), out;

	if (!profile || !find(profile) || !find(profile)->tools[0])
		return all;
	out = jv_array();
	jv_array_foreach(all, i, t) {
		(void)i;
		if (xg_tool_profile_allows(profile, xg_json_string_peek(t, "name"), sandboxed))
			out = jv_array_append(out, t);
		else
			jv_free(t);
	}
	jv_free(all);
	return out;
}

const char *xg_tool_profile_what(const char *profile)
{
	const struct profile *p = find(profile);

	return p ? p->what : NULL;
}
