/*
 * Where a provider is: the parts of its base URL that messages name (the
 * host, and the URL without what must not be shown), and whether an
 * address is near, this machine's or its own network's, for the retry
 * policy of a connection refused there (retry.c).
 *
 * The URL is read by hand, not by libcurl's parser: only the authority is
 * wanted, and a base URL libcurl would refuse still gets a name here.
 */
#include "xg.h"
#include <arpa/inet.h>
#include <strings.h>
#include "provider/internal.h"

/* The authority of url: [*start, *end), without user info. */
static void authority(const char *url, const char **start, const char **end)
{
	const char *p = strstr(url, "://"), *at;

	p = p ? p + 3 : url;
	*end = p + strcspn(p, "/?#");
	/* user:password@host: the last '@' ends the user info. */
	for (at = *end; at > p && at[-1] != '@'; at--)
		;
	*start = at > p ? at : p;
}

char *xg_http_url_host(const char *url, int with_port)
{
	const char *s, *e, *colon;

	authority(url, &s, &e);
	if (!with_port) {
		if (*s == '[') {
			colon = memchr(s, ']', (size_t)(e - s));
			if (colon)
				return xg_strndup(s + 1, (size_t)(colon - s - 1));
		} else if ((colon = memchr(s, ':', (size_t)(e - s)))) {
			e = colon;
		}
	}
	return xg_strndup(s, (size_t)(e - s));
}

char *xg_http_url_shown(const char *url)
{
	const char *scheme_end = strstr(url, "://"), *s, *e;
	size_t path;

	authority(url, &s, &e);
	path = strcspn(e, "?#");
	if (!scheme_end)
		return xg_asprintf("%.*s%.*s", (int)(e - s), s, (int)path, e);
	return xg_asprintf("%.*s%.*s%.*s", (int)(scheme_end + 3 - url), url, (int)(e - s), s,
			   (int)path, e);
}

static bool v4_is_local(const unsigned char *a)
{
	return a[0] == 127 ||				/* loopback */
	       a[0] == 0 ||				/* this host: 0.0.0.0 */
	       a[0] == 10 ||				/* private */
	       (a[0] == 172 && (a[1] & 0xf0) == 16) ||
	       (a[0] == 192 && a[1] == 168) ||
	       (a[0] == 169 && a[1] == 254);		/* link-local */
}

static bool v6_is_local(const unsigned char *a)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	size_t i;

	if (!memcmp(a, mapped, sizeof(mapped)))
		return v4_is_local(a + 12);
	for (i = 0; i < 15 && !a[i]; i++)
		;
	if (i == 15 && a[15] <= 1)			/* ::1, and :: (this host) */
		return true;
	return (a[0] & 0xfe) == 0xfc ||			/* unique local, fc00::/7 */
	       (a[0] == 0xfe && (a[1] & 0xc0) == 0x80);	/* link-local, fe80::/10 */
}

/* Whether name is localhost or a name under it (RFC 6761), a final dot
 * allowed. */
static bool is_localhost(const char *name, size_t n)
{
	if (n && name[n - 1] == '.')
		n--;
	if (n < 9 || strncasecmp(name + n - 9, "localhost", 9))
		return false;
	return n == 9 || name[n - 10] == '.';
}

bool xg_http_address_is_local(const char *host)
{
	unsigned char a[16];
	char buf[64];
	size_t n = strlen(host);

	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host++;
		n -= 2;
	}
	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, host, n);
	buf[n] = 0;
	/* A zone, as in fe80::1%eth0, is not part of the address. */
	buf[strcspn(buf, "%")] = 0;
	if (inet_pton(AF_INET, buf, a) == 1)
		return v4_is_local(a);
	if (inet_pton(AF_INET6, buf, a) == 1)
		return v6_is_local(a);
	return is_localhost(host, n);
}
