/*
 * The runs index (runindex.h): its path and the live markers (the room
 * each keeps for its run's line, and the line kept there), the line a
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
		} else if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, XG_RUNINDEX_LINE_ROOM) < 0) {
			/* Without the room the run's line takes its chances
			 * with the disk, as any append does. */
		}
	}
	e = errno;
	free(dir);
	free(path);
	free(tmp);
	errno = e;
	return fd;
}

int xg_runindex_live_keep(int fd, jv line, int sync)
{
	struct xg_buf b = XG_BUF_INIT(0);
	int rc = 0, e;

	xg_json_dump(&b, xg_redact_jv(line));
	xg_buf_addch(&b, '\n');
	/* Written over the line kept before, in the room the marker was given
	 * when it was made, so a disk that filled since still takes it; then
	 * cut to its end, so a shorter line leaves no tail of the longer. */
	if (lseek(fd, 0, SEEK_SET) < 0 || xg_write_all(fd, b.buf, b.len) < 0 ||
	    ftruncate(fd, (off_t)b.len) < 0 || (sync && fsync(fd) < 0)) {
		/* A marker keeps a whole line or none: an empty one leaves
		 * xg-log to make the line from the run's directory. */
		e = errno;
		if (ftruncate(fd, 0) < 0)
			xg_warn("cannot empty the run's live marker: %s", strerror(errno));
		errno = e;
		rc = xg_error_errno("cannot keep the run's line in its live marker");
	}
	xg_buf_release(&b);
	return rc;
}

jv xg_runindex_live_read(int fd)
{
	struct xg_buf b = XG_BUF_INIT(XG_RUNINDEX_LINE_ROOM);
	const char *type;
	jv line;

	if (lseek(fd, 0, SEEK_SET) < 0 || xg_read_fd(fd, &b) < 0 || b.len == 0 ||
	    b.buf[b.len - 1] != '\n' || memchr(b.buf, '\n', b.len - 1)) {
		xg_buf_release(&b);
		return jv_invalid();
	}
	line = xg_json_parse(b.buf, b.len - 1);
	xg_buf_release(&b);
	type = jv_get_kind(line) == JV_KIND_OBJECT ? xg_json_string_peek(line, "type") : NULL;
	if (!type || strcmp(type, "run") || !xg_json_string_peek(line, "run")) {
		jv_free(line);
		return jv_invalid();
	}
	return line;
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
		n = xg_utf8_start(p, n);
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

/* The line's fields in their order, each from the summary's field of the
 * same name or the one given; a reason and a request are cut to their
 * first line, the variant is "name@version". */
static const struct {
	const char *key, *from;
	enum { AS_IS, FIRST_LINE, VARIANT } how;
} line_fields[] = {
	{ "run", "id", AS_IS }, { "conversation", NULL, AS_IS }, { "parent", NULL, AS_IS },
	{ "workspace", "cwd", AS_IS }, { "account", NULL, AS_IS }, { "started", NULL, AS_IS },
	{ "ended", NULL, AS_IS }, { "ms", NULL, AS_IS }, { "status", NULL, AS_IS },
	{ "stop", NULL, AS_IS }, { "reason", NULL, FIRST_LINE }, { "exit", NULL, AS_IS },
	{ "mode", NULL, AS_IS }, { "model", NULL, AS_IS }, { "effort", NULL, AS_IS },
	{ "variant", NULL, VARIANT }, { "snapshot", NULL, AS_IS }, { "usage", NULL, AS_IS },
	{ "cost", NULL, AS_IS }, { "tool_calls", NULL, AS_IS }, { "requests", NULL, AS_IS },
	{ "slices", NULL, AS_IS },
};

jv xg_runindex_line_peek(jv summary)
{
	const char *variant = xg_json_string_peek(summary, "variant");
	const char *version = xg_json_string_peek(summary, "version");
	jv line = xg_rec_new("run"), goal = xg_json_get_peek(summary, "goal"), v;
	size_t i;

	for (i = 0; i < sizeof(line_fields) / sizeof(*line_fields); i++) {
		const char *from = line_fields[i].from ? line_fields[i].from : line_fields[i].key;

		switch (line_fields[i].how) {
		case FIRST_LINE:
			v = first_line(field(summary, from));
			break;
		case VARIANT:
			v = !variant ? jv_null() : version ? jv_string_fmt("%s@%s", variant, version)
						      : jv_string(variant);
			break;
		default:
			v = field(summary, from);
		}
		line = xg_json_set(line, line_fields[i].key, v);
	}
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
	if (xg_append_fd(fd, b.buf, b.len, 1) < 0)
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
