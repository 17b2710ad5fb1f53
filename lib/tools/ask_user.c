/*
 * The ask_user tool: the model's question, written to the standard input
 * of the --ask command (run by proc.c), whose standard output is the
 * answer.  With no --ask command, or when it fails, times out or gives
 * nothing, the model is told that nobody answers and to go on, saying what
 * it assumed; the result's answered field tells the two apart.
 */
#include "xg.h"
#include "tools/internal.h"
#include <sys/wait.h>

static void ask_sink(void *data, const char *p, size_t n)
{
	struct xg_buf *b = data;
	size_t room = XG_TOOL_ASK_MAX_ANSWER + 1 - b->len;

	/* One byte past the ceiling says the answer was longer. */
	xg_buf_add(b, p, n < room ? n : room);
}

static const char no_person[] =
	"Nobody is available to answer questions during this run. Proceed on "
	"your best judgement, and state in your reply what you assumed.";

jv xg_tool_ask_user_peek(const struct xg_tool_ctx *ctx, jv args)
{
	const char *question = xg_json_string_peek(args, "question");
	struct xg_buf answer = XG_BUF_INIT(0);
	struct xg_tool_proc c;
	int timeout_s = ctx->ask_timeout_s > 0 ? ctx->ask_timeout_s : XG_TOOL_ASK_TIMEOUT_S;
	size_t n;
	jv r;

	if (!question || !*question)
		return xg_tool_fail("ask_user: 'question' must be a non-empty string");
	if (!ctx->ask_command || !*ctx->ask_command) {
		r = xg_tool_result(1, jv_string(no_person));
		return xg_json_set(r, "answered", jv_false());
	}
	if (xg_tool_proc_aborted(ctx))
		return xg_tool_fail("ask_user: not asked: the run is being interrupted");
	memset(&c, 0, sizeof(c));
	c.sink = ask_sink;
	c.sink_data = &answer;
	c.in_data = question;
	c.in_len = strlen(question);
	if (xg_tool_proc_start(ctx, &c, ctx->ask_command, 1, 0) < 0) {
		r = xg_tool_fail("ask_user: cannot start the ask command: %s. %s",
				 strerror(errno), no_person);
		return xg_json_set(r, "answered", jv_false());
	}
	xg_tool_proc_wait(ctx, &c, (int64_t)timeout_s * 1000);

	n = answer.len;
	while (n > 0 && isspace((unsigned char)answer.buf[n - 1]))
		n--;
	if (c.end == XG_TOOL_PROC_TIMEOUT || c.end == XG_TOOL_PROC_DEADLINE) {
		r = xg_tool_fail("No answer came within %d s. %s", timeout_s, no_person);
	} else if (c.end == XG_TOOL_PROC_ABORT) {
		r = xg_tool_fail("ask_user: interrupted before an answer came");
	} else if (!WIFEXITED(c.status) || WEXITSTATUS(c.status)) {
		if (WIFEXITED(c.status))
			r = xg_tool_fail("The ask command failed (exit code %d) and gave no "
					 "answer. %s", WEXITSTATUS(c.status), no_person);
		else
			r = xg_tool_fail("The ask command was killed by signal %d and gave no "
					 "answer. %s", WTERMSIG(c.status), no_person);
	} else if (n == 0) {
		r = xg_tool_result(1, jv_string("The person gave no answer. Proceed on your "
						 "best judgement, and state in your reply "
						 "what you assumed."));
	} else {
		int cut = answer.len > XG_TOOL_ASK_MAX_ANSWER;
		if (cut)
			n = XG_TOOL_ASK_MAX_ANSWER;
		answer.len = n;
		if (cut)
			xg_buf_addf(&answer, "\n[the answer was cut at %d bytes]",
				    XG_TOOL_ASK_MAX_ANSWER);
		r = xg_tool_result(1, xg_json_string_bytes(answer.buf, answer.len));
		r = xg_json_set(r, "answered", jv_true());
		xg_buf_release(&answer);
		return r;
	}
	xg_buf_release(&answer);
	return xg_json_set(r, "answered", jv_false());
}

