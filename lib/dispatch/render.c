/*
 * The renderer (dispatch.h): a run's records as a person reads them on a
 * terminal, one function per record type, the status line from run_end,
 * and the loop that reads records from a descriptor and writes the text,
 * with the phase row (row.c) below it when there is one.
 */
#include "xg.h"
#include "conversation.h"
#include "dispatch/dispatch.h"

#define BOLD "\033[1m"
#define DIM "\033[2m"
#define RESET "\033[0m"
#define WARN "\033[1;33m"
/* How much of a tool's argument or failure a line shows. */
#define SUMMARY_MAX 80

void xg_dispatch_reply_peek(jv rec, char **reply)
{
	const char *type = xg_json_string_peek(rec, "type");
	const char *role = xg_json_string_peek(rec, "role");
	const char *text = NULL;

	if (!type)
		return;
	if (!strcmp(type, "message") && role && !strcmp(role, "assistant"))
		text = xg_json_string_peek(rec, "text");
	else if (!strcmp(type, "run_end"))
		text = xg_json_string_peek(rec, "reply");
	if (!text || (!*text && !strcmp(type, "run_end")))
		return;
	free(*reply);
	*reply = xg_strdup(text);
}

void xg_render_init(struct xg_render *r, int color)
{
	memset(r, 0, sizeof(*r));
	r->color = color;
	r->at_bol = 1;
	r->calls = jv_object();
	r->sent_fd = -1;
}

void xg_render_release(struct xg_render *r)
{
	jv_free(r->calls);
	free(r->conversation);
	free(r->reply);
	free(r->plan);
	r->calls = jv_invalid();
	r->conversation = NULL;
	r->reply = NULL;
	r->plan = NULL;
}

/* Appends s[0..n) without the control characters a terminal would act on. */
static void add_clean(struct xg_buf *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f))
			xg_buf_addch(out, c);
	}
}

/* The first line of s, at most max bytes of it (not cutting a UTF-8
 * sequence), with "..." when something was left out. */
static void add_short(struct xg_buf *out, const char *s, size_t max)
{
	size_t n = strcspn(s, "\r\n");
	int cut = s[n] != '\0' && s[n + strspn(s + n, "\r\n")] != '\0';

	if (n > max) {
		n = max;
		n = xg_utf8_start(s, n);
		cut = 1;
	}
	add_clean(out, s, n);
	if (cut)
		xg_buf_addstr(out, "...");
}

/* What a reason says after its first line (the ways forward of "nothing
 * is configured", say): the person must see it, since xg-run's stderr is
 * quiet when its records are shown.  At most max bytes, then "...". */
#define REASON_REST_MAX 4096
static void add_rest(struct xg_buf *out, const char *s, size_t max)
{
	size_t n;

	s += strcspn(s, "\r\n");
	s += strspn(s, "\r\n");
	if (!*s)
		return;
	n = strlen(s);
	if (n > max) {
		n = max;
		n = xg_utf8_start(s, n);
	}
	add_clean(out, s, n);
	xg_buf_addstr(out, n < strlen(s) ? "...\n" : "\n");
}

static void start_line(struct xg_render *r, struct xg_buf *out)
{
	if (!r->at_bol)
		xg_buf_addch(out, '\n');
	r->at_bol = 1;
}

static void style(struct xg_render *r, struct xg_buf *out, const char *code)
{
	if (r->color)
		xg_buf_addstr(out, code);
}

static void add_text(struct xg_render *r, struct xg_buf *out, const char *s, size_t n)
{
	size_t before = out->len;

	add_clean(out, s, n);
	if (out->len > before) {
		r->at_bol = out->buf[out->len - 1] == '\n';
		r->replied = 1;
	}
}

static void render_text(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *s = xg_json_string_peek(rec, "text");

	if (!s)
		s = xg_json_string_peek(rec, "delta");
	if (!s || r->plain)
		return;
	add_text(r, out, s, strlen(s));
	r->streamed = 1;
}

static void render_message(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *role = xg_json_string_peek(rec, "role");
	const char *text = xg_json_string_peek(rec, "text");

	if (!role || strcmp(role, "assistant") || r->plain)
		return;
	if (!r->streamed && text)
		add_text(r, out, text, strlen(text));
	r->streamed = 0;
	start_line(r, out);
}

