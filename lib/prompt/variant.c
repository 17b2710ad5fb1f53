/*
 * The variant store (design.md B2 and section 4; the layout is in
 * prompt.h): variant names and references, the HEAD of each variant,
 * finding and loading a version, its meta.json, saving a version and
 * moving the head, keeping a shipped version under the data tree, and the
 * version a conversation has selected.  It reads and writes variants
 * through the manifest layer (manifest.c) and compiles only to refuse a
 * variant that would not; which version a request gets is pack.c's.
 *
 * The shipped prompts directory is the read-only variant "default", its
 * one version named by the hash of its files; every other variant lives
 * under $data/variants.  The few questions about that layout that verbs.c
 * needs answered are here too, declared in internal.h.
 */
#include "xg.h"
#include <pthread.h>
#include <dirent.h>
#include "prompt/prompt.h"
#include "prompt/internal.h"
#include "conversation.h"
#include "jsonfile.h"

static int id_valid(const char *s, int upper)
{
	size_t n = 0;

	if (!s || !isalnum((unsigned char)*s))
		return 0;
	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];

		if (!(islower(c) || isdigit(c) || (upper && isupper(c)) || strchr("._-", c)))
			return 0;
	}
	return n <= 64;
}

int xg_variant_name_valid(const char *name)
{
	return id_valid(name, 0);
}

int xg_variant_version_valid(const char *version)
{
	return id_valid(version, 1);
}

int xg_variant_parse_ref(const char *ref, char **name, char **version)
{
	const char *at = strchr(ref, '@');

	*name = at ? xg_strndup(ref, (size_t)(at - ref)) : xg_strdup(ref);
	*version = at ? xg_strdup(at + 1) : NULL;
	if (!xg_variant_name_valid(*name) || (at && !xg_variant_version_valid(*version))) {
		xg_error("'%s' is not a variant reference (NAME or NAME@VERSION)", ref);
		free(*name);
		free(*version);
		*name = *version = NULL;
		return XG_EX_DATAERR;
	}
	return 0;
}

