/*
 * The phase row (xg(1), The phase row): one live line on standard error,
 * replaced in place, naming what a rendered run is inside while nothing
 * else is shown: a tool and how long it has run, a wait on subagents, a
 * silent model, a retry's countdown, the start until the first request is
 * out, and a waiting indicator before the first token (saying so when the
 * person's message has just gone out).  It folds heartbeats: they move the row, they are never
 * lines of their own.
 *
 * The state comes from the records as the renderer reads them (their
 * arrival is the clock: records carry no times, heartbeats carry ages); a
 * thread redraws the row every quarter second.  The renderer's loop holds
 * the row's lock while it writes, so the row is cleared first and drawn
 * again after, and never in the middle of a line of text.
 */
#include "xg.h"
#include "dispatch/dispatch.h"
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <time.h>

/* A model quiet this long after its first token is "silent". */
#define SILENT_MS 3000
#define TICK_MS 250
#define DETAIL_MAX 60

enum phase { P_NONE, P_STARTING, P_WAITING, P_MODEL, P_TOOL, P_SUBAGENTS, P_RETRY };

struct xg_render_row {
	FILE *fp;
	int color;
	pthread_mutex_t lock;
	pthread_t thread;
	int running, stopping;
	int drawn;		/* a row is on the screen */
	int may_draw;		/* the text so far ends a line */
	enum phase phase;
	int64_t t0;		/* the phase's start (for a tool: the tool's) */
	int64_t last;		/* the model's last token */
	int64_t retry_at;	/* the retry's wait ends */
	int attempt, of;
	int children;		/* subagents running */
	int64_t oldest_t0;	/* the oldest's start; 0: unknown */
	char detail[DETAIL_MAX + 40];
	char waitfor[128];	/* what the run waits for before the model, or "" */
	int steered;		/* the wait is for a reply to the person's message */
	int sent_fd;		/* ends once the first request is out; -1: none */
	unsigned spin;
};

static void add_duration(struct xg_buf *b, int64_t ms)
{
	long long s = ms < 0 ? 0 : ms / 1000;

	if (s < 60)
		xg_buf_addf(b, "%lld s", s);
	else if (s < 3600)
		xg_buf_addf(b, "%lld m %lld s", s / 60, s % 60);
	else
		xg_buf_addf(b, "%lld h %lld m", s / 3600, s / 60 % 60);
}

void xg_render_row_text(struct xg_render_row *w, int64_t now, struct xg_buf *b)
{
	static const char spinner[] = "|/-\\";

	switch (w->phase) {
	case P_NONE:
		return;
	case P_STARTING:
		/* No model is chosen yet, or its request not yet made. */
		xg_buf_addf(b, "%c %s%s ", spinner[w->spin % 4], w->waitfor[0] ? "waiting for " : "",
			    w->waitfor[0] ? w->waitfor : "choosing the model and preparing the request");
		add_duration(b, now - w->t0);
		return;
	case P_WAITING:
		xg_buf_addf(b, "%c waiting for %s ", spinner[w->spin % 4],
			    w->waitfor[0] ? w->waitfor :
			    w->steered ? "the model to read your message" : "the model");
		add_duration(b, now - w->t0);
		return;
	case P_MODEL:
		if (now - w->last < SILENT_MS)
			return;
		xg_buf_addstr(b, "model silent ");
		add_duration(b, now - w->last);
		return;
	case P_TOOL:
		xg_buf_addf(b, "%s ", w->detail);
		add_duration(b, now - w->t0);
		return;
	case P_SUBAGENTS:
		xg_buf_addf(b, "waiting on %d subagent%s (oldest ", w->children,
			    w->children == 1 ? "" : "s");
		add_duration(b, now - (w->oldest_t0 ? w->oldest_t0 : w->t0));
		xg_buf_addch(b, ')');
		return;
	case P_RETRY:
		xg_buf_addf(b, "retry %d of %d in ", w->attempt, w->of);
		add_duration(b, w->retry_at - now + 999);
		return;
	}
}

/* Draws the row (under the lock), cut to the terminal's width so it never
 * wraps, which would leave a line behind. */
