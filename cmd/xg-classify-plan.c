/*
 * xg-classify-plan: say what a plan reply concluded (plan_ready, blocked,
 * no_plan or invalid) as one plan record.  See xg-classify-plan(1).
 */
#include "xg.h"
#include "plan.h"

#define MAX_REPLY ((size_t)64 << 20)

static const char *const usage[] = {
	"xg-classify-plan [-q] [--status] [--max-bytes size] [file]",
	"xg-classify-plan --records [-q] [--status] [--max-bytes size] [file]",
	NULL
};

enum { OPT_QUIET = 1, OPT_STATUS, OPT_RECORDS, OPT_MAX_BYTES };

static const struct xg_option options[] = {
	{ OPT_QUIET, 'q', "quiet", NULL, "write nothing; with --status, only the exit code tells" },
	{ OPT_STATUS, 0, "status", NULL, "exit 0 plan_ready, 10 no_plan, 11 blocked, 12 invalid" },
	{ OPT_RECORDS, 0, "records", NULL, "read records; classify the last run_end's reply" },
	{ OPT_MAX_BYTES, 0, "max-bytes", "size", "the longest reply (default 64M)" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-classify-plan", "Classify a plan reply.", usage, options
};

/* Where the reply comes from: a file operand, "-", or a stdin that is not
 * a terminal. */
static int open_input(const char *path, const char **name)
{
	int fd;

	if (!path || !strcmp(path, "-")) {
		if (!path && !xg_stdin_readable())
			xg_usage_error(&cmd, "no reply: name a file, or give it on standard input");
		*name = "standard input";
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		xg_die_errno(XG_EX_IOERR, "cannot open '%s'", path);
	*name = path;
	return fd;
}

/* Reads all of fd into b, whose ceiling is one byte over the limit. */
static void read_reply(int fd, const char *name, struct xg_buf *b, size_t max)
{
	for (;;) {
		size_t room = b->max - b->len;
		ssize_t n;

		if (room > (1 << 20))
			room = 1 << 20;
		if (room == 0 || xg_buf_grow(b, room) < 0)
			xg_die(XG_EX_DATAERR, "%s: the reply is longer than the limit of %zu bytes (--max-bytes)",
			       name, max);
		do
			n = read(fd, b->buf + b->len, room);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			xg_die_errno(XG_EX_IOERR, "cannot read %s", name);
		if (n == 0)
			return;
		b->len += (size_t)n;
		b->buf[b->len] = '\0';
	}
}

/*
 * Passes every record through and keeps the reply to classify: the last
 * run_end's reply, or, when there is no run_end, the last assistant
 * message's text.  Returns the record's line, 0 when there was none.
 */
static size_t read_records(int fd, const char *name, struct xg_rec_writer *w, int quiet,
			   struct xg_buf *reply)
{
	struct xg_rec_reader r;
	struct xg_rec rec;
	size_t line = 0;
	int from_run_end = 0;

	xg_rec_reader_init(&r, fd, name);
	while (xg_rec_next_or_die(&r, &rec) > 0) {
		int is_end = rec.type && !strcmp(rec.type, "run_end");
		const char *role = xg_json_string_peek(rec.v, "role");
		int is_msg = rec.type && !strcmp(rec.type, "message") && role &&
			     !strcmp(role, "assistant");
		const char *field = is_end ? "reply" : "text";
		jv v = xg_json_get_peek(rec.v, field);

		if ((is_end || (is_msg && !from_run_end))) {
			if (jv_get_kind(v) != JV_KIND_STRING && jv_get_kind(v) != JV_KIND_NULL &&
			    jv_is_valid(v))
				xg_die(XG_EX_DATAERR, "%s: line %zu: field '%s' of %s must be a string, found %s",
				       name, rec.lineno, field, rec.type, xg_json_kind_peek(v));
			xg_buf_reset(reply);
			if (jv_get_kind(v) == JV_KIND_STRING)
				xg_buf_add(reply, jv_string_value(v),
					   (size_t)jv_string_length_bytes(jv_copy(v)));
			line = rec.lineno;
			from_run_end |= is_end;
		}
		if (!quiet && xg_rec_pass(w, &rec) < 0)
			xg_die_errno(XG_EX_IOERR, "cannot write standard output");
		xg_rec_release(&rec);
	}
	xg_rec_reader_release(&r);
	if (!line)
		xg_die(XG_EX_DATAERR, "%s: no run_end record and no assistant message to classify",
		       name);
	return line;
}

int main(int argc, char **argv)
{
	struct xg_opts o;
	struct xg_rec_writer w;
	struct xg_plan_result result;
	struct xg_buf reply;
	const char *arg, *name;
	size_t max = MAX_REPLY, line = 0;
	int id, fd, quiet = 0, status = 0, records = 0, rc;

	xg_prog_init("xg-classify-plan");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_QUIET: quiet = 1; break;
		case OPT_STATUS: status = 1; break;
		case OPT_RECORDS: records = 1; break;
		case OPT_MAX_BYTES:
			max = (size_t)xg_opt_number(&cmd, "--max-bytes", arg, 1);
			break;
		}
	}
	if (o.nargs > 1)
		xg_usage_error(&cmd, "too many operands: one file at most");

	fd = open_input(o.nargs ? o.args[0] : NULL, &name);
	xg_rec_writer_init(&w, stdout);
	/* Records carry the reply inside a line XG_MAX_LINE bounds; the
	 * reply itself is bounded the same way in both modes. */
	xg_buf_init(&reply, records ? 0 : max + 1);
	if (records)
		line = read_records(fd, name, &w, quiet, &reply);
	else
		read_reply(fd, name, &reply, max);
	if (fd > 0)
		close(fd);
	if (reply.len > max)
		xg_die(XG_EX_DATAERR, "%s: line %zu: the reply is longer than the limit of %zu bytes (--max-bytes)",
		       name, line, max);

	if (xg_plan_classify(reply.buf, reply.len, &result) < 0)
		exit(XG_EX_SOFTWARE);
	xg_buf_release(&reply);
	if (!quiet && xg_rec_write(&w, xg_plan_record(&result)) < 0)
		xg_die_errno(XG_EX_IOERR, "cannot write standard output");
	rc = status ? xg_plan_exit_status(result.outcome) : XG_EX_OK;
	xg_plan_result_release(&result);
	xg_rec_writer_release(&w);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
