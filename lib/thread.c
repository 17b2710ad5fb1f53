/*
 * Threads on stacks of their own.  glibc keeps the stack of a joined
 * thread in a cache for the next one, with the pages the thread wrote
 * (its descriptor and TLS, the top of its stack) still resident: some
 * 8-12 KB a thread, which a run of xg-run (libcurl's loading, the rest of
 * the input) kept for its whole life, a hundred times over when a hundred
 * run at once.  Not for a thread made again and again (a conversation's
 * sync): there glibc's cache is the cheaper, as an unmapping stops every
 * CPU the process runs on.  A stack mapped here goes back to
 * the system at the join.  It is 8 MiB, glibc's default where RLIMIT_STACK
 * is the usual 8 MiB (reserved, not committed), with a guard page below it
 * as glibc's has.
 */
#include "xg.h"
#include "thread.h"
#include <sys/mman.h>

#define STACK_LEN ((size_t)8 << 20)

static void unmap(struct xg_thread *t)
{
	if (t->map)
		munmap(t->map, t->len);
	t->map = NULL;
}

int xg_thread_start(struct xg_thread *t, void *(*fn)(void *), void *arg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_attr_t attr;
	int rc;

	t->len = STACK_LEN + page;
	t->map = mmap(NULL, t->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (t->map == MAP_FAILED || mprotect(t->map, page, PROT_NONE) < 0) {
		/* glibc's own stack, then, cached or not. */
		if (t->map != MAP_FAILED)
			munmap(t->map, t->len);
		t->map = NULL;
		rc = pthread_create(&t->id, NULL, fn, arg);
	} else if ((rc = pthread_attr_init(&attr)) == 0) {
		rc = pthread_attr_setstack(&attr, (char *)t->map + page, STACK_LEN);
		if (!rc)
			rc = pthread_create(&t->id, &attr, fn, arg);
		pthread_attr_destroy(&attr);
	}
	if (rc) {
		unmap(t);
		errno = rc;
		return -1;
	}
	return 0;
}

void xg_thread_join(struct xg_thread *t)
{
	/* A join that failed leaves a stack that may still be in use. */
	if (pthread_join(t->id, NULL) == 0)
		unmap(t);
}

int xg_thread_clockjoin(struct xg_thread *t, const struct timespec *abstime)
{
	int rc = pthread_clockjoin_np(t->id, NULL, CLOCK_MONOTONIC, abstime);

	if (!rc)
		unmap(t);
	return rc;
}

void xg_thread_detach(struct xg_thread *t)
{
	pthread_detach(t->id);
	t->map = NULL;
}
