/*
 * The runs index (runindex.h): its path and the live markers, the line a
 * run.json makes, and the locked append.
 */
#include "xg.h"
#include "runindex.h"
#include <sys/file.h>

/* A line says the first line of the request and the reason, no more. */
#define FIRST_LINE_MAX 200

char *xg_runindex_path(void)
{
	return xg_path_state("runs.ndjson");
}

char *xg_runindex_live_path(const char *id)
{
	char *rel = xg_asprintf("runs.live/%s", id), *path = xg_path_state(rel);

	free(rel);
	return path;
}

int xg_runindex_live_open(const char *id)
{
	char *dir = xg_path_state("runs.live"), *path = xg_runindex_live_path(id);
	char *tmp = xg_asprintf("%s/.%s", dir, id);
	int fd = -1, e;

	/* Held before it has its name, so no reader ever sees it unheld. */
	if (xg_mkdir_p(dir, 0700) == 0) {
		fd = open(tmp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || rename(tmp, path) < 0) {
			xg_error_errno("cannot hold '%s'", path);
			if (fd >= 0)
				close(fd);
			unlink(tmp);
			fd = -1;
		}
	}
	e = errno;
	free(dir);
	free(path);
	free(tmp);
	errno = e;
	return fd;
}

/* The first line of s, at most FIRST_LINE_MAX bytes of it (not cutting a
 * UTF-8 sequence); null for no string. */
static jv first_line(jv s)
{
	const char *p;
	size_t n;

	if (jv_get_kind(s) != JV_KIND_STRING) {
		jv_free(s);
		return jv_null();
	}
	p = jv_string_value(s);
	n = strcspn(p, "\r\n");
	if (n > FIRST_LINE_MAX) {
		n = FIRST_LINE_MAX;
		while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
	}
	{
		jv out = xg_json_string_bytes(p, n);
		jv_free(s);
		return out;
	}
}

static jv field(jv summary, const char *key)
{
	jv v = xg_json_get_peek(summary, key);

	return jv_is_valid(v) ? jv_copy(v) : jv_null();
}

jv xg_runindex_line_peek(jv summary)
{
	const char *variant = xg_json_string_peek(summary, "variant");
	const char *version = xg_json_string_peek(summary, "version");
	jv line = xg_rec_new("run"), goal = xg_json_get_peek(summary, "goal");

	line = xg_json_set(line, "run", field(summary, "id"));
	line = xg_json_set(line, "conversation", field(summary, "conversation"));
	line = xg_json_set(line, "parent", field(summary, "parent"));
	line = xg_json_set(line, "workspace", field(summary, "cwd"));
	line = xg_json_set(line, "account", field(summary, "account"));
	line = xg_json_set(line, "started", field(summary, "started"));
	line = xg_json_set(line, "ended", field(summary, "ended"));
	line = xg_json_set(line, "ms", field(summary, "ms"));
	line = xg_json_set(line, "status", field(summary, "status"));
	line = xg_json_set(line, "stop", field(summary, "stop"));
	line = xg_json_set(line, "reason", first_line(field(summary, "reason")));
	line = xg_json_set(line, "exit", field(summary, "exit"));
	line = xg_json_set(line, "mode", field(summary, "mode"));
	line = xg_json_set(line, "model", field(summary, "model"));
	line = xg_json_set(line, "effort", field(summary, "effort"));
	line = xg_json_set(line, "variant", variant ? version ? jv_string_fmt("%s@%s", variant, version)
						      : jv_string(variant) : jv_null());
	line = xg_json_set(line, "snapshot", field(summary, "snapshot"));
	line = xg_json_set(line, "usage", field(summary, "usage"));
	line = xg_json_set(line, "cost", field(summary, "cost"));
	line = xg_json_set(line, "tool_calls", field(summary, "tool_calls"));
	line = xg_json_set(line, "requests", field(summary, "requests"));
	line = xg_json_set(line, "slices", field(summary, "slices"));
	if (jv_get_kind(goal) == JV_KIND_OBJECT)
		line = xg_json_set(line, "goal", jv_copy(goal));
	return xg_json_set(line, "request", first_line(field(summary, "request")));
}

int xg_runindex_lock(void)
{
	char *dir = xg_path_state(NULL), *path = xg_path_state("runs.lock");
	int fd = -1, e;

	if (xg_mkdir_p(dir, 0700) == 0)
		fd = xg_lock_file_mode(path, O_RDWR | O_CREAT, 0600, xg_lock_timeout_ms());
	e = errno;
	free(dir);
	free(path);
	errno = e;
	return fd;
}

int xg_runindex_write_locked(jv line)
{
	struct xg_buf b = XG_BUF_INIT(0);
	char *path = xg_runindex_path();
	struct stat st;
	char last = '\n';
	int fd, rc = 0, e;

	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = xg_error_errno("cannot open '%s'", path);
		goto out;
	}
	/* A crash mid-append left a line without its end: end it, so it is
	 * one torn line and this one whole. */
	if (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
		xg_buf_addch(&b, '\n');
	xg_json_dump(&b, xg_redact_jv(line));
	line = jv_invalid();
	xg_buf_addch(&b, '\n');
	if (xg_write_all(fd, b.buf, b.len) < 0 || fsync(fd) < 0)
		rc = xg_error_errno("cannot append to '%s'", path);
out:
	e = errno;
	jv_free(line);
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = xg_error_errno("cannot append to '%s'", path);
	else
		errno = e;
	xg_buf_release(&b);
	free(path);
	return rc;
}

int xg_runindex_append(jv line, const char *live)
{
	int fd = xg_runindex_lock(), rc;

	if (fd < 0) {
		jv_free(line);
		return -1;
	}
	rc = xg_runindex_write_locked(line);
	if (rc == 0 && live)
		unlink(live);
	close(fd);
	return rc;
}
