/*
 * Finding xg-FOO beside the running program or in PATH, running it, and
 * listing what there is to run (exec.h).
 */
#include "xg.h"
#include "exec.h"
#include <dirent.h>

extern char **environ;

static char *self_dir(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return NULL;
	*slash = '\0';
	return xg_strdup(exe);
}

static char *executable_in(const char *dir, const char *name)
{
	char *path = xg_asprintf("%s/xg-%s", dir, name);
	struct stat st;

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
		return path;
	free(path);
	return NULL;
}

char *xg_exec_find_in_path(const char *name)
{
	char *found = NULL, *path, *p, *next;
	const char *env;

	if (!*name || strchr(name, '/'))
		return NULL;
	env = getenv("PATH");
	path = xg_strdup(env && *env ? env : "/usr/local/bin:/usr/bin:/bin");
	for (p = path; p && !found; p = next) {
		next = strchr(p, ':');
		if (next)
			*next++ = '\0';
		found = executable_in(*p ? p : ".", name);
	}
	free(path);
	return found;
}

char *xg_exec_find(const char *name)
{
	char *dir, *found;

	if (!*name || strchr(name, '/'))
		return NULL;
	if ((dir = self_dir())) {
		found = executable_in(dir, name);
		free(dir);
		if (found)
			return found;
	}
	return xg_exec_find_in_path(name);
}

int xg_exec(const char *path, char **argv)
{
	struct xg_exec_keys k;
	char **env;
	int e;

	if (xg_exec_keys_open(&k) < 0)
		return -1;
	if (k.fd >= 0 && fcntl(k.fd, F_SETFD, 0) < 0) {
		e = errno;
		xg_exec_keys_close(&k);
		errno = e;
		return -1;
	}
	env = xg_exec_env_keys(NULL, NULL, &k);
	execve(path, argv, env);
	e = errno;
	free(env);
	xg_exec_keys_close(&k);
	errno = e;
	return -1;
}

/* Whether the variable s (NAME=value) is a key handed on through the pipe. */
static int is_key(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq && eq[1] && xg_prog_secret_name(s, (size_t)(eq - s));
}

int xg_exec_keys_open(struct xg_exec_keys *k)
{
	struct xg_buf b = XG_BUF_INIT(0);
	int p[2], rc = 0;
	size_t i;

	k->fd = -1;
	k->var[0] = '\0';
	for (i = 0; environ[i]; i++)
		if (is_key(environ[i])) {
			xg_buf_addstr(&b, environ[i]);
			xg_buf_addch(&b, '\0');
		}
	if (!b.len)
		goto out;
	/* The pipe holds it all before anyone reads: a pipe takes 64 KiB,
	 * far more than a few keys. */
	if (b.len > 65536) {
		errno = E2BIG;
		rc = -1;
		goto out;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		rc = -1;
		goto out;
	}
	if (xg_write_all(p[1], b.buf, b.len) < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		errno = e;
		rc = -1;
		goto out;
	}
	close(p[1]);
	k->fd = p[0];
	snprintf(k->var, sizeof(k->var), "XG_KEYS_FD=%d", p[0]);
out:
	explicit_bzero(b.buf, b.len);
	xg_buf_release(&b);
	return rc;
}

void xg_exec_keys_close(struct xg_exec_keys *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

char **xg_exec_env_keys(const char *const *drop, char *add, const struct xg_exec_keys *k)
{
	char **env = xg_exec_env(drop, add), **src, **dst;

	if (!k || k->fd < 0)
		return env;
	for (src = dst = env; *src; src++)
		if (!is_key(*src) && strncmp(*src, "XG_KEYS_FD=", 11))
			*dst++ = *src;
	*dst++ = (char *)k->var;
	*dst = NULL;
	return env;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_from(const char *dir, char ***names, size_t *n, size_t *alloc)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *full;

		if (strncmp(e->d_name, "xg-", 3) || !e->d_name[3])
			continue;
		full = executable_in(dir, e->d_name + 3);
		if (!full)
			continue;
		free(full);
		XG_ALLOC_GROW(*names, *n + 1, *alloc);
		(*names)[(*n)++] = xg_strdup(e->d_name + 3);
	}
	closedir(d);
}

void xg_exec_list(FILE *fp, const char *const *verbs)
{
	char **names = NULL, *dir, *path, *p, *next;
	size_t n = 0, alloc = 0, i;
	const char *env = getenv("PATH");

	for (i = 0; verbs && verbs[i]; i++) {
		XG_ALLOC_GROW(names, n + 1, alloc);
		names[n++] = xg_strdup(verbs[i]);
	}

	if ((dir = self_dir())) {
		add_from(dir, &names, &n, &alloc);
		free(dir);
	}
	path = xg_strdup(env ? env : "");
	for (p = path; p && *p; p = next) {
		next = strchr(p, ':');
		if (next)
			*next++ = '\0';
		add_from(*p ? p : ".", &names, &n, &alloc);
	}
	free(path);
	XG_QSORT(names, n, cmp_str);
	for (i = 0; i < n; i++) {
		if (!i || strcmp(names[i], names[i - 1]))
			fprintf(fp, "%s\n", names[i]);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

char **xg_exec_env(const char *const *drop, char *add)
{
	size_t n = 0, k = 0, i;
	char **env;

	while (environ[n])
		n++;
	/* Room for add and for xg_exec_env_keys' variable besides. */
	env = xg_calloc(n + 3, sizeof(*env));
	for (i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		const char *const *d;

		for (d = drop; d && *d; d++)
			if (strlen(*d) == len && !memcmp(*d, environ[i], len))
				break;
		if (!d || !*d)
			env[k++] = environ[i];
	}
	env[k] = add;
	return env;
}

char **xg_exec_env_nokeys(void)
{
	char **env, **e;
	size_t n = 0;

	for (e = environ; *e; e++)
		n++;
	env = xg_calloc(n + 1, sizeof(*env));
	n = 0;
	for (e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');

		if (!xg_prog_secret_name(*e, eq ? (size_t)(eq - *e) : strlen(*e)))
			env[n++] = xg_strdup(*e);
	}
	return env;
}

void xg_exec_env_free(char **env)
{
	char **e;

	for (e = env; e && *e; e++)
		free(*e);
	free(env);
}