int xg_variant_is_default(const char *name)
{
	return !strcmp(name, XG_VARIANT_DEFAULT);
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* $data/variants/NAME[/rel] */
static char *variant_path(const char *name, const char *rel)
{
	char *r = rel ? xg_asprintf("variants/%s/%s", name, rel) : xg_asprintf("variants/%s", name);
	char *p = xg_path_data(r);

	free(r);
	return p;
}

static char *version_path(const char *name, const char *version)
{
	char *r = xg_asprintf("versions/%s", version);
	char *p = variant_path(name, r);

	free(r);
	return p;
}

int xg_variant_stored(const char *name, const char *version)
{
	char *dir = version_path(name, version);
	int ok = is_dir(dir);

	free(dir);
	return ok;
}

int xg_variant_has_head(const char *name)
{
	char *path = variant_path(name, "HEAD");
	int ok = access(path, F_OK) == 0;

	free(path);
	return ok;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir that pass valid, sorted; NULL-terminated. */
static char **list_dir(const char *dir, int (*valid)(const char *), size_t *nr)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, alloc = 0;

	*nr = 0;
	if (!d)
		return xg_calloc(1, sizeof(char *));
	while ((e = readdir(d))) {
		if (!valid(e->d_name))
			continue;
		XG_ALLOC_GROW(v, n + 2, alloc);
		v[n++] = xg_strdup(e->d_name);
	}
	closedir(d);
	if (!v)
		return xg_calloc(1, sizeof(char *));
	v[n] = NULL;
	XG_QSORT(v, n, by_str);
	*nr = n;
	return v;
}

char **xg_variant_stored_names(size_t *nr)
{
	char *dir = xg_path_data("variants"), **v = list_dir(dir, xg_variant_name_valid, nr);

	free(dir);
	return v;
}

char **xg_variant_stored_versions(const char *name, size_t *nr)
{
	char *dir = variant_path(name, "versions");
	char **v = list_dir(dir, xg_variant_version_valid, nr);

	free(dir);
	return v;
}

void xg_variant_strings_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/*
 * The shipped variant's version, its content's id: read and hashed once a
 * process for its directory, as compiling a pack asks for it more than
 * once and the shipped files do not change under a run.
 */
static int shipped_head(char **version)
{
	static char *known_dir, known_id[XG_PROMPT_VERSION_LEN + 1];
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct xg_prompt_manifest m;
	char *dir = xg_path_share("prompts");
	int rc = 0;

	pthread_mutex_lock(&lock);
	if (!known_dir || strcmp(known_dir, dir)) {
		if (!(rc = xg_prompt_manifest_load(dir, &m))) {
			xg_prompt_version_id(&m, known_id);
			free(known_dir);
			known_dir = xg_strdup(dir);
		}
		xg_prompt_manifest_release(&m);
	}
	if (!rc)
		*version = xg_strdup(known_id);
	pthread_mutex_unlock(&lock);
	free(dir);
	return rc;
}

static int no_variant(const char *name)
{
	xg_error("no variant '%s'", name);
	return XG_EX_DATAERR;
}

/*
 * A variant's HEAD file is state this program wrote: one that does not name
 * one of the variant's versions is a broken installation (78), said with
 * what is wrong and how to repair it.
 */
static int check_head(const char *name, const char *path, const char *s, size_t len)
{
	const char *why = NULL;

	if (!len)
		why = "is empty";
	else if (strlen(s) != len || !xg_variant_version_valid(s))
		why = "does not hold a version id";
	if (why) {
		xg_error("'%s' %s; 'xg-prompt-compile head %s VERSION' repairs it", path, why,
			 name);
		return XG_EX_CONFIG;
	}
	if (!xg_variant_stored(name, s)) {
		xg_error("'%s' names version '%s', which does not exist; "
			 "'xg-prompt-compile head %s VERSION' repairs it", path, s, name);
		return XG_EX_CONFIG;
	}
	return 0;
}

int xg_variant_head(const char *name, char **version)
{
	struct xg_buf b = XG_BUF_INIT(4096);
	char *path;
	size_t n;
	int rc;

	*version = NULL;
	if (xg_variant_is_default(name))
		return shipped_head(version);
	if (!xg_variant_name_valid(name))
		return no_variant(name);
	path = variant_path(name, "HEAD");
	errno = 0;
	if (xg_read_file(path, &b) < 0) {
		int e = errno;

		free(path);
		xg_buf_release(&b);
		if (e == ENOENT)
			return no_variant(name);
		xg_error("cannot read the head of variant '%s': %s", name, strerror(e ? e : EFBIG));
		return XG_EX_IOERR;
	}
	n = b.len;
	while (n > 0 && isspace((unsigned char)b.buf[n - 1]))
		n--;
	xg_buf_setlen(&b, n);
	rc = check_head(name, path, b.buf, b.len);
	free(path);
	if (rc) {
		xg_buf_release(&b);
		return rc;
	}
	*version = xg_buf_detach(&b, NULL);
	return 0;
}

int xg_variant_dir(const char *name, const char *version, char **dir)
{
	char *p;

	*dir = NULL;
	if (!xg_variant_name_valid(name))
		return no_variant(name);
	if (!xg_variant_version_valid(version)) {
		xg_error("'%s' is not a version id", version);
		return XG_EX_DATAERR;
	}
	if (xg_variant_is_default(name)) {
		char *head;
		int rc = shipped_head(&head);

		if (rc)
			return rc;
		if (!strcmp(head, version)) {
			free(head);
			*dir = xg_path_share("prompts");
			return 0;
		}
		free(head);
	}
	p = version_path(name, version);
	if (!is_dir(p)) {
		free(p);
		p = variant_path(name, NULL);
		if (!xg_variant_is_default(name) && !is_dir(p)) {
			free(p);
			return no_variant(name);
		}
		free(p);
		xg_error("no version '%s' of variant '%s'", version, name);
		return XG_EX_DATAERR;
	}
	*dir = p;
	return 0;
}

int xg_variant_load(const char *name, const char *version, struct xg_prompt_manifest *m,
		    char **loaded, char **head)
{
	char *dir = NULL, id[XG_PROMPT_VERSION_LEN + 1];
	int rc;

	*loaded = *head = NULL;
	memset(m, 0, sizeof(*m));
	if (xg_variant_is_default(name)) {
		dir = xg_path_share("prompts");
		rc = xg_prompt_manifest_load(dir, m);
		free(dir);
		if (rc)
			return rc;
		xg_prompt_version_id(m, id);
		*head = xg_strdup(id);
		if (!version || !strcmp(version, id)) {
			*loaded = xg_strdup(id);
			return 0;
		}
		xg_prompt_manifest_release(m);
	} else if ((rc = xg_variant_head(name, head))) {
		return rc;
	}
	if (!version)
		version = *head;
	if ((rc = xg_variant_dir(name, version, &dir)) || (rc = xg_prompt_manifest_load(dir, m))) {
		free(dir);
		return rc;
	}
	free(dir);
	*loaded = xg_strdup(version);
	return 0;
}

int xg_variant_meta(const char *name, const char *version, jv *meta)
{
	static const char *const keys[] = { "parent", "created", "tunedFor", "note" };
	char *dir = version_path(name, version), *path = xg_path_join(dir, "meta.json");
	size_t i;
	int rc;

	*meta = jv_object();
	if (!is_dir(dir)) {
		/* The shipped default's version, never pinned: no meta. */
		rc = 0;
		goto out;
	}
	jv_free(*meta);
	rc = xg_jsonfile_read(path, meta);
	if (rc == 0 && jv_get_kind(*meta) == JV_KIND_NULL) {
		xg_error("'%s' is missing", path);
		rc = XG_EX_CONFIG;
	} else if (rc == 0) {
		for (i = 0; i < sizeof(keys) / sizeof(*keys) && !rc; i++) {
			jv v = xg_json_get_peek(*meta, keys[i]);
			jv_kind k = jv_get_kind(v);

			if (k != JV_KIND_STRING && k != JV_KIND_NULL && k != JV_KIND_INVALID) {
				xg_error("'%s': field '%s' is %s, not a string", path, keys[i],
					 xg_json_kind_peek(v));
				rc = XG_EX_CONFIG;
			}
		}
	}
	if (rc) {
		jv_free(*meta);
		*meta = jv_invalid();
	}
out:
	free(path);
	free(dir);
	return rc;
}

/* Removes a directory of plain files. */
static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d))) {
			char *p;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			p = xg_path_join(dir, e->d_name);
			unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

static int write_into(const char *dir, const char *name, const char *data, size_t len)
{
	char *p = xg_path_join(dir, name);
	int rc = xg_write_atomic(p, data, len, 0600);

	free(p);
	return rc;
}

/*
 * Writes m's files and meta (consumed) as versions/ID of name: into a
 * temporary directory first, renamed into place, so a version is whole or
 * absent.  A version that appeared meanwhile wins; its files are the same.
 */
static int store_version(const char *name, const struct xg_prompt_manifest *m, const char *id,
			 jv meta)
{
	char *vdir = variant_path(name, "versions"), *tmp = NULL, *dest = NULL;
	struct xg_buf mb = XG_BUF_INIT(0);
	size_t i;
	int rc = XG_EX_IOERR;

	if (xg_mkdir_p(vdir, 0700) < 0)
		goto out;
	tmp = xg_asprintf("%s/.tmp-XXXXXX", vdir);
	if (!mkdtemp(tmp)) {
		xg_error_errno("cannot create a directory in '%s'", vdir);
		goto out;
	}
	if (write_into(tmp, XG_PROMPT_MANIFEST, m->raw, m->rawlen) < 0)
		goto fail;
	for (i = 0; i < m->nr; i++)
		if (write_into(tmp, m->sec[i].file, m->sec[i].text, m->sec[i].len) < 0)
			goto fail;
	xg_json_dump(&mb, jv_copy(meta));
	xg_buf_addch(&mb, '\n');
	if (write_into(tmp, "meta.json", mb.buf, mb.len) < 0)
		goto fail;
	dest = xg_path_join(vdir, id);
	if (rename(tmp, dest) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY) {
			xg_error_errno("cannot rename '%s' to '%s'", tmp, dest);
			goto fail;
		}
		remove_tree(tmp);
	}
	rc = 0;
	goto out;
fail:
	remove_tree(tmp);
out:
	jv_free(meta);
	xg_buf_release(&mb);
	free(vdir);
	free(tmp);
	free(dest);
	return rc;
}

