/*
 * Where the file tools' paths lead, and the rule that keeps them inside
 * the workspace.
 *
 * The kernel's realpath cannot judge a path whose last parts do not exist
 * yet, and write creates such paths: a new file under a symlinked
 * directory lands wherever the link points.  So xg_tool_workspace_resolve
 * walks the path a component at a time itself, reading each symlink it
 * meets and walking its target in its place, and takes the parts not there
 * yet as written.  xg_tool_workspace_path_peek applies it to a tool's path
 * argument and words the refusal the model reads.
 *
 * A path judged by its string can change before it is opened: the model's
 * own bash may swap a directory for a symlink to outside in between.  So
 * the tools never open the string.  xg_tool_workspace_open and
 * xg_tool_workspace_dir open the resolved path, which holds no symlink and
 * no "..", beneath a descriptor of the workspace, refusing any symlink met
 * on the way: with openat2 and RESOLVE_BENEATH where the kernel has it, else
 * a component at a time with O_NOFOLLOW.  A swap in between is then an
 * error (ELOOP or ENOTDIR), never a step outside.
 */
#include "xg.h"
#include "tools/internal.h"
#include <linux/openat2.h>
#include <sys/syscall.h>

#define MAX_SYMLINKS 40

/* Drops the last component of an absolute path held without a trailing
 * slash ("" is the root). */
static void pop_component(struct xg_buf *b)
{
	char *slash = b->len ? memrchr(b->buf, '/', b->len) : NULL;

	xg_buf_setlen(b, slash ? (size_t)(slash - b->buf) : 0);
}

/*
 * Walks the path a component at a time as the kernel would, but by hand,
 * so a part that does not exist yet can be followed lexically: a symlink
 * met on the way is read and its target walked in its place.
 */
char *xg_tool_workspace_resolve(const char *workspace, const char *path, int *inside)
{
	char *root = realpath(workspace, NULL);
	struct xg_buf res = XG_BUF_INIT(0);
	char *rest;
	const char *p;
	int links = 0;
	size_t rootlen;

	if (!root)
		return NULL;
	if (path[0] != '/')
		xg_buf_addstr(&res, strcmp(root, "/") ? root : "");
	rest = xg_strdup(path);
	p = rest;
	for (;;) {
		const char *e;
		size_t n, save;
		struct stat st;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		n = (size_t)(e - p);
		if (n == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			pop_component(&res);
			p = e;
			continue;
		}
		save = res.len;
		xg_buf_addch(&res, '/');
		xg_buf_add(&res, p, n);
		p = e;
		if (lstat(res.buf, &st) < 0) {
			/* A part not there yet: the rest is created as plain
			 * directories and a file, so it is taken as written. */
			if (errno == ENOENT || errno == ENOTDIR)
				continue;
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t k;
			char *next;

			if (++links > MAX_SYMLINKS) {
				errno = ELOOP;
				goto fail;
			}
			k = readlink(res.buf, target, sizeof(target) - 1);
			if (k < 0)
				goto fail;
			target[k] = '\0';
			xg_buf_setlen(&res, target[0] == '/' ? 0 : save);
			next = xg_asprintf("%s%s", target, p);
			free(rest);
			rest = next;
			p = rest;
		}
	}
	if (!res.len)
		xg_buf_addch(&res, '/');
	rootlen = strlen(root);
	*inside = !strcmp(root, "/") ||
		(!strncmp(res.buf, root, rootlen) &&
		 (res.buf[rootlen] == '\0' || res.buf[rootlen] == '/'));
	free(root);
	free(rest);
	return xg_buf_detach(&res, NULL);
fail:
	{
		int e = errno;
		free(root);
		free(rest);
		xg_buf_release(&res);
		errno = e;
	}
	return NULL;
}

