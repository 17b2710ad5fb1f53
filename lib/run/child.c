/*
 * The children a run has started (subagent.c), as the stall watch looks
 * after them, under its lock: each look reads what a child wrote to its
 * events.ndjson since the last, keeps its clock from those records (its
 * last event other than a heartbeat, the tools it is inside), stops it
 * when it stalls (SIGTERM, then SIGKILL after the grace), and reaps it
 * once it has ended, settling its status.
 *
 * Also here: whether the children hold the parent's own rule paused, the
 * signal handler's SIGTERM to them all, and the end of them all when the
 * run ends.
 */
#include "xg.h"
#include "run/internal.h"
#include <sys/wait.h>
#include <time.h>

/* The grace a child ended with its parent gets before SIGKILL. */
#define END_GRACE_MS 5000

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? xg_strdup(s) : NULL;
}

/* One record of the child (borrowed). */
static void child_record(struct run_child *c, jv rec, int64_t now)
{
	const char *type = xg_json_string_peek(rec, "type");
	const char *id = xg_json_string_peek(rec, "id");
	const char *s;
	long long n;
	int i;

	if (!type)
		return;
	if (!strcmp(type, "heartbeat")) {
		/* Not an event: only what the child says it is inside. */
		if ((s = xg_json_string_peek(rec, "phase")))
			snprintf(c->phase, sizeof(c->phase), "%s", s);
		return;
	}
	c->last_event = now;
	if (!strcmp(type, "tool_call") && c->ntools < XG_RUN_WATCH_TOOLS) {
		struct run_watch_tool *t = &c->tools[c->ntools++];

		memset(t, 0, sizeof(*t));
		snprintf(t->id, sizeof(t->id), "%s", id ? id : "");
		snprintf(t->name, sizeof(t->name), "%s",
			 (s = xg_json_string_peek(rec, "name")) ? s : "");
		t->t0 = now;
		snprintf(c->phase, sizeof(c->phase), "tool");
	} else if (!strcmp(type, "tool_result")) {
		for (i = 0; id && i < c->ntools; i++)
			if (!strcmp(c->tools[i].id, id)) {
				memmove(&c->tools[i], &c->tools[i + 1],
					(size_t)(c->ntools - i - 1) * sizeof(*c->tools));
				c->ntools--;
				break;
			}
		snprintf(c->phase, sizeof(c->phase), "%s", c->ntools ? "tool" : "model");
	} else if (!strcmp(type, "run_end")) {
		set_str(&c->status, xg_json_string_peek(rec, "status"));
		set_str(&c->stop, xg_json_string_peek(rec, "stop"));
		set_str(&c->reason, xg_json_string_peek(rec, "reason"));
		set_str(&c->reply, xg_json_string_peek(rec, "reply"));
		if (xg_json_int_peek(rec, "exit", &n) == 0)
			c->exit = (int)n;
	} else if (strcmp(type, "retry")) {
		snprintf(c->phase, sizeof(c->phase), "%s", c->ntools ? "tool" : "model");
	}
}

/* Reads what the child wrote since the last look. */
static void follow(struct run_child *c, int64_t now)
{
	char chunk[16384];	/* its stack pages stay with the process */
	ssize_t n;
	char *nl;

	if (c->fd < 0 && (c->fd = open(c->events, O_RDONLY | O_CLOEXEC)) < 0)
		return;	/* not made yet */
	while ((n = read(c->fd, chunk, sizeof(chunk))) > 0)
		xg_buf_add(&c->line, chunk, (size_t)n);
	while ((nl = memchr(c->line.buf, '\n', c->line.len))) {
		size_t len = (size_t)(nl - c->line.buf);
		jv rec = jv_parse_sized(c->line.buf, (int)len);

		if (jv_get_kind(rec) == JV_KIND_OBJECT)
			child_record(c, rec, now);
		jv_free(rec);
		memmove(c->line.buf, nl + 1, c->line.len - len - 1);
		xg_buf_setlen(&c->line, c->line.len - len - 1);
	}
}

static void signal_child(pid_t pid, int sig)
{
	/* Its group: the child and what it runs in it (its xg-snapshot). */
	if (pid > 0 && kill(-pid, sig) < 0)
		kill(pid, sig);
}

static void stop_child(struct run_child *c, int64_t now, const char *by, const char *why)
{
	c->term_at = now;
	c->stopped_by = by;
	snprintf(c->why, sizeof(c->why), "%s", why);
	signal_child(c->pid, SIGTERM);
}

/* The child's own stall rule, as the run's (stall.c judge). */
static void judge_child(const struct run *r, struct run_child *c, int64_t now)
{
	const struct run_stall_policy *pol = &r->watch.pol;
	char why[160];
	int i, oldest = 0;

	if (c->term_at) {
		if (!c->killed && now - c->term_at >= pol->grace_ms) {
			signal_child(c->pid, SIGKILL);
			c->killed = 1;
		}
		return;
	}
	for (i = 1; i < c->ntools; i++)
		if (c->tools[i].t0 < c->tools[oldest].t0)
			oldest = i;
	if (c->ntools && now - c->tools[oldest].t0 >= pol->tool_ms) {
		snprintf(why, sizeof(why), "stalled: inside %s for %lld s", c->tools[oldest].name,
			 (long long)((now - c->tools[oldest].t0) / 1000));
		stop_child(c, now, "stalled", why);
	} else if (!c->ntools && now - c->last_event >= pol->reply_ms) {
		snprintf(why, sizeof(why), "stalled: nothing from it for %lld s",
			 (long long)((now - c->last_event) / 1000));
		stop_child(c, now, "stalled", why);
	}
}

