/*
 * Steering (steer.h): a conversation's inbox under $state/steer/ID, its
 * lock, the marker a run holds while it takes messages, the messages
 * written whole in the order they came, and how a run opens, empties and
 * closes it and "xg say" writes to it.
 */
#include "xg.h"
#include "steer.h"
#include "conversation.h"
#include <dirent.h>
#include <sys/file.h>

/* A message's name: eight digits. */
#define NAME_LEN 8
#define NAME_MAX_NUMBER 99999999L
/* A marker is one short line. */
#define MARKER_MAX ((size_t)4096)
/* A message file: its text, escaped, and its time. */
#define MESSAGE_MAX (2 * XG_STEER_TEXT_MAX + 4096)

static char *inbox_dir(const char *conv)
{
	char *rel = xg_asprintf("steer/%s", conv), *dir = xg_path_state(rel);

	free(rel);
	return dir;
}

/* Takes the inbox's lock, making the inbox when it is not there and make
 * is set; the descriptor, or -1 (ENOENT, unreported, for an inbox not
 * made). */
static int lock_inbox(const char *dir, int make)
{
	char *path = xg_path_join(dir, "lock");
	int fd = -1, e;

	if (!make && access(path, F_OK) < 0)
		errno = ENOENT;
	else if (make && xg_mkdir_p(dir, 0700) < 0)
		xg_error_errno("cannot make '%s'", dir);
	else
		fd = xg_lock_file_mode(path, O_RDWR | (make ? O_CREAT : 0), 0600,
				       xg_lock_timeout_ms());
	e = errno;
	free(path);
	errno = e;
	return fd;
}

static int is_message_name(const char *name)
{
	size_t i;

	for (i = 0; i < NAME_LEN; i++)
		if (!isdigit((unsigned char)name[i]))
			return 0;
	return name[NAME_LEN] == '\0';
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The messages' names in dir, sorted (NULL-terminated, owned); *n of them.
 * NULL with errno after an error (reported). */
static char **message_names(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t alloc = 0;

	*n = 0;
	if (!d) {
		xg_error_errno("cannot read '%s'", dir);
		return NULL;
	}
	XG_ALLOC_GROW(v, 1, alloc);
	while ((e = readdir(d))) {
		if (!is_message_name(e->d_name))
			continue;
		XG_ALLOC_GROW(v, *n + 2, alloc);
		v[(*n)++] = xg_strdup(e->d_name);
	}
	closedir(d);
	v[*n] = NULL;
	XG_QSORT(v, *n, by_name);
	return v;
}

static void free_names(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Reads and removes the messages in dir, oldest first, into an array. */
static jv take_messages(const char *dir)
{
	size_t n, i;
	char **names = message_names(dir, &n);
	jv out = jv_array();

	if (!names) {
		jv_free(out);
		return jv_invalid();
	}
	for (i = 0; i < n; i++) {
		struct xg_buf b = XG_BUF_INIT(MESSAGE_MAX);
		char *path = xg_path_join(dir, names[i]);
		jv m = jv_invalid();

		if (xg_read_file(path, &b) == 0)
			m = xg_json_parse(b.buf, b.len);
		if (jv_get_kind(m) == JV_KIND_OBJECT && xg_json_string_peek(m, "text"))
			out = jv_array_append(out, m);
		else {
			/* Written whole, so only a hand could have spoilt it. */
			xg_warn("'%s' is not a message; it is dropped", path);
			jv_free(m);
		}
		unlink(path);
		free(path);
		xg_buf_release(&b);
	}
	free_names(names);
	return out;
}

/* Removes every message in dir: a dead run's, which no run will take. */
static void drop_messages(const char *dir)
{
	size_t n, i;
	char **names = message_names(dir, &n);

	for (i = 0; i < n; i++) {
		char *path = xg_path_join(dir, names[i]);

		unlink(path);
		free(path);
	}
	free_names(names);
}

/* Writes the marker for run, held before it has its name, so no one sees
 * it unheld while the run lives; its descriptor, or -1. */
static int write_marker(const char *dir, const char *run)
{
	char *tmp = xg_path_join(dir, ".open"), *path = xg_path_join(dir, "open");
	struct xg_buf b = XG_BUF_INIT(MARKER_MAX);
	jv m = xg_json_set(jv_object(), "run", jv_string(run));
	int fd, e;

	m = xg_json_set(m, "pid", jv_number((double)getpid()));
	xg_json_dump(&b, m);
	xg_buf_addch(&b, '\n');
	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || xg_write_all(fd, b.buf, b.len) < 0 ||
	    rename(tmp, path) < 0) {
		xg_error_errno("cannot write '%s'", path);
		e = errno;
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		errno = e;
		fd = -1;
	}
	e = errno;
	xg_buf_release(&b);
	free(tmp);
	free(path);
	errno = e;
	return fd;
}

int xg_steer_open(struct xg_steer *s, const char *conv, const char *run)
{
	char *dir;
	int lock, fd;

	if (!xg_conv_id_valid(conv)) {
		errno = EINVAL;
		return xg_error("'%s' " XG_CONV_ID_BAD, conv);
	}
	dir = inbox_dir(conv);
	if ((lock = lock_inbox(dir, 1)) < 0) {
		free(dir);
		return -1;
	}
	drop_messages(dir);
	fd = write_marker(dir, run);
	close(lock);
	if (fd < 0) {
		free(dir);
		return -1;
	}
	s->dir = dir;
	s->fd = fd;
	return 0;
}

int xg_steer_is_open(const struct xg_steer *s)
{
	return s->fd >= 0;
}

/* Closes s (under the inbox's lock): the marker's hold goes, the marker
 * stays (an unheld marker is no run; removing it would free a block of a
 * full disk the index's append would then take half of). */
static void close_inbox(struct xg_steer *s)
{
	xg_steer_release(s);
}

void xg_steer_release(struct xg_steer *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->dir);
	s->dir = NULL;
}

