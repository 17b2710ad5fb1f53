/*
 * The runs index as xg-log reads it (internal.h): the runs killed before
 * their end given their line, the runs still going, the map of the file
 * and the scan from its end; and finding a run by a part of its id.
 */
#include "xg.h"
#include "log/internal.h"
#include "conversation.h"
#include "runindex.h"
#include <dirent.h>
#include <sys/file.h>
#include <sys/mman.h>

int xg_log_run_live(const char *id)
{
	char *path = xg_runindex_live_path(id);
	int fd = open(path, O_RDWR | O_CLOEXEC), live = 0;

	if (fd >= 0) {
		live = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		close(fd);
	}
	free(path);
	return live;
}

jv xg_log_run_json(const char *id)
{
	struct xg_buf b = XG_BUF_INIT(0);
	char *rel = xg_asprintf("runs/%s/run.json", id), *path = xg_path_state(rel);
	jv v = jv_null();

	if (xg_read_file(path, &b) == 0) {
		v = jv_parse_sized(b.buf, (int)b.len);
		if (jv_get_kind(v) != JV_KIND_OBJECT) {
			jv_free(v);
			v = jv_null();
		}
	}
	xg_buf_release(&b);
	free(rel);
	free(path);
	return v;
}

/* "20261130-105624-3f9a1c2b" -> "2026-11-30T10:56:24.000Z", the time a
 * run's id was made; null when the id is not of that shape. */
static jv started_from_id(const char *id)
{
	int y, mo, d, h, mi, s;
	char out[32];

	if (sscanf(id, "%4d%2d%2d-%2d%2d%2d", &y, &mo, &d, &h, &mi, &s) != 6)
		return jv_null();
	snprintf(out, sizeof(out), "%04d-%02d-%02dT%02d:%02d:%02d.000Z", y, mo, d, h, mi, s);
	return jv_string(out);
}

/* What a killed run's events say: its tokens (the last usage record's
 * cumulative), its tool calls, and when it last wrote one. */
static jv from_events(const char *id, jv line)
{
	char *rel = xg_asprintf("runs/%s/events.ndjson", id), *path = xg_path_state(rel);
	FILE *fp = fopen(path, "re");
	char *buf = NULL, at[25];
	size_t cap = 0;
	ssize_t n;
	long long calls = 0;
	struct stat st;
	int64_t started;

	if (fp) {
		while ((n = getline(&buf, &cap, fp)) > 0) {
			if (memmem(buf, (size_t)n, "\"type\":\"tool_call\"", 18))
				calls++;
			else if (memmem(buf, (size_t)n, "\"type\":\"usage\"", 14)) {
				jv u = jv_parse_sized(buf, (int)n);
				jv c = xg_json_get_peek(u, "cumulative");

				if (jv_get_kind(c) == JV_KIND_OBJECT)
					line = xg_json_set(line, "usage", jv_copy(c));
				jv_free(u);
			}
		}
		if (fstat(fileno(fp), &st) == 0) {
			int64_t ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;

			xg_clock_rfc3339(ms, at);
			line = xg_json_set(line, "ended", jv_string(at));
			started = xg_log_started_peek(line);
			if (started >= 0 && ms >= started)
				line = xg_json_set(line, "ms", jv_number((double)(ms - started)));
		}
		fclose(fp);
		line = xg_json_set(line, "tool_calls", jv_number((double)calls));
	}
	free(buf);
	free(rel);
	free(path);
	return line;
}

/*
 * What is known of a run before its end, as its index line: its run.json
 * as last written; or, when it wrote none yet (the first waits for the
 * first event of the first reply), the line its marker kept before its
 * first request (kept, consumed, invalid for none); else its id alone.
 */
static jv line_so_far(const char *id, jv kept)
{
	jv summary = xg_log_run_json(id), line;
	const char *run = jv_is_valid(kept) ? xg_json_string_peek(kept, "run") : NULL;

	if (jv_get_kind(summary) != JV_KIND_OBJECT && run && !strcmp(run, id)) {
		jv_free(summary);
		return kept;
	}
	jv_free(kept);
	if (jv_get_kind(summary) != JV_KIND_OBJECT)
		summary = xg_json_set(jv_object(), "id", jv_string(id));
	if (jv_get_kind(xg_json_get_peek(summary, "started")) != JV_KIND_STRING)
		summary = xg_json_set(summary, "started", started_from_id(id));
	line = xg_runindex_line_peek(summary);
	jv_free(summary);
	return line;
}