/* Once reaped (wait status st): its status, from its run_end and from how
 * it ended. */
static void settle_child(struct run_child *c, int st)
{
	char why[200];

	c->exit = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	if (c->stopped_by && !strcmp(c->stopped_by, "stalled")) {
		set_str(&c->status, "interrupted");
		set_str(&c->stop, "stalled");
		set_str(&c->reason, c->why);
	} else if (!c->status) {
		if (WIFSIGNALED(st))
			snprintf(why, sizeof(why), "it ended without a run_end, killed by signal %d",
				 WTERMSIG(st));
		else
			snprintf(why, sizeof(why), "it ended without a run_end, exit %d", c->exit);
		set_str(&c->status, c->stopped_by ? "interrupted" : "failed");
		set_str(&c->stop, c->stopped_by ? "user" : NULL);
		set_str(&c->reason, c->stopped_by ? c->why : why);
	}
	c->ended = 1;
}

static void reap(struct run_child *c, int64_t now)
{
	pid_t pid = c->pid;
	int st;

	if (pid <= 0 || waitpid(pid, &st, WNOHANG) != pid)
		return;
	c->pid = 0;
	follow(c, now);		/* the rest, run_end among it */
	settle_child(c, st);
}

static jv ended_record(const struct run *r, const struct run_child *c, int64_t now)
{
	jv v = xg_rec_new("subagent");

	v = xg_json_set(v, "event", jv_string("ended"));
	v = xg_json_set(v, "run", jv_string(c->run));
	v = xg_json_set(v, "conversation", jv_string(c->conv));
	v = xg_json_set(v, "name", jv_string(c->name));
	v = xg_json_set(v, "profile", jv_string(c->profile));
	v = xg_json_set(v, "parent", jv_string(r->id));
	v = xg_json_set(v, "status", string_or_null(c->status));
	v = xg_json_set(v, "stop", string_or_null(c->stop));
	v = xg_json_set(v, "exit", jv_number(c->exit));
	if (c->reason)
		v = xg_json_set(v, "reason", jv_string(c->reason));
	return xg_json_set(v, "ms", jv_number((double)(now - c->t0)));
}

void xg_run_children_tick(struct run *r, int64_t now)
{
	struct run_watch *w = &r->watch;
	int i;

	for (i = 0; i < w->nchildren; i++) {
		struct run_child *c = &w->child[i];

		if (c->reported)
			continue;
		if (!c->ended) {
			follow(c, now);
			judge_child(r, c, now);
			reap(c, now);
		}
		if (c->ended) {
			/* Written before a wait can see it reported, so the ended
			 * record comes before the wait's result.  The output's lock
			 * is only ever taken after this one. */
			xg_run_out_write(&r->out, ended_record(r, c, now));
			w->last_event = now;
			c->reported = 1;
			pthread_cond_broadcast(&w->cond);
		}
	}
}

int xg_run_children_answer(const struct run *r, int64_t now)
{
	const struct run_watch *w = &r->watch;
	int i, tracked = 0;

	(void)now;
	for (i = 0; i < w->nchildren; i++) {
		const struct run_child *c = &w->child[i];

		if (c->delivered)
			continue;
		/* One that ignored its SIGTERM for the grace answers to
		 * nothing: the parent's own rule is back. */
		if (c->killed)
			return 0;
		tracked = 1;
	}
	return tracked;
}

void xg_run_children_signal(struct run *r, int sig)
{
	int i, n = r->watch.nchildren;

	for (i = 0; i < n && i < XG_RUN_MAX_CHILDREN; i++)
		signal_child(r->watch.child[i].pid, sig);
}

/* Whether every child has ended (under the lock). */
static int all_ended(const struct run_watch *w)
{
	int i;

	for (i = 0; i < w->nchildren; i++)
		if (!w->child[i].ended)
			return 0;
	return 1;
}

void xg_run_children_end(struct run *r)
{
	struct run_watch *w = &r->watch;
	int64_t now = xg_clock_ms(), kill_at = now + END_GRACE_MS;
	struct timespec ts;
	int i, killed = 0;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < w->nchildren; i++)
		if (!w->child[i].ended && !w->child[i].term_at)
			stop_child(&w->child[i], now, "parent", "ended with its parent");
	/* The watch's thread reaps them; SIGKILL to those the grace did not
	 * end, and then they go too. */
	while (!all_ended(w)) {
		now = xg_clock_ms();
		if (now >= kill_at && !killed) {
			for (i = 0; i < w->nchildren; i++)
				if (!w->child[i].ended) {
					signal_child(w->child[i].pid, SIGKILL);
					w->child[i].killed = 1;
				}
			killed = 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 100 * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		/* The thread may be gone (it could not start): look here too. */
		for (i = 0; i < w->nchildren; i++)
			if (!w->child[i].ended)
				reap(&w->child[i], xg_clock_ms());
	}
	pthread_mutex_unlock(&w->lock);
}

void xg_run_children_release(struct run *r)
{
	struct run_watch *w = &r->watch;
	int i;

	for (i = 0; i < w->nchildren; i++) {
		struct run_child *c = &w->child[i];

		if (c->fd >= 0)
			close(c->fd);
		xg_buf_release(&c->line);
		free(c->run);
		free(c->conv);
		free(c->events);
		free(c->status);
		free(c->stop);
		free(c->reason);
		free(c->reply);
	}
	w->nchildren = 0;
}
