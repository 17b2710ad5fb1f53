/*
 * The stall watch (man 1 xg-run, The stall watch; design.md B10): a clock
 * per run, kept by a thread of its own.
 *
 * The clock is the run's last event other than a heartbeat (a record it
 * wrote, an event of the reply streaming in) and the tools it is inside.
 * Outside tools, a run quiet for the reply window is stalled; inside
 * them, one whose oldest tool has run for the tool window is.  While the
 * only tools running are the subagent ones, the run's own rule is paused
 * as long as some child answers to its own watch (subagent.c keeps the
 * children's clocks, in the same thread).  A stall ends the run as a
 * SIGTERM would (r->signal set, the tools' groups stopped, the request in
 * flight aborted), but as interrupted with stop "stalled".
 *
 * First the policy (XG_STALL), then the clock's inputs, called from the
 * loop's thread, then the thread: every tick it looks at the children and
 * the clock and, each beat, writes a heartbeat (heartbeat.c).
 */
#include "xg.h"
#include "run/internal.h"
#include "jsonfile.h"
#include "provider/provider.h"
#include <time.h>

/* How often the thread looks, at most. */
#define TICK_MS 200

static void stall_default(struct run_stall_policy *pol)
{
	pol->reply_ms = 15 * 60000;
	pol->tool_ms = 30 * 60000;
	pol->grace_ms = 5 * 60000;
	pol->beat_ms = 30000;
}

