/*
 * Retrying: the policy (XG_RETRY), the backoff it gives, and the wait
 * before a retry, which an abort cuts short.  The client asks
 * xg_provider_retry_wait after each failed attempt whether to go on.
 */
#include "xg.h"
#include <poll.h>
#include "provider/internal.h"

void xg_provider_policy_default(struct xg_provider_policy *pol)
{
	pol->attempts = 8;
	pol->base_ms = 2000;
	pol->cap_ms = 60000;
	pol->idle_ms = 300000;
	pol->connect_ms = 30000;
	pol->budget_ms = 240000;
}

/* A number, or a duration when unit is set: milliseconds, or with ms, s
 * or m after the digits. */
static int parse_ms(const char *s, size_t n, int unit, long *out)
{
	long v = 0, mul = 1;
	size_t i;

	if (unit && n > 2 && !memcmp(s + n - 2, "ms", 2))
		n -= 2;
	else if (unit && n > 1 && s[n - 1] == 's')
		mul = 1000, n--;
	else if (unit && n > 1 && s[n - 1] == 'm')
		mul = 60000, n--;
	if (!n || n > 9 || (mul > 1 && n > 6))
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v * mul;
	return 0;
}

int xg_provider_policy_parse(struct xg_provider_policy *pol, const char *spec,
			     char *err, size_t errlen)
{
	const char *p = spec, *end, *eq;
	int rc = 0;
	long v;

	if (!strcmp(spec, "off") || !strcmp(spec, "0")) {
		pol->attempts = 0;
		return 0;
	}
	while (*p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (end == p) {
			/* an empty item, as in "a=1,,b=2" */
		} else if (!eq || parse_ms(eq + 1, (size_t)(end - eq - 1),
					   (size_t)(eq - p) != 8 || memcmp(p, "attempts", 8), &v) < 0) {
			if (!rc)
				snprintf(err, errlen, "XG_RETRY: '%.*s' is not name=number",
					 (int)(end - p), p);
			rc = -1;
		} else if ((size_t)(eq - p) == 8 && !memcmp(p, "attempts", 8) && v <= 100) {
			pol->attempts = (int)v;
		} else if ((size_t)(eq - p) == 4 && !memcmp(p, "base", 4)) {
			pol->base_ms = v;
		} else if ((size_t)(eq - p) == 3 && !memcmp(p, "cap", 3)) {
			pol->cap_ms = v;
		} else if ((size_t)(eq - p) == 4 && !memcmp(p, "idle", 4) && v > 0) {
			pol->idle_ms = v;
		} else if ((size_t)(eq - p) == 7 && !memcmp(p, "connect", 7) && v > 0) {
			pol->connect_ms = v;
		} else if ((size_t)(eq - p) == 6 && !memcmp(p, "budget", 6) && v > 0) {
			pol->budget_ms = v;
		} else {
			if (!rc)
				snprintf(err, errlen, "XG_RETRY: unknown or out-of-range '%.*s'",
					 (int)(end - p), p);
			rc = -1;
		}
		p = *end ? end + 1 : end;
	}
	return rc;
}

void xg_provider_policy_from_env(struct xg_provider_policy *pol)
{
	const char *spec = getenv("XG_RETRY");
	char err[160];

	xg_provider_policy_default(pol);
	if (spec && *spec && xg_provider_policy_parse(pol, spec, err, sizeof(err)) < 0)
		xg_warn("%s; ignoring that part", err);
}

