/*
 * Time (clock.h): the monotonic clock for durations, the wall clock, and
 * RFC 3339 stamps for records.
 */
#include "xg.h"
#include "clock.h"

int64_t xg_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t xg_clock_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void xg_clock_rfc3339(int64_t wall_ms, char out[25])
{
	time_t secs = (time_t)(wall_ms / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	char date[20];

	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 25, "%.19s.%03uZ", date, (unsigned)(wall_ms % 1000) % 1000u);
}

int xg_clock_parse_rfc3339(const char *s, int64_t *wall_ms)
{
	struct tm tm;
	int ms = 0, off = 0;
	const char *p;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.') {
		int digits = 0;
		for (p++; isdigit((unsigned char)*p); p++, digits++)
			if (digits < 3)
				ms = ms * 10 + (*p - '0');
		if (!digits)
			return -1;
		while (digits++ < 3)
			ms *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int hh, mm;
		if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
			return -1;
		off = (hh * 60 + mm) * 60 * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	t = timegm(&tm);
	*wall_ms = ((int64_t)t - off) * 1000 + ms;
	return 0;
}