static jv new_meta(const char *parent, const char *tuned_for, const char *note)
{
	char now[25];
	jv meta = jv_object();

	xg_clock_rfc3339(xg_clock_wall_ms(), now);
	meta = xg_json_set(meta, "parent", parent ? jv_string(parent) : jv_null());
	meta = xg_json_set(meta, "created", jv_string(now));
	meta = xg_json_set(meta, "tunedFor", tuned_for ? jv_string(tuned_for) : jv_null());
	return xg_json_set(meta, "note", note ? jv_string(note) : jv_null());
}

static int read_only(const char *name)
{
	xg_error("variant '%s' is read-only: save your changes as a variant of another name",
		 name);
	return XG_EX_NOPERM;
}

/* Takes the variant's lock: the descriptor, or -(exit code). */
static int lock_variant(const char *name)
{
	char *dir = variant_path(name, NULL), *path = variant_path(name, "lock");
	int fd = -1;

	if (xg_mkdir_p(dir, 0700) == 0)
		fd = xg_lock_file(path, O_RDWR | O_CREAT, xg_lock_timeout_ms());
	free(dir);
	free(path);
	return fd < 0 ? -xg_exit_for_errno(errno) : fd;
}

static int write_head(const char *name, const char *version)
{
	char *path = variant_path(name, "HEAD"), *line = xg_asprintf("%s\n", version);
	int rc = xg_write_atomic(path, line, strlen(line), 0600) < 0 ? XG_EX_IOERR : 0;

	free(path);
	free(line);
	return rc;
}

