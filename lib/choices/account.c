/*
 * Accounts and their keys (man 5 xg-config): the current account, the
 * list of them (the accounts verb), and the keys kept in auth.json.
 */
#include "xg.h"
#include "choices/choices.h"
#include "jsonfile.h"
#include <dirent.h>

/*
 * An account is a directory $config/accounts/NAME.  Keys are read lazily,
 * once per struct xg_account_keys, from a file that must be private:
 * read_auth refuses one that group or others may read, and never shows its
 * text in a message.  Writes of auth.json go through update_auth, under the
 * account's lock for the file, atomically, mode 0600; the auth verb
 * (auth.c) is built on it.  A buffer that held a key is cleared before it
 * is freed.
 */

int xg_account_name_valid(const char *name)
{
	size_t n;

	if (!name || !*name || *name == '.' || *name == '-')
		return 0;
	for (n = 0; name[n]; n++)
		if (!isalnum((unsigned char)name[n]) && !strchr("._-", name[n]))
			return 0;
	return n <= 64;
}

/* The first line of $config/account, trimmed; NULL when there is none. */
static char *account_file(char **path)
{
	struct xg_buf b = XG_BUF_INIT(4096);
	char *s, *e;

	*path = xg_path_config("account");
	if (xg_read_file(*path, &b) < 0) {
		xg_buf_release(&b);
		return NULL;
	}
	s = b.buf;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strcspn(s, "\r\n");
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	s = e > s ? xg_strndup(s, (size_t)(e - s)) : NULL;
	xg_buf_release(&b);
	return s;
}

int xg_account_current(const char *explicit, const char *source, char **name,
		       const char **from)
{
	const char *env = getenv("XG_ACCOUNT");
	char *path = NULL, *s;

	*name = NULL;
	if (explicit) {
		if (!xg_account_name_valid(explicit)) {
			xg_error("'%s' (%s) " XG_ACCOUNT_NAME_BAD, explicit, source);
			return source && !strncmp(source, "--", 2) ? XG_EX_USAGE : XG_EX_DATAERR;
		}
		*name = xg_strdup(explicit);
		if (from)
			*from = source;
		return 0;
	}
	if (env && *env) {
		if (!xg_account_name_valid(env)) {
			xg_error("'%s' (XG_ACCOUNT) " XG_ACCOUNT_NAME_BAD, env);
			return XG_EX_CONFIG;
		}
		*name = xg_strdup(env);
		if (from)
			*from = "XG_ACCOUNT";
		return 0;
	}
	if ((s = account_file(&path))) {
		if (!xg_account_name_valid(s)) {
			xg_error("'%s': '%s' " XG_ACCOUNT_NAME_BAD, path, s);
			free(s);
			free(path);
			return XG_EX_CONFIG;
		}
		free(path);
		*name = s;
		if (from)
			*from = "the account file";
		return 0;
	}
	free(path);
	*name = xg_strdup("default");
	if (from)
		*from = "the default";
	return 0;
}

char *xg_account_path(const char *account, const char *file)
{
	char *rel = file ? xg_asprintf("accounts/%s/%s", account, file)
			 : xg_asprintf("accounts/%s", account);
	char *path = xg_path_config(rel);

	free(rel);
	return path;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

jv xg_account_list(void)
{
	char *dir = xg_path_config("accounts");
	char **names = NULL;
	size_t n = 0, alloc = 0, i;
	struct dirent *de;
	jv out = jv_array();
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		char *p;
		struct stat st;

		if (!xg_account_name_valid(de->d_name))
			continue;
		p = xg_path_join(dir, de->d_name);
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			XG_ALLOC_GROW(names, n + 1, alloc);
			names[n++] = xg_strdup(de->d_name);
		}
		free(p);
	}
	if (d)
		closedir(d);
	XG_QSORT(names, n, cmp_str);
	for (i = 0; i < n; i++) {
		out = jv_array_append(out, jv_string(names[i]));
		free(names[i]);
	}
	free(names);
	free(dir);
	return out;
}

