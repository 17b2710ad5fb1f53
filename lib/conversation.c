/*
 * Conversations (conversation.h): $state/conversations/ID.jsonl read from
 * its newest entries back, appended to under its lock, new ids made, and a
 * torn last line left out with a notice.
 */
#include "xg.h"
#include "conversation.h"

#define SCAN_BLOCK 65536

int xg_conv_id_valid(const char *id)
{
	size_t n = 0;

	if (!id || !*id || *id == '.' || *id == '-')
		return 0;
	for (; id[n]; n++)
		if (!isalnum((unsigned char)id[n]) && !strchr("._-", id[n]))
			return 0;
	return n <= 128;
}

int xg_conv_mode_valid(const char *mode)
{
	size_t n;

	if (!mode || !islower((unsigned char)*mode))
		return 0;
	for (n = 0; mode[n]; n++)
		if (!islower((unsigned char)mode[n]) && !isdigit((unsigned char)mode[n]) &&
		    mode[n] != '_' && mode[n] != '-')
			return 0;
	return n <= XG_CONV_MODE_MAX;
}

char *xg_conv_new_id(void)
{
	int64_t now = xg_clock_wall_ms();
	time_t secs = (time_t)(now / 1000);
	unsigned char rnd[4] = { 0 };
	char stamp[32];
	struct tm tm;
	int fd;

	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd)) {
		unsigned v = (unsigned)getpid() ^ (unsigned)now;
		memcpy(rnd, &v, sizeof(rnd));
	}
	if (fd >= 0)
		close(fd);
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	return xg_asprintf("%s-%02x%02x%02x%02x", stamp, rnd[0], rnd[1], rnd[2], rnd[3]);
}

char *xg_conv_path(const char *id)
{
	char *rel = xg_asprintf("conversations/%s.jsonl", id);
	char *path = xg_path_state(rel);

	free(rel);
	return path;
}

int xg_conv_exists(const char *id)
{
	char *path = xg_conv_path(id);
	struct stat st;
	int ok = stat(path, &st) == 0;

	free(path);
	return ok;
}

int xg_conv_hold(const char *id, xg_lock_waiting_fn waiting, void *ctx)
{
	char *dir, *rel, *path;
	int fd = -1;

	if (!xg_conv_id_valid(id)) {
		errno = EINVAL;
		return xg_error("'%s' " XG_CONV_ID_BAD, id);
	}
	dir = xg_path_state("conversations");
	rel = xg_asprintf("conversations/%s.run.lock", id);
	path = xg_path_state(rel);
	if (xg_mkdir_p(dir, 0700) == 0)
		fd = xg_lock_file_wait(path, O_RDWR | O_CREAT, 0600, xg_lock_timeout_ms(),
				       waiting, ctx);
	{
		int e = errno;
		free(dir);
		free(rel);
		free(path);
		errno = e;
	}
	return fd;
}

static jv with_stamp(jv entry)
{
	char at[25];

	if (jv_get_kind(xg_json_get_peek(entry, "at")) == JV_KIND_STRING)
		return entry;
	xg_clock_rfc3339(xg_clock_wall_ms(), at);
	return xg_json_set(entry, "at", jv_string(at));
}

static jv header(const char *id)
{
	char created[25], cwd[PATH_MAX];
	jv h = xg_rec_new("conversation");

	xg_clock_rfc3339(xg_clock_wall_ms(), created);
	h = xg_json_set(h, "schema", jv_string("xg/1"));
	h = xg_json_set(h, "id", jv_string(id));
	h = xg_json_set(h, "created", jv_string(created));
	h = xg_json_set(h, "cwd", getcwd(cwd, sizeof(cwd)) ? xg_json_string_bytes(cwd, strlen(cwd))
							    : jv_null());
	return h;
}

/* Whether the file ends in the middle of a line (a torn append). */
static int ends_torn(int fd, off_t size)
{
	char last;

	if (size == 0)
		return 0;
	if (pread(fd, &last, 1, size - 1) != 1)
		return 0;
	return last != '\n';
}

static int append(const char *id, jv entry, xg_conv_check_fn still, void *ctx,
		  struct xg_conv_sync *sync);

int xg_conv_append(const char *id, jv entry)
{
	return append(id, entry, NULL, NULL, NULL);
}

int xg_conv_append_if(const char *id, jv entry, xg_conv_check_fn still, void *ctx)
{
	return append(id, entry, still, ctx, NULL);
}

