#include "xg.h"
#include "snapshot.h"

int xg_snapshot_replay(const struct xg_snapshot_replay_opts *o, jv *record)
{
	(void)o;
	*record = jv_null();
	return xg_error("replay: not yet");
}
