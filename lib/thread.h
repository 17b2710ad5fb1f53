#ifndef XG_THREAD_H
#define XG_THREAD_H
/*
 * Threads on stacks of their own, unmapped when they are joined (see
 * thread.c): a short-lived thread costs no memory once it is done.
 */
#include <pthread.h>
#include <time.h>

struct xg_thread {
	pthread_t id;
	void *map;		/* the stack and its guard page; NULL: glibc's */
	size_t len;
};

/* Starts fn(arg) on a new thread: 0, or -1 with errno (nothing to join). */
int xg_thread_start(struct xg_thread *t, void *(*fn)(void *), void *arg);
/* Waits for it, then unmaps its stack. */
void xg_thread_join(struct xg_thread *t);
/* The same, giving up at abstime on CLOCK_MONOTONIC: 0 joined, else an
 * errno (ETIMEDOUT), and the thread is still to be joined. */
int xg_thread_clockjoin(struct xg_thread *t, const struct timespec *abstime);
/* Lets it run on unjoined: its stack stays mapped, as it may still use it. */
void xg_thread_detach(struct xg_thread *t);

#endif