int xg_conv_append_async(const char *id, jv entry, struct xg_conv_sync *sync)
{
	if (xg_conv_sync_wait(sync) < 0) {
		jv_free(entry);
		return -1;
	}
	return append(id, entry, NULL, NULL, sync);
}

static void *sync_main(void *arg)
{
	struct xg_conv_sync *sync = arg;

	if (fsync(sync->fd) < 0)
		sync->err = errno;
	if (close(sync->fd) < 0 && !sync->err)
		sync->err = errno;
	sync->fd = -1;
	return NULL;
}

/* Hands fd, written, to a thread that syncs and closes it. */
static void sync_start(struct xg_conv_sync *sync, int fd, const char *path)
{
	sync->fd = fd;
	sync->err = 0;
	sync->path = xg_strdup(path);
	/* glibc's stack, kept in its cache from one append to the next:
	 * unmapping one at each join would cost more than the sync. */
	if (pthread_create(&sync->thread, NULL, sync_main, sync) == 0)
		sync->running = 1;
	else
		sync_main(sync);
}

int xg_conv_sync_wait(struct xg_conv_sync *sync)
{
	int rc = 0;

	if (sync->running) {
		pthread_join(sync->thread, NULL);
		sync->running = 0;
	}
	if (sync->err) {
		errno = sync->err;
		rc = xg_error_errno("cannot append to '%s'", sync->path);
		sync->err = errno;
	}
	free(sync->path);
	sync->path = NULL;
	if (rc < 0) {
		errno = sync->err;
		sync->err = 0;
	}
	return rc;
}

/*
 * A new conversation's file comes into being with its header in it, and
 * the first entry when there is one (first, borrowed; jv_invalid() for
 * none), stamped after the header is: both are written to a file of its
 * own, synced, and linked to the name, which fails harmlessly when another
 * writer made it first.  Made empty and then written, a kill between the
 * two would leave a file with no header.  1 when the file was made with
 * the entry in it, 0 when another writer had made it (the entry is still
 * to append), -1 after reporting.
 */
