/*
 * Files (fs.h): whole files written atomically, appends that take back
 * what they wrote when they fail, under an exclusive lock that waits at
 * most a timeout, directories made, and numbers read from the environment
 * within bounds.
 */
#include "xg.h"
#include <sys/file.h>
#include <libgen.h>

static char *dir_of(const char *path)
{
	char *copy = xg_strdup(path);
	char *d = xg_strdup(dirname(copy));

	free(copy);
	return d;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	/* Some filesystems refuse fsync on a directory; the rename is done. */
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int xg_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Gives the unnamed file fd (O_TMPFILE) the name tmp, a fresh
 * "PATH.tmpXXXXXX" beside path; 0, or -1 with errno.
 */
static int name_tmpfile(int fd, char *tmp)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = tmp + strlen(tmp) - 6, proc[64];
	unsigned char r[6];
	int tries, i;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (tries = 0; tries < 100; tries++) {
		if (getentropy(r, sizeof(r)) < 0)
			return -1;
		for (i = 0; i < 6; i++)
			x[i] = digits[r[i] % (sizeof(digits) - 1)];
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/*
 * The file is written and synced before it has a name where the kernel
 * allows (O_TMPFILE): a writer killed meanwhile leaves nothing behind,
 * which matters for a file holding keys.  It is named only for the
 * rename; elsewhere (no O_TMPFILE, or no /proc to name it through) it is
 * a mkostemp file from the start.
 */
static int write_atomic(const char *path, const void *data, size_t len, mode_t mode, int cache)
{
	char *tmp = xg_asprintf("%s.tmpXXXXXX", path);
	char *dir = dir_of(path);
	int fd, rc = -1, unnamed = 1;

	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode & 0777);
again:
	if (fd < 0) {
		unnamed = 0;
		fd = mkostemp(tmp, O_CLOEXEC);
	}
	if (fd < 0) {
		if (!cache)
			xg_error_errno("cannot create a temporary file beside '%s'", path);
		goto out;
	}
	if (fchmod(fd, mode) < 0 || xg_write_all(fd, data, len) < 0 || (!cache && fsync(fd) < 0)) {
		if (!cache)
			xg_error_errno("cannot write '%s'", unnamed ? path : tmp);
		close(fd);
		if (!unnamed)
			unlink(tmp);
		goto out;
	}
	if (unnamed && name_tmpfile(fd, tmp) < 0) {
		/* No /proc to name it through: write it again, named. */
		close(fd);
		fd = -1;
		memcpy(tmp + strlen(tmp) - 6, "XXXXXX", 6);
		goto again;
	}
	if (close(fd) < 0) {
		if (!cache)
			xg_error_errno("cannot write '%s'", tmp);
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		if (!cache)
			xg_error_errno("cannot rename '%s' to '%s'", tmp, path);
		unlink(tmp);
		goto out;
	}
	if (!cache && fsync_dir(dir) < 0) {
		xg_error_errno("cannot sync directory '%s'", dir);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	free(dir);
	return rc;
}

int xg_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	return write_atomic(path, data, len, mode, 0);
}

int xg_write_cache(const char *path, const void *data, size_t len, mode_t mode)
{
	return write_atomic(path, data, len, mode, 1);
}

/*
 * Where a symlink that leads nowhere yet would have its file made: its
 * target, read link by link (a relative one from the link's directory);
 * NULL with errno after too many.
 */
static char *link_target(const char *path)
{
	char *cur = xg_strdup(path), *next;
	struct stat st;
	int hops;

	for (hops = 0; hops < 40; hops++) {
		char buf[PATH_MAX];
		ssize_t n;

		if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
			return cur;
		n = readlink(cur, buf, sizeof(buf) - 1);
		if (n < 0) {
			free(cur);
			return NULL;
		}
		buf[n] = '\0';
		if (buf[0] == '/') {
			next = xg_strdup(buf);
		} else {
			char *dir = dir_of(cur);

			next = xg_asprintf("%s/%s", dir, buf);
			free(dir);
		}
		free(cur);
		cur = next;
	}
	free(cur);
	errno = ELOOP;
	return NULL;
}

int xg_write_named(const char *path, const void *data, size_t len)
{
	struct stat st;
	char *to;
	int fd, rc;
	mode_t mask;

	if (!strcmp(path, "-")) {
		if (xg_write_all(1, data, len) < 0)
			return xg_error_errno("cannot write the standard output");
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A device, a FIFO, a terminal: written through, never
		 * replaced by a file of the same name. */
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return xg_error_errno("cannot open '%s'", path);
		rc = xg_write_all(fd, data, len);
		if (close(fd) < 0)
			rc = -1;
		return rc < 0 ? xg_error_errno("cannot write '%s'", path) : 0;
	}
	/* A symlink is followed: the file it leads to is the one replaced,
	 * keeping its mode; a new file gets the mode the umask leaves. */
	to = link_target(path);
	if (!to)
		return xg_error_errno("cannot follow '%s'", path);
	if (stat(to, &st) == 0) {
		rc = write_atomic(to, data, len, st.st_mode & 07777, 0);
	} else {
		mask = umask(0);
		umask(mask);
		rc = write_atomic(to, data, len, 0666 & ~mask, 0);
	}
	free(to);
	return rc;
}

/*
 * Reads straight into b: no chunk on the stack, whose pages would stay
 * with the process for its life.  A full b reads one byte first, so that
 * a file read into room made for its size ends without growing b, and one
 * at b's ceiling is found too long.
 */
int xg_read_fd(int fd, struct xg_buf *b)
{
	for (;;) {
		size_t want = 4096, room = b->alloc ? b->alloc - b->len - 1 : 0;
		char one;
		ssize_t n;

		if (!room) {
			n = read(fd, &one, 1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return n < 0 ? -1 : 0;
			if (xg_buf_add(b, &one, 1) < 0) {
				errno = EFBIG;
				return -1;
			}
			while (want && xg_buf_grow(b, want) < 0)
				want /= 2;
			continue;
		}
		n = read(fd, b->buf + b->len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		b->len += (size_t)n;
		b->buf[b->len] = '\0';
	}
}

int xg_read_file(const char *path, struct xg_buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc, e;
	struct stat st;

	if (fd < 0)
		return -1;
	/* Room for the whole file at once, when the ceiling allows. */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
		xg_buf_grow(b, (size_t)st.st_size);
	rc = xg_read_fd(fd, b);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

int xg_mkdir_p(const char *path, mode_t mode)
{
	char *p;
	char *s;

	/* The parents are nearly always there already: one call, not one per
	 * component from the root.  Any other failure walks down from the
	 * top, which names the component that cannot be made. */
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	p = xg_strdup(path);
	for (s = p + (*p == '/'); ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				xg_error_errno("cannot create directory '%s'", p);
				free(p);
				return -1;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return 0;
}

int xg_env_fd(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long n;
	int fd = -1;

	if (!s)
		return -1;
	n = strtol(s, &end, 10);
	if (*s && !*end && n > 2 && n <= INT_MAX && fcntl((int)n, F_SETFD, FD_CLOEXEC) == 0)
		fd = (int)n;
	else
		xg_warn("ignoring %s=%s: not an open descriptor above 2", name, s);
	unsetenv(name);
	return fd;
}

int xg_env_number(const char *name, long lo, long hi, long *n)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*n = v;
	return 1;
}

int xg_lock_timeout_ms(void)
{
	long n;

	return xg_env_number("XG_LOCK_TIMEOUT", 0, INT_MAX, &n) > 0 ? (int)n : XG_LOCK_TIMEOUT_MS;
}

long xg_lock_holder(int fd)
{
	struct stat st;
	char line[512];
	long pid = 0;
	FILE *fp;

	if (fstat(fd, &st) < 0 || !(fp = fopen("/proc/locks", "r")))
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		unsigned maj, min;
		unsigned long long ino;
		long p;
		char *s = strstr(line, "WRITE ");

		if (!s || sscanf(s + 6, "%ld %x:%x:%llu", &p, &maj, &min, &ino) != 4)
			continue;
		if (ino == (unsigned long long)st.st_ino && p > 0) {
			pid = p;
			break;
		}
	}
	fclose(fp);
	return pid;
}

/* The process that holds fd's lock and its program's name ("" when
 * unknown); 0 when no holder is found. */
static long holder(int fd, char comm[64])
{
	long pid = xg_lock_holder(fd);

	comm[0] = '\0';
	if (pid > 0) {
		char proc[64];
		FILE *fp;

		snprintf(proc, sizeof(proc), "/proc/%ld/comm", pid);
		if ((fp = fopen(proc, "r"))) {
			if (fgets(comm, 64, fp))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(fp);
		}
	}
	return pid;
}

static void report_busy(const char *path, int fd, int timeout_ms)
{
	char comm[64];
	long pid = holder(fd, comm);

	if (pid > 0) {
		xg_error("'%s' is locked by process %ld (%s); gave up after %d ms "
			 "(XG_LOCK_TIMEOUT)", path, pid, *comm ? comm : "unknown", timeout_ms);
	} else {
		xg_error("'%s' is locked by another process; gave up after %d ms "
			 "(XG_LOCK_TIMEOUT)", path, timeout_ms);
	}
}

int xg_lock_file(const char *path, int flags, int timeout_ms)
{
	return xg_lock_file_mode(path, flags, 0600, timeout_ms);
}

int xg_lock_file_mode(const char *path, int flags, mode_t mode, int timeout_ms)
{
	return xg_lock_file_wait(path, flags, mode, timeout_ms, NULL, NULL);
}

int xg_lock_file_wait(const char *path, int flags, mode_t mode, int timeout_ms,
		      xg_lock_waiting_fn waiting, void *ctx)
{
	struct timespec nap = { 0, 5 * 1000 * 1000 };
	int fd, waited = 0;

	fd = open(path, flags | O_CLOEXEC, mode);
	if (fd < 0)
		return xg_error_errno("cannot open '%s'", path);
	/* flock has no timeout of its own; poll in small steps. */
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			int e = errno;

			xg_error_errno("cannot lock '%s'", path);
			close(fd);
			errno = e;
			return -1;
		}
		if (waited >= timeout_ms) {
			report_busy(path, fd, timeout_ms);
			close(fd);
			errno = EWOULDBLOCK;
			return -1;
		}
		/* A wait past a second is told once, so nobody stares at a
		 * run that seems to wait for nothing. */
		if (waiting && waited == XG_LOCK_TELL_MS) {
			char comm[64];
			long pid = holder(fd, comm);

			waiting(ctx, pid, comm, timeout_ms);
		}
		nanosleep(&nap, NULL);
		waited += 5;
	}
	return fd;
}

int xg_append_fd(int fd, const void *data, size_t len, int sync)
{
	struct stat st;
	int e;

	if (fstat(fd, &st) < 0)
		return -1;
	if (xg_write_all(fd, data, len) == 0 && (!sync || fsync(fd) == 0))
		return 0;
	/* A write cut short by a full disk left part of the line; cut it
	 * back, or the next append would bury it in the middle of the file.
	 * Shrinking a file needs no space, so this holds on the disk that
	 * refused the write. */
	e = errno;
	if (ftruncate(fd, st.st_size) < 0)
		xg_warn("cannot take back the part of a line written before a failure: %s",
			strerror(errno));
	errno = e;
	return -1;
}

int xg_append_locked(const char *path, const void *data, size_t len, int timeout_ms)
{
	int fd = xg_lock_file(path, O_WRONLY | O_APPEND | O_CREAT, timeout_ms);

	if (fd < 0)
		return fd;
	if (xg_append_fd(fd, data, len, 1) < 0) {
		int e = errno;

		xg_error_errno("cannot append to '%s'", path);
		close(fd);
		errno = e;
		return -1;
	}
	if (close(fd) < 0)
		return xg_error_errno("cannot append to '%s'", path);
	return 0;
}