/* What a call is about, in a few words: the command, the path, the
 * question; else its arguments as JSON. */
static void add_call_summary(struct xg_buf *out, jv call)
{
	static const char *const keys[] = { "command", "cmd", "path", "question", NULL };
	const char *name = xg_json_string_peek(call, "name");
	jv args = xg_json_get_peek(call, "args"), items;
	struct xg_buf tmp = XG_BUF_INIT(0);
	int i;

	add_clean(out, name ? name : "tool", strlen(name ? name : "tool"));
	if (jv_get_kind(args) != JV_KIND_OBJECT)
		return;
	for (i = 0; keys[i]; i++) {
		const char *v = xg_json_string_peek(args, keys[i]);

		if (v) {
			xg_buf_addstr(out, ": ");
			add_short(out, v, SUMMARY_MAX);
			return;
		}
	}
	items = xg_json_get_peek(args, "items");
	if (jv_get_kind(items) == JV_KIND_ARRAY) {
		xg_buf_addf(out, ": %d item%s", xg_json_length_peek(items),
			    xg_json_length_peek(items) == 1 ? "" : "s");
		return;
	}
	if (xg_json_length_peek(args) > 0 && xg_json_dump(&tmp, jv_copy(args)) == 0) {
		xg_buf_addstr(out, " ");
		add_short(out, tmp.buf, SUMMARY_MAX);
	}
	xg_buf_release(&tmp);
}

static void add_duration(struct xg_buf *out, double ms)
{
	if (ms < 1000)
		xg_buf_addf(out, "%.0f ms", ms);
	else
		xg_buf_addf(out, "%.1f s", ms / 1000);
}

static void render_call(struct xg_render *r, jv rec)
{
	const char *id = xg_json_string_peek(rec, "id");

	if (id)
		r->calls = jv_object_set(r->calls, jv_string(id), jv_copy(rec));
}

/* The first line of a failed result's output, whatever its shape. */
static void add_failure(struct xg_buf *out, jv output)
{
	struct xg_buf tmp = XG_BUF_INIT(0);
	const char *s = NULL;

	if (jv_get_kind(output) == JV_KIND_STRING)
		s = jv_string_value(output);
	else if (jv_get_kind(output) == JV_KIND_OBJECT)
		s = xg_json_string_peek(output, "error");
	if (!s && jv_is_valid(output) && jv_get_kind(output) != JV_KIND_NULL &&
	    xg_json_dump(&tmp, jv_copy(output)) == 0)
		s = tmp.buf;
	if (s && *s) {
		xg_buf_addstr(out, ": ");
		add_short(out, s, SUMMARY_MAX);
	}
	xg_buf_release(&tmp);
}

static void render_result(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *id = xg_json_string_peek(rec, "id");
	jv call = id ? jv_object_get(jv_copy(r->calls), jv_string(id)) : jv_invalid();
	bool ok = false;
	double ms;

	xg_json_bool_peek(rec, "ok", &ok);
	start_line(r, out);
	style(r, out, DIM);
	xg_buf_addstr(out, ok ? "> " : "! ");
	if (jv_is_valid(call)) {
		add_call_summary(out, call);
		r->calls = jv_object_delete(r->calls, jv_string(id));
	} else {
		const char *name = xg_json_string_peek(rec, "name");
		add_clean(out, name ? name : "tool", strlen(name ? name : "tool"));
	}
	jv_free(call);
	xg_buf_addstr(out, ok ? " (ok" : " (failed");
	if (xg_json_number_peek(rec, "ms", &ms) == 0) {
		xg_buf_addstr(out, ", ");
		add_duration(out, ms);
	}
	xg_buf_addch(out, ')');
	if (!ok)
		add_failure(out, xg_json_get_peek(rec, "output"));
	style(r, out, RESET);
	xg_buf_addch(out, '\n');
}

static void render_notice(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *text = xg_json_string_peek(rec, "text");

	if (!text)
		return;
	start_line(r, out);
	xg_buf_addstr(out, "note: ");
	add_clean(out, text, strlen(text));
	xg_buf_addch(out, '\n');
}

