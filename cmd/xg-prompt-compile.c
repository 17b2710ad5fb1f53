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
	"xg-prompt-compile skills",
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
	"xg-prompt-compile", "Compile a prompt pack; manage prompt variants and versions; list skills.",
	usage, options
};

/* What the options asked for, and the writer every verb writes to. */
struct args {
	int text;
	const char *mode, *model, *variant, *tuned_for, *note;
	struct xg_rec_writer w;
};

/* Compiling: the filter over standard input, when it can be read. */
static int compile(struct args *a)
{
	struct xg_prompt_request flags = { a->variant, a->model, a->mode, NULL, NULL, NULL };
	struct xg_rec_reader r;
	int readable = xg_stdin_readable(), rc;

	if (readable)
		xg_rec_reader_init(&r, 0, "standard input");
	rc = xg_prompt_filter(&flags, a->text, readable ? &r : NULL, &a->w);
	if (readable)
		xg_rec_reader_release(&r);
	return rc;
}

static int variants(struct xg_opts *o, void *a)
{
	(void)o;
	return xg_prompt_verb_variants(&((struct args *)a)->w);
}

static int versions(struct xg_opts *o, void *a)
{
	return xg_prompt_verb_versions(o->args[1], &((struct args *)a)->w);
}

static int save(struct xg_opts *o, void *ctx)
{
	struct args *a = ctx;

	return xg_prompt_verb_save(o->args[1], o->args[2], a->tuned_for, a->note, &a->w);
}

static int head(struct xg_opts *o, void *a)
{
	return xg_prompt_verb_head(o->args[1], o->nargs > 2 ? o->args[2] : NULL,
				   &((struct args *)a)->w);
}

static int show(struct xg_opts *o, void *a)
{
	return xg_prompt_verb_show(o->args[1], &((struct args *)a)->w);
}

static int select_version(struct xg_opts *o, void *a)
{
	if (!strchr(o->args[2], '@'))
		xg_usage_error(&cmd, "select needs NAME@VERSION, not '%s'", o->args[2]);
	return xg_prompt_verb_select(o->args[1], o->args[2], &((struct args *)a)->w);
}

static int skills(struct xg_opts *o, void *a)
{
	(void)o;
	return xg_prompt_verb_skills(&((struct args *)a)->w);
}

static const struct xg_verb verbs[] = {
	{ "variants", 0, 0, variants },
	{ "versions", 1, 1, versions },
	{ "save", 2, 2, save },
	{ "head", 1, 2, head },
	{ "show", 1, 1, show },
	{ "select", 2, 2, select_version },
	{ "skills", 0, 0, skills },
	{ 0 }
};

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
	xg_rec_writer_init(&a.w, stdout);
	/* Without a verb the program compiles. */
	rc = verb ? xg_opt_verb(&o, verbs)->run(&o, &a) : compile(&a);
	xg_rec_writer_release(&a.w);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