static void draw(struct xg_render_row *w)
{
	struct xg_buf b = XG_BUF_INIT(0), text = XG_BUF_INIT(0);
	struct winsize ws;
	size_t cols = 80;

	if (!w->may_draw)
		return;
	xg_render_row_text(w, xg_clock_ms(), &text);
	if (ioctl(fileno(w->fp), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		cols = ws.ws_col;
	if (text.len > cols - 1)
		xg_buf_setlen(&text, cols - 1);
	if (!text.len && !w->drawn) {
		xg_buf_release(&text);
		return;
	}
	xg_buf_addstr(&b, "\r\033[K");
	if (text.len) {
		xg_buf_addstr(&b, w->color ? "\033[2m" : "");
		xg_buf_add(&b, text.buf, text.len);
		xg_buf_addstr(&b, w->color ? "\033[0m" : "");
	}
	fwrite(b.buf, 1, b.len, w->fp);
	fflush(w->fp);
	w->drawn = text.len > 0;
	xg_buf_release(&b);
	xg_buf_release(&text);
}

static void clear(struct xg_render_row *w)
{
	if (!w->drawn)
		return;
	fputs("\r\033[K", w->fp);
	fflush(w->fp);
	w->drawn = 0;
}

/* Whether the first request is out: the watched descriptor has its end
 * (or there is none to watch). */
static int sent(struct xg_render_row *w)
{
	struct pollfd p = { w->sent_fd, POLLIN, 0 };

	return w->sent_fd < 0 || poll(&p, 1, 0) != 0;
}

static void *tick(void *arg)
{
	struct xg_render_row *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		w->spin++;
		if (w->phase == P_STARTING && sent(w)) {
			w->phase = P_WAITING;
			w->t0 = xg_clock_ms();
		}
		draw(w);
		pthread_mutex_unlock(&w->lock);
		nanosleep(&(struct timespec){ 0, TICK_MS * 1000000L }, NULL);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct xg_render_row *xg_render_row_new(FILE *fp, int color)
{
	struct xg_render_row *w = xg_calloc(1, sizeof(*w));
	sigset_t all, old;

	w->fp = fp;
	w->color = color;
	w->sent_fd = -1;
	/* The run has started: nothing comes before its first token. */
	w->phase = P_WAITING;
	w->t0 = xg_clock_ms();
	w->may_draw = 1;
	pthread_mutex_init(&w->lock, NULL);
	/* The signals are the main thread's, which forwards them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	w->running = pthread_create(&w->thread, NULL, tick, w) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return w;
}

void xg_render_row_watch(struct xg_render_row *w, int fd)
{
	pthread_mutex_lock(&w->lock);
	w->sent_fd = fd;
	if (!sent(w))
		w->phase = P_STARTING;
	pthread_mutex_unlock(&w->lock);
}

void xg_render_row_free(struct xg_render_row *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	clear(w);
	pthread_mutex_unlock(&w->lock);
	if (w->running)
		pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* The name and the argument a tool's row shows: "bash: make check". */
static void set_detail(struct xg_render_row *w, const char *name, const char *arg)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t i, n;

	xg_buf_addstr(&b, name ? name : "tool");
	if (arg && *arg) {
		xg_buf_addstr(&b, ": ");
		n = strcspn(arg, "\r\n");
		if (n > DETAIL_MAX) {
			n = DETAIL_MAX;
			n = xg_utf8_start(arg, n);
		}
		for (i = 0; i < n; i++)
			if ((unsigned char)arg[i] >= 0x20 && arg[i] != 0x7f)
				xg_buf_addch(&b, arg[i]);
		if (arg[n])
			xg_buf_addstr(&b, "...");
	}
	snprintf(w->detail, sizeof(w->detail), "%s", b.buf);
	xg_buf_release(&b);
}

static const char *tool_arg_peek(const char *name, jv args)
{
	const char *s = xg_json_string_peek(args, "command");

	if (name && !strcmp(name, "bash"))
		return s;
	return xg_json_string_peek(args, "path");
}

static int subagent_tool(const char *name)
{
	return name && (!strcmp(name, "wait_subagents") || !strcmp(name, "spawn_subagent"));
}

/* A heartbeat: the ages it carries put the row's clocks right. */
static void note_heartbeat(struct xg_render_row *w, jv rec, int64_t now)
{
	const char *phase = xg_json_string_peek(rec, "phase");
	jv tools = xg_json_get_peek(rec, "active_tools");
	jv kids = xg_json_get_peek(rec, "children");
	double ms = 0, in = 0;
	long long n;

	if (!phase)
		return;
	if (!strcmp(phase, "tool") && xg_json_length_peek(tools) > 0) {
		jv t = jv_array_get(jv_copy(tools), 0);
		const char *d = xg_json_string_peek(t, "detail");

		set_detail(w, xg_json_string_peek(t, "name"), d);
		if (xg_json_number_peek(t, "ms", &ms) == 0)
			w->t0 = now - (int64_t)ms;
		w->phase = P_TOOL;
		jv_free(t);
	} else if (!strcmp(phase, "waiting_subagents")) {
		w->phase = P_SUBAGENTS;
		w->children = xg_json_length_peek(kids);
		w->oldest_t0 = 0;
		jv_array_foreach(kids, i, k) {
			(void)i;
			if (xg_json_number_peek(k, "ms", &ms) == 0 &&
			    (!w->oldest_t0 || now - (int64_t)ms < w->oldest_t0))
				w->oldest_t0 = now - (int64_t)ms;
			jv_free(k);
		}
	} else if (!strcmp(phase, "retry")) {
		jv rt = xg_json_get_peek(rec, "retry");

		w->phase = P_RETRY;
		if (xg_json_int_peek(rt, "attempt", &n) == 0)
			w->attempt = (int)n;
		if (xg_json_int_peek(rt, "of", &n) == 0)
			w->of = (int)n;
		if (xg_json_number_peek(rt, "in_ms", &in) == 0)
			w->retry_at = now + (int64_t)in;
	} else if (!strcmp(phase, "model")) {
		if (jv_get_kind(xg_json_get_peek(rec, "waiting")) == JV_KIND_TRUE) {
			w->phase = P_WAITING;
			if (xg_json_number_peek(rec, "request_ms", &ms) == 0)
				w->t0 = now - (int64_t)ms;
		} else if (xg_json_number_peek(rec, "quiet_ms", &ms) == 0) {
			w->phase = P_MODEL;
			w->last = now - (int64_t)ms;
		}
	}
}

static void note(struct xg_render_row *w, jv rec, int64_t now)
{
	const char *type = xg_json_string_peek(rec, "type");
	const char *name = xg_json_string_peek(rec, "name");
	const char *ev = xg_json_string_peek(rec, "event");
	long long n;
	const char *wait = xg_json_string_peek(rec, "wait");

	/* A notice that says what the run waits for (another run's hold on
	 * the conversation) names the wait until the next record. */
	if (!strcmp(type, "notice") && wait) {
		snprintf(w->waitfor, sizeof(w->waitfor), "%s", wait);
		return;
	}
	w->waitfor[0] = '\0';
	if (!strcmp(type, "run_start")) {
		/* It comes with the first event of the reply. */
		if (w->phase == P_STARTING)
			w->phase = P_WAITING;
	} else if (!strcmp(type, "tool_result")) {
		w->phase = P_WAITING;
		w->t0 = now;
	} else if (!strcmp(type, "text") || (!strcmp(type, "message") &&
		   !strcmp(xg_json_string_peek(rec, "role") ? xg_json_string_peek(rec, "role") : "",
			   "assistant"))) {
		w->phase = P_MODEL;
		w->last = now;
	} else if (!strcmp(type, "tool_call")) {
		w->t0 = now;
		if (subagent_tool(name) && !strcmp(name, "wait_subagents")) {
			w->phase = P_SUBAGENTS;
			w->oldest_t0 = 0;
		} else {
			w->phase = P_TOOL;
			set_detail(w, name, tool_arg_peek(name, xg_json_get_peek(rec, "args")));
		}
	} else if (!strcmp(type, "retry")) {
		w->phase = P_RETRY;
		w->attempt = xg_json_int_peek(rec, "attempt", &n) == 0 ? (int)n : 0;
		w->of = xg_json_int_peek(rec, "of", &n) == 0 ? (int)n : 0;
		w->retry_at = now + (xg_json_int_peek(rec, "delay_ms", &n) == 0 ? n : 0);
	} else if (!strcmp(type, "subagent") && ev) {
		w->children += !strcmp(ev, "spawned") ? 1 : !strcmp(ev, "ended") ? -1 : 0;
		if (w->children < 0)
			w->children = 0;
	} else if (!strcmp(type, "heartbeat")) {
		note_heartbeat(w, rec, now);
	} else if (!strcmp(type, "run_end")) {
		w->phase = P_NONE;
	} else if (!strcmp(type, "steer")) {
		/* A message from xg say goes with the next request. */
		w->phase = P_WAITING;
		w->t0 = now;
		w->steered = 1;
	}
	if (w->phase != P_WAITING || !strcmp(type, "tool_result"))
		w->steered = 0;
}

void xg_render_row_begin(struct xg_render_row *w, int writing)
{
	pthread_mutex_lock(&w->lock);
	if (writing)
		clear(w);
}

void xg_render_row_end(struct xg_render_row *w, jv rec, int at_bol)
{
	if (xg_json_string_peek(rec, "type"))
		note(w, rec, xg_clock_ms());
	w->may_draw = at_bol;
	if (!at_bol)
		w->drawn = 0;	/* the text went over it */
	draw(w);
	pthread_mutex_unlock(&w->lock);
}
