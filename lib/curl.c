/*
 * libcurl, loaded when first needed (see curl.h): dlopen of the library
 * by its soname, dlsym of each function the table names, and
 * curl_global_init, which starts OpenSSL, all once under pthread_once.
 * Nothing here or in its callers names a curl_* function directly, so the
 * linker leaves libcurl out of every program.
 */
#include "xg.h"
#include "curl.h"
#include <dlfcn.h>
#include <pthread.h>

static struct xg_curl table;
static const struct xg_curl *loaded;
static char why[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* POSIX makes a function pointer of what dlsym returns. */
#define FIND(field, name) \
	((*(void **)&table.field = dlsym(lib, name)) != NULL)

static void load(void)
{
	static const char *const names[] = { "libcurl.so.4", "libcurl.so", NULL };
	CURLcode (*global_init)(long flags) = NULL;
	void *lib = NULL;
	size_t i;

	/* Lazily bound: of the thirty libraries libcurl brings, those not
	 * built to bind at once (most are) resolve a function at its first
	 * call, and most are never called; binding all now was 0.5 ms more
	 * of a load that stands between a run's start and its request.  The
	 * functions xg calls are all looked up below. */
	for (i = 0; names[i] && !lib; i++)
		lib = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, sizeof(why), "cannot load libcurl: %s", dlerror());
		return;
	}
	*(void **)&global_init = dlsym(lib, "curl_global_init");
	if (!global_init || !FIND(global_cleanup, "curl_global_cleanup") ||
	    !FIND(easy_init, "curl_easy_init") || !FIND(easy_setopt, "curl_easy_setopt") ||
	    !FIND(easy_perform, "curl_easy_perform") || !FIND(easy_getinfo, "curl_easy_getinfo") ||
	    !FIND(easy_reset, "curl_easy_reset") || !FIND(easy_cleanup, "curl_easy_cleanup") ||
	    !FIND(easy_strerror, "curl_easy_strerror") || !FIND(getdate, "curl_getdate") ||
	    !FIND(multi_init, "curl_multi_init") ||
	    !FIND(multi_add_handle, "curl_multi_add_handle") ||
	    !FIND(multi_remove_handle, "curl_multi_remove_handle") ||
	    !FIND(multi_perform, "curl_multi_perform") || !FIND(multi_poll, "curl_multi_poll") ||
	    !FIND(multi_info_read, "curl_multi_info_read") ||
	    !FIND(multi_cleanup, "curl_multi_cleanup") ||
	    !FIND(slist_append, "curl_slist_append") ||
	    !FIND(slist_free_all, "curl_slist_free_all")) {
		snprintf(why, sizeof(why), "cannot use the libcurl that was loaded: "
			 "it lacks a function xg needs");
		dlclose(lib);
		return;
	}
	if (global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(why, sizeof(why), "cannot set up libcurl");
		return;
	}
	loaded = &table;
}

const struct xg_curl *xg_curl(void)
{
	pthread_once(&once, load);
	return loaded;
}

const char *xg_curl_error(void)
{
	return why;
}

const char *xg_curl_env(void)
{
	static const char var[] = "GNUTLS_NO_IMPLICIT_INIT";

	if (getenv(var) || setenv(var, "1", 0) < 0)
		return NULL;
	return var;
}
