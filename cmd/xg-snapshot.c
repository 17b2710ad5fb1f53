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

int main(int argc, char **argv)
{
	struct xg_snapshot_opts so;
	struct xg_snapshot_replay_opts ro = { 0 };
	struct xg_rec_reader r, *in = NULL;
	struct xg_rec_writer w;
	struct xg_opts o;
	const char *arg;
	int id, strict = 0, replay, rc;

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
	replay = o.nargs && !strcmp(o.args[0], "replay");
	if (replay && o.nargs != 3)
		xg_usage_error(&cmd, "replay needs a commit and a directory");
	if (!replay && o.nargs)
		xg_usage_error(&cmd, "unknown operand '%s'", o.args[0]);
	if (!replay && ro.base)
		xg_usage_error(&cmd, "option '--base' is for replay");
	if (replay) {
		ro.commit = o.args[1];
		ro.target = o.args[2];
	}
	/* A replay reads standard input only for "-": one of a named commit
	 * leaves it alone, so it can run inside a loop that reads its own. */
	if (replay ? !strcmp(ro.commit, "-") : xg_stdin_readable()) {
		in = &r;
		xg_rec_reader_init(in, 0, "standard input");
	}
	xg_rec_writer_init(&w, stdout);
	rc = replay ? xg_snapshot_stage_replay(in, &w, &ro)
		    : xg_snapshot_stage_take(in, &w, &so, strict);
	if (in)
		xg_rec_reader_release(in);
	xg_rec_writer_release(&w);
	xg_opt_release(&o);
	/* A write error was reported where it happened. */
	return rc == XG_EX_IOERR && ferror(stdout) ? rc : xg_prog_exit(rc);
}