static jv account_record(const char *name, int current)
{
	jv rec = xg_json_set(xg_rec_new("account"), "name", jv_string(name));

	return xg_json_set(rec, "current", current ? jv_true() : jv_false());
}

int xg_account_write_list(const char *current, struct xg_rec_writer *w)
{
	jv names = xg_account_list();
	int i, n = xg_json_length_peek(names), seen = 0, rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		jv name = jv_array_get(jv_copy(names), i);
		int cur = !strcmp(jv_string_value(name), current);

		seen |= cur;
		if (xg_rec_write(w, account_record(jv_string_value(name), cur)) < 0)
			rc = XG_EX_IOERR;
		jv_free(name);
	}
	if (!seen && rc == 0 && xg_rec_write(w, account_record(current, 1)) < 0)
		rc = XG_EX_IOERR;
	jv_free(names);
	return rc;
}

void xg_account_keys_init(struct xg_account_keys *k, const char *account)
{
	memset(k, 0, sizeof(*k));
	k->account = xg_strdup(account);
	k->path = xg_account_path(account, "auth.json");
	k->keys = jv_null();
}

void xg_account_keys_release(struct xg_account_keys *k)
{
	jv_free(k->keys);
	free(k->account);
	free(k->path);
	memset(k, 0, sizeof(*k));
	k->keys = jv_invalid();
}

/*
 * Opens auth.json at path for reading, refusing one that group or others
 * may use: 0 with *fd the descriptor, or -1 when there is no file; else an
 * exit code after reporting.
 */
static int open_auth(const char *path, int *fd)
{
	struct stat st;

	*fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0) {
		if (errno == ENOENT)
			return 0;
		xg_error_errno("cannot open '%s'", path);
		return errno == EACCES || errno == ELOOP ? XG_EX_NOPERM : XG_EX_IOERR;
	}
	if (fstat(*fd, &st) < 0) {
		xg_error_errno("cannot stat '%s'", path);
		close(*fd);
		return XG_EX_IOERR;
	}
	if (!S_ISREG(st.st_mode)) {
		close(*fd);
		xg_error("'%s' is not a regular file", path);
		return XG_EX_CONFIG;
	}
	if (st.st_mode & 077) {
		close(*fd);
		xg_error("'%s' is readable by group or others (mode %04o), so it is not used: "
			 "it holds keys; make it private with 'chmod 600 %s' (and rotate the keys "
			 "if others may have read them)", path, (unsigned)(st.st_mode & 07777), path);
		return XG_EX_NOPERM;
	}
	return 0;
}

/*
 * Reads auth.json at path into *keys ({} when it does not exist), refusing
 * one that group or others may use.  0 or an exit code after reporting.  A
 * parse error names the line only: the text may hold keys.
 */
static int read_auth(const char *path, jv *keys)
{
	struct xg_buf b = XG_BUF_INIT(1 << 20);
	int fd, rc;
	jv v;

	*keys = jv_object();
	if ((rc = open_auth(path, &fd)) || fd < 0)
		return rc;
	if (xg_read_fd(fd, &b) < 0) {
		xg_error_errno("cannot read '%s'", path);
		close(fd);
		xg_buf_release(&b);
		return XG_EX_IOERR;
	}
	close(fd);
	rc = xg_jsonfile_parse(path, b.buf, b.len, &v);
	/* The text holds keys: leave no copy of it behind. */
	memset(b.buf, 0, b.len);
	xg_buf_release(&b);
	if (rc)
		return rc;
	jv_object_foreach(v, name, entry) {
		if (rc == 0 && !xg_json_string_peek(entry, "key")) {
			xg_error("'%s': provider '%s' has no \"key\" string", path,
				 jv_string_value(name));
			rc = XG_EX_CONFIG;
		}
		jv_free(name);
		jv_free(entry);
	}
	if (rc) {
		jv_free(v);
		return rc;
	}
	jv_free(*keys);
	*keys = v;
	return 0;
}

