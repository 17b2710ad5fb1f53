/*
 * Steering a run (man 1 xg-run, Steering): the conversation's inbox
 * (steer.h) is open from the first request to the run's last look, and
 * what "xg say" put in it is taken before each request, each message
 * added as the person's, after a steer record.  A reply that asks for no
 * tool gets one last look, under the inbox's lock: a message found there
 * sends the run round again, else the inbox closes, so no message comes
 * that the run would not take.  What is still there when the rounds end
 * otherwise (a work slice's bound, a failure, a signal) goes into the
 * conversation, for its next run.
 */
#include "xg.h"
#include "run/internal.h"

static void notice(struct run *r, const char *what)
{
	jv n = xg_rec_new("notice");

	n = xg_json_set(n, "from", jv_string(xg_progname));
	n = xg_json_set(n, "text", jv_string_fmt("%s: %s", what, strerror(errno)));
	xg_run_emit(r, n);
}

void xg_run_steer_open(struct run *r)
{
	if (xg_steer_open(&r->steer, r->conv, r->id) < 0)
		notice(r, "messages from 'xg say' cannot reach this run");
}

/* Each message of got (consumed): its steer record, then the person's
 * message; next_run marks those that wait for the conversation's next
 * run.  0, or r->rc when the conversation could not keep one. */
static int add_messages(struct run *r, jv got, int next_run)
{
	int rc = 0;

	jv_array_foreach(got, i, m) {
		jv rec = xg_rec_new("steer");

		(void)i;
		rec = xg_json_set(rec, "text", jv_copy(xg_json_get_peek(m, "text")));
		rec = xg_json_set(rec, "sent", jv_copy(xg_json_get_peek(m, "sent")));
		if (next_run)
			rec = xg_json_set(rec, "next_run", jv_true());
		xg_run_emit(r, rec);
		if (!rc)
			rc = xg_run_add_user_message(r, xg_json_string_peek(m, "text"), NULL);
		jv_free(m);
	}
	jv_free(got);
	return rc;
}

/* The messages taken (how as xg_steer_take): how many, or -1 when the
 * conversation could not keep one; 0 with a notice when the inbox could
 * not be read, its messages left for the next look. */
static int take(struct run *r, int how, int next_run)
{
	jv got;
	int n;

	if (!xg_steer_is_open(&r->steer))
		return 0;
	got = xg_steer_take(&r->steer, how);
	if (!jv_is_valid(got)) {
		jv_free(got);
		notice(r, "cannot read the messages sent with 'xg say'");
		return 0;
	}
	n = xg_json_length_peek(got);
	return add_messages(r, got, next_run) ? -1 : n;
}

int xg_run_steer_take(struct run *r)
{
	return take(r, XG_STEER_TAKE, 0) < 0 ? r->rc : 0;
}

int xg_run_steer_last_look(struct run *r)
{
	int n = take(r, XG_STEER_TAKE_OR_CLOSE, 0);

	return n < 0 ? -1 : n > 0;
}

void xg_run_steer_close(struct run *r)
{
	take(r, XG_STEER_CLOSE, 1);
	/* Closed above, unless its lock could not be had. */
	xg_steer_release(&r->steer);
}
