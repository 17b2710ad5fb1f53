/*
 * What xg-prompt-compile's verbs write (man 1 xg-prompt-compile): the
 * "variant" records of variants, the "version" records of versions, the
 * one record that save, head, show and select answer with, and the
 * "skill" records of skills (which "xg skills" shows a person).  Each verb
 * is one xg_prompt_verb_ function that does its work through the store
 * (variant.c) and writes its records only when all of them could be made,
 * so a verb that fails writes nothing.
 */
#include "xg.h"
#include "prompt/prompt.h"
#include "prompt/internal.h"

static int write_all(struct xg_rec_writer *w, jv recs)
{
	int i, n = jv_array_length(jv_copy(recs)), rc = 0;

	for (i = 0; i < n && !rc; i++)
		if (xg_rec_write(w, jv_array_get(jv_copy(recs), i)) < 0)
			rc = XG_EX_IOERR;
	jv_free(recs);
	return rc;
}

/* Each section's manifest line and text, for show. */
static int sections(const char *dir, jv *out)
{
	struct xg_prompt_manifest m;
	size_t i;
	int rc = xg_prompt_manifest_load(dir, &m);

	*out = jv_array();
	for (i = 0; !rc && i < m.nr; i++) {
		const struct xg_prompt_section *s = &m.sec[i];
		jv e = jv_object();

		e = xg_json_set(e, "name", jv_string(s->name));
		e = xg_json_set(e, "file", jv_string(s->file));
		e = xg_json_set(e, "budget", jv_number((double)s->budget));
		e = xg_json_set(e, "kind", jv_string(s->stable ? "stable" : "dynamic"));
		e = xg_json_set(e, "mode", jv_string(s->mode));
		e = xg_json_set(e, "text", jv_string_sized(s->text, (int)s->len));
		*out = jv_array_append(*out, e);
	}
	xg_prompt_manifest_release(&m);
	return rc;
}

/* The "version" record of name@version; with_sections adds each section's
 * manifest line and text. */
static int describe(const char *name, const char *version, int with_sections, jv *out)
{
	static const char *const keys[] = { "parent", "created", "tunedFor", "note" };
	char *dir = NULL, *head = NULL;
	jv rec, meta, secs;
	size_t i;
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
	rec = xg_json_set(rec, "readonly", jv_bool(xg_variant_is_default(name)));
	/* The meta's fields, null when absent. */
	for (i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		jv v = xg_json_get_peek(meta, keys[i]);

		rec = xg_json_set(rec, keys[i], jv_is_valid(v) ? jv_copy(v) : jv_null());
	}
	jv_free(meta);
	if (with_sections && (rc = sections(dir, &secs))) {
		jv_free(secs);
		jv_free(rec);
	} else if (with_sections) {
		rec = xg_json_set(rec, "sections", secs);
	}
	free(dir);
	free(head);
	*out = rc ? jv_invalid() : rec;
	return rc;
}

/* Writes the "version" record of name@version. */
static int write_version(const char *name, const char *version, int with_sections,
			 struct xg_rec_writer *w)
{
	jv rec;
	int rc = describe(name, version, with_sections, &rec);

	return rc ? rc : write_all(w, jv_array_append(jv_array(), rec));
}

static int versions_count(const char *name)
{
	size_t n;

	xg_variant_strings_free(xg_variant_stored_versions(name, &n));
	return (int)n;
}

static jv variant_record(const char *name, const char *head, int count)
{
	jv rec = xg_rec_new("variant");

	rec = xg_json_set(rec, "name", jv_string(name));
	rec = xg_json_set(rec, "head", jv_string(head));
	rec = xg_json_set(rec, "versions", jv_number(count));
	return xg_json_set(rec, "readonly", jv_bool(xg_variant_is_default(name)));
}

