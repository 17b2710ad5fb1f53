#ifndef XG_CURL_H
#define XG_CURL_H
/*
 * libcurl, loaded with dlopen when a process first needs it, not linked:
 * linked, it and the thirty libraries it needs are loaded and relocated
 * before main, some 4 ms of every xg-run, in which it could have read its
 * input and built its first request.  xg_curl() loads it and makes its
 * global set-up, once, on whichever thread asks first; a caller that
 * knows a request will follow asks early on a thread of its own.  The
 * table holds the functions xg uses, under their names less "curl_".
 */
#include <curl/curl.h>

struct xg_curl {
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_reset)(CURL *h);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode cc);
	time_t (*getdate)(const char *s, const time_t *unused);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd extra[], unsigned n, int ms,
				int *numfds);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	CURLMcode (*multi_cleanup)(CURLM *m);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
};

/* libcurl loaded and set up: the table, or NULL (for good) with the reason
 * in xg_curl_error(). */
const struct xg_curl *xg_curl(void);
const char *xg_curl_error(void);

/*
 * GnuTLS comes in with two of the libraries libcurl needs (librtmp and
 * libldap), and its library constructor sets it up in every process that
 * loads it (its ASN.1 trees, p11-kit's modules: some 120 KiB and 0.4 ms),
 * though xg never uses it: its TLS is OpenSSL's.  GNUTLS_NO_IMPLICIT_INIT
 * tells it not to, and a library that does use it calls
 * gnutls_global_init itself.  xg_curl_env sets it to 1 unless the
 * environment has it already; as it changes the environment it is called
 * before any thread that reads it starts.  It returns the variable's name
 * when it set it, for the caller to keep out of the programs it runs, and
 * NULL when it did not.
 */
const char *xg_curl_env(void);

#endif
