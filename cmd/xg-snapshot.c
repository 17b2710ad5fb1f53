/*
 * xg-snapshot: commit the working tree without touching it; "replay" makes
 * a clone from such a commit.  See xg-snapshot(1).
 */
#include "xg.h"
#include "snapshot/snapshot.h"

static const char *const usage[] = {
	"xg-snapshot [--strict] [-C dir] [--timeout duration] [--max-file-size size]"
	" [--max-total-size size] [--max-files n]",
	"xg-snapshot replay [-C dir] [--base rev] commit dir",
	NULL
};

enum { OPT_DIR = 1, OPT_STRICT, OPT_TIMEOUT, OPT_MAX_FILE, OPT_MAX_TOTAL, OPT_MAX_FILES,
       OPT_BASE };

static const struct xg_option options[] = {
	{ OPT_DIR, 'C', NULL, "dir", "look for the repository from dir" },
	{ OPT_BASE, 0, "base", "rev", "replay: HEAD and index at rev (default: the snapshot's parent)" },
	{ OPT_MAX_FILE, 0, "max-file-size", "size", "leave out untracked files larger than size (default 5M)" },
	{ OPT_MAX_FILES, 0, "max-files", "n", "include at most n untracked files (default 10000)" },
	{ OPT_MAX_TOTAL, 0, "max-total-size", "size", "include at most size bytes of untracked files (default 100M)" },
	{ OPT_STRICT, 0, "strict", NULL, "exit 1 when no snapshot could be taken" },
	{ OPT_TIMEOUT, 0, "timeout", "duration", "give up after duration (default 2s)" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-snapshot", "Commit the working tree without touching it, or replay such a commit.",
	usage, options
};

/* Takes one snapshot; *ok says whether it has a commit. */
static jv snapshot(struct xg_snapshot_opts *so, const char *cwd, int *ok)
{
	const char *dir = so->dir;
	jv rec;

	if (!dir)
		so->dir = cwd;
	rec = xg_snapshot_take(so);
	so->dir = dir;
	*ok = jv_get_kind(xg_json_get_peek(rec, "commit")) == JV_KIND_STRING;
	return rec;
}

static void write_or_die(struct xg_rec_writer *w, jv rec)
{
	if (xg_rec_write(w, rec) < 0)
		xg_die_errno(XG_EX_IOERR, "cannot write standard output");
}

static int run_snapshot(struct xg_snapshot_opts *so, int strict)
{
	struct xg_rec_writer w;
	struct xg_rec_reader r;
	struct xg_rec rec;
	int requests = 0, ok = 1, all_ok = 1;
	jv snap;

	xg_rec_writer_init(&w, stdout);
	if (xg_stdin_readable()) {
		xg_rec_reader_init(&r, 0, "standard input");
		while (xg_rec_next_or_die(&r, &rec) > 0) {
			int is_request = rec.type && !strcmp(rec.type, "request");
			const char *cwd = NULL;

			if (is_request) {
				jv v = xg_json_get_peek(rec.v, "cwd");

				if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_STRING &&
				    jv_get_kind(v) != JV_KIND_NULL)
					xg_die(XG_EX_DATAERR, "standard input: line %zu: field 'cwd' "
					       "must be a string", rec.lineno);
				cwd = xg_json_string_peek(rec.v, "cwd");
			}
			/* Each typed turn gets its snapshot, written right after
			 * the request.  The request goes on first, flushed, so the
			 * stages downstream prepare the run meanwhile; xg-run
			 * runs no tool before the snapshot record has come. */
			if (xg_rec_pass(&w, &rec) < 0 || (is_request && fflush(stdout) == EOF))
				xg_die_errno(XG_EX_IOERR, "cannot write standard output");
			if (is_request) {
				snap = snapshot(so, cwd, &ok);
				all_ok &= ok;
				requests++;
				write_or_die(&w, snap);
			}
			xg_rec_release(&rec);
		}
		xg_rec_reader_release(&r);
	}
	if (!requests) {
		write_or_die(&w, snapshot(so, NULL, &ok));
		all_ok &= ok;
	}
	xg_rec_writer_release(&w);
	return strict && !all_ok ? XG_EX_FAIL : XG_EX_OK;
}

