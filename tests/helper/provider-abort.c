/*
 * A driver for xg_provider_abort at the worst moment.  It sends a request
 * (JSON on standard input) with a SIGINT handler that aborts the provider,
 * as xg-run's does, and raises SIGINT itself just as the process is about
 * to block, after every check of the abort flag:
 *
 *   --at wait     in the first blocking sleep or poll after a retry was
 *                 reported (the wait before the retry)
 *   --at stream   in the first blocking poll after the first event (the
 *                 transfer waiting for more of a stalled stream)
 *
 * It does so by defining poll, ppoll, nanosleep and clock_nanosleep itself:
 * each passes the call on to the C library's, first raising the signal when
 * armed and the call would block.  A wait that only checks a flag and then
 * sleeps sleeps on after such a signal; one that polls a descriptor the
 * handler writes to does not.
 *
 * Prints the events as NDJSON (a retry as {"type":"retry",...}), then
 * {"type":"signal","raised":B,"ms":N}: whether the signal was raised, and
 * how long the request went on after it; with --again, then the events of
 * the same request sent once more on the aborted provider.
 */
#include "xg.h"
#include "xg-test.h"
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include "provider/provider.h"

static const char *const usage[] = {
	"xg-test-provider-abort --at wait|stream [--again] kind base-url",
	NULL
};

enum { OPT_AT = 1, OPT_AGAIN };

static const struct xg_option options[] = {
	{ OPT_AGAIN, 0, "again", NULL, "then send the request once more on the aborted provider" },
	{ OPT_AT, 0, "at", "when", "raise SIGINT as the retry wait or the stream blocks" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-test-provider-abort", "Abort a provider request by a signal at the worst moment.",
	usage, options
};

static struct xg_provider *volatile provider;
static volatile sig_atomic_t armed;
static pthread_t main_thread;
static int64_t raised_ms = -1;
static int at_stream;

static void on_signal(int sig)
{
	struct xg_provider *p = provider;

	(void)sig;
	if (p)
		xg_provider_abort(p);
}

/* Raises SIGINT once, in the main thread, when armed and about to block. */
static void maybe_raise(int blocks)
{
	if (!armed || !blocks || !pthread_equal(pthread_self(), main_thread))
		return;
	armed = 0;
	raised_ms = xg_clock_ms();
	raise(SIGINT);
}

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort();
	return f;
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	static int (*real)(struct pollfd *, nfds_t, int);

	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, int))next("poll");
	maybe_raise(timeout != 0);
	return real(fds, n, timeout);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);

	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, const struct timespec *,
				const sigset_t *))next("ppoll");
	maybe_raise(!ts || ts->tv_sec || ts->tv_nsec);
	return real(fds, n, ts, mask);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	static int (*real)(const struct timespec *, struct timespec *);

	if (!real)
		real = (int (*)(const struct timespec *, struct timespec *))next("nanosleep");
	maybe_raise(req->tv_sec || req->tv_nsec);
	return real(req, rem);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
		    struct timespec *rem)
{
	static int (*real)(clockid_t, int, const struct timespec *, struct timespec *);

	if (!real)
		real = (int (*)(clockid_t, int, const struct timespec *,
				struct timespec *))next("clock_nanosleep");
	maybe_raise(1);
	return real(clock, flags, req, rem);
}

static int on_event(void *ctx, jv ev)
{
	if (at_stream && raised_ms < 0)
		armed = 1;
	return xg_rec_write(ctx, ev) < 0;
}

static void on_retry(void *ctx, const struct xg_provider_retry *r)
{
	jv ev = xg_rec_new("retry");

	ev = xg_json_set(ev, "attempt", jv_number(r->attempt));
	ev = xg_json_set(ev, "delay_ms", jv_number((double)r->delay_ms));
	ev = xg_json_set(ev, "reason", jv_string(r->reason));
	xg_rec_write(ctx, ev);
	if (!at_stream && raised_ms < 0)
		armed = 1;
}

int cmd__provider_abort(int argc, char **argv)
{
	struct xg_opts o;
	struct xg_rec_writer w;
	struct xg_provider *p;
	struct xg_provider_callbacks cb = { on_event, on_retry, NULL };
	struct sigaction sa;
	sigset_t mask;
	const char *arg, *at = NULL;
	char err[256];
	int id, rc, again = 0;
	jv config, req, ev;

	xg_prog_init("xg-test-provider-abort");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		if (id == OPT_AT)
			at = arg;
		else if (id == OPT_AGAIN)
			again = 1;
	}
	if (!at || (strcmp(at, "wait") && strcmp(at, "stream")))
		xg_usage_error(&cmd, "--at takes wait or stream");
	if (o.nargs != 2)
		xg_usage_error(&cmd, "a kind and a base URL are needed");
	at_stream = !strcmp(at, "stream");
	req = xg_test_read_request();
	config = xg_test_provider_config(o.args[0], o.args[1]);
	p = xg_provider_new(config, NULL, err, sizeof(err));
	if (!p)
		xg_die(XG_EX_CONFIG, "%s", err);
	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	provider = p;
	xg_rec_writer_init(&w, stdout);
	cb.ctx = &w;
	rc = xg_provider_stream(p, jv_copy(req), &cb, NULL);
	ev = xg_rec_new("signal");
	ev = xg_json_set(ev, "raised", jv_bool(raised_ms >= 0));
	ev = xg_json_set(ev, "ms", raised_ms < 0 ? jv_null() :
			 jv_number((double)(xg_clock_ms() - raised_ms)));
	xg_rec_write(&w, ev);
	if (again)
		rc = xg_provider_stream(p, jv_copy(req), &cb, NULL);
	jv_free(req);
	provider = NULL;
	xg_provider_free(p);
	xg_rec_writer_release(&w);
	xg_opt_release(&o);
	return xg_prog_exit(rc < 0 ? XG_EX_FAIL : rc);
}
