/*
 * Deleting on request (xg-log prune --before WHEN): the runs that started
 * before WHEN lose their line in the index and their directory, and each
 * is named on standard output.  Nothing else ever deletes a run.  The
 * index is rewritten atomically under its lock (runindex.h), so a run
 * ending meanwhile waits and then appends to the new file; lines that
 * are not records are kept as they are.
 */
#include "xg.h"
#include "log/internal.h"
#include "runindex.h"
#include <ftw.h>

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

static int remove_run(const char *id)
{
	char *rel = xg_path_join("runs", id), *dir = xg_path_state(rel);
	int rc = nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);

	if (rc < 0 && errno != ENOENT)
		xg_error_errno("cannot remove '%s'", dir);
	else
		rc = 0;
	free(rel);
	free(dir);
	return rc;
}

/* Whether line is a run that started before when (and is not going). */
static int old(jv line, int64_t before)
{
	const char *type = xg_json_string_peek(line, "type");
	int64_t started = xg_log_started_peek(line);

	return type && !strcmp(type, "run") && xg_json_string_peek(line, "run") && started >= 0 &&
	       started < before;
}

static void say(FILE *out, int dry, jv line)
{
	const char *req = xg_json_string_peek(line, "request");
	const char *status = xg_json_string_peek(line, "status");
	char when[17];

	xg_log_local_time(xg_log_started_peek(line), when);
	fprintf(out, "%s %s  %s  %s  %.*s\n", dry ? "would prune" : "pruned",
		xg_json_string_peek(line, "run"), when, status ? status : "?",
		req ? (int)strcspn(req, "\r\n") : 0, req ? req : "");
}

/* Splits the index in b into the lines kept (into keep) and the runs
 * pruned (their lines into gone). */
static void split(const struct xg_buf *b, int64_t before, struct xg_buf *keep, jv *gone)
{
	const char *p = b->buf, *end = b->buf + b->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		jv v = jv_parse_sized(p, (int)(nl ? n - 1 : n));

		if (nl && jv_get_kind(v) == JV_KIND_OBJECT && old(v, before))
			*gone = jv_array_append(*gone, v);
		else {
			xg_buf_add(keep, p, n);
			jv_free(v);
		}
		p += n;
	}
}

int xg_log_prune(const struct xg_log_opts *o, FILE *out)
{
	struct xg_buf b = XG_BUF_INIT(0), keep = XG_BUF_INIT(0);
	struct log_filter f;
	struct log_index ix;
	char *path = xg_runindex_path();
	jv gone = jv_array();
	int rc, lk = -1;

	if (!o->before) {
		xg_error("prune needs --before WHEN: nothing is deleted unless asked");
		rc = XG_EX_USAGE;
		goto out;
	}
	if ((rc = xg_log_filter_init(&f, o)))
		goto out;
	xg_log_filter_release(&f);
	/* Killed runs get their line first, so they are pruned with the rest. */
	if ((rc = xg_log_index_open(&ix)) == 0)
		rc = xg_log_index_status(&ix);
	xg_log_index_close(&ix);
	if (rc)
		goto out;
	if ((lk = xg_runindex_lock()) < 0) {
		rc = xg_exit_for_errno(errno);
		goto out;
	}
	if (xg_read_file(path, &b) < 0 && errno != ENOENT) {
		rc = xg_exit_for_errno(errno);
		goto out;
	}
	split(&b, f.before, &keep, &gone);
	if (!o->dry_run && jv_array_length(jv_copy(gone)) > 0 &&
	    xg_write_atomic(path, keep.buf, keep.len, 0600) < 0) {
		rc = xg_exit_for_errno(errno);
		goto out;
	}
	close(lk);
	lk = -1;
	jv_array_foreach(gone, i, line) {
		(void)i;
		if (!o->dry_run && remove_run(xg_json_string_peek(line, "run")) < 0)
			rc = XG_EX_IOERR;
		say(out, o->dry_run, line);
		jv_free(line);
	}
	fprintf(out, "%s %d run%s started before %s\n", o->dry_run ? "would prune" : "pruned",
		jv_array_length(jv_copy(gone)), jv_array_length(jv_copy(gone)) == 1 ? "" : "s",
		o->before);
out:
	if (lk >= 0)
		close(lk);
	jv_free(gone);
	xg_buf_release(&b);
	xg_buf_release(&keep);
	free(path);
	return rc;
}
