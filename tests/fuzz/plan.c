/*
 * Fuzz target: the plan classifier (lib/plan/), on any reply, and the
 * record it makes of the result: the fast line writer must give the very
 * bytes the jv's dump gives.
 */
#include "xg.h"
#include "fuzz.h"
#include "plan/plan.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_home();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xg_plan_result res;
	struct xg_buf line = XG_BUF_INIT(0), dump = XG_BUF_INIT(0);

	if (xg_plan_classify((const char *)data, size, &res) != 0)
		return 0;
	xg_plan_record_line(&line, &res);
	if (xg_json_dump(&dump, xg_plan_record(&res)) < 0 || line.len != dump.len ||
	    memcmp(line.buf, dump.buf, line.len))
		abort();
	xg_buf_release(&line);
	xg_buf_release(&dump);
	xg_plan_result_release(&res);
	return 0;
}