static void render_retry(struct xg_render *r, jv rec, struct xg_buf *out)
{
	long long attempt = 0, of = 0;
	double delay = 0;
	const char *reason = xg_json_string_peek(rec, "reason");
	const char *provider = xg_json_string_peek(rec, "provider");
	const char *host = xg_json_string_peek(rec, "host");

	xg_json_int_peek(rec, "attempt", &attempt);
	xg_json_int_peek(rec, "of", &of);
	xg_json_number_peek(rec, "delay_ms", &delay);
	start_line(r, out);
	xg_buf_addf(out, "retry %lld of %lld in ", attempt, of);
	add_duration(out, delay);
	/* "provider 'NAME' (HOST)", as xg-run's messages name it. */
	if (provider) {
		xg_buf_addstr(out, ": provider '");
		add_short(out, provider, SUMMARY_MAX);
		xg_buf_addch(out, '\'');
	}
	if (provider && host) {
		xg_buf_addstr(out, " (");
		add_short(out, host, SUMMARY_MAX);
		xg_buf_addch(out, ')');
	}
	if (reason) {
		xg_buf_addstr(out, ": ");
		add_short(out, reason, SUMMARY_MAX);
	}
	/* The cause in the provider's or libcurl's words: "network" alone
	 * leaves the person to guess. */
	if (xg_json_string_peek(rec, "message")) {
		xg_buf_addstr(out, ": ");
		add_short(out, xg_json_string_peek(rec, "message"), 2 * SUMMARY_MAX);
	}
	xg_buf_addch(out, '\n');
}

static void render_todo(struct xg_render *r, jv rec, struct xg_buf *out)
{
	jv items = xg_json_get_peek(rec, "items");
	int n = xg_json_length_peek(items), done = 0, i;

	if (jv_get_kind(items) != JV_KIND_ARRAY)
		return;
	for (i = 0; i < n; i++) {
		jv it = jv_array_get(jv_copy(items), i);
		const char *st = xg_json_string_peek(it, "status");

		done += st && !strcmp(st, "completed");
		jv_free(it);
	}
	start_line(r, out);
	style(r, out, DIM);
	xg_buf_addf(out, "todo: %d of %d done", done, n);
	style(r, out, RESET);
	xg_buf_addch(out, '\n');
}

static void render_plan(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *outcome = xg_json_string_peek(rec, "outcome");
	const char *text = xg_json_string_peek(rec, "plan");

	free(r->plan);
	r->plan = text && outcome && !strcmp(outcome, "plan_ready") ? xg_strdup(text) : NULL;
	/* Quiet, a blocked plan is still said: it is what went wrong. */
	if (!outcome || (r->quiet && strcmp(outcome, "blocked")))
		return;
	start_line(r, out);
	/* A blocked plan is no plan: a warning, with what blocks it
	 * (ADR-0077), never a line that reads like plan_ready's. */
	if (!strcmp(outcome, "blocked")) {
		const char *why = xg_json_string_peek(rec, "blocked");

		style(r, out, WARN);
		xg_buf_addstr(out, "xg: warning: no plan: the planning is blocked");
		if (why && *why) {
			xg_buf_addstr(out, ": ");
			add_short(out, why, 2 * SUMMARY_MAX);
		}
		style(r, out, RESET);
		xg_buf_addch(out, '\n');
		return;
	}
	style(r, out, BOLD);
	xg_buf_addstr(out, "plan: ");
	add_clean(out, outcome, strlen(outcome));
	style(r, out, RESET);
	xg_buf_addch(out, '\n');
}

/* A message the person sent the run while it went on (xg say): its first
 * line, and whether it waits for the conversation's next run. */
static void render_steer(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *text = xg_json_string_peek(rec, "text");

	if (!text)
		return;
	start_line(r, out);
	style(r, out, BOLD);
	xg_buf_addstr(out, "you: ");
	style(r, out, RESET);
	add_short(out, text, 2 * SUMMARY_MAX);
	if (jv_get_kind(xg_json_get_peek(rec, "next_run")) == JV_KIND_TRUE)
		xg_buf_addstr(out, " (too late for this run: kept for the next)");
	xg_buf_addch(out, '\n');
}

/* A goal's change (xg-goal): one line, the last of a round saying how the
 * goal stands after it.  A goal record ends what came before it, so a goal
 * alone (xg goal get) is not a run that lost its run_end. */
