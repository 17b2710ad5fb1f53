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
 */
#include "xg.h"
#include "run/tools.h"

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
