/*
 * One run again (xg-log show, xg-log diff): its records rendered as xg
 * rendered them on a terminal, with a stretch of heartbeats folded into
 * one row, a goal record as one row and hidden messages left out; or the
 * records themselves (--json); and what the run changed,
 * through git diff.  The working tree is compared as a snapshot of it
 * taken now (xg_snapshot_take), so new files that are not tracked show as
 * they would in the next run's snapshot; it writes only objects.
 */
#include "xg.h"
#include "log/internal.h"
#include "dispatch/dispatch.h"
#include "snapshot/snapshot.h"

static int open_events(const char *id, char **path)
{
	char *rel = xg_asprintf("runs/%s/events.ndjson", id);
	int fd;

	*path = xg_path_state(rel);
	free(rel);
	fd = open(*path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		xg_error_errno("cannot open '%s'", *path);
	return fd;
}

/* The one row a stretch of heartbeats makes: the phase the last one was
 * in, and how long it had been quiet. */
static void fold_heartbeat(jv hb, int color, struct xg_buf *out)
{
	const char *phase = xg_json_string_peek(hb, "phase");
	long long quiet = 0;

	if (out->len && out->buf[out->len - 1] != '\n')
		xg_buf_addch(out, '\n');
	if (color)
		xg_buf_addstr(out, "\033[2m");
	xg_buf_addf(out, ".. %s", phase ? phase : "working");
	if (xg_json_int_peek(hb, "quiet_ms", &quiet) == 0 && quiet >= 1000)
		xg_buf_addf(out, ", quiet %lld s", quiet / 1000);
	if (color)
		xg_buf_addstr(out, "\033[0m");
	xg_buf_addch(out, '\n');
}

/* A goal record's row: its status and round, and the objective's first
 * line. */
static void goal_row(jv rec, struct xg_buf *out)
{
	const char *status = xg_json_string_peek(rec, "status");
	const char *objective = xg_json_string_peek(rec, "objective");
	long long rounds = 0;

	if (out->len && out->buf[out->len - 1] != '\n')
		xg_buf_addch(out, '\n');
	xg_buf_addf(out, "goal: %s", status ? status : "?");
	if (xg_json_int_peek(rec, "rounds", &rounds) == 0 ||
	    xg_json_int_peek(rec, "round", &rounds) == 0)
		xg_buf_addf(out, ", round %lld", rounds);
	if (objective) {
		size_t n = strcspn(objective, "\r\n");

		xg_buf_addstr(out, ": ");
		for (size_t i = 0; i < n && i < 80; i++)
			xg_buf_addch(out, (unsigned char)objective[i] < 0x20 ? ' ' : objective[i]);
	}
	xg_buf_addch(out, '\n');
}

static int render(int fd, const char *name, const char *id, FILE *out, int color)
{
	struct xg_rec_reader rd;
	struct xg_render r;
	struct xg_buf text = XG_BUF_INIT(0);
	struct xg_rec rec;
	jv hb = jv_invalid();
	int n, rc = 0;

	xg_rec_reader_init(&rd, fd, name);
	xg_render_init(&r, color);
	while ((n = xg_rec_next(&rd, &rec)) > 0) {
		bool hidden = false;

		xg_json_bool_peek(rec.v, "hidden", &hidden);
		if (hidden) {
			/* A goal's continuation: no one's words. */
		} else if (rec.type && !strcmp(rec.type, "heartbeat")) {
			jv_free(hb);
			hb = jv_copy(rec.v);
		} else {
			if (jv_is_valid(hb)) {
				fold_heartbeat(hb, color, &text);
				r.at_bol = 1;
			}
			jv_free(hb);
			hb = jv_invalid();
			if (rec.type && !strcmp(rec.type, "goal")) {
				goal_row(rec.v, &text);
				r.at_bol = 1;
			} else {
				xg_render_record_peek(&r, rec.v, &text);
			}
		}
		xg_rec_release(&rec);
	}
	if (n < 0) {
		xg_warn("%s", rd.err);
		rc = XG_EX_DATAERR;
	}
	if (jv_is_valid(hb))
		fold_heartbeat(hb, color, &text);
	jv_free(hb);
	if (!r.ended) {
		/* No run_end: it goes on, or it was killed. */
		if (text.len && text.buf[text.len - 1] != '\n')
			xg_buf_addch(&text, '\n');
		xg_buf_addstr(&text, xg_log_run_live(id) ? "xg-log: the run goes on\n"
			      : "xg-log: the run was killed before its end\n");
		r.at_bol = 1;
		r.ended = 1;
	}
	xg_render_finish(&r, &text);
	if (fwrite(text.buf, 1, text.len, out) != text.len)
		rc = XG_EX_IOERR;
	xg_render_release(&r);
	xg_rec_reader_release(&rd);
	xg_buf_release(&text);
	return rc;
}

/* The records as they are, each checked to be one. */
static int copy(int fd, const char *name, FILE *out)
{
	struct xg_rec_reader rd;
	struct xg_rec rec;
	int n, rc = 0;

	xg_rec_reader_init(&rd, fd, name);
	while ((n = xg_rec_next(&rd, &rec)) > 0) {
		if (fwrite(rec.raw, 1, rec.rawlen, out) != rec.rawlen || putc('\n', out) == EOF)
			rc = XG_EX_IOERR;
		xg_rec_release(&rec);
	}
	if (n < 0) {
		xg_warn("%s", rd.err);
		rc = XG_EX_DATAERR;
	}
	xg_rec_reader_release(&rd);
	return rc;
}

int xg_log_show(const struct xg_log_opts *o, const char *word, FILE *out)
{
	char *id, *path = NULL, *name;
	int rc, fd;

	if (!(id = xg_log_find_run(word, &rc)))
		return rc;
	fd = open_events(id, &path);
	if (fd < 0) {
		rc = errno == ENOENT ? XG_EX_NOINPUT : xg_exit_for_errno(errno);
	} else {
		name = xg_asprintf("'%s'", path);
		rc = o->json ? copy(fd, name, out)
			     : render(fd, name, id, out, isatty(fileno(out)) && !getenv("NO_COLOR"));
		free(name);
		close(fd);
	}
	free(path);
	free(id);
	return rc;
}

struct next_run {
	const char *id, *workspace;
	int64_t started;
	char *snapshot;		/* the earliest later run's snapshot here */
	int now;		/* snapshot is the working tree's, taken now */
};

/* A snapshot of the working tree of ws now, or NULL (git diff then
 * compares the tracked files only). */
static char *snapshot_now(const char *ws)
{
	struct xg_snapshot_opts so;
	const char *commit;
	char *out = NULL;
	jv rec;

	xg_snapshot_opts_init(&so);
	so.dir = ws;
	rec = xg_snapshot_take(&so);
	commit = xg_json_string_peek(rec, "commit");
	if (commit)
		out = xg_strdup(commit);
	else
		xg_warn("cannot snapshot '%s' (%s): new files that are not tracked are left out",
			ws, xg_json_string_peek(rec, "reason") ? xg_json_string_peek(rec, "reason")
								: "no commit");
	jv_free(rec);
	return out;
}

static int find_next(jv line, void *ctx)
{
	struct next_run *n = ctx;
	const char *id = xg_json_string_peek(line, "run");
	const char *snap = xg_json_string_peek(line, "snapshot");
	const char *ws = xg_json_string_peek(line, "workspace");

	if (id && !strcmp(id, n->id))
		return 1;
	if (snap && ws && !strcmp(ws, n->workspace) && xg_log_started_peek(line) > n->started) {
		free(n->snapshot);
		n->snapshot = xg_strdup(snap);
	}
	return 0;
}

int xg_log_diff(const struct xg_log_opts *o, const char *word, int argc, char **argv)
{
	struct next_run n = { 0 };
	struct log_index ix;
	const char *snap, *ws;
	char **args;
	int rc, i, k = 0;
	char *id;
	jv run;

	if (!(id = xg_log_find_run(word, &rc)))
		return rc;
	run = xg_log_run_json(id);
	snap = xg_json_string_peek(run, "snapshot");
	ws = xg_json_string_peek(run, "cwd");
	if (!snap || !ws) {
		xg_error("run '%s' has no snapshot to compare: it %s", id,
			 ws ? "ran outside a git repository, or before its snapshot" :
			      "ended before it had one");
		jv_free(run);
		free(id);
		return XG_EX_NOINPUT;
	}
	n.id = id;
	n.workspace = ws;
	n.started = xg_log_started_peek(run);
	if (!o->worktree && (rc = xg_log_index_open(&ix)) == 0)
		xg_log_index_scan(&ix, 0, find_next, &n);
	if (!o->worktree)
		xg_log_index_close(&ix);
	if (!n.snapshot && (n.snapshot = snapshot_now(ws)))
		n.now = 1;
	if (o->verbose)
		fprintf(stderr, "xg-log: run %s's snapshot %.12s against %s%.12s\n", id, snap,
			n.now ? "the working tree, as a snapshot now " : n.snapshot ?
			"the next run's snapshot " : "the working tree", n.snapshot ? n.snapshot : "");
	args = xg_calloc((size_t)argc + 8, sizeof(*args));
	args[k++] = "git";
	args[k++] = "-C";
	args[k++] = (char *)ws;
	args[k++] = "diff";
	for (i = 0; i < argc; i++)
		args[k++] = argv[i];
	args[k++] = (char *)snap;
	if (n.snapshot)
		args[k++] = n.snapshot;
	args[k] = NULL;
	fflush(stdout);
	execvp("git", args);
	xg_error_errno("cannot run git");
	return XG_EX_SOFTWARE;
}