/* The line of a run that left no line of its own, from what its
 * directory and its marker (kept, consumed) hold, and its events. */
static jv killed_line(const char *id, jv kept)
{
	jv line = line_so_far(id, kept);

	/* Killed after its run.json said how it ended: that is its line. */
	if (jv_get_kind(xg_json_get_peek(line, "ended")) == JV_KIND_STRING)
		return line;
	line = xg_json_set(line, "status", jv_string("killed"));
	line = xg_json_set(line, "reason", jv_string("the run was killed before its end"));
	return from_events(id, line);
}

/*
 * The line of the dead marker fd: the one its run kept there as it ended,
 * when the index would not take it (a full disk); or else one made from
 * what the run's directory holds, or the marker kept from its start.
 */
static jv dead_line(int fd, const char *id)
{
	jv kept = xg_runindex_live_read(fd);

	if (jv_is_valid(kept) && jv_get_kind(xg_json_get_peek(kept, "ended")) == JV_KIND_STRING)
		return kept;
	return killed_line(id, kept);
}

/*
 * Gives each dead marker's run its line; the live ones go to ix->running.
 * A line the index cannot take is listed from there all the same, and
 * counted in ix->unwritten.
 */
static int recover(struct log_index *ix)
{
	char *dir = xg_path_state("runs.live");
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		free(dir);
		return 0;
	}
	while (rc == 0 && (de = readdir(d))) {
		char *path;
		int fd, lk;

		/* A marker being made has a dot name until it is held. */
		if (de->d_name[0] == '.' || !xg_conv_id_valid(de->d_name))
			continue;
		path = xg_path_join(dir, de->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
			jv line = line_so_far(de->d_name, xg_runindex_live_read(fd));

			ix->running = jv_array_append(ix->running, xg_json_set(line, "status",
									jv_string("running")));
		} else if (fd >= 0) {
			lk = xg_runindex_lock();
			if (lk < 0) {
				rc = xg_exit_for_errno(errno);
			} else {
				struct stat st;
				jv line;

				/* Under the lock: the run may have written its line
				 * and removed its marker meanwhile. */
				if (stat(path, &st) == 0) {
					line = dead_line(fd, de->d_name);
					if (xg_runindex_write_locked(jv_copy(line)) == 0) {
						unlink(path);
						jv_free(line);
					} else {
						ix->running = jv_array_append(ix->running, line);
						ix->unwritten++;
					}
				}
				close(lk);
			}
		}
		if (fd >= 0)
			close(fd);
		free(path);
	}
	closedir(d);
	free(dir);
	return rc;
}

/* The number of the line that starts at offset start of the map. */
static size_t line_number(const struct log_index *ix, size_t start)
{
	size_t line = 1, i;

	for (i = 0; i < start; i++)
		line += ix->map[i] == '\n';
	return line;
}

int xg_log_index_open(struct log_index *ix)
{
	struct stat st;
	int fd, rc;

	memset(ix, 0, sizeof(*ix));
	ix->seen = jv_object();
	ix->running = jv_array();
	rc = recover(ix);
	if (rc)
		return rc;
	ix->path = xg_runindex_path();
	fd = open(ix->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		xg_error_errno("cannot open '%s'", ix->path);
		return xg_exit_for_errno(errno);
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		xg_error_errno("cannot stat '%s'", ix->path);
		return XG_EX_IOERR;
	}
	if (st.st_size > 0) {
		ix->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (ix->map == MAP_FAILED) {
			ix->map = NULL;
			close(fd);
			xg_error_errno("cannot read '%s'", ix->path);
			return XG_EX_IOERR;
		}
		ix->mapped = ix->size = (size_t)st.st_size;
		if (ix->map[ix->size - 1] != '\n') {
			char *nl = memrchr(ix->map, '\n', ix->size);

			ix->size = nl ? (size_t)(nl - ix->map) + 1 : 0;
			ix->torn = 1;
			xg_warn("'%s' line %zu, the last, is torn (a write cut short); it is left out",
				ix->path, line_number(ix, ix->size));
		}
	}
	close(fd);
	return 0;
}

