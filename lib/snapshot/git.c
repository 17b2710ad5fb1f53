/*
 * libgit2, loaded when first needed (see snapshot/git.h): dlopen of the
 * library by its soname and dlsym of each function the table names, once,
 * under pthread_once; and the message of its last error.
 */
#include "xg.h"
#include "snapshot/internal.h"
#include <dlfcn.h>

const struct xg_snapshot_git *xg_snapshot_git;
static struct xg_snapshot_git table;
static char why[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	/* The version whose headers this was built with, by its soname. */
	void *lib = dlopen("libgit2.so." LIBGIT2_SOVERSION, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(why, sizeof(why), "cannot load libgit2: %s", dlerror());
		return;
	}
	/* POSIX makes a function pointer of what dlsym returns. */
#define X(name)								\
	if (!(*(void **)&table.name = dlsym(lib, "git_" #name))) {	\
		snprintf(why, sizeof(why), "cannot use the libgit2 that was "	\
			 "loaded: it has no git_%s", #name);			\
		dlclose(lib);							\
		return;								\
	}
	XG_SNAPSHOT_GIT_FUNCTIONS(X)
#undef X
	xg_snapshot_git = &table;
}

int xg_snapshot_git_load(char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (xg_snapshot_git)
		return 0;
	snprintf(err, errlen, "%s", why);
	return -1;
}

/* Callers reach here on any failure, the loading of libgit2 included,
 * when there is no table to ask yet. */
const char *xg_snapshot_git_message(void)
{
	const git_error *e = xg_snapshot_git ? git_error_last() : NULL;

	return e && e->message ? e->message : "unknown error";
}
