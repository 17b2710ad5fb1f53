/*
 * "xg say" (xg(1), Steering a run): a message handed to the run that holds
 * a conversation, through the conversation's inbox (steer.h): the one
 * named, the one a named run goes on (its live marker's line, else its
 * run.json), or this directory's newest, as "xg resume" finds it.  Nothing
 * is written when no run holds the conversation: that is exit 69.
 */
#include "xg.h"
#include "conversation.h"
#include "runindex.h"
#include "dispatch/dispatch.h"

/* A run.json is a few kilobytes. */
#define SUMMARY_MAX ((size_t)1 << 20)

/* The conversation of run id, as its live marker or its run.json says
 * (owned), or NULL. */
static char *conversation_of_run(const char *id)
{
	char *path = xg_runindex_live_path(id), *rel, *conv = NULL;
	struct xg_buf b = XG_BUF_INIT(SUMMARY_MAX);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	jv v = jv_invalid();

	free(path);
	if (fd >= 0) {
		v = xg_runindex_live_read(fd);
		close(fd);
	}
	if (!xg_json_string_peek(v, "conversation")) {
		jv_free(v);
		rel = xg_asprintf("runs/%s/run.json", id);
		path = xg_path_state(rel);
		v = xg_read_file(path, &b) == 0 ? xg_json_parse(b.buf, b.len) : jv_invalid();
		free(rel);
		free(path);
	}
	if (xg_json_string_peek(v, "conversation"))
		conv = xg_strdup(xg_json_string_peek(v, "conversation"));
	jv_free(v);
	xg_buf_release(&b);
	return conv;
}

/* The conversation to send to (owned); exits 69 when there is none. */
static char *pick_conversation(const char *conversation, const char *run)
{
	char *conv, *here;

	if (conversation)
		return xg_strdup(conversation);
	if (run) {
		if (!(conv = conversation_of_run(run)) || !xg_conv_id_valid(conv))
			xg_die(XG_EX_UNAVAILABLE, "there is no run '%s'", run);
		return conv;
	}
	if ((conv = xg_dispatch_newest_here()))
		return conv;
	here = getcwd(NULL, 0);
	xg_die(XG_EX_UNAVAILABLE, "no conversation was started in '%s', so no run holds one",
	       here ? here : ".");
}

int xg_dispatch_say(const char *conversation, const char *run, const char *text)
{
	char *conv = pick_conversation(conversation, run), *holder = NULL;
	int rc = 0;

	if (xg_steer_send(conv, run, text, &holder) == 0) {
		/* Quiet for a script; a word for a person. */
		if (isatty(1))
			printf("sent to run %s, which holds conversation %s\n", holder, conv);
	} else if (errno == ESRCH && run && holder) {
		xg_warn("run '%s' does not hold conversation %s; run '%s' does", run, conv, holder);
		rc = XG_EX_UNAVAILABLE;
	} else if (errno == ESRCH && run) {
		xg_warn("run '%s' has ended; nothing was sent", run);
		rc = XG_EX_UNAVAILABLE;
	} else if (errno == ESRCH) {
		xg_warn("no run holds conversation %s; nothing was sent", conv);
		rc = XG_EX_UNAVAILABLE;
	} else {
		rc = errno == EMSGSIZE ? XG_EX_DATAERR : xg_exit_for_errno(errno);
	}
	free(holder);
	free(conv);
	return rc;
}