static int emit_errno;

/* Writes the replay record, flushed: the clone is kept only if it is.
 * xg_prog_exit reports the failure, with the errno kept here. */
static int emit(jv rec, void *arg)
{
	struct xg_rec_writer *w = arg;

	if (xg_rec_write(w, rec) < 0 || fflush(stdout) == EOF || ferror(stdout)) {
		emit_errno = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

static int run_replay(struct xg_snapshot_replay_opts *ro)
{
	struct xg_rec_writer w;
	struct xg_rec_reader r;
	struct xg_rec rec;
	char *commit = NULL, *base = NULL;
	int rc;

	xg_rec_writer_init(&w, stdout);
	/* Standard input only for "-": a replay of a named commit leaves it
	 * alone, so it can run inside a loop that reads its own input. */
	if (!strcmp(ro->commit, "-")) {
		xg_rec_reader_init(&r, 0, "standard input");
		while (xg_rec_next_or_die(&r, &rec) > 0) {
			const char *c = xg_json_string_peek(rec.v, "commit");

			if (xg_rec_pass(&w, &rec) < 0)
				xg_die_errno(XG_EX_IOERR, "cannot write standard output");
			/* "-" takes the commit and base of the last snapshot read. */
			if (rec.type && !strcmp(rec.type, "snapshot") && c) {
				const char *b = xg_json_string_peek(rec.v, "base");

				free(commit);
				free(base);
				commit = xg_strdup(c);
				base = b ? xg_strdup(b) : NULL;
			}
			xg_rec_release(&rec);
		}
		xg_rec_reader_release(&r);
	}
	if (!strcmp(ro->commit, "-")) {
		if (!commit)
			xg_die(XG_EX_DATAERR, "no snapshot record with a commit on standard input");
		ro->commit = commit;
		if (!ro->base && base)
			ro->base = base;
	}
	rc = xg_snapshot_replay(ro, emit, &w);
	xg_rec_writer_release(&w);
	free(commit);
	free(base);
	return rc;
}

int main(int argc, char **argv)
{
	struct xg_snapshot_opts so;
	struct xg_snapshot_replay_opts ro = { 0 };
	struct xg_opts o;
	const char *arg;
	int id, strict = 0, rc;

	xg_prog_init("xg-snapshot");
	xg_snapshot_opts_init(&so);
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_DIR:
			so.dir = ro.dir = arg;
			break;
		case OPT_STRICT:
			strict = 1;
			break;
		case OPT_TIMEOUT:
			if (xg_snapshot_parse_duration(arg, &so.timeout_ms) < 0)
				xg_usage_error(&cmd, "option '--timeout' needs a duration "
					       "(seconds, or milliseconds with ms), not '%s'", arg);
			break;
		case OPT_MAX_FILE:
			so.max_file_size = xg_opt_number(&cmd, "--max-file-size", arg, 1);
			break;
		case OPT_MAX_TOTAL:
			so.max_total_size = xg_opt_number(&cmd, "--max-total-size", arg, 1);
			break;
		case OPT_MAX_FILES:
			so.max_files = xg_opt_number(&cmd, "--max-files", arg, 0);
			break;
		case OPT_BASE:
			ro.base = arg;
			break;
		}
	}
	if (o.nargs && !strcmp(o.args[0], "replay")) {
		if (o.nargs != 3)
			xg_usage_error(&cmd, "replay needs a commit and a directory");
		ro.commit = o.args[1];
		ro.target = o.args[2];
		rc = run_replay(&ro);
	} else {
		if (o.nargs)
			xg_usage_error(&cmd, "unknown operand '%s'", o.args[0]);
		if (ro.base)
			xg_usage_error(&cmd, "option '--base' is for replay");
		rc = run_snapshot(&so, strict);
	}
	xg_opt_release(&o);
	if (emit_errno)
		errno = emit_errno;
	return xg_prog_exit(rc);
}