/* A variant to save must compile in every mode, so a broken one is refused
 * now rather than at a run. */
static int check_compiles(const struct xg_prompt_manifest *m)
{
	static const char *const modes[] = { "normal", "plan" };
	size_t i;

	for (i = 0; i < 2; i++) {
		struct xg_prompt_target t = { "check", "check", NULL, modes[i], NULL, NULL };
		jv pack = jv_invalid(), notices = jv_array();
		int rc = xg_prompt_compile(m, &t, &pack, &notices);

		jv_free(pack);
		jv_free(notices);
		if (rc)
			return rc;
	}
	return 0;
}

int xg_variant_save(const char *name, const char *dir, const char *tuned_for,
		    const char *note, char **version)
{
	struct xg_prompt_manifest m;
	char id[XG_PROMPT_VERSION_LEN + 1], *head = NULL;
	int rc, fd = -1;

	*version = NULL;
	if (!xg_variant_name_valid(name)) {
		xg_error("'%s' is not a variant name", name);
		return XG_EX_DATAERR;
	}
	if (xg_variant_is_default(name))
		return read_only(name);
	if ((rc = xg_prompt_manifest_load(dir, &m)) || (rc = check_compiles(&m)))
		goto out;
	xg_prompt_version_id(&m, id);
	if ((fd = lock_variant(name)) < 0) {
		rc = -fd;
		goto out;
	}
	if (xg_variant_has_head(name) && (rc = xg_variant_head(name, &head)))
		goto out;
	if (xg_variant_stored(name, id))
		xg_warn("%s@%s already holds these files: no new version; it keeps the "
			"tunedFor and note it was saved with%s", name, id,
			tuned_for || note ? " (--tuned-for and --note are not applied)" : "");
	else if ((rc = store_version(name, &m, id, new_meta(head, tuned_for, note))))
		goto out;
	if (!head || strcmp(head, id))
		rc = write_head(name, id);
	if (!rc)
		*version = xg_strdup(id);
out:
	if (fd >= 0)
		close(fd);
	xg_prompt_manifest_release(&m);
	free(head);
	return rc;
}

