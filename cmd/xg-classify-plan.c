/*
 * xg-classify-plan: say what a plan reply concluded (plan_ready, blocked,
 * no_plan or invalid) as one plan record.  See xg-classify-plan(1).
 */
#include "xg.h"
#include "plan/plan.h"

#define MAX_REPLY ((size_t)64 << 20)

static const char *const usage[] = {
	"xg-classify-plan [-q] [--status] [--max-bytes size] [file]",
	"xg-classify-plan --records [-q] [--status] [--max-bytes size] [file]",
	NULL
};

enum { OPT_QUIET = 1, OPT_STATUS, OPT_RECORDS, OPT_MAX_BYTES };

static const struct xg_option options[] = {
	{ OPT_QUIET, 'q', "quiet", NULL, "write nothing (the exit status still tells)" },
	{ OPT_STATUS, 0, "status", NULL, "exit 0 plan_ready, 10 no_plan, 11 blocked, 12 invalid" },
	{ OPT_RECORDS, 0, "records", NULL, "read records, pass them through, classify the run's reply" },
	{ OPT_MAX_BYTES, 0, "max-bytes", "size", "refuse a longer reply (default 64M)" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-classify-plan", "Classify a plan reply.", usage, options
};

int main(int argc, char **argv)
{
	struct xg_opts o;
	struct xg_rec_reader r;
	struct xg_rec_writer w;
	struct xg_plan_result result;
	struct xg_buf reply;
	const char *arg, *path, *name = "standard input";
	char *quoted = NULL;
	size_t max = MAX_REPLY;
	int id, fd = 0, quiet = 0, status = 0, records = 0, rc;

	xg_prog_init("xg-classify-plan");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_QUIET: quiet = 1; break;
		case OPT_STATUS: status = 1; break;
		case OPT_RECORDS: records = 1; break;
		case OPT_MAX_BYTES:
			max = (size_t)xg_opt_number(&cmd, "--max-bytes", arg, 1);
			if (max == 0)
				xg_usage_error(&cmd, "option '--max-bytes' needs at least one byte");
			break;
		}
	}
	if (o.nargs > 1)
		xg_usage_error(&cmd, "too many operands: one file at most");
	path = o.nargs ? o.args[0] : NULL;
	if (!path && !xg_stdin_readable())
		xg_usage_error(&cmd, "no reply: name a file, or give it on standard input");
	if (path && strcmp(path, "-")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			xg_die_errno(xg_exit_for_errno(errno), "cannot open '%s'", path);
		name = quoted = xg_asprintf("'%s'", path);
	}

	xg_rec_writer_init(&w, stdout);
	xg_buf_init(&reply, records ? max : 0);
	if (records) {
		xg_rec_reader_init(&r, fd, name);
		xg_plan_records_reply(&r, quiet ? NULL : &w, &reply);
		xg_rec_reader_release(&r);
	} else {
		xg_plan_read_reply(fd, name, &reply, max);
	}
	if (fd > 0)
		close(fd);

	if (xg_plan_classify(reply.buf, reply.len, &result) < 0)
		exit(XG_EX_SOFTWARE);
	if (!quiet && xg_plan_write(&w, &result) < 0)
		xg_die_errno(XG_EX_IOERR, "cannot write standard output");
	rc = status ? xg_plan_exit_status(result.outcome) : XG_EX_OK;
	xg_plan_result_release(&result);
	xg_buf_release(&reply);
	xg_rec_writer_release(&w);
	xg_opt_release(&o);
	free(quoted);
	return xg_prog_exit(rc);
}
