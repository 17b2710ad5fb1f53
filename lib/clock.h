#ifndef XG_CLOCK_H
#define XG_CLOCK_H
/* Time: a monotonic clock for durations, and RFC 3339 stamps for records. */
#include <stdint.h>

/* Milliseconds on the monotonic clock (durations, timeouts). */
int64_t xg_clock_ms(void);
/* Milliseconds since the epoch on the wall clock. */
int64_t xg_clock_wall_ms(void);
/* Writes "2026-11-30T10:56:24.123Z" (UTC, milliseconds) for wall-clock ms;
 * out must hold 25 bytes. */
void xg_clock_rfc3339(int64_t wall_ms, char out[25]);
/* Parses that form (any offset, fraction optional) back to epoch ms; -1 when
 * it is not RFC 3339. */
int xg_clock_parse_rfc3339(const char *s, int64_t *wall_ms);

#endif
