/*
 * A driver for lib/plan.c: classifies standard input and writes the plan
 * record built as a jv (xg_plan_record, dumped by libjq), so a test can
 * hold it against the line xg-classify-plan writes (xg_plan_record_line).
 */
#include "xg.h"
#include "xg-test.h"
#include "plan/plan.h"

static const char *const usage[] = { "xg-test-plan", NULL };

static const struct xg_option options[] = { { 0 } };

static const struct xg_command cmd = {
	"xg-test-plan", "Write the plan record of standard input through libjq.", usage, options
};

int cmd__plan(int argc, char **argv)
{
	struct xg_opts o;
	struct xg_rec_writer w;
	struct xg_plan_result r;
	struct xg_buf in = XG_BUF_INIT(0);
	const char *arg;

	xg_prog_init("xg-test-plan");
	xg_opt_init(&o, &cmd, argc, argv);
	while (xg_opt_next(&o, &arg) != -1)
		;
	xg_plan_read_reply(0, "standard input", &in, (size_t)1 << 30);
	if (xg_plan_classify(in.buf, in.len, &r) < 0)
		return XG_EX_SOFTWARE;
	xg_rec_writer_init(&w, stdout);
	if (xg_rec_write(&w, xg_plan_record(&r)) < 0)
		xg_die_errno(XG_EX_IOERR, "cannot write standard output");
	xg_rec_writer_release(&w);
	xg_plan_result_release(&r);
	xg_buf_release(&in);
	xg_opt_release(&o);
	return xg_prog_exit(0);
}