int xg_variant_set_head(const char *name, const char *version)
{
	char *dir = NULL;
	int rc, fd;

	if (xg_variant_is_default(name))
		return read_only(name);
	if ((rc = xg_variant_dir(name, version, &dir)))
		return rc;
	free(dir);
	if ((fd = lock_variant(name)) < 0)
		return -fd;
	rc = write_head(name, version);
	close(fd);
	return rc;
}

/* Copies a shipped default version under the data tree, if not there yet. */
static int keep(const char *name, const char *version)
{
	struct xg_prompt_manifest m;
	char *dir, *head = NULL;
	int rc;

	if (!xg_variant_is_default(name) || xg_variant_stored(name, version))
		return 0;
	if ((rc = shipped_head(&head)))
		return rc;
	if (strcmp(head, version)) {
		free(head);
		xg_error("no version '%s' of variant '%s'", version, name);
		return XG_EX_DATAERR;
	}
	free(head);
	dir = xg_path_share("prompts");
	if (!(rc = xg_prompt_manifest_load(dir, &m)))
		rc = store_version(name, &m, version, new_meta(NULL, NULL, "the shipped prompts"));
	xg_prompt_manifest_release(&m);
	free(dir);
	return rc;
}

int xg_variant_selected(const char *conversation, char **ref)
{
	jv last;
	const char *to;

	*ref = NULL;
	if (!xg_conv_id_valid(conversation)) {
		xg_error("'%s' " XG_CONV_ID_BAD, conversation);
		return XG_EX_DATAERR;
	}
	if (!xg_conv_exists(conversation))
		return 0;
	last = xg_conv_last_of_type(conversation, "variant_change", NULL);
	if (!jv_is_valid(last)) {
		jv_free(last);
		return XG_EX_IOERR;
	}
	if (jv_get_kind(last) == JV_KIND_OBJECT && (to = xg_json_string_peek(last, "to")))
		*ref = xg_strdup(to);
	jv_free(last);
	return 0;
}

int xg_variant_change(const char *from, const char *ref, const char *reason, jv *entry)
{
	char *name = NULL, *version = NULL, *dir = NULL;
	int rc;

	if ((rc = xg_variant_parse_ref(ref, &name, &version)))
		goto out;
	if (!version && (rc = xg_variant_head(name, &version)))
		goto out;
	if ((rc = xg_variant_dir(name, version, &dir)) || (rc = keep(name, version)))
		goto out;
	*entry = xg_rec_new("variant_change");
	if (from)
		*entry = xg_json_set(*entry, "from", jv_string(from));
	*entry = xg_json_set(*entry, "to", jv_string_fmt("%s@%s", name, version));
	if (reason)
		*entry = xg_json_set(*entry, "reason", jv_string(reason));
out:
	free(name);
	free(version);
	free(dir);
	return rc;
}

int xg_variant_select(const char *conversation, const char *ref, const char *reason, jv *entry)
{
	char *from = NULL;
	jv e;
	int rc;

	if ((rc = xg_variant_selected(conversation, &from)) ||
	    (rc = xg_variant_change(from, ref, reason, &e)))
		goto out;
	if (entry)
		*entry = jv_copy(e);
	if (xg_conv_append(conversation, e) < 0)
		rc = xg_exit_for_errno(errno);
	if (rc && entry) {
		jv_free(*entry);
		*entry = jv_invalid();
	}
out:
	free(from);
	return rc;
}