static uint64_t next_random(uint64_t *s)
{
	/* xorshift64*: plenty for jitter. */
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* The backoff of retry number attempt before its jitter: base, doubled
 * each time until it reaches the cap. */
static double backoff(const struct xg_provider_policy *pol, int attempt)
{
	double d = (double)pol->base_ms;
	int i;

	for (i = 1; i < attempt && d < (double)pol->cap_ms; i++)
		d *= 2;
	return d;
}

static long capped(const struct xg_provider_policy *pol, double d)
{
	return d > (double)pol->cap_ms ? pol->cap_ms : (long)d;
}

long xg_provider_retry_delay(const struct xg_provider_policy *pol, int attempt,
			     int64_t hint_ms, uint64_t *rng)
{
	double d;

	if (hint_ms >= 0)
		return capped(pol, (double)hint_ms);
	/* 80% to 120%, so clients that failed together spread out. */
	d = backoff(pol, attempt) *
	    (0.8 + 0.4 * ((double)(next_random(rng) >> 11) / 9007199254740992.0));
	return capped(pol, d);
}

void xg_provider_retry_range(const struct xg_provider_policy *pol, int attempt,
			     long *lo, long *hi)
{
	*lo = capped(pol, backoff(pol, attempt) * 0.8);
	*hi = capped(pol, backoff(pol, attempt) * 1.2);
}

/*
 * Waits ms before a retry, or less once the request is aborted.  Checking
 * the flag and then sleeping would sleep out the whole wait when the signal
 * came between the two; the wait is a poll on the wake pipe instead, which
 * the abort's byte makes readable whenever it came.  The byte stays in the
 * pipe: an abort is for good.
 */
static void wait_ms(struct xg_provider *p, long ms)
{
	struct pollfd pfd = { p->wake[0], POLLIN, 0 };
	int64_t end = xg_clock_ms() + ms, left;

	while (!p->aborted && (left = end - xg_clock_ms()) > 0)
		if (poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left) > 0)
			break;
}

/*
 * A server that is not running on this machine or its network does not
 * start by itself within the minutes the policy would wait: a refusal
 * there gets a few quick retries (for a server that is just restarting),
 * then the run says so.  A server that is up but still loading answers,
 * with a 503 say, and that keeps the policy's patience.
 */
static long near_delay(const struct xg_provider_policy *pol, int attempt)
{
	int shift = attempt > 1 ? 1 : 0;
	long d = pol->base_ms < 250 ? pol->base_ms << shift : 250L << shift;

	return d < pol->cap_ms ? d : pol->cap_ms;
}

/*
 * The budget: what is left of it once the wait is over, or -1 when the
 * wait itself does not fit (then no retry).  A wait the server asked for
 * that does not fit ends the request as a rate or usage limit does (75),
 * rather than retrying before the server said to.
 */
static long budget_left(struct xg_provider *p, struct xg_provider_error *e, long delay_ms)
{
	int64_t now = xg_clock_ms();
	long left;

	left = p->policy.budget_ms - (long)(now - p->first_fail_ms);
	if (delay_ms < left && e->retry_after_ms < left)
		return left - delay_ms;
	if (e->retry_after_ms >= 0 && e->retry_after_ms >= left && !e->refused_near) {
		size_t n = strlen(e->message);

		snprintf(e->message + n, sizeof(e->message) - n,
			 "%sthe provider asks to wait %ld s, past the retry budget's %ld s",
			 n ? "; " : "", (long)((e->retry_after_ms + 999) / 1000),
			 p->policy.budget_ms / 1000);
		e->exit_code = XG_EX_TEMPFAIL;
	}
	return -1;
}

bool xg_provider_retry_wait(struct xg_provider *p, int attempt,
			    struct xg_provider_error *e, size_t delivered,
			    const struct xg_provider_callbacks *cb)
{
	struct xg_provider_retry rr;
	int most = p->policy.attempts;
	long left;

	if (e->refused_near && most > XG_PROVIDER_NEAR_RETRIES)
		most = XG_PROVIDER_NEAR_RETRIES;
	if (!e->transient || attempt >= most)
		return false;
	rr.provider = p->name;
	rr.host = p->host;
	rr.attempt = attempt + 1;
	rr.of = most;
	rr.delay_ms = e->refused_near ? near_delay(&p->policy, attempt + 1) :
		xg_provider_retry_delay(&p->policy, attempt + 1, e->retry_after_ms, &p->rng);
	if ((left = budget_left(p, e, rr.delay_ms)) < 0)
		return false;
	rr.reason = e->class;
	rr.message = e->message;
	rr.partial = delivered > 0;
	if (cb->on_retry)
		cb->on_retry(cb->ctx, &rr);
	wait_ms(p, rr.delay_ms);
	/* The next attempt, silent, ends with the budget. */
	p->http.idle_ms = left < p->policy.idle_ms ? left : p->policy.idle_ms;
	return !p->aborted;
}