/* A duration: digits, then ms, s, m or h (none: seconds). */
static int parse_duration(const char *s, size_t n, int64_t *out)
{
	int64_t v = 0, mul = 1000;
	size_t i = 0;

	if (n > 2 && !memcmp(s + n - 2, "ms", 2))
		mul = 1, n -= 2;
	else if (n > 1 && s[n - 1] == 's')
		n--;
	else if (n > 1 && s[n - 1] == 'm')
		mul = 60000, n--;
	else if (n > 1 && s[n - 1] == 'h')
		mul = 3600000, n--;
	if (!n || n > 9)
		return -1;
	for (; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (!v)
		return -1;
	*out = v * mul;
	return 0;
}

int xg_run_stall_parse(struct run_stall_policy *pol, const char *spec, char *err, size_t n)
{
	static const struct { const char *name; size_t off; } keys[] = {
		{ "reply", offsetof(struct run_stall_policy, reply_ms) },
		{ "tool", offsetof(struct run_stall_policy, tool_ms) },
		{ "grace", offsetof(struct run_stall_policy, grace_ms) },
		{ "beat", offsetof(struct run_stall_policy, beat_ms) },
	};
	const char *p = spec, *end, *eq;
	struct run_stall_policy v;
	size_t i;

	stall_default(pol);
	v = *pol;
	while (*p) {
		int64_t d;

		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		for (i = 0; eq && i < sizeof(keys) / sizeof(*keys); i++)
			if (strlen(keys[i].name) == (size_t)(eq - p) &&
			    !memcmp(keys[i].name, p, (size_t)(eq - p)))
				break;
		if (end == p) {
			/* an empty item */
		} else if (!eq || i == sizeof(keys) / sizeof(*keys)) {
			snprintf(err, n, "XG_STALL: '%.*s' is not reply, tool, grace or beat=DURATION",
				 (int)(end - p), p);
			return -1;
		} else if (parse_duration(eq + 1, (size_t)(end - eq - 1), &d) < 0) {
			snprintf(err, n, "XG_STALL: '%.*s' is not a duration (as 90s, 15m)",
				 (int)(end - p), p);
			return -1;
		} else {
			*(int64_t *)((char *)&v + keys[i].off) = d;
		}
		p = *end ? end + 1 : end;
	}
	*pol = v;
	return 0;
}

/* ---- the clock's inputs, from the loop's thread ---- */

void xg_run_watch_tool_begin(struct run *r, const char *id, const char *name, jv args)
{
	struct run_watch *w = &r->watch;
	struct run_watch_tool *t;
	const char *cmd = xg_json_string_peek(args, "command");

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	if (w->ntools < XG_RUN_WATCH_TOOLS) {
		t = &w->tools[w->ntools++];
		memset(t, 0, sizeof(*t));
		snprintf(t->id, sizeof(t->id), "%s", id);
		snprintf(t->name, sizeof(t->name), "%s", name);
		if (cmd && !strcmp(name, "bash"))
			snprintf(t->detail, sizeof(t->detail), "%.*s", (int)strcspn(cmd, "\n"), cmd);
		t->t0 = xg_clock_ms();
	}
	w->last_event = xg_clock_ms();
	pthread_mutex_unlock(&w->lock);
}

void xg_run_watch_tool_end(struct run *r, const char *id)
{
	struct run_watch *w = &r->watch;
	int i;

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	for (i = 0; i < w->ntools; i++)
		if (!strcmp(w->tools[i].id, id)) {
			memmove(&w->tools[i], &w->tools[i + 1],
				(size_t)(w->ntools - i - 1) * sizeof(*w->tools));
			w->ntools--;
			break;
		}
	w->last_event = xg_clock_ms();
	pthread_mutex_unlock(&w->lock);
}

void xg_run_watch_request(struct run *r, int out)
{
	struct run_watch *w = &r->watch;

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->request = out;
	w->heard = 0;
	w->retry_at = 0;
	w->request_t0 = w->last_event = xg_clock_ms();
	pthread_mutex_unlock(&w->lock);
}

void xg_run_watch_retry(struct run *r, int attempt, int of, long delay_ms)
{
	struct run_watch *w = &r->watch;

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->retry_attempt = attempt;
	w->retry_of = of;
	w->last_event = xg_clock_ms();
	w->retry_at = w->last_event + delay_ms;
	w->heard = 0;
	pthread_mutex_unlock(&w->lock);
}

/* ---- the stall ---- */

int xg_run_watch_stall(struct run *r, const char *why)
{
	struct xg_provider *p;

	if (!__sync_bool_compare_and_swap(&r->signal, 0, XG_RUN_STALLED))
		return 0;
	snprintf(r->watch.why, sizeof(r->watch.why), "%s", why);
	/* As a SIGTERM would: the tools' groups, the request, the input. */
	xg_tool_procs_kill(&r->procs, SIGTERM);
	__sync_synchronize();
	if ((p = r->in_flight))
		xg_provider_abort(p);
	xg_run_input_abort();
	return 1;
}

/* The run's own rule, at now (under the lock). */
static void judge(struct run *r, int64_t now)
{
	struct run_watch *w = &r->watch;
	char why[200];
	int i, oldest = 0;

	if (r->signal || w->ending)
		return;
	if (!w->ntools) {
		if (now - w->last_event >= w->pol.reply_ms) {
			snprintf(why, sizeof(why), "stalled: nothing from the %s for %lld s",
				 w->request ? "model" : "run",
				 (long long)((now - w->last_event) / 1000));
			xg_run_watch_stall(r, why);
		}
		return;
	}
	if (xg_run_watch_only_subagents(w) && xg_run_children_answer(r, now))
		return;
	for (i = 1; i < w->ntools; i++)
		if (w->tools[i].t0 < w->tools[oldest].t0)
			oldest = i;
	if (now - w->tools[oldest].t0 >= w->pol.tool_ms) {
		snprintf(why, sizeof(why), "stalled: inside %s (%s) for %lld s", w->tools[oldest].name,
			 w->tools[oldest].id, (long long)((now - w->tools[oldest].t0) / 1000));
		xg_run_watch_stall(r, why);
	}
}

static void *watch_main(void *arg)
{
	struct run *r = arg;
	struct run_watch *w = &r->watch;
	struct timespec ts;
	int64_t now;
	jv beat;

	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		now = xg_clock_ms();
		xg_run_children_tick(r, now);
		judge(r, now);
		beat = jv_invalid();
		/* Heartbeats follow run_start, never come before it. */
		if (r->begun && now - w->last_beat >= w->pol.beat_ms) {
			beat = xg_run_heartbeat(r, now);
			w->last_beat = now;
		}
		pthread_mutex_unlock(&w->lock);
		if (jv_is_valid(beat))
			xg_run_out_write(&r->out, beat);
		pthread_mutex_lock(&w->lock);
		if (w->stopping)
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (w->pol.beat_ms < TICK_MS ? w->pol.beat_ms : TICK_MS) * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* The windows' text: XG_STALL, else the "stall" key of the configuration's
 * config.json (man 5 xg-config); *from names which, for a notice.  1 with
 * *spec (owned), 0 when neither sets them, -1 when the key is no string.
 * A config.json that cannot be read says so itself; the defaults stand. */
static int stall_spec(char **spec, const char **from)
{
	const char *env = getenv("XG_STALL");
	char *path;
	jv conf, v;
	int rc = 0;

	*spec = NULL;
	*from = "XG_STALL";
	if (env && *env) {
		*spec = xg_strdup(env);
		return 1;
	}
	*from = "config.json: field 'stall'";
	path = xg_path_config("config.json");
	rc = xg_jsonfile_read(path, &conf);
	free(path);
	if (rc)
		return 0;
	v = jv_get_kind(conf) == JV_KIND_OBJECT ? xg_json_get_peek(conf, "stall") : jv_invalid();
	if (jv_get_kind(v) == JV_KIND_STRING) {
		*spec = xg_strdup(jv_string_value(v));
		rc = 1;
	} else if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_NULL) {
		rc = -1;
	}
	jv_free(conf);
	return rc;
}

int xg_run_stall_policy(struct run_stall_policy *pol, const char **from, char **problem)
{
	char *spec, err[200];
	int got = stall_spec(&spec, from);

	*problem = NULL;
	if (got > 0 && !*spec)
		got = 0;
	stall_default(pol);
	if (got < 0)
		*problem = xg_asprintf("%s is a string, as \"reply=15m,tool=30m\"; the defaults "
				       "stand", *from);
	else if (got && xg_run_stall_parse(pol, spec, err, sizeof(err)) < 0)
		/* err names XG_STALL: say where the text came from instead. */
		*problem = xg_asprintf("%s%s; the defaults stand", *from, err + strlen("XG_STALL"));
	free(spec);
	/* What did not parse set nothing: the defaults are in force. */
	if (*problem || !got)
		*from = "default";
	return *problem ? -1 : 0;
}

void xg_run_watch_start(struct run *r)
{
	struct run_watch *w = &r->watch;
	const char *from;
	char *text;
	pthread_condattr_t ca;

	xg_run_stall_policy(&w->pol, &from, &text);
	if (text) {
		jv n = xg_rec_new("notice");

		n = xg_json_set(n, "from", jv_string("xg-run"));
		xg_run_emit(r, xg_json_set(n, "text", jv_string(text)));
		free(text);
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	w->t0 = w->last_event = w->last_beat = xg_clock_ms();
	w->running = 1;
	if (xg_run_thread_start(&w->thread, watch_main, r) < 0) {
		xg_warn("cannot start the stall watch: %s", strerror(errno));
		w->running = 0;
	}
}

void xg_run_watch_stop(struct run *r)
{
	struct run_watch *w = &r->watch;

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->ending = 1;
	pthread_mutex_unlock(&w->lock);
	xg_run_children_end(r);
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	xg_thread_join(&w->thread);
	w->running = 0;
	/* What the last look found, and what ended since. */
	pthread_mutex_lock(&w->lock);
	xg_run_children_tick(r, xg_clock_ms());
	pthread_mutex_unlock(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}