static int create_with_header(const char *id, const char *path, jv first)
{
	struct xg_buf b = XG_BUF_INIT(0);
	char *tmp = xg_asprintf("%s.newXXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC), rc = -1;

	if (fd < 0) {
		xg_error_errno("cannot create a file beside '%s'", path);
		goto out;
	}
	xg_json_dump(&b, header(id));
	xg_buf_addch(&b, '\n');
	if (jv_is_valid(first)) {
		xg_json_dump(&b, with_stamp(jv_copy(first)));
		xg_buf_addch(&b, '\n');
	}
	if (fchmod(fd, 0600) < 0 || xg_write_all(fd, b.buf, b.len) < 0 || fsync(fd) < 0) {
		xg_error_errno("cannot write '%s'", tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (link(tmp, path) == 0)
		rc = jv_is_valid(first);
	else if (errno == EEXIST)
		rc = 0;
	else
		xg_error_errno("cannot create '%s'", path);
	unlink(tmp);
out:
	xg_buf_release(&b);
	free(tmp);
	return rc;
}

static int append(const char *id, jv entry, xg_conv_check_fn still, void *ctx,
		  struct xg_conv_sync *sync)
{
	struct xg_buf line = XG_BUF_INIT(0);
	char *path = NULL, *dir = NULL;
	struct stat st, dst;
	int fd = -1, rc = -1, made, e;

	if (!xg_conv_id_valid(id)) {
		jv_free(entry);
		return xg_error("'%s' " XG_CONV_ID_BAD, id);
	}
	dir = xg_path_state("conversations");
	/* Conversations hold prompts and tool output: only their owner
	 * reads them. */
	if (xg_mkdir_p(dir, 0700) < 0)
		goto out;
	path = xg_conv_path(id);
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		/* The first entry goes in with the header, synced with it,
		 * unless still must look first, under the lock. */
		made = create_with_header(id, path, still ? jv_invalid() : entry);
		if (made < 0)
			goto out;
		if (made) {
			rc = 0;
			goto out;
		}
	}
	fd = xg_lock_file_mode(path, O_RDWR | O_APPEND | O_CREAT, 0600, xg_lock_timeout_ms());
	if (fd < 0)
		goto out;
	if (still) {
		int r = still(id, ctx);
		if (r <= 0) {
			/* still reported its own error; to the caller it is an
			 * I/O failure. */
			rc = r < 0 ? -1 : 1;
			errno = EIO;
			goto out;
		}
	}
	if (fstat(fd, &st) < 0) {
		xg_error_errno("cannot stat '%s'", path);
		goto out;
	}
	/* One made before conversations were kept private is made so now,
	 * with its directory. */
	if ((st.st_mode & 077) && fchmod(fd, st.st_mode & 0700) < 0) {
		xg_error_errno("cannot make '%s' private", path);
		goto out;
	}
	if (stat(dir, &dst) == 0 && (dst.st_mode & 077))
		chmod(dir, dst.st_mode & 0700);
	if (st.st_size == 0) {
		xg_json_dump(&line, header(id));
		xg_buf_addch(&line, '\n');
	} else if (ends_torn(fd, st.st_size)) {
		xg_buf_addch(&line, '\n');
	}
	xg_json_dump(&line, with_stamp(entry));
	entry = jv_invalid();
	xg_buf_addch(&line, '\n');
	/* The line goes in whole or not at all; an fsync on the sync thread
	 * that fails later finds it whole, and fails the run's next step. */
	if (xg_append_fd(fd, line.buf, line.len, !sync) < 0) {
		xg_error_errno("cannot append to '%s'", path);
		goto out;
	}
	if (sync) {
		sync_start(sync, fd, path);
		fd = -1;
	}
	rc = 0;
out:
	e = errno;
	jv_free(entry);
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		rc = xg_error_errno("cannot append to '%s'", path);
		e = errno;
	}
	xg_buf_release(&line);
	free(path);
	free(dir);
	errno = e;
	return rc;
}

/* What a scan counts as it goes: lines from the end, and the bad ones. */
struct scan_count {
	long lines;		/* whole lines seen so far, from the end */
	long bad;		/* of them, those that are not JSON objects */
	long oldest_bad;	/* the bad one furthest from the end, as a count
				 * from the end (1: the last line); 0: none */
};

/*
 * Visits the lines of buf[0..len) from the last to the first; buf holds whole
 * lines only, each ending in '\n'.  Returns what visit returned, or 0.
 */
static int visit_lines(char *buf, size_t len, const char *needle, xg_conv_visit_fn visit,
		       void *ctx, struct scan_count *count)
{
	size_t nlen = needle ? strlen(needle) : 0, end = len;

	while (end > 0) {
		/* The line ends at end - 1 (its '\n') and starts after the
		 * newline before it, if any. */
		char *prev = end > 1 ? memrchr(buf, '\n', end - 1) : NULL;
		size_t start = prev ? (size_t)(prev - buf) + 1 : 0;
		jv v;

		count->lines++;
		if (needle && !memmem(buf + start, end - 1 - start, needle, nlen)) {
			end = start;
			continue;
		}
		v = xg_json_parse(buf + start, (end - 1 - start));
		if (jv_get_kind(v) == JV_KIND_OBJECT) {
			int r = visit(v, ctx);
			jv_free(v);
			if (r)
				return r;
		} else {
			jv_free(v);
			count->bad++;
			count->oldest_bad = count->lines;
		}
		end = start;
	}
	return 0;
}

/* As xg_conv_scan_back, parsing only the lines that hold needle (when not
 * NULL): a cheap test that skips the lines no visitor could want. */
static int scan_back(const char *id, const char *needle, xg_conv_visit_fn visit, void *ctx,
		     int *torn, struct xg_conv_damage *damage)
{
	struct scan_count count = { 0, 0, 0 };
	struct xg_buf tail = XG_BUF_INIT(0);
	char *path = xg_conv_path(id);
	struct stat st;
	off_t pos;
	int fd, rc = 0;

	if (torn)
		*torn = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (e != ENOENT)
			xg_error_errno("cannot read conversation '%s'", path);
		if (fd >= 0)
			close(fd);
		free(path);
		errno = e;
		return -1;
	}
	pos = st.st_size;
	/*
	 * tail holds the bytes from pos to the end of what is still to be
	 * visited.  Each round reads the block before it, visits the whole
	 * lines it completes and keeps the partial first line for the next.
	 */
	while (pos > 0 && rc == 0) {
		size_t n = pos > SCAN_BLOCK ? SCAN_BLOCK : (size_t)pos;
		struct xg_buf joined = XG_BUF_INIT(0);
		size_t first_nl;
		char *nl;

		pos -= (off_t)n;
		xg_buf_grow(&joined, n + tail.len);
		if (pread(fd, joined.buf, n, pos) != (ssize_t)n) {
			rc = xg_error_errno("cannot read conversation '%s'", path);
			xg_buf_release(&joined);
			break;
		}
		joined.len = n;
		xg_buf_add(&joined, tail.buf, tail.len);
		xg_buf_release(&tail);
		tail = joined;
		if (pos + (off_t)tail.len == st.st_size && tail.len && tail.buf[tail.len - 1] != '\n') {
			/* A last line without its newline: a torn append. */
			char *last = memrchr(tail.buf, '\n', tail.len);
			size_t keep = last ? (size_t)(last - tail.buf) + 1 : 0;
			if (!last && pos > 0) {
				/* The torn line is longer than a block. */
				continue;
			}
			if (torn)
				*torn = 1;
			xg_buf_setlen(&tail, keep);
			st.st_size = pos + (off_t)keep;
		}
		if (pos == 0) {
			rc = visit_lines(tail.buf, tail.len, needle, visit, ctx, &count);
			break;
		}
		nl = memchr(tail.buf, '\n', tail.len);
		if (!nl)
			continue;
		first_nl = (size_t)(nl - tail.buf) + 1;
		rc = visit_lines(tail.buf + first_nl, tail.len - first_nl, needle, visit, ctx,
				 &count);
		xg_buf_setlen(&tail, first_nl);
		/* What is left is the line the next block completes; its '\n' is
		 * already part of it. */
	}
	xg_buf_release(&tail);
	close(fd);
	free(path);
	if (damage) {
		damage->torn = torn && *torn;
		damage->bad = count.bad;
		damage->first_bad = rc == 0 && count.oldest_bad ?
				    count.lines - count.oldest_bad + 1 : 0;
	}
	return rc < 0 ? -1 : rc;
}

