/*
 * What every step of a snapshot asks of the state it is handed: whether
 * the deadline has passed, and the leaving out of a path with its reason
 * for the record.
 */
#include "xg.h"
#include "snapshot/internal.h"

int xg_snapshot_timed_out(struct xg_snapshot_state *s)
{
	if (!s->timed_out && xg_clock_ms() > s->deadline)
		s->timed_out = 1;
	return s->timed_out;
}

/* Past XG_SNAPSHOT_SKIPPED_MAX paths the record only counts them
 * (skipped_total), so that it stays one line of bounded size however many
 * the limits leave out. */
void xg_snapshot_skip(struct xg_snapshot_state *s, const char *path, size_t len,
		      const char *reason)
{
	s->complete = 0;
	if (s->nskipped++ >= XG_SNAPSHOT_SKIPPED_MAX)
		return;
	s->skipped = jv_array_append(s->skipped,
		xg_json_set(xg_json_set(jv_object(), "path", xg_json_string_bytes(path, len)),
			    "reason", jv_string(reason)));
}
