/*
 * "xg compact [CONVERSATION]" (xg(1)): the conversation, the newest one
 * when none is named, compacted now by "xg-run --compact", which writes
 * the records; so a script can start a cron run on a small history.
 */
#include "xg.h"
#include "conversation.h"
#include "dispatch/dispatch.h"
#include "exec.h"

void xg_dispatch_compact(const char *conversation)
{
	char *newest = NULL, *path;
	char *argv[5];

	/* A run's id stands for its conversation. */
	if (conversation)
		conversation = newest = xg_dispatch_conversation_of(conversation, 1);
	else if (!(conversation = newest = xg_dispatch_newest_here()))
		xg_die(XG_EX_DATAERR, "there is no conversation to compact");
	if (!(path = xg_exec_find("run")))
		xg_die(XG_EX_SOFTWARE, "cannot find xg-run");
	argv[0] = path;
	argv[1] = "--compact";
	argv[2] = "--conversation";
	argv[3] = (char *)conversation;
	argv[4] = NULL;
	xg_exec(path, argv);
	xg_die_errno(XG_EX_SOFTWARE, "cannot run '%s'", path);
}