static void render_goal(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *ev = xg_json_string_peek(rec, "event");
	const char *status = xg_json_string_peek(rec, "status");
	const char *reason = xg_json_string_peek(rec, "reason");
	const char *obj = xg_json_string_peek(rec, "objective");
	long long rounds = 0, max = 0;
	char *first;

	if (!ev || !status)
		return;
	r->ended = 1;
	/* Quiet, only a goal that the brakes or the caps stopped is said. */
	if (r->quiet && (!strcmp(status, "active") || !strcmp(status, "complete") ||
			 !strcmp(status, "paused")))
		return;
	xg_json_int_peek(rec, "rounds", &rounds);
	xg_json_int_peek(xg_json_get_peek(rec, "limits"), "rounds", &max);
	start_line(r, out);
	style(r, out, !strcmp(ev, "round") && !strcmp(status, "active") ? DIM : BOLD);
	xg_buf_addstr(out, "xg: goal ");
	if (!strcmp(ev, "round") && !strcmp(status, "active")) {
		xg_buf_addf(out, "round %lld of %lld done; the goal goes on", rounds, max);
		reason = xg_json_string_peek(rec, "verdict") ? reason : NULL;
	} else if (!strcmp(ev, "round")) {
		add_clean(out, status, strlen(status));
		xg_buf_addf(out, " after %lld round%s", rounds, rounds == 1 ? "" : "s");
	} else {
		add_clean(out, status, strlen(status));
		xg_buf_addstr(out, " (");
		add_clean(out, ev, strlen(ev));
		xg_buf_addch(out, ')');
		if (!reason && obj && (!strcmp(ev, "set") || !strcmp(ev, "edit")))
			reason = obj;
	}
	if (reason) {
		first = xg_strndup(reason, strcspn(reason, "\r\n"));
		xg_buf_addstr(out, ": ");
		add_short(out, first, 2 * SUMMARY_MAX);
		free(first);
	}
	style(r, out, RESET);
	xg_buf_addch(out, '\n');
}

static void render_start(struct xg_render *r, jv rec)
{
	const char *conv = xg_json_string_peek(rec, "conversation");

	r->ended = 0;
	free(r->conversation);
	r->conversation = conv ? xg_strdup(conv) : NULL;
}

static void add_usage(struct xg_buf *out, jv usage)
{
	long long in = 0, cached = 0, outn = 0;

	if (jv_get_kind(usage) != JV_KIND_OBJECT)
		return;
	xg_json_int_peek(usage, "input", &in);
	xg_json_int_peek(usage, "cached_input", &cached);
	xg_json_int_peek(usage, "output", &outn);
	xg_buf_addf(out, ", tokens %lld in", in);
	if (cached)
		xg_buf_addf(out, " (%lld cached)", cached);
	xg_buf_addf(out, ", %lld out", outn);
}

static void render_end(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *status = xg_json_string_peek(rec, "status");
	const char *stop = xg_json_string_peek(rec, "stop");
	const char *reason = xg_json_string_peek(rec, "reason");
	const char *reply = xg_json_string_peek(rec, "reply");
	long long calls = 0, requests = 0;
	double ms;

	r->ended = 1;
	if (r->quiet && status && !strcmp(status, "completed"))
		return;
	/* Without --stream and without a message record, the reply is only
	 * here. */
	if (!r->replied && reply && *reply && !r->plain)
		add_text(r, out, reply, strlen(reply));
	start_line(r, out);
	style(r, out, BOLD);
	xg_buf_addstr(out, "xg: ");
	add_clean(out, status ? status : "ended", strlen(status ? status : "ended"));
	if (stop) {
		xg_buf_addstr(out, " (");
		add_clean(out, stop, strlen(stop));
		xg_buf_addch(out, ')');
	}
	if (reason) {
		/* Its first line here; the rest follows the status line. */
		char *first = xg_strndup(reason, strcspn(reason, "\r\n"));

		xg_buf_addstr(out, ": ");
		add_short(out, first, 2 * SUMMARY_MAX);
		free(first);
	}
	style(r, out, RESET);
	/* A run that failed before its first request did nothing to count:
	 * its reason is all there is to say. */
	if (status && !strcmp(status, "failed") &&
	    xg_json_int_peek(rec, "requests", &requests) == 0 && requests == 0) {
		xg_buf_addch(out, '\n');
		if (reason)
			add_rest(out, reason, REASON_REST_MAX);
		return;
	}
	if (xg_json_int_peek(rec, "tool_calls", &calls) == 0)
		xg_buf_addf(out, "; %lld tool call%s", calls, calls == 1 ? "" : "s");
	if (xg_json_number_peek(rec, "ms", &ms) == 0) {
		xg_buf_addstr(out, ", ");
		add_duration(out, ms);
	}
	add_usage(out, xg_json_get_peek(rec, "usage"));
	/* A run that sent no request may have made no conversation: naming
	 * one that is not there would send the person to resume nothing. */
	if (r->conversation && (xg_json_int_peek(rec, "requests", &requests) < 0 || requests > 0 ||
				xg_conv_exists(r->conversation))) {
		xg_buf_addstr(out, "; conversation ");
		add_clean(out, r->conversation, strlen(r->conversation));
	}
	xg_buf_addch(out, '\n');
	if (reason)
		add_rest(out, reason, REASON_REST_MAX);
}

