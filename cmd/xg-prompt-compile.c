/*
 * xg-prompt-compile: compile the prompt sections of a pinned variant version
 * into a pack record; manage variants and their versions.
 */
#include "xg.h"
#include "prompt.h"
#include "variant.h"
#include "conversation.h"

static const char *const usage[] = {
	"xg-prompt-compile [--text] [--mode mode] [--model model] [--variant ref]",
	"xg-prompt-compile variants",
	"xg-prompt-compile versions name",
	"xg-prompt-compile save name dir [--tuned-for model] [--note text]",
	"xg-prompt-compile head name [version]",
	"xg-prompt-compile show name@version",
	"xg-prompt-compile select conversation name@version",
	NULL
};

enum { OPT_TEXT = 1, OPT_MODE, OPT_MODEL, OPT_VARIANT, OPT_TUNED, OPT_NOTE };

static const struct xg_option options[] = {
	{ OPT_TEXT, 0, "text", NULL, "print only the system prompt" },
	{ OPT_MODE, 0, "mode", "mode", "compile for mode (normal, plan, or another mode name)" },
	{ OPT_MODEL, 0, "model", "model", "the model the run uses" },
	{ OPT_VARIANT, 0, "variant", "ref", "the variant, NAME or NAME@VERSION" },
	{ OPT_TUNED, 0, "tuned-for", "model", "save: the model the version is tuned for" },
	{ OPT_NOTE, 0, "note", "text", "save: a note on the version" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-prompt-compile", "Compile a prompt pack; manage prompt variants and versions.",
	usage, options
};

struct args {
	int text;
	const char *mode, *model, *variant, *tuned_for, *note;
};

/* A string field of an input record, or exit 65 naming the line. */
static const char *field(const struct xg_rec *rec, const char *key)
{
	jv v = xg_json_get_peek(rec->v, key);

	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL)
		return NULL;
	if (jv_get_kind(v) != JV_KIND_STRING)
		xg_die(XG_EX_DATAERR, "standard input:%zu: field '%s' of a %s record is %s, "
		       "not a string", rec->lineno, key, rec->type, xg_json_kind_peek(v));
	return jv_string_value(v);
}

/* A request's variant and conversation are checked here, where the line
 * is known. */
static void check_ids(const struct xg_rec *rec, const char *variant, const char *conv)
{
	const char *at = variant ? strchr(variant, '@') : NULL;
	char *name = variant ? xg_strndup(variant, at ? (size_t)(at - variant) : strlen(variant)) : NULL;
	int ok = !variant || (xg_variant_name_valid(name) &&
			      (!at || xg_variant_version_valid(at + 1)));

	free(name);
	if (!ok)
		xg_die(XG_EX_DATAERR, "standard input:%zu: field 'variant' is '%s', not NAME "
		       "or NAME@VERSION", rec->lineno, variant);
	if (conv && !xg_conv_id_valid(conv))
		xg_die(XG_EX_DATAERR, "standard input:%zu: field 'conversation' is '%s', not a "
		       "conversation id", rec->lineno, conv);
}

static int write_all(jv recs)
{
	struct xg_rec_writer w;
	int i, n = jv_array_length(jv_copy(recs)), rc = 0;

	xg_rec_writer_init(&w, stdout);
	for (i = 0; i < n && !rc; i++)
		if (xg_rec_write(&w, jv_array_get(jv_copy(recs), i)) < 0)
			rc = XG_EX_IOERR;
	xg_rec_writer_release(&w);
	jv_free(recs);
	return rc;
}

/*
 * The filter: passes every record through, keeps the last request and model,
 * and at the end writes the notices and the pack (or, with --text, the
 * system prompt alone, notices going to stderr).
 */
static int compile(const struct args *a)
{
	struct xg_rec_reader r;
	struct xg_rec_writer w;
	struct xg_rec rec;
	struct xg_prompt_request rq = { a->variant, a->model, a->mode, NULL };
	jv model = jv_null(), pack, notices = jv_array();
	char *mode = NULL, *mdl = NULL, *variant = NULL, *conv = NULL;
	int rc = 0, i, n;

	xg_rec_writer_init(&w, stdout);
	if (xg_stdin_readable()) {
		xg_rec_reader_init(&r, 0, "standard input");
		while (xg_rec_next_or_die(&r, &rec) > 0) {
			if (rec.type && !strcmp(rec.type, "request")) {
				const char *m = field(&rec, "mode");

				if (m && !xg_mode_valid(m))
					xg_die(XG_EX_DATAERR, "standard input:%zu: field 'mode' is "
					       "not a mode name (%s)", rec.lineno, XG_PROMPT_MODE_RULE);
				free(mode); free(mdl); free(variant); free(conv);
				mode = m ? xg_strdup(m) : NULL;
				mdl = (m = field(&rec, "model")) ? xg_strdup(m) : NULL;
				variant = (m = field(&rec, "variant")) ? xg_strdup(m) : NULL;
				conv = (m = field(&rec, "conversation")) ? xg_strdup(m) : NULL;
				check_ids(&rec, variant, conv);
			} else if (rec.type && !strcmp(rec.type, "model")) {
				jv_free(model);
				model = (field(&rec, "id")) ? jv_string(field(&rec, "id")) : jv_null();
			}
			if (!a->text && xg_rec_pass(&w, &rec) < 0)
				rc = XG_EX_IOERR;
			xg_rec_release(&rec);
			if (rc)
				break;
		}
		xg_rec_reader_release(&r);
	}
	/* A flag wins over a model record, which wins over the request. */
	if (!rq.model)
		rq.model = jv_get_kind(model) == JV_KIND_STRING ? jv_string_value(model) : mdl;
	if (!rq.mode)
		rq.mode = mode;
	if (!rq.variant)
		rq.variant = variant;
	rq.conversation = conv;
	if (!rc)
		rc = xg_prompt_pack(&rq, &pack, &notices);
	if (!rc && a->text) {
		n = jv_array_length(jv_copy(notices));
		for (i = 0; i < n; i++) {
			jv nt = jv_array_get(jv_copy(notices), i);

			fprintf(stderr, "%s: %s\n", xg_progname, xg_json_string_peek(nt, "text"));
			jv_free(nt);
		}
		fputs(xg_json_string_peek(pack, "system"), stdout);
		putchar('\n');
		jv_free(pack);
	} else if (!rc) {
		rc = write_all(jv_array_append(jv_copy(notices), pack));
	}
	jv_free(notices);
	jv_free(model);
	free(mode); free(mdl); free(variant); free(conv);
	xg_rec_writer_release(&w);
	return rc;
}