/* A "variant" record for each variant, by name, into the array *out. */
static int list(jv *out)
{
	char **names, *head;
	size_t n, i;
	int rc = 0, default_done = 0;

	names = xg_variant_stored_names(&n);
	*out = jv_array();
	/* default is listed in its place by name, even with nothing saved. */
	for (i = 0; i <= n && !rc; i++) {
		const char *name = i < n ? names[i] : NULL;
		int count;

		if (!default_done && (!name || strcmp(XG_VARIANT_DEFAULT, name) <= 0)) {
			default_done = 1;
			if ((rc = xg_variant_head(XG_VARIANT_DEFAULT, &head)))
				break;
			count = versions_count(XG_VARIANT_DEFAULT) +
				!xg_variant_stored(XG_VARIANT_DEFAULT, head);
			*out = jv_array_append(*out, variant_record(XG_VARIANT_DEFAULT, head, count));
			free(head);
		}
		if (!name || xg_variant_is_default(name) || !xg_variant_has_head(name))
			continue;
		if ((rc = xg_variant_head(name, &head)))
			break;
		count = versions_count(name);
		*out = jv_array_append(*out, variant_record(name, head, count));
		free(head);
	}
	xg_variant_strings_free(names);
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

/* A "version" record for each version of name, oldest first. */
static int versions(const char *name, jv *out)
{
	char **ids, *head = NULL;
	jv *recs;
	size_t n, i, nr = 0;
	int rc;

	if ((rc = xg_variant_head(name, &head)))
		return rc;
	ids = xg_variant_stored_versions(name, &n);
	recs = xg_calloc(n + 1, sizeof(*recs));
	for (i = 0; i < n && !rc; i++)
		if (!(rc = describe(name, ids[i], 0, &recs[nr])))
			nr++;
	if (!rc && xg_variant_is_default(name) && !xg_variant_stored(name, head) &&
	    !(rc = describe(name, head, 0, &recs[nr])))
		nr++;
	XG_QSORT(recs, nr, by_created);
	*out = jv_array();
	for (i = 0; i < nr; i++)
		*out = jv_array_append(*out, recs[i]);
	if (rc) {
		jv_free(*out);
		*out = jv_invalid();
	}
	free(recs);
	xg_variant_strings_free(ids);
	free(head);
	return rc;
}

int xg_prompt_verb_variants(struct xg_rec_writer *w)
{
	jv out;
	int rc = list(&out);

	return rc ? rc : write_all(w, out);
}

int xg_prompt_verb_versions(const char *name, struct xg_rec_writer *w)
{
	jv out;
	int rc = versions(name, &out);

	return rc ? rc : write_all(w, out);
}

int xg_prompt_verb_save(const char *name, const char *dir, const char *tuned_for,
			const char *note, struct xg_rec_writer *w)
{
	char *v;
	int rc = xg_variant_save(name, dir, tuned_for, note, &v);

	if (!rc)
		rc = write_version(name, v, 0, w);
	free(v);
	return rc;
}

int xg_prompt_verb_head(const char *name, const char *version, struct xg_rec_writer *w)
{
	char *v = NULL;
	int rc = version ? xg_variant_set_head(name, version) : xg_variant_head(name, &v);

	if (!rc)
		rc = write_version(name, version ? version : v, 0, w);
	free(v);
	return rc;
}

int xg_prompt_verb_show(const char *ref, struct xg_rec_writer *w)
{
	char *name, *version;
	int rc = xg_variant_parse_ref(ref, &name, &version);

	if (!rc && !version)
		rc = xg_variant_head(name, &version);
	if (!rc)
		rc = write_version(name, version, 1, w);
	free(name);
	free(version);
	return rc;
}

int xg_prompt_verb_select(const char *conversation, const char *ref, struct xg_rec_writer *w)
{
	jv e;
	int rc = xg_variant_select(conversation, ref, "selected", &e);

	if (rc)
		return rc;
	e = xg_json_set(e, "conversation", jv_string(conversation));
	return write_all(w, jv_array_append(jv_array(), e));
}

/* The notices and the "skill" records of the current directory's skills,
 * into *out. */
static void skills(jv *out)
{
	struct xg_prompt_skills sk;
	size_t i;

	*out = jv_array();
	xg_prompt_skills_read(NULL, &sk, out);
	for (i = 0; i < sk.nr; i++) {
		const struct xg_prompt_skill *s = &sk.v[i];
		jv rec = xg_rec_new("skill");

		rec = xg_json_set(rec, "name", jv_string(s->name));
		rec = xg_json_set(rec, "from", jv_string(s->person ? "person" : "project"));
		rec = xg_json_set(rec, "path", jv_string(s->shown));
		rec = xg_json_set(rec, "file", jv_string(s->file));
		rec = xg_json_set(rec, "description", jv_string(s->description));
		*out = jv_array_append(*out, rec);
	}
	xg_prompt_skills_release(&sk);
}

int xg_prompt_verb_skills(struct xg_rec_writer *w)
{
	jv out;

	skills(&out);
	return write_all(w, out);
}

/* Where a skill record's SKILL.md is, as a person names it: the person's
 * own under ~, the project's as the model is given it. */
static char *shown_from(jv rec)
{
	return strcmp(xg_json_string_peek(rec, "from"), "person") ?
	       xg_strdup(xg_json_string_peek(rec, "path")) :
	       xg_prompt_path_shown(xg_json_string_peek(rec, "file"));
}

/* The skills as a person reads them: name, where from, what for, one a
 * line in columns; the notices on stderr. */
static int print_skills(jv recs, FILE *fp)
{
	int wname = 0, wfrom = 0, n = 0;
	char *from;

	jv_array_foreach(recs, i, r) {
		const char *name = xg_json_string_peek(r, "name");

		(void)i;
		if (!strcmp(xg_json_string_peek(r, "type"), "skill")) {
			from = shown_from(r);
			wname = strlen(name) > (size_t)wname ? (int)strlen(name) : wname;
			wfrom = strlen(from) > (size_t)wfrom ? (int)strlen(from) : wfrom;
			free(from);
		}
		jv_free(r);
	}
	jv_array_foreach(recs, i, r) {
		(void)i;
		if (strcmp(xg_json_string_peek(r, "type"), "skill")) {
			xg_warn("%s", xg_json_string_peek(r, "text"));
		} else {
			from = shown_from(r);
			fprintf(fp, "%-*s  %-*s  %s\n", wname, xg_json_string_peek(r, "name"), wfrom,
				from, xg_json_string_peek(r, "description"));
			free(from);
			n++;
		}
		jv_free(r);
	}
	jv_free(recs);
	if (!n)
		xg_warn("no skills here: a skill is a folder holding a SKILL.md, in ~/.config/xg/"
			"skills or a project's .agents/skills");
	return 0;
}

int xg_prompt_skills_main(int argc, char **argv)
{
	static const char *const usage[] = { "xg skills [--json]", NULL };
	static const struct xg_option options[] = {
		{ 1, 0, "json", NULL, "write the records, even to a terminal" },
		{ 0 }
	};
	static const struct xg_command cmd = {
		"xg", "List the skills of this directory: name, where from, description.",
		usage, options
	};
	struct xg_rec_writer w;
	struct xg_opts o;
	const char *arg;
	int json = 0, rc;
	jv out;

	xg_opt_init(&o, &cmd, argc, argv);
	while (xg_opt_next(&o, &arg) != -1)
		json = 1;
	if (o.nargs)
		xg_usage_error(&cmd, "'skills' takes no operand");
	xg_opt_release(&o);
	if (!json) {
		skills(&out);
		return print_skills(out, stdout);
	}
	xg_rec_writer_init(&w, stdout);
	rc = xg_prompt_verb_skills(&w);
	xg_rec_writer_release(&w);
	return rc;
}