static int load_keys(struct xg_account_keys *k)
{
	if (k->status == 0) {
		jv_free(k->keys);
		k->status = read_auth(k->path, &k->keys);
		if (k->status == 0)
			k->status = 1;
	}
	return k->status == 1 ? 0 : -1;
}

/*
 * Where provider's key is (provider only looked at): 1 with *how "env" or
 * "auth.json" and *val the key, borrowed from the environment or from k,
 * or with *how "none" and *val NULL for a provider that needs no key; 0
 * when there is none; -1 when auth.json cannot be read.
 */
static int find_key(struct xg_account_keys *k, const char *name, jv provider,
		    const char **val, const char **how)
{
	const char *env = xg_json_string_peek(provider, "key_env");

	*val = NULL;
	*how = NULL;
	if (!env || !*env) {
		*how = "none";
		return 1;
	}
	if ((*val = getenv(env)) && **val) {
		*how = "env";
		return 1;
	}
	*val = NULL;
	if (load_keys(k) < 0)
		return -1;
	if ((*val = xg_json_string_peek(xg_json_get_peek(k->keys, name), "key"))) {
		*how = "auth.json";
		return 1;
	}
	return 0;
}

int xg_account_authenticated_peek(struct xg_account_keys *k, const char *name, jv provider,
				  const char **how)
{
	const char *val, *dummy;

	return find_key(k, name, provider, &val, how ? how : &dummy);
}

void xg_account_keys_redact(struct xg_account_keys *k)
{
	/* A missing auth.json is no key, and says nothing. */
	if (k->status != 1 && access(k->path, F_OK) < 0)
		return;
	if (load_keys(k) < 0)
		return;
	jv_object_foreach(k->keys, name, entry) {
		xg_redact_add(xg_json_string_peek(entry, "key"));
		jv_free(name);
		jv_free(entry);
	}
}

/* The first byte of key that cannot go into a header (a space, a control
 * character), counted from 1; 0 when there is none. */
static size_t bad_key_byte(const char *key)
{
	size_t i;

	for (i = 0; key[i]; i++)
		if ((unsigned char)key[i] <= ' ' || key[i] == 0x7f)
			return i + 1;
	return 0;
}

int xg_account_key(struct xg_account_keys *k, const char *name, jv provider, char **key)
{
	const char *val, *how;
	int got = find_key(k, name, provider, &val, &how);
	size_t bad;

	*key = NULL;
	/* A CR or LF would end the header and start another: the key is
	 * refused, by where it came from, never shown. */
	if (got > 0 && val && (bad = bad_key_byte(val))) {
		if (!strcmp(how, "env"))
			xg_error("the key in %s holds a space or a control character at byte "
				 "%zu; it is not used", xg_json_string_peek(provider, "key_env"), bad);
		else
			xg_error("the key of provider '%s' in '%s' holds a space or a control "
				 "character at byte %zu; it is not used", name, k->path, bad);
		jv_free(provider);
		return -1;
	}
	*key = got > 0 && val ? xg_strdup(val) : NULL;
	jv_free(provider);
	return got < 0 ? -1 : *key != NULL;
}

int xg_account_lock(const char *account, const char *file, int *fd)
{
	char *dir = xg_account_path(account, NULL);
	char *name = xg_asprintf("%s.lock", file);
	char *lock = xg_account_path(account, name);
	int rc = XG_EX_IOERR;

	/* The lock is a file of its own: the data file is replaced by rename,
	 * so a lock on it would not be seen by the next writer. */
	*fd = -1;
	if (xg_mkdir_p(dir, 0700) == 0) {
		*fd = xg_lock_file(lock, O_RDWR | O_CREAT, xg_lock_timeout_ms());
		rc = *fd < 0 ? xg_exit_for_errno(errno) : 0;
	}
	free(dir);
	free(name);
	free(lock);
	return rc;
}