static int describe(const char *name, const char *version, int with_sections)
{
	jv rec;
	int rc = xg_variant_describe(name, version, with_sections, &rec);

	return rc ? rc : write_all(jv_array_append(jv_array(), rec));
}

static int show(const char *ref)
{
	char *name, *version;
	int rc = xg_variant_parse_ref(ref, &name, &version);

	if (!rc && !version)
		rc = xg_variant_head(name, &version);
	if (!rc)
		rc = describe(name, version, 1);
	free(name);
	free(version);
	return rc;
}

static int head(const char *name, const char *version)
{
	char *v = NULL;
	int rc = version ? xg_variant_set_head(name, version) : xg_variant_head(name, &v);

	if (!rc)
		rc = describe(name, version ? version : v, 0);
	free(v);
	return rc;
}

static int save(const struct args *a, const char *name, const char *dir)
{
	char *v;
	int rc = xg_variant_save(name, dir, a->tuned_for, a->note, &v);

	if (!rc)
		rc = describe(name, v, 0);
	free(v);
	return rc;
}

static int select_version(const char *conversation, const char *ref)
{
	jv e, out;
	int rc;

	if (!strchr(ref, '@'))
		xg_usage_error(&cmd, "select needs NAME@VERSION, not '%s'", ref);
	rc = xg_variant_select(conversation, ref, "selected", &e);
	if (rc)
		return rc;
	out = xg_json_set(e, "conversation", jv_string(conversation));
	return write_all(jv_array_append(jv_array(), out));
}

static int listing(int (*fn)(const char *, jv *), const char *name)
{
	jv out;
	int rc = fn ? fn(name, &out) : xg_variant_list(&out);

	return rc ? rc : write_all(out);
}

static void want(int nargs, int lo, int hi, const char *verb)
{
	if (nargs - 1 < lo || nargs - 1 > hi)
		xg_usage_error(&cmd, "wrong number of operands for '%s'", verb);
}

int main(int argc, char **argv)
{
	struct xg_opts o;
	struct args a = { 0 };
	const char *arg, *verb;
	int id, rc, compile_opts = 0;

	xg_prog_init("xg-prompt-compile");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_TEXT: a.text = 1; break;
		case OPT_MODE: a.mode = arg; break;
		case OPT_MODEL: a.model = arg; break;
		case OPT_VARIANT: a.variant = arg; break;
		case OPT_TUNED: a.tuned_for = arg; break;
		case OPT_NOTE: a.note = arg; break;
		}
		compile_opts |= id <= OPT_VARIANT;
	}
	if (a.mode && !xg_mode_valid(a.mode))
		xg_usage_error(&cmd, "bad mode '%s': a mode name is %s", a.mode,
			       XG_PROMPT_MODE_RULE);
	verb = o.nargs ? o.args[0] : NULL;
	if ((verb && compile_opts) || ((a.tuned_for || a.note) && (!verb || strcmp(verb, "save"))))
		xg_usage_error(&cmd, "option not valid for '%s'", verb ? verb : "compiling");
	if (!verb) {
		rc = compile(&a);
	} else if (!strcmp(verb, "variants")) {
		want(o.nargs, 0, 0, verb);
		rc = listing(NULL, NULL);
	} else if (!strcmp(verb, "versions")) {
		want(o.nargs, 1, 1, verb);
		rc = listing(xg_variant_versions, o.args[1]);
	} else if (!strcmp(verb, "save")) {
		want(o.nargs, 2, 2, verb);
		rc = save(&a, o.args[1], o.args[2]);
	} else if (!strcmp(verb, "head")) {
		want(o.nargs, 1, 2, verb);
		rc = head(o.args[1], o.nargs > 2 ? o.args[2] : NULL);
	} else if (!strcmp(verb, "show")) {
		want(o.nargs, 1, 1, verb);
		rc = show(o.args[1]);
	} else if (!strcmp(verb, "select")) {
		want(o.nargs, 2, 2, verb);
		rc = select_version(o.args[1], o.args[2]);
	} else {
		xg_usage_error(&cmd, "unknown command '%s'", verb);
	}
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