jv xg_steer_take(struct xg_steer *s, int how)
{
	int lock;
	jv got;

	if (s->fd < 0)
		return jv_array();
	if ((lock = lock_inbox(s->dir, 1)) < 0)
		return jv_invalid();
	got = take_messages(s->dir);
	if (jv_is_valid(got) && (how == XG_STEER_CLOSE ||
				 (how == XG_STEER_TAKE_OR_CLOSE && !xg_json_length_peek(got))))
		close_inbox(s);
	close(lock);
	return got;
}

/*
 * The run whose marker is in dir and held (owned), or NULL when there is
 * none, or it is a dead run's.  The hold is tried for a shared lock: one
 * had means no run holds the marker.
 */
static char *holding_run(const char *dir)
{
	char *path = xg_path_join(dir, "open");
	struct xg_buf b = XG_BUF_INIT(MARKER_MAX);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *run = NULL;
	jv m;

	free(path);
	if (fd < 0)
		return NULL;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK && xg_read_fd(fd, &b) == 0) {
		m = xg_json_parse(b.buf, strcspn(b.buf, "\n"));
		if (xg_json_string_peek(m, "run"))
			run = xg_strdup(xg_json_string_peek(m, "run"));
		jv_free(m);
	}
	close(fd);
	xg_buf_release(&b);
	return run;
}

/* Writes text as the message after the greatest in dir; 0 or -1. */
static int write_message(const char *dir, const char *text)
{
	struct xg_buf b = XG_BUF_INIT(MESSAGE_MAX);
	char sent[25], name[24], *path;
	size_t n;
	char **names = message_names(dir, &n);
	long next = 1;
	jv m;
	int rc;

	if (!names)
		return -1;
	if (n)
		next = strtol(names[n - 1], NULL, 10) + 1;
	free_names(names);
	if (n >= XG_STEER_PENDING_MAX || next > NAME_MAX_NUMBER) {
		errno = EAGAIN;
		return xg_error("the run has %zu messages it has not taken yet; try again "
				"when it has", n);
	}
	xg_clock_rfc3339(xg_clock_wall_ms(), sent);
	m = xg_json_set(jv_object(), "text", jv_string(text));
	m = xg_json_set(m, "sent", jv_string(sent));
	xg_json_dump(&b, m);
	snprintf(name, sizeof(name), "%0*ld", NAME_LEN, next);
	path = xg_path_join(dir, name);
	rc = xg_write_atomic(path, b.buf, b.len, 0600);
	free(path);
	xg_buf_release(&b);
	return rc;
}

int xg_steer_send(const char *conv, const char *run, const char *text, char **holder)
{
	char *dir, *who;
	int lock, rc, e;

	if (holder)
		*holder = NULL;
	if (!xg_conv_id_valid(conv)) {
		errno = EINVAL;
		return xg_error("'%s' " XG_CONV_ID_BAD, conv);
	}
	if (strlen(text) > XG_STEER_TEXT_MAX) {
		errno = EMSGSIZE;
		return xg_error("the message is longer than %zu bytes", XG_STEER_TEXT_MAX);
	}
	dir = inbox_dir(conv);
	/* An inbox no run ever opened has no run to hand the message to, and
	 * is not made for it. */
	if ((lock = lock_inbox(dir, 0)) < 0) {
		if (errno == ENOENT)
			errno = ESRCH;
		e = errno;
		free(dir);
		errno = e;
		return -1;
	}
	who = holding_run(dir);
	if (!who || (run && strcmp(run, who))) {
		errno = ESRCH;
		rc = -1;
	} else {
		rc = write_message(dir, text);
	}
	e = errno;
	close(lock);
	free(dir);
	if (holder)
		*holder = who;
	else
		free(who);
	errno = e;
	return rc;
}
