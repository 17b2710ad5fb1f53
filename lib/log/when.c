/*
 * Times and filters (log.h, internal.h): the WHEN of --since and --before,
 * the filter a query's options make, and how a row writes a time, a path
 * and a count.
 */
#include "xg.h"
#include "log/internal.h"
#include "conversation.h"

/* "7d": that many of the unit ago; -1 when s is not of that shape. */
static int parse_ago(const char *s, int64_t now_ms, int64_t *ms)
{
	char *end;
	unsigned long long n;
	int64_t unit;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end[0] == 0 || end[1] != 0 || n > 100000)
		return -1;
	switch (*end) {
	case 'm': unit = 60 * 1000LL; break;
	case 'h': unit = 3600 * 1000LL; break;
	case 'd': unit = 86400 * 1000LL; break;
	case 'w': unit = 7 * 86400 * 1000LL; break;
	default: return -1;
	}
	*ms = now_ms - (int64_t)n * unit;
	return 0;
}

/* "2026-11-30" or "2026-11-30T10:00[:00]" in local time. */
static int parse_local(const char *s, int64_t *ms)
{
	struct tm tm;
	const char *end;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (!end)
		return -1;
	if (*end == 'T' || *end == ' ') {
		const char *e2 = strptime(end + 1, "%H:%M:%S", &tm);

		end = e2 ? e2 : strptime(end + 1, "%H:%M", &tm);
		if (!end)
			return -1;
	}
	if (*end)
		return -1;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -1;
	*ms = (int64_t)t * 1000;
	return 0;
}

int xg_log_parse_when(const char *s, int64_t now_ms, int64_t *ms)
{
	if (!s || !*s)
		return -1;
	if (parse_ago(s, now_ms, ms) == 0)
		return 0;
	if (xg_clock_parse_rfc3339(s, ms) == 0)
		return 0;
	return parse_local(s, ms);
}

int64_t xg_log_started_peek(jv line)
{
	const char *s = xg_json_string_peek(line, "started");
	int64_t ms;

	return s && xg_clock_parse_rfc3339(s, &ms) == 0 ? ms : -1;
}

void xg_log_local_time(int64_t ms, char out[17])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms < 0 || !localtime_r(&t, &tm) || !strftime(out, 17, "%Y-%m-%d %H:%M", &tm))
		snprintf(out, 17, "%-16s", "?");
}

char *xg_log_short_path(const char *path)
{
	const char *home = getenv("HOME");
	size_t n = home ? strlen(home) : 0;

	if (!path)
		return xg_strdup("-");
	if (n > 1 && !strncmp(path, home, n) && (path[n] == '/' || !path[n]))
		return xg_asprintf("~%s", path + n);
	return xg_strdup(path);
}

void xg_log_count(long long n, char out[24])
{
	if (n < 10000)
		snprintf(out, 24, "%lld", n);
	else if (n < 1000000)
		snprintf(out, 24, "%.1fk", (double)n / 1e3);
	else
		snprintf(out, 24, "%.1fM", (double)n / 1e6);
}

int xg_log_under(const char *dir, const char *ws)
{
	size_t n = strlen(ws);

	if (!dir)
		return 0;
	if (n > 1 && ws[n - 1] == '/')
		n--;
	return !strncmp(dir, ws, n) && (dir[n] == '/' || !dir[n] || (n == 1 && *ws == '/'));
}

static int when_option(const char *name, const char *s, int64_t *ms)
{
	if (xg_log_parse_when(s, xg_clock_wall_ms(), ms) == 0)
		return 0;
	xg_error("%s '%s' is not a time: give an age (30m, 12h, 7d, 2w), a date (2026-11-30) "
		 "or a time (2026-11-30T10:00, RFC 3339)", name, s);
	return XG_EX_USAGE;
}

int xg_log_filter_init(struct log_filter *f, const struct xg_log_opts *o)
{
	char real[PATH_MAX];

	memset(f, 0, sizeof(*f));
	if (o->since && when_option("--since", o->since, &f->since))
		return XG_EX_USAGE;
	if (o->before && when_option("--before", o->before, &f->before))
		return XG_EX_USAGE;
	if (o->conversation && !xg_conv_id_valid(o->conversation)) {
		xg_error("--conversation '%s' is not a conversation id", o->conversation);
		return XG_EX_USAGE;
	}
	f->status = o->status;
	f->conversation = o->conversation;
	if (o->workspace) {
		/* A workspace removed since is still a name to look for. */
		if (realpath(o->workspace, real))
			f->workspace = xg_strdup(real);
		else if (o->workspace[0] == '/')
			f->workspace = xg_strdup(o->workspace);
		else if (getcwd(real, sizeof(real)))
			f->workspace = xg_path_join(real, o->workspace);
		else
			f->workspace = xg_strdup(o->workspace);
	}
	return 0;
}

/* s as a JSON string, quotes and all (the caller frees it). */
static char *quoted(const char *s)
{
	struct xg_buf b = XG_BUF_INIT(0);

	xg_json_dump(&b, jv_string(s));
	return xg_buf_detach(&b, NULL);
}

char *xg_log_filter_needle(const struct log_filter *f)
{
	if (f->conversation)
		return quoted(f->conversation);
	if (f->status)
		return quoted(f->status);
	if (f->workspace) {
		/* The path's start, without its closing quote: a line under it
		 * holds that much. */
		char *q = quoted(f->workspace);

		q[strlen(q) - 1] = 0;
		return q;
	}
	return NULL;
}

void xg_log_filter_release(struct log_filter *f)
{
	free(f->workspace);
	f->workspace = NULL;
}

static int same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

int xg_log_filter_peek(const struct log_filter *f, jv line)
{
	int64_t started = xg_log_started_peek(line);

	if (f->since && started < f->since)
		return 0;
	if (f->before && (started < 0 || started >= f->before))
		return 0;
	if (f->status && !same(f->status, xg_json_string_peek(line, "status")) &&
	    !same(f->status, xg_json_string_peek(line, "stop")))
		return 0;
	if (f->conversation && !same(f->conversation, xg_json_string_peek(line, "conversation")))
		return 0;
	if (f->workspace && !xg_log_under(xg_json_string_peek(line, "workspace"), f->workspace))
		return 0;
	return 1;
}