void xg_log_index_close(struct log_index *ix)
{
	if (ix->map)
		munmap(ix->map, ix->mapped);
	free(ix->path);
	jv_free(ix->seen);
	jv_free(ix->running);
	free(ix->needle);
	memset(ix, 0, sizeof(*ix));
}

/* Whether the run of line was visited already; marks it so. */
static int seen_before(struct log_index *ix, jv line)
{
	const char *id = xg_json_string_peek(line, "run");

	if (!id)
		return 0;
	if (jv_object_has(jv_copy(ix->seen), jv_string(id)))
		return 1;
	ix->seen = jv_object_set(ix->seen, jv_string(id), jv_true());
	return 0;
}

/* A line that is not a run record (a torn append a later one followed, a
 * disk's fault, a hand's edit) costs only itself: it is named once and
 * left out, and the rest are listed. */
static void bad_line(struct log_index *ix, size_t start)
{
	xg_warn("'%s' line %zu is not a run record; it is left out", ix->path,
		line_number(ix, start));
	ix->bad++;
}

int xg_log_index_scan(struct log_index *ix, int running, log_visit_fn visit, void *ctx)
{
	size_t end = ix->size;
	int r;

	if (running && jv_get_kind(ix->running) == JV_KIND_ARRAY) {
		jv_array_foreach(ix->running, i, line) {
			(void)i;
			r = seen_before(ix, line) ? 0 : visit(line, ctx);
			jv_free(line);
			if (r)
				return r;
		}
	}
	while (end > 0) {
		char *prev = end > 1 ? memrchr(ix->map, '\n', end - 1) : NULL;
		size_t start = prev ? (size_t)(prev - ix->map) + 1 : 0;
		const char *type;
		jv v;

		if (end - 1 == start || (ix->needle && !memmem(ix->map + start, end - 1 - start,
								 ix->needle, strlen(ix->needle)))) {
			end = start;
			continue;
		}
		v = jv_parse_sized(ix->map + start, (int)(end - 1 - start));
		type = jv_get_kind(v) == JV_KIND_OBJECT ? xg_json_string_peek(v, "type") : NULL;
		if (!type || strcmp(type, "run") || !xg_json_string_peek(v, "run")) {
			bad_line(ix, start);
			r = 0;
		} else {
			r = seen_before(ix, v) ? 0 : visit(v, ctx);
		}
		jv_free(v);
		if (r)
			return r;
		end = start;
	}
	return 0;
}

int xg_log_index_status(const struct log_index *ix)
{
	return ix->unwritten ? XG_EX_IOERR : 0;
}

char *xg_log_find_run(const char *word, int *rc)
{
	char *dir = xg_path_state("runs"), *found = NULL, *path;
	size_t wl = strlen(word);
	struct dirent *de;
	struct stat st;
	int n = 0;
	DIR *d;

	*rc = 0;
	if (xg_conv_id_valid(word)) {
		path = xg_path_join(dir, word);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			free(path);
			free(dir);
			return xg_strdup(word);
		}
		free(path);
	}
	d = wl >= 4 ? opendir(dir) : NULL;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		const char *hex = strrchr(de->d_name, '-');

		if (de->d_name[0] == '.' || l < wl)
			continue;
		/* The start of the id, or of its random part (what xg-log's rows
		 * show), or its end. */
		if (strncmp(de->d_name, word, wl) && (!hex || strncmp(hex + 1, word, wl)) &&
		    strcmp(de->d_name + l - wl, word))
			continue;
		if (n++ == 0)
			found = xg_strdup(de->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
	if (n == 1)
		return found;
	free(found);
	if (n > 1) {
		xg_error("'%s' names %d runs; give more of the id", word, n);
		*rc = XG_EX_USAGE;
	} else {
		xg_error("no run '%s' (xg-log lists the runs; a part of an id needs 4 characters)",
			 word);
		*rc = XG_EX_NOINPUT;
	}
	return NULL;
}
