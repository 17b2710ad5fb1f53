/*
 * Fuzz target: the plan classifier (lib/plan/), on any reply, and the
 * record it makes of the result.
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
	struct xg_buf line = XG_BUF_INIT(0);

	if (xg_plan_classify((const char *)data, size, &res) != 0)
		return 0;
	jv_free(xg_plan_record(&res));
	xg_plan_record_line(&line, &res);
	if (!line.len || line.buf[line.len - 1] != '\n')
		abort();
	xg_buf_release(&line);
	xg_plan_result_release(&res);
	return 0;
}
