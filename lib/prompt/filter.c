/*
 * xg-prompt-compile as a filter: records pass through, and a pack follows
 * each request as soon as its model is known, so a run downstream can start
 * while slower stages upstream (a snapshot) are still writing.
 *
 * The reading is the core's xg_rec_filter, given no writer: a request or a
 * model record is checked before it passes, so a bad one stops the stage
 * without having gone downstream, and on_record passes each record itself.
 */
#include "xg.h"
#include "prompt/prompt.h"
#include "conversation.h"

/* What the last request asked for, and whether its pack is out. */
struct filter {
	const struct xg_prompt_request *flags;
	struct xg_rec_writer *w;
	int text_only;
	char *mode, *req_model, *model, *variant, *conv, *cwd;
	char *text;		/* a person's request, for its $NAME skills */
	int have_request, served, packs;
	int rc;			/* the first pack that did not compile */
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

static char *dup_or_null(const char *s)
{
	return s ? xg_strdup(s) : NULL;
}

/* A request's mode, variant and conversation are checked here, where the
 * line is known; its cwd (the workspace whose project instructions the
 * pack carries) is checked to be a string.  Its text is looked at for
 * skills named as $NAME when a person wrote it: not a hidden message or
 * one of a kind (a goal's round). */
static void take_request(struct filter *f, const struct xg_rec *rec)
{
	const char *mode = field(rec, "mode"), *variant = field(rec, "variant");
	const char *conv = field(rec, "conversation"), *cwd = field(rec, "cwd");
	const char *text = field(rec, "text");
	bool hidden = false;
	const char *at = variant ? strchr(variant, '@') : NULL;
	char *name = variant ? xg_strndup(variant, at ? (size_t)(at - variant) : strlen(variant)) :
		     NULL;
	int ok = !variant || (xg_variant_name_valid(name) &&
			      (!at || xg_variant_version_valid(at + 1)));

	free(name);
	if (mode && !xg_conv_mode_valid(mode))
		xg_die(XG_EX_DATAERR, "standard input:%zu: field 'mode' is '%s', which "
		       XG_CONV_MODE_BAD, rec->lineno, mode);
	if (!ok)
		xg_die(XG_EX_DATAERR, "standard input:%zu: field 'variant' is '%s', not NAME "
		       "or NAME@VERSION", rec->lineno, variant);
	if (conv && !xg_conv_id_valid(conv))
		xg_die(XG_EX_DATAERR, "standard input:%zu: field 'conversation' is '%s', which "
		       XG_CONV_ID_BAD, rec->lineno, conv);
	free(f->mode);
	free(f->variant);
	free(f->conv);
	free(f->cwd);
	free(f->text);
	xg_json_bool_peek(rec->v, "hidden", &hidden);
	f->text = hidden || field(rec, "kind") ? NULL : dup_or_null(text);
	f->mode = dup_or_null(mode);
	f->variant = dup_or_null(variant);
	f->conv = dup_or_null(conv);
	f->cwd = dup_or_null(cwd);
	free(f->req_model);
	f->req_model = dup_or_null(field(rec, "model"));
	f->have_request = 1;
	f->served = 0;
}

/* Compiles for what is known now: a flag wins over a model record, which
 * wins over the request. */
static int compile_now(struct filter *f, jv *pack, jv *notices)
{
	struct xg_prompt_request rq = *f->flags;

	if (!rq.model)
		rq.model = f->model ? f->model : f->req_model;
	if (!rq.mode)
		rq.mode = f->mode;
	if (!rq.variant)
		rq.variant = f->variant;
	rq.conversation = f->conv;
	rq.cwd = f->cwd;
	rq.text = f->text;
	*notices = jv_array();
	f->served = 1;
	f->packs++;
	return xg_prompt_pack(&rq, pack, notices);
}

/* Writes the notices and the pack (nothing for a pack that does not
 * compile), flushed: the next stage may be waiting for them. */
static int emit(struct filter *f)
{
	jv pack, notices;
	int rc = compile_now(f, &pack, &notices);

	if (rc) {
		jv_free(notices);
		return rc;
	}
	notices = jv_array_append(notices, pack);
	jv_array_foreach(notices, i, rec) {
		(void)i;
		if (xg_rec_write(f->w, rec) < 0 && !rc)
			rc = XG_EX_IOERR;
	}
	jv_free(notices);
	if (!rc && fflush(f->w->fp) == EOF)
		rc = XG_EX_IOERR;
	return rc;
}

/* A model after a request settles it: its pack goes out now.  A pack that
 * does not compile is reported at the end, after the rest of the input has
 * passed through. */
static int on_record(const struct xg_rec *rec, void *ctx)
{
	struct filter *f = ctx;
	int is_model, rc;

	if (!rec)
		return 0;
	is_model = rec->type && !strcmp(rec->type, "model");
	if (rec->type && !strcmp(rec->type, "request")) {
		take_request(f, rec);
	} else if (is_model) {
		free(f->model);
		f->model = field(rec, "id") ? xg_strdup(field(rec, "id")) : NULL;
	}
	if (f->text_only)
		return 0;
	if (xg_rec_pass(f->w, rec) < 0)
		return XG_EX_IOERR;
	if (!is_model || !f->have_request || f->served)
		return 0;
	rc = emit(f);
	if (rc == XG_EX_IOERR)
		return rc;
	if (rc && !f->rc)
		f->rc = rc;
	return 0;
}

/* --text: the system prompt alone on w, and the notices on stderr. */
static int print_text(struct filter *f)
{
	jv pack, notices;
	int rc = compile_now(f, &pack, &notices);

	jv_array_foreach(notices, i, nt) {
		(void)i;
		if (!rc)
			fprintf(stderr, "%s: %s\n", xg_progname, xg_json_string_peek(nt, "text"));
		jv_free(nt);
	}
	jv_free(notices);
	if (!rc) {
		fputs(xg_json_string_peek(pack, "system"), f->w->fp);
		putc('\n', f->w->fp);
		jv_free(pack);
	}
	return rc;
}

int xg_prompt_filter(const struct xg_prompt_request *flags, int text_only,
		     struct xg_rec_reader *r, struct xg_rec_writer *w)
{
	struct filter f = { 0 };
	int rc;

	f.flags = flags;
	f.w = w;
	f.text_only = text_only;
	rc = xg_rec_filter(r, NULL, NULL, on_record, &f);
	/* The end of the input settles the last request, or the lack of one. */
	if (!rc && text_only) {
		rc = print_text(&f);
	} else if (!rc) {
		if (!f.packs || !f.served)
			rc = emit(&f);
		if (f.rc)
			rc = f.rc;
	}
	free(f.mode);
	free(f.req_model);
	free(f.model);
	free(f.variant);
	free(f.conv);
	free(f.cwd);
	free(f.text);
	return rc;
}