int xg_conv_scan_back(const char *id, xg_conv_visit_fn visit, void *ctx, int *torn)
{
	return scan_back(id, NULL, visit, ctx, torn, NULL);
}

int xg_conv_scan_back_checked(const char *id, xg_conv_visit_fn visit, void *ctx,
			      struct xg_conv_damage *damage)
{
	int torn = 0;

	memset(damage, 0, sizeof(*damage));
	return scan_back(id, NULL, visit, ctx, &torn, damage);
}

struct last_of {
	const char *type;
	jv found;
};

static int match_type(jv entry, void *ctx)
{
	struct last_of *l = ctx;
	const char *t = xg_json_string_peek(entry, "type");

	if (!t || strcmp(t, l->type))
		return 0;
	l->found = jv_copy(entry);
	return 1;
}

jv xg_conv_last_of_type(const char *id, const char *type, int *torn)
{
	struct last_of l = { type, jv_null() };

	if (xg_conv_scan_back(id, match_type, &l, torn) < 0) {
		jv_free(l.found);
		return jv_invalid();
	}
	return l.found;
}

static int match_model(jv entry, void *ctx)
{
	jv *found = ctx;
	const char *type = xg_json_string_peek(entry, "type");
	const char *model = NULL, *role;
	jv effort;

	if (!type)
		return 0;
	if (!strcmp(type, "model_change")) {
		model = xg_json_string_peek(entry, "to");
	} else if (!strcmp(type, "message")) {
		role = xg_json_string_peek(entry, "role");
		if (role && !strcmp(role, "assistant"))
			model = xg_json_string_peek(entry, "model");
	}
	if (!model || !*model)
		return 0;
	effort = xg_json_get_peek(entry, "effort");
	*found = jv_object();
	*found = xg_json_set(*found, "id", jv_string(model));
	*found = xg_json_set(*found, "effort", jv_get_kind(effort) == JV_KIND_STRING
			     ? jv_copy(effort) : jv_null());
	*found = xg_json_set(*found, "entry", jv_string(type));
	return 1;
}

jv xg_conv_last_model(const char *id, int *torn)
{
	jv found = jv_null();

	/* Both kinds of entry that name a model hold the word; the lines
	 * that do not (tool results, user messages) are not parsed. */
	if (scan_back(id, "\"model", match_model, &found, torn, NULL) < 0) {
		jv_free(found);
		return errno == ENOENT ? jv_null() : jv_invalid();
	}
	return found;
}
