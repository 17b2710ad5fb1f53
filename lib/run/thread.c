/*
 * The threads of a run: the rest of the input and the snapshot (input.c),
 * the gate's compilation and libcurl's set-up (prepare.c), the stall watch
 * (stall.c).  Each starts with SIGINT and SIGTERM blocked, so that a
 * signal always reaches the main thread and interrupts what it waits on
 * (signal.c), on a stack of its own that its join unmaps (lib/thread.c).
 */
#include "xg.h"
#include "run/internal.h"

int xg_run_thread_start(struct xg_thread *t, void *(*fn)(void *), void *arg)
{
	sigset_t quiet, old;
	int rc;

	sigemptyset(&quiet);
	sigaddset(&quiet, SIGINT);
	sigaddset(&quiet, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	rc = xg_thread_start(t, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