void xg_render_record_peek(struct xg_render *r, jv rec, struct xg_buf *out)
{
	const char *type = xg_json_string_peek(rec, "type");

	if (!type)
		return;
	xg_dispatch_reply_peek(rec, &r->reply);
	if (r->quiet && strcmp(type, "run_start") && strcmp(type, "run_end") &&
	    strcmp(type, "goal") && strcmp(type, "plan"))
		return;
	if (!strcmp(type, "text"))
		render_text(r, rec, out);
	else if (!strcmp(type, "message"))
		render_message(r, rec, out);
	else if (!strcmp(type, "tool_call"))
		render_call(r, rec);
	else if (!strcmp(type, "tool_result"))
		render_result(r, rec, out);
	else if (!strcmp(type, "notice"))
		render_notice(r, rec, out);
	else if (!strcmp(type, "retry"))
		render_retry(r, rec, out);
	else if (!strcmp(type, "todo"))
		render_todo(r, rec, out);
	else if (!strcmp(type, "plan"))
		render_plan(r, rec, out);
	else if (!strcmp(type, "run_start"))
		render_start(r, rec);
	else if (!strcmp(type, "run_end"))
		render_end(r, rec, out);
	else if (!strcmp(type, "goal"))
		render_goal(r, rec, out);
	else if (!strcmp(type, "steer"))
		render_steer(r, rec, out);
}

void xg_render_finish(struct xg_render *r, struct xg_buf *out)
{
	jv_object_foreach(r->calls, id, call) {
		if (r->quiet) {
			jv_free(id);
			jv_free(call);
			continue;
		}
		start_line(r, out);
		style(r, out, DIM);
		xg_buf_addstr(out, "! ");
		add_call_summary(out, call);
		xg_buf_addstr(out, " (no result)");
		style(r, out, RESET);
		xg_buf_addch(out, '\n');
		jv_free(id);
		jv_free(call);
	}
	if (!r->ended) {
		start_line(r, out);
		xg_buf_addstr(out, "xg: the run ended without a run_end record\n");
	}
}

static int flush_out(struct xg_buf *b, FILE *fp)
{
	int rc = 0;

	if (b->len && (fwrite(b->buf, 1, b->len, fp) != b->len || fflush(fp) == EOF))
		rc = -1;
	xg_buf_reset(b);
	return rc;
}

int xg_render_stream(int fd, const char *name, FILE *fp, int color, char **reply)
{
	struct xg_render r;
	int rc;

	xg_render_init(&r, color);
	rc = xg_render_stream_live(fd, name, &r, fp, NULL);
	if (reply) {
		*reply = r.reply;
		r.reply = NULL;
	}
	xg_render_release(&r);
	return rc;
}

