/*
 * xg-prompt-compile: compile the prompt sections of a pinned variant version
 * into a pack record; manage variants and their versions.
 */
#include "xg.h"
#include "conversation.h"
#include "prompt/prompt.h"

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

/* Compiling: the filter over standard input, when it can be read. */
static int compile(const struct args *a)
{
	struct xg_prompt_request flags = { a->variant, a->model, a->mode, NULL };
	struct xg_rec_reader r;
	struct xg_rec_writer w;
	int readable = xg_stdin_readable(), rc;

	xg_rec_writer_init(&w, stdout);
	if (readable)
		xg_rec_reader_init(&r, 0, "standard input");
	rc = xg_prompt_filter(&flags, a->text, readable ? &r : NULL, &w);
	if (readable)
		xg_rec_reader_release(&r);
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
	if (a.mode && !xg_conv_mode_valid(a.mode))
		xg_usage_error(&cmd, "'%s' " XG_CONV_MODE_BAD, a.mode);
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