/*
 * Removes what a writer killed between naming its temporary file and the
 * rename left beside auth.json (fs.c): under the lock, every
 * auth.json.tmp* there is such a leftover, and may hold a key.
 */
static void sweep_auth_tmp(const char *account)
{
	char *dir = xg_account_path(account, NULL);
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		int dfd = dirfd(d);

		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "auth.json.tmp", 13) &&
			    unlinkat(dfd, e->d_name, 0) < 0 && errno != ENOENT)
				xg_warn("cannot remove '%s/%s': %s", dir, e->d_name,
					strerror(errno));
		closedir(d);
	}
	free(dir);
}

/* Rewrites auth.json under its lock with key set (or removed when NULL),
 * sweeping away leftover temporary files first. */
static int update_auth(const char *account, const char *provider, const char *key)
{
	char *path = xg_account_path(account, "auth.json");
	struct xg_buf out = XG_BUF_INIT(0);
	char at[25];
	jv keys = jv_null();
	int fd, rc;

	if ((rc = xg_account_lock(account, "auth.json", &fd)))
		goto out;
	sweep_auth_tmp(account);
	if ((rc = read_auth(path, &keys)))
		goto out;
	if (key) {
		jv entry = jv_object();
		xg_clock_rfc3339(xg_clock_wall_ms(), at);
		entry = xg_json_set(entry, "key", jv_string(key));
		entry = xg_json_set(entry, "updatedAt", jv_string(at));
		keys = xg_json_set(keys, provider, entry);
	} else {
		keys = jv_object_delete(keys, jv_string(provider));
	}
	{
		jv text = jv_dump_string(keys, JV_PRINT_PRETTY | JV_PRINT_INDENT_FLAGS(2));
		xg_buf_addstr(&out, jv_string_value(text));
		jv_free(text);
		keys = jv_null();
	}
	xg_buf_addch(&out, '\n');
	rc = xg_write_atomic(path, out.buf, out.len, 0600) < 0 ? XG_EX_IOERR : 0;
out:
	if (out.len)
		memset(out.buf, 0, out.len);
	xg_buf_release(&out);
	jv_free(keys);
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

int xg_account_store_key(const char *account, const char *provider, const char *key)
{
	return update_auth(account, provider, key);
}

int xg_account_remove_key(const char *account, const char *provider)
{
	return update_auth(account, provider, NULL);
}

int xg_account_take_key(struct xg_buf *b, char **key)
{
	size_t i, start = 0;
	int rc = 0;

	*key = NULL;
	while (b->len && isspace((unsigned char)b->buf[b->len - 1]))
		b->len--;
	if (b->alloc)
		b->buf[b->len] = '\0';
	while (start < b->len && isspace((unsigned char)b->buf[start]))
		start++;
	for (i = start; i < b->len; i++)
		if ((unsigned char)b->buf[i] <= ' ' || b->buf[i] == 0x7f) {
			xg_error("the key holds a space or a control character at byte %zu; give "
				 "the key alone", i + 1);
			rc = XG_EX_DATAERR;
			goto out;
		}
	if (start == b->len) {
		xg_error("no key was given");
		rc = XG_EX_DATAERR;
		goto out;
	}
	*key = xg_strdup(b->buf + start);
out:
	if (b->alloc)
		memset(b->buf, 0, b->alloc);
	xg_buf_release(b);
	return rc;
}

int xg_account_read_key(int fd, char **key)
{
	struct xg_buf b = XG_BUF_INIT(16384);
	int rc;

	*key = NULL;
	if (xg_read_fd(fd, &b) < 0) {
		if (errno == EFBIG)
			xg_error("the key is longer than %zu bytes", b.max);
		else
			xg_error_errno("cannot read the key");
		rc = errno == EFBIG ? XG_EX_DATAERR : XG_EX_IOERR;
		if (b.alloc)
			memset(b.buf, 0, b.alloc);
		xg_buf_release(&b);
		return rc;
	}
	return xg_account_take_key(&b, key);
}
