/*
 * Where state lives (path.h): the config, data, state and share trees
 * from XG_HOME, the XDG variables or the home directory, a check that
 * they can be there, and paths joined.
 */
#include "xg.h"

static char *tree(const char *home_sub, const char *xdg_var, const char *fallback,
		  const char *rel)
{
	const char *s;
	char *base, *out;

	if ((s = getenv("XG_HOME")) && *s)
		base = xg_asprintf("%s/%s", s, home_sub);
	else if ((s = getenv(xdg_var)) && *s == '/')
		base = xg_asprintf("%s/xg", s);
	else
		base = xg_asprintf("%s/%s/xg", (s = getenv("HOME")) && *s ? s : "/", fallback);
	if (!rel || !*rel)
		return base;
	out = xg_path_join(base, rel);
	free(base);
	return out;
}

char *xg_path_config(const char *rel)
{
	return tree("config", "XDG_CONFIG_HOME", ".config", rel);
}

char *xg_path_data(const char *rel)
{
	return tree("data", "XDG_DATA_HOME", ".local/share", rel);
}

char *xg_path_state(const char *rel)
{
	return tree("state", "XDG_STATE_HOME", ".local/state", rel);
}

/* The variable the tree of xdg_var comes from. */
static const char *origin(const char *xdg_var)
{
	const char *s;

	if ((s = getenv("XG_HOME")) && *s)
		return "XG_HOME";
	if ((s = getenv(xdg_var)) && *s == '/')
		return xdg_var;
	return "HOME";
}

/* Checks the tree at root (consumed), which var puts there: up from
 * root to the first part that exists, which must be a directory. */
static int check_tree(char *root, const char *var, char **why)
{
	const char *value = getenv(var);
	struct stat st;
	char *slash;
	int rc = 0;

	for (;;) {
		if (stat(root, &st) == 0) {
			if (!S_ISDIR(st.st_mode)) {
				*why = xg_asprintf("cannot use %s='%s': '%s' is not a directory",
						   var, value ? value : "", root);
				rc = -1;
			}
			break;
		}
		if (errno != ENOENT && errno != ENOTDIR) {
			*why = xg_asprintf("cannot use %s='%s': '%s': %s", var, value ? value : "",
					   root, strerror(errno));
			rc = -1;
			break;
		}
		if (!(slash = strrchr(root, '/')) || slash == root)
			break;
		*slash = '\0';
	}
	free(root);
	return rc;
}

int xg_path_check(char **why)
{
	*why = NULL;
	if (check_tree(xg_path_config(NULL), origin("XDG_CONFIG_HOME"), why) < 0 ||
	    check_tree(xg_path_data(NULL), origin("XDG_DATA_HOME"), why) < 0 ||
	    check_tree(xg_path_state(NULL), origin("XDG_STATE_HOME"), why) < 0)
		return -1;
	return 0;
}

static char *share_base(void)
{
	const char *s = getenv("XG_SHARE_DIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (s && *s)
		return xg_strdup(s);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash, *cand;
		struct stat st;

		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')))
			*slash = '\0';
		cand = xg_asprintf("%s/../share/xg", exe);
		if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode))
			return cand;
		free(cand);
	}
	return xg_strdup(XG_SHAREDIR);
}

char *xg_path_share(const char *rel)
{
	char *base = share_base(), *out;

	if (!rel || !*rel)
		return base;
	out = xg_path_join(base, rel);
	free(base);
	return out;
}

char *xg_path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);

	if (n > 0 && dir[n - 1] == '/')
		return xg_asprintf("%s%s", dir, name);
	return xg_asprintf("%s/%s", dir, name);
}