int xg_render_stream_live(int fd, const char *name, struct xg_render *r, FILE *fp,
			  FILE *rowfp)
{
	struct xg_render_row *row = rowfp ? xg_render_row_new(rowfp, r->color) : NULL;
	struct xg_rec_reader rd;
	struct xg_buf out = XG_BUF_INIT(0);
	struct xg_rec rec;
	int n, rc = 0;
	char sink[4096];

	if (row && r->sent_fd >= 0)
		xg_render_row_watch(row, r->sent_fd);
	xg_rec_reader_init(&rd, fd, name);
	while ((n = xg_rec_next(&rd, &rec)) > 0) {
		xg_render_record_peek(r, rec.v, &out);
		if (row)
			xg_render_row_begin(row, out.len > 0);
		if (flush_out(&out, fp) < 0)
			rc = -1;
		if (row)
			xg_render_row_end(row, rec.v, r->at_bol && !r->ended);
		xg_rec_release(&rec);
	}
	xg_render_row_free(row);
	if (n < 0) {
		xg_warn("%s", rd.err);
		for (;;) {
			ssize_t k = read(fd, sink, sizeof(sink));
			if (k == 0 || (k < 0 && errno != EINTR))
				break;
		}
	}
	xg_render_finish(r, &out);
	if (flush_out(&out, fp) < 0)
		rc = -1;
	xg_rec_reader_release(&rd);
	xg_buf_release(&out);
	return rc;
}

/* Shows what the record on line says about a failure, when it is a
 * record, on standard error (r is quiet: --json's records go to standard
 * output as they are). */
static void see_line(struct xg_render *r, const struct xg_buf *line)
{
	struct xg_buf out = XG_BUF_INIT(0);
	jv v = xg_json_parse(line->buf, line->len);

	if (jv_get_kind(v) == JV_KIND_OBJECT)
		xg_render_record_peek(r, v, &out);
	jv_free(v);
	flush_out(&out, stderr);
	xg_buf_release(&out);
}

/*
 * Copies what fd gives to standard output as it comes, and has r see each
 * record.  A line longer than the records' ceiling is passed on unread.
 * The input is read to its end even when standard output fails, so the
 * writer never blocks; 0, or -1 on a write error.
 */
static int tee_records(int fd, struct xg_render *r)
{
	struct xg_buf line = XG_BUF_INIT(0), out = XG_BUF_INIT(0);
	size_t max = xg_rec_max_line();
	char chunk[16384];	/* its stack pages stay with the process */
	int rc = 0, skip = 0;
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		const char *s = chunk, *end = chunk + n, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (!rc && (fwrite(chunk, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout)))
			rc = -1;
		for (; s < end; s = nl + 1) {
			nl = memchr(s, '\n', (size_t)(end - s));
			if (!skip && (size_t)((nl ? nl : end) - s) > max - line.len)
				skip = 1;
			if (!skip)
				xg_buf_add(&line, s, (size_t)((nl ? nl : end) - s));
			if (!nl)
				break;
			if (!skip)
				see_line(r, &line);
			xg_buf_reset(&line);
			skip = 0;
		}
	}
	if (line.len && !skip)
		see_line(r, &line);	/* a last line without its newline */
	xg_render_finish(r, &out);
	flush_out(&out, stderr);
	xg_buf_release(&out);
	xg_buf_release(&line);
	return rc;
}

/* Writes text and a newline after it, unless it ends in one, to
 * standard output; nothing for no text.  0, or -1 on a write error. */
static int write_text(const char *text)
{
	size_t n = text ? strlen(text) : 0;

	if (!n)
		return 0;
	if (fwrite(text, 1, n, stdout) != n || (text[n - 1] != '\n' && putchar('\n') == EOF))
		return -1;
	return fflush(stdout) == EOF ? -1 : 0;
}

int xg_render_output(int fd, const struct xg_render_out *how, char **reply)
{
	struct xg_render r;
	int rc;

	xg_render_init(&r, how->mode == XG_RENDER_TERMINAL && how->color);
	r.plain = how->mode != XG_RENDER_TERMINAL;
	r.quiet = how->mode == XG_RENDER_JSON || (how->mode == XG_RENDER_PLAIN && how->quiet);
	r.sent_fd = how->sent_fd;
	if (how->mode == XG_RENDER_JSON) {
		rc = tee_records(fd, &r);
	} else if (how->mode == XG_RENDER_PLAIN) {
		xg_render_stream_live(fd, how->name, &r, stderr, NULL);
		rc = write_text(how->plan && r.plan ? r.plan : r.reply);
	} else {
		rc = xg_render_stream_live(fd, how->name, &r, stdout, how->row);
	}
	if (reply) {
		*reply = r.reply;
		r.reply = NULL;
	}
	xg_render_release(&r);
	return rc;
}