char *xg_tool_workspace_path_peek(const struct xg_tool_ctx *ctx, const char *tool,
				  jv args, const char **shown, jv *err)
{
	const char *path = xg_json_string_peek(args, "path");
	char *resolved, *root;
	int inside;

	if (!path || !*path) {
		*err = xg_tool_fail("%s: 'path' must be a non-empty string", tool);
		return NULL;
	}
	if (xg_json_string_has_nul_peek(args, "path")) {
		*err = xg_tool_fail("%s: 'path' holds a NUL byte, which no file name can", tool);
		return NULL;
	}
	resolved = xg_tool_workspace_resolve(ctx->workspace, path, &inside);
	if (!resolved) {
		*err = xg_tool_fail("%s: cannot resolve '%s': %s", tool, path, strerror(errno));
		return NULL;
	}
	if (!inside) {
		*err = xg_tool_fail("%s: '%s' resolves to '%s', which is outside the "
				    "workspace; %s works only on files inside it",
				    tool, path, resolved, tool);
		free(resolved);
		return NULL;
	}
	root = realpath(ctx->workspace, NULL);
	*shown = resolved;
	if (root) {
		size_t n = strlen(root);
		if (!strcmp(root, "/"))
			*shown = resolved + 1;
		else if (!strncmp(resolved, root, n) && resolved[n] == '/')
			*shown = resolved + n + 1;
		free(root);
	}
	return resolved;
}

/* The workspace opened as a directory, with *rel set to where resolved is
 * beneath it ("" for the workspace itself). */
static int open_root(const struct xg_tool_ctx *ctx, const char *resolved, const char **rel)
{
	char *root = realpath(ctx->workspace, NULL);
	size_t n;
	int fd;

	if (!root)
		return -1;
	n = strcmp(root, "/") ? strlen(root) : 0;
	if (strncmp(resolved, root, n) || (resolved[n] && resolved[n] != '/')) {
		free(root);
		errno = EXDEV;
		return -1;
	}
	for (*rel = resolved + n; **rel == '/'; (*rel)++)
		;
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	{
		int e = errno;
		free(root);
		errno = e;
	}
	return fd;
}

/*
 * openat2's walk by hand, for kernels without it: each directory opened
 * from the one before with O_NOFOLLOW, made first when mkdirs is set.
 */
static int walk_beneath(int dirfd, const char *rel, int flags, mode_t mode, int mkdirs)
{
	char *copy = xg_strdup(rel), *p = copy, *e;
	int cur = dirfd, fd = -1, err = 0;

	for (;;) {
		int next;

		e = strchrnul(p, '/');
		if (!*e) {
			p = *p ? p : ".";
			fd = openat(cur, p, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			if (fd < 0 && errno == ENOENT && mkdirs &&
			    (mkdirat(cur, p, 0755) == 0 || errno == EEXIST))
				fd = openat(cur, p, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			err = errno;
			break;
		}
		*e = '\0';
		if (!strcmp(p, "..")) {
			err = EXDEV;
			break;
		}
		next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && mkdirs &&
		    (mkdirat(cur, p, 0755) == 0 || errno == EEXIST))
			next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = errno;
			break;
		}
		if (cur != dirfd)
			close(cur);
		cur = next;
		p = e + 1;
	}
	if (cur != dirfd)
		close(cur);
	free(copy);
	errno = err;
	return fd;
}

/* Opens rel beneath dirfd following no symlink; mkdirs as walk_beneath. */
static int open_beneath(int dirfd, const char *rel, int flags, mode_t mode, int mkdirs)
{
	struct open_how how;
	int fd;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.mode = flags & O_CREAT ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && !(errno == ENOENT && mkdirs)))
		return fd;
	return walk_beneath(dirfd, rel, flags, mode, mkdirs);
}

int xg_tool_workspace_open(const struct xg_tool_ctx *ctx, const char *resolved, int flags)
{
	const char *rel;
	int root = open_root(ctx, resolved, &rel), fd, e;

	if (root < 0)
		return -1;
	fd = open_beneath(root, rel, flags, 0, 0);
	e = errno;
	close(root);
	errno = e;
	return fd;
}

int xg_tool_workspace_dir(const struct xg_tool_ctx *ctx, const char *resolved, int create,
			  const char **base)
{
	const char *rel, *slash;
	char *dir;
	int root = open_root(ctx, resolved, &rel), fd, e;

	if (root < 0)
		return -1;
	if (!*rel) {
		/* The workspace itself has no parent inside it. */
		close(root);
		errno = EISDIR;
		return -1;
	}
	slash = strrchr(rel, '/');
	*base = slash ? slash + 1 : rel;
	dir = xg_strndup(rel, slash ? (size_t)(slash - rel) : 0);
	fd = open_beneath(root, dir, O_PATH | O_DIRECTORY, 0, create);
	e = errno;
	free(dir);
	close(root);
	errno = e;
	return fd;
}
