/*
 * xg-log: the history of runs.  List them, show one again, see what it
 * changed, sum their tokens and cost, list conversations, prune on
 * request.  See xg-log(1).
 */
#include "xg.h"
#include "log/log.h"

static const char *const usage[] = {
	"xg-log [list] [-n count] [--since when] [--status status] [--workspace dir] "
		"[--conversation id] [--json]",
	"xg-log show [--json] run",
	"xg-log diff [-v] [--worktree] run [-- git-diff-option ...]",
	"xg-log usage [--since when] [--before when] [--by grouping] [--workspace dir] [--json]",
	"xg-log conversations [-n count] [--since when] [--workspace dir] [--json]",
	"xg-log prune --before when [--dry-run]",
	NULL
};

enum { OPT_BEFORE = 1, OPT_BY, OPT_CONVERSATION, OPT_DRY_RUN, OPT_JSON, OPT_COUNT, OPT_SINCE,
	OPT_STATUS, OPT_VERBOSE, OPT_WORKSPACE, OPT_WORKTREE };

static const struct xg_option options[] = {
	{ OPT_BEFORE, 0, "before", "when", "runs that started before when (usage, prune)" },
	{ OPT_BY, 0, "by", "grouping", "usage: sum by model, day, account or workspace" },
	{ OPT_CONVERSATION, 0, "conversation", "id", "the runs of this conversation" },
	{ OPT_DRY_RUN, 0, "dry-run", NULL, "prune: say what would go; delete nothing" },
	{ OPT_JSON, 0, "json", NULL, "write records (index lines, a run's records), not rows" },
	{ OPT_COUNT, 'n', NULL, "count", "at most count rows (default 20; 0 for all)" },
	{ OPT_SINCE, 0, "since", "when", "runs that started since when: 7d, 12h, 2026-11-30, ..." },
	{ OPT_STATUS, 0, "status", "status", "runs of this status or stop (failed, stalled, ...)" },
	{ OPT_VERBOSE, 'v', "verbose", NULL, "diff: say which two trees are compared" },
	{ OPT_WORKSPACE, 0, "workspace", "dir", "runs in dir or below it ('.' for here)" },
	{ OPT_WORKTREE, 0, "worktree", NULL, "diff: against the working tree, not the next run" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-log", "List past runs and conversations, show one again, sum usage and cost.",
	usage, options
};

static int list(struct xg_opts *o, void *ctx)
{
	return xg_log_list(ctx, stdout);
}

static int show(struct xg_opts *o, void *ctx)
{
	return xg_log_show(ctx, o->args[1], stdout);
}

static int diff(struct xg_opts *o, void *ctx)
{
	return xg_log_diff(ctx, o->args[1], o->nargs - 2, o->args + 2);
}

static int usage_verb(struct xg_opts *o, void *ctx)
{
	return xg_log_usage(ctx, stdout);
}

static int conversations(struct xg_opts *o, void *ctx)
{
	return xg_log_conversations(ctx, stdout);
}

static int prune(struct xg_opts *o, void *ctx)
{
	return xg_log_prune(ctx, stdout);
}

static const struct xg_verb verbs[] = {
	{ "list", 0, 0, list },
	{ "show", 1, 1, show },
	{ "diff", 1, -1, diff },
	{ "usage", 0, 0, usage_verb },
	{ "conversations", 0, 0, conversations },
	{ "prune", 0, 0, prune },
	{ 0 }
};

int main(int argc, char **argv)
{
	struct xg_log_opts lo = { .max = XG_LOG_DEFAULT_MAX };
	struct xg_opts o;
	const char *arg;
	int id, rc;

	xg_prog_init("xg-log");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_BEFORE: lo.before = arg; break;
		case OPT_BY: lo.by = arg; break;
		case OPT_CONVERSATION: lo.conversation = arg; break;
		case OPT_DRY_RUN: lo.dry_run = 1; break;
		case OPT_JSON: lo.json = 1; break;
		case OPT_COUNT: lo.max = (long)xg_opt_number(&cmd, "-n", arg, 0); break;
		case OPT_SINCE: lo.since = arg; break;
		case OPT_STATUS: lo.status = arg; break;
		case OPT_VERBOSE: lo.verbose = 1; break;
		case OPT_WORKSPACE: lo.workspace = arg; break;
		case OPT_WORKTREE: lo.worktree = 1; break;
		}
	}
	rc = o.nargs == 0 ? list(&o, &lo) : xg_opt_verb(&o, verbs)->run(&o, &lo);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
