/*
 * xg-snapshot as a stage of a pipeline: what it reads and writes around
 * xg_snapshot_take and xg_snapshot_replay.
 *
 * Taking, every record read is passed on unchanged, and each request is
 * followed by the snapshot of its cwd, so that every typed turn has its
 * own; without a request there is one snapshot.  Replaying from "-", the
 * records are passed on too, and the last snapshot record with a commit
 * names the commit and base.  A write error on the output is reported
 * here and is XG_EX_IOERR; so is a replay record that cannot be written,
 * which makes the replay remove its clone.
 */
#include "xg.h"
#include "snapshot/snapshot.h"

struct take_stage {
	const struct xg_snapshot_opts *o;
	struct xg_rec_writer *w;
	const char *input;	/* the reader's name, for messages */
	int requests;
	int all_ok;		/* every snapshot so far has a commit */
};

static int write_error(void)
{
	xg_error_errno("cannot write standard output");
	return XG_EX_IOERR;
}

int xg_snapshot_stage_cwd(const struct xg_rec *rec, const char *input, const char **cwd)
{
	jv v = xg_json_get_peek(rec->v, "cwd");

	if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_STRING && jv_get_kind(v) != JV_KIND_NULL) {
		xg_error("%s: line %zu: field 'cwd' must be a string", input, rec->lineno);
		return XG_EX_DATAERR;
	}
	*cwd = xg_json_string_peek(rec->v, "cwd");
	return 0;
}

/* Takes one snapshot, of cwd unless the options name a directory, and
 * writes its record. */
static int snapshot_of(struct take_stage *st, const char *cwd)
{
	struct xg_snapshot_opts o = *st->o;
	jv rec;

	if (!o.dir)
		o.dir = cwd;
	rec = xg_snapshot_take(&o);
	if (jv_get_kind(xg_json_get_peek(rec, "commit")) != JV_KIND_STRING)
		st->all_ok = 0;
	return xg_rec_write(st->w, rec) < 0 ? write_error() : 0;
}

/*
 * One record read.  A request's cwd is checked before the request goes
 * on, so that a bad one reaches no stage downstream.  The request goes on
 * first, flushed, so the stages downstream prepare the run while the tree
 * is read; xg-run runs no tool before the snapshot record has come.
 */
static int take_record(const struct xg_rec *rec, void *arg)
{
	struct take_stage *st = arg;
	const char *cwd;
	int rc;

	if (!rec)
		return 0;	/* no input at all: the one snapshot follows */
	if (!rec->type || strcmp(rec->type, "request"))
		return xg_rec_pass(st->w, rec) < 0 ? write_error() : 0;
	if ((rc = xg_snapshot_stage_cwd(rec, st->input, &cwd)))
		return rc;
	if (xg_rec_pass(st->w, rec) < 0 || fflush(st->w->fp) == EOF)
		return write_error();
	st->requests++;
	return snapshot_of(st, cwd);
}

int xg_snapshot_stage_take(struct xg_rec_reader *r, struct xg_rec_writer *w,
			   const struct xg_snapshot_opts *o, int strict)
{
	struct take_stage st = { o, w, r ? r->name : NULL, 0, 1 };
	int rc;

	/* Every record comes to take_record, which passes it on itself:
	 * a request must be checked before it goes out. */
	rc = xg_rec_filter(r, NULL, NULL, take_record, &st);
	if (!rc && !st.requests)
		rc = snapshot_of(&st, NULL);
	if (rc)
		return rc;
	return strict && !st.all_ok ? XG_EX_FAIL : XG_EX_OK;
}

struct last_snapshot {
	char *commit, *base;
};

/* Keeps the commit and base of a snapshot record that has a commit. */
static int keep_last(const struct xg_rec *rec, void *arg)
{
	struct last_snapshot *last = arg;
	const char *c = rec ? xg_json_string_peek(rec->v, "commit") : NULL;
	const char *b;

	if (!c)
		return 0;
	b = xg_json_string_peek(rec->v, "base");
	free(last->commit);
	free(last->base);
	last->commit = xg_strdup(c);
	last->base = b ? xg_strdup(b) : NULL;
	return 0;
}

/* Writes the replay record, flushed: the clone is kept only if it is. */
static int emit(jv rec, void *arg)
{
	struct xg_rec_writer *w = arg;

	if (xg_rec_write(w, rec) < 0 || fflush(w->fp) == EOF || ferror(w->fp)) {
		if (!errno)
			errno = EIO;
		write_error();
		return -1;
	}
	return 0;
}

int xg_snapshot_stage_replay(struct xg_rec_reader *r, struct xg_rec_writer *w,
			     const struct xg_snapshot_replay_opts *o)
{
	struct xg_snapshot_replay_opts ro = *o;
	struct last_snapshot last = { NULL, NULL };
	int rc = 0;

	if (!strcmp(o->commit, "-")) {
		rc = xg_rec_filter(r, w, "snapshot", keep_last, &last);
		if (rc == XG_EX_IOERR)
			write_error();	/* xg_rec_filter leaves it to us */
		if (!rc && !last.commit) {
			xg_error("no snapshot record with a commit on %s", r->name);
			rc = XG_EX_DATAERR;
		}
		ro.commit = last.commit;
		if (!ro.base)
			ro.base = last.base;
	}
	if (!rc)
		rc = xg_snapshot_replay(&ro, emit, w);
	free(last.commit);
	free(last.base);
	return rc;
}
