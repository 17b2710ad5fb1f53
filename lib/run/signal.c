/*
 * A run and its signals.  SIGINT and SIGTERM end a run early but cleanly:
 * the handler notes the first one in the run (r->signal), kills the
 * process groups of the tools running now, aborts the provider call in
 * flight (the transfer gives up at once, a retry wait is cut short) and
 * stops the input (a snapshot being taken, a read of standard input).  The
 * loop then sees r->signal and ends the run as interrupted, with its
 * run_end record like any other.
 *
 * Only the main thread takes these signals, so that they interrupt what it
 * waits on: every other thread of the run starts with them blocked
 * (thread.c).
 */
#include "xg.h"
#include "run/internal.h"
#include "provider/provider.h"

/* A signal handler can reach only globals: the run being handled. */
static struct run *volatile running;

static void on_signal(int sig)
{
	struct run *r = running;
	struct xg_provider *p = r ? r->in_flight : NULL;
	int saved = errno;

	if (r) {
		if (!r->signal)
			r->signal = sig;
		xg_tool_procs_kill(&r->procs, SIGTERM);
		/* The children first: each ends its own tools. */
		xg_run_children_signal(r, SIGTERM);
	}
	if (p)
		xg_provider_abort(p);
	xg_run_input_abort();
	errno = saved;
}

void xg_run_signals_catch(struct run *r)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	running = r;
	/* A signal ignored by whoever started the run stays ignored (a job
	 * started with &, nohup), as xg keeps it. */
	if (sigaction(SIGINT, NULL, &old) || old.sa_handler != SIG_IGN)
		sigaction(SIGINT, &sa, NULL);
	if (sigaction(SIGTERM, NULL, &old) || old.sa_handler != SIG_IGN)
		sigaction(SIGTERM, &sa, NULL);
}

void xg_run_signals_release(void)
{
	running = NULL;
}
