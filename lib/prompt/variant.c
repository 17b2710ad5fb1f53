#include "xg.h"
#include <dirent.h>
#include "prompt/prompt.h"
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

static int is_default(const char *name)
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

static int shipped_head(char **version)
{
	struct xg_prompt_manifest m;
	char *dir = xg_path_share("prompts"), id[XG_PROMPT_VERSION_LEN + 1];
	int rc = xg_prompt_manifest_load(dir, &m);

	if (!rc) {
		xg_prompt_version_id(&m, id);
		*version = xg_strdup(id);
	}
	xg_prompt_manifest_release(&m);
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
	char *vdir;
	int ok;

	if (!len)
		why = "is empty";
	else if (strlen(s) != len || !xg_variant_version_valid(s))
		why = "does not hold a version id";
	if (why) {
		xg_error("'%s' %s; 'xg-prompt-compile head %s VERSION' repairs it", path, why,
			 name);
		return XG_EX_CONFIG;
	}
	vdir = version_path(name, s);
	ok = is_dir(vdir);
	free(vdir);
	if (!ok) {
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
	if (is_default(name))
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
	if (is_default(name)) {
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
		if (!is_default(name) && !is_dir(p)) {
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
	if (is_default(name)) {
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

static jv copy_field(jv rec, jv meta, const char *key)
{
	jv v = xg_json_get_peek(meta, key);

	return xg_json_set(rec, key, jv_is_valid(v) ? jv_copy(v) : jv_null());
}

int xg_variant_describe(const char *name, const char *version, int with_sections, jv *out)
{
	char *dir = NULL, *head = NULL;
	jv rec, meta;
	int rc = xg_variant_dir(name, version, &dir);

	if (rc)
		return rc;
	if ((rc = xg_variant_head(name, &head))) {
		free(dir);
		return rc;
	}
	if ((rc = xg_variant_meta(name, version, &meta))) {
		free(dir);
		free(head);
		return rc;
	}
	rec = xg_rec_new("version");
	rec = xg_json_set(rec, "variant", jv_string(name));
	rec = xg_json_set(rec, "version", jv_string(version));
	rec = xg_json_set(rec, "head", jv_bool(!strcmp(head, version)));
	rec = xg_json_set(rec, "readonly", jv_bool(is_default(name)));
	rec = copy_field(rec, meta, "parent");
	rec = copy_field(rec, meta, "created");
	rec = copy_field(rec, meta, "tunedFor");
	rec = copy_field(rec, meta, "note");
	jv_free(meta);
	if (with_sections) {
		struct xg_prompt_manifest m;
		jv secs = jv_array();
		size_t i;

		if ((rc = xg_prompt_manifest_load(dir, &m))) {
			xg_prompt_manifest_release(&m);
			jv_free(rec);
			jv_free(secs);
			free(dir);
			free(head);
			return rc;
		}
		for (i = 0; i < m.nr; i++) {
			const struct xg_prompt_section *s = &m.sec[i];
			jv e = jv_object();

			e = xg_json_set(e, "name", jv_string(s->name));
			e = xg_json_set(e, "file", jv_string(s->file));
			e = xg_json_set(e, "budget", jv_number((double)s->budget));
			e = xg_json_set(e, "kind", jv_string(s->stable ? "stable" : "dynamic"));
			e = xg_json_set(e, "mode", jv_string(s->mode));
			e = xg_json_set(e, "text", jv_string_sized(s->text, (int)s->len));
			secs = jv_array_append(secs, e);
		}
		xg_prompt_manifest_release(&m);
		rec = xg_json_set(rec, "sections", secs);
	}
	free(dir);
	free(head);
	*out = rec;
	return 0;
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
	qsort(v, n, sizeof(*v), by_str);
	*nr = n;
	return v;
}

static void free_list(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int versions_count(const char *name)
{
	char *dir = variant_path(name, "versions");
	size_t n;
	char **v = list_dir(dir, xg_variant_version_valid, &n);

	free_list(v);
	free(dir);
	return (int)n;
}

static int has_head_file(const char *name)
{
	char *hp = variant_path(name, "HEAD");
	int ok = access(hp, F_OK) == 0;

	free(hp);
	return ok;
}

static jv variant_record(const char *name, const char *head, int count)
{
	jv rec = xg_rec_new("variant");

	rec = xg_json_set(rec, "name", jv_string(name));
	rec = xg_json_set(rec, "head", jv_string(head));
	rec = xg_json_set(rec, "versions", jv_number(count));
	return xg_json_set(rec, "readonly", jv_bool(is_default(name)));
}

int xg_variant_list(jv *out)
{
	char *dir = xg_path_data("variants"), **names, *head;
	size_t n, i;
	int rc = 0, default_done = 0;

	names = list_dir(dir, xg_variant_name_valid, &n);
	*out = jv_array();
	/* default is listed in its place by name, even with nothing saved. */
	for (i = 0; i <= n && !rc; i++) {
		const char *name = i < n ? names[i] : NULL;
		int count;

		if (!default_done && (!name || strcmp(XG_VARIANT_DEFAULT, name) <= 0)) {
			char *kept;

			default_done = 1;
			if ((rc = shipped_head(&head)))
				break;
			kept = version_path(XG_VARIANT_DEFAULT, head);
			count = versions_count(XG_VARIANT_DEFAULT) + !is_dir(kept);
			free(kept);
			*out = jv_array_append(*out, variant_record(XG_VARIANT_DEFAULT, head, count));
			free(head);
		}
		if (!name || is_default(name) || !has_head_file(name))
			continue;
		if ((rc = xg_variant_head(name, &head)))
			break;
		count = versions_count(name);
		*out = jv_array_append(*out, variant_record(name, head, count));
		free(head);
	}
	free_list(names);
	free(dir);
	if (rc) {
		jv_free(*out);
		*out = jv_invalid();
	}
	return rc;
}

static int by_created(const void *a, const void *b)
{
	jv x = *(const jv *)a, y = *(const jv *)b;
	const char *cx = xg_json_string_peek(x, "created"), *cy = xg_json_string_peek(y, "created");
	int c;

	/* A version never saved (the shipped default) sorts last. */
	if (!cx || !cy)
		return !cx - !cy;
	if ((c = strcmp(cx, cy)))
		return c;
	return strcmp(xg_json_string_peek(x, "version"), xg_json_string_peek(y, "version"));
}

int xg_variant_versions(const char *name, jv *out)
{
	char *dir, **ids, *head = NULL;
	jv *recs;
	size_t n, i, nr = 0;
	int rc;

	if ((rc = xg_variant_head(name, &head)))
		return rc;
	dir = variant_path(name, "versions");
	ids = list_dir(dir, xg_variant_version_valid, &n);
	recs = xg_calloc(n + 1, sizeof(*recs));
	for (i = 0; i < n && !rc; i++)
		if (!(rc = xg_variant_describe(name, ids[i], 0, &recs[nr])))
			nr++;
	if (!rc && is_default(name)) {
		char *kept = version_path(name, head);

		if (!is_dir(kept) && !(rc = xg_variant_describe(name, head, 0, &recs[nr])))
			nr++;
		free(kept);
	}
	qsort(recs, nr, sizeof(*recs), by_created);
	*out = jv_array();
	for (i = 0; i < nr; i++)
		*out = jv_array_append(*out, recs[i]);
	if (rc) {
		jv_free(*out);
		*out = jv_invalid();
	}
	free(recs);
	free_list(ids);
	free(dir);
	free(head);
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
	int rc = xg_write_atomic(p, data, len, 0644);

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

	if (xg_mkdir_p(vdir, 0755) < 0)
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

	if (xg_mkdir_p(dir, 0755) == 0)
		fd = xg_lock_file(path, O_RDWR | O_CREAT, xg_lock_timeout_ms());
	free(dir);
	free(path);
	return fd < 0 ? -xg_exit_for_errno(errno) : fd;
}

static int write_head(const char *name, const char *version)
{
	char *path = variant_path(name, "HEAD"), *line = xg_asprintf("%s\n", version);
	int rc = xg_write_atomic(path, line, strlen(line), 0644) < 0 ? XG_EX_IOERR : 0;

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
		struct xg_prompt_target t = { "check", "check", NULL, modes[i] };
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
	char id[XG_PROMPT_VERSION_LEN + 1], *head = NULL, *vpath = NULL;
	int rc, fd = -1;

	*version = NULL;
	if (!xg_variant_name_valid(name)) {
		xg_error("'%s' is not a variant name", name);
		return XG_EX_DATAERR;
	}
	if (is_default(name))
		return read_only(name);
	if ((rc = xg_prompt_manifest_load(dir, &m)) || (rc = check_compiles(&m)))
		goto out;
	xg_prompt_version_id(&m, id);
	if ((fd = lock_variant(name)) < 0) {
		rc = -fd;
		goto out;
	}
	if (has_head_file(name) && (rc = xg_variant_head(name, &head)))
		goto out;
	vpath = version_path(name, id);
	if (is_dir(vpath))
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
	free(vpath);
	return rc;
}

int xg_variant_set_head(const char *name, const char *version)
{
	char *dir = NULL;
	int rc, fd;

	if (is_default(name))
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

int xg_variant_keep(const char *name, const char *version)
{
	struct xg_prompt_manifest m;
	char *kept, *head = NULL;
	int rc;

	if (!is_default(name))
		return 0;
	kept = version_path(name, version);
	if (is_dir(kept)) {
		free(kept);
		return 0;
	}
	free(kept);
	if ((rc = shipped_head(&head)))
		return rc;
	if (strcmp(head, version)) {
		free(head);
		xg_error("no version '%s' of variant '%s'", version, name);
		return XG_EX_DATAERR;
	}
	free(head);
	kept = xg_path_share("prompts");
	if (!(rc = xg_prompt_manifest_load(kept, &m)))
		rc = store_version(name, &m, version, new_meta(NULL, NULL, "the shipped prompts"));
	xg_prompt_manifest_release(&m);
	free(kept);
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

int xg_variant_select(const char *conversation, const char *ref, const char *reason, jv *entry)
{
	char *name = NULL, *version = NULL, *dir = NULL, *from = NULL, *to = NULL;
	jv e;
	int rc;

	if ((rc = xg_variant_selected(conversation, &from)) ||
	    (rc = xg_variant_parse_ref(ref, &name, &version)))
		goto out;
	if (!version && (rc = xg_variant_head(name, &version)))
		goto out;
	if ((rc = xg_variant_dir(name, version, &dir)) || (rc = xg_variant_keep(name, version)))
		goto out;
	to = xg_asprintf("%s@%s", name, version);
	e = xg_rec_new("variant_change");
	if (from)
		e = xg_json_set(e, "from", jv_string(from));
	e = xg_json_set(e, "to", jv_string(to));
	if (reason)
		e = xg_json_set(e, "reason", jv_string(reason));
	if (entry)
		*entry = jv_copy(e);
	if (xg_conv_append(conversation, e) < 0)
		rc = xg_exit_for_errno(errno);
	if (rc && entry) {
		jv_free(*entry);
		*entry = jv_invalid();
	}
out:
	free(name);
	free(version);
	free(dir);
	free(from);
	free(to);
	return rc;
}
