/*
 * The start model of a conversation (design.md B1, ADR-0064): an explicit
 * model, else the conversation's own while it is usable, else the
 * resolution for the request's mode.
 */
#include "xg.h"
#include "choices/internal.h"
#include "conversation.h"

/*
 * xg_choices_start reads what the request and the options ask for, then
 * takes one of three ways: start_explicit for a model asked for by name,
 * start_conversation for a conversation that names its last model, and the
 * plain resolution (resolve.c) for the rest.  When the conversation's model
 * can no longer be used, start_fallback starts on the resolution and
 * appends a model_change to the conversation (never to choices.json),
 * checked under the conversation's lock so that concurrent starts record
 * one change.  An effort asked for without a model applies to whatever
 * model starts, when it accepts it (apply_effort).  Each cause worth
 * telling the person gets its own notice: the catalog's problems (once per
 * handle), a torn conversation, the fallback or the catalog's model, an
 * effort not applied.
 */

/* request's string field, or NULL; 1 in *bad (reported) for another kind. */
static const char *req_string(jv request, const char *field, size_t lineno, int *bad)
{
	jv v = xg_json_get_peek(request, field);

	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL)
		return NULL;
	if (jv_get_kind(v) == JV_KIND_STRING)
		return jv_string_value(v);
	if (!*bad) {
		if (lineno)
			xg_error("request on line %zu: '%s' must be a string, not %s", lineno, field,
				 xg_json_kind_peek(v));
		else
			xg_error("request: '%s' must be a string, not %s", field, xg_json_kind_peek(v));
	}
	*bad = 1;
	return NULL;
}

static jv notice_record(const char *text)
{
	jv n = xg_rec_new("notice");

	n = xg_json_set(n, "from", jv_string("xg-choices"));
	return xg_json_set(n, "text", jv_string(text));
}

/* "id (effort)" or "id" for messages; the caller frees it.  Only looks at
 * effort. */
static char *with_effort(const char *id, jv effort)
{
	if (jv_get_kind(effort) == JV_KIND_STRING)
		return xg_asprintf("%s (%s)", id, jv_string_value(effort));
	return xg_strdup(id);
}

/* The effort to keep for model id: wanted (only looked at) when the model
 * accepts it, else the resolution's. */
static jv keep_effort(struct xg_choices_resolver *x, const char *id, jv wanted,
		      const char **src)
{
	if (jv_get_kind(wanted) == JV_KIND_STRING &&
	    xg_catalog_accepts_effort_peek(xg_catalog_model_peek(&x->c->cat, id),
					   jv_string_value(wanted))) {
		*src = NULL;
		return jv_copy(wanted);
	}
	return xg_choices_resolve_effort(x, id, 0, src);
}

/* Starts on model id, asked for by name; last is the conversation's last
 * model (only looked at), whose effort is kept when it is the same model. */
static int start_explicit(struct xg_choices_resolver *x, const char *mode, const char *id,
			  const char *effort, jv last, const char *where, jv *out)
{
	char *why = NULL;
	const char *src = NULL, *lid;
	int code = 0, r = xg_choices_resolve_usable(x, id, &why, &code);
	jv m, e;

	if (r == 0 && code == XG_EX_CONFIG) {
		free(why);
		why = xg_catalog_not_offered(&x->c->cat, id);
	}
	if (r <= 0) {
		if (!xg_prog_records_shown())
			xg_error("%scannot start on %s: %s", where, id, why);
		*out = xg_choices_null_record("flag", x->account, mode, why);
		*out = xg_json_set(*out, "requested", jv_string(id));
		free(why);
		return code;
	}
	m = xg_catalog_model_peek(&x->c->cat, id);
	if (effort && !xg_catalog_accepts_effort_peek(m, effort)) {
		char *list = xg_catalog_efforts_text(jv_copy(m));
		why = xg_asprintf("model '%s' does not accept effort '%s'; it accepts: %s", id,
				  effort, list);
		if (!xg_prog_records_shown())
			xg_error("%s%s", where, why);
		*out = xg_choices_null_record("flag", x->account, mode, why);
		*out = xg_json_set(*out, "requested", jv_string(id));
		free(list);
		free(why);
		return XG_EX_CONFIG;
	}
	lid = xg_json_string_peek(last, "id");
	if (effort)
		e = jv_string(effort);
	else if (lid && !strcmp(lid, id))
		e = keep_effort(x, id, xg_json_get_peek(last, "effort"), &src);
	else
		e = xg_choices_resolve_effort(x, id, 0, &src);
	*out = xg_choices_model_record(jv_copy(m), e, "flag", x->account, mode);
	return 0;
}

/* What the fallback checks under the conversation's lock: that the
 * conversation still ends on the model it decided to replace. */
struct still {
	const char *from;
	jv now;			/* the conversation's last model, when it is another */
};

static int still_on(const char *id, void *ctx)
{
	struct still *s = ctx;
	jv now = xg_conv_last_model(id, NULL);
	const char *nid = xg_json_string_peek(now, "id");

	if (!jv_is_valid(now))
		return -1;
	if (nid && !strcmp(nid, s->from)) {
		jv_free(now);
		return 1;
	}
	jv_free(s->now);
	s->now = now;
	return 0;
}

/* start_fallback's answer when another writer changed the conversation's
 * model first: decide again from *now. */
#define START_AGAIN (-1)

/* The model_change record from the replaced model to the one in out (only
 * looked at). */
static jv change_record(const char *from, jv out, const char *why)
{
	jv change = xg_rec_new("model_change");

	change = xg_json_set(change, "from", jv_string(from));
	change = xg_json_set(change, "to", jv_copy(xg_json_get_peek(out, "id")));
	change = xg_json_set(change, "effort", jv_copy(xg_json_get_peek(out, "effort")));
	return xg_json_set(change, "reason", jv_string(why));
}

/*
 * The conversation's model could not be used: start on the resolution, and
 * record the change in the conversation.  The record is appended only when
 * the conversation still ends on that model, checked under its lock, so
 * concurrent starts record one change; when it no longer does, returns
 * START_AGAIN with *now the model it ends on.  last is only looked at.
 */
static int start_fallback(struct xg_choices_resolver *x, const char *mode, const char *conv,
			  jv last, const char *why, jv *out, char **notice, jv *now)
{
	const char *from = xg_json_string_peek(last, "id");
	jv effort = xg_json_get_peek(last, "effort"), replaced = jv_object();
	struct still st = { from, jv_null() };
	char *old, *catalog_note = NULL, *to;
	int rc, a, aerr;

	rc = xg_choices_resolve_mode(x, mode, "fallback", out, &catalog_note);
	replaced = xg_json_set(replaced, "id", jv_string(from));
	replaced = xg_json_set(replaced, "effort", jv_copy(effort));
	replaced = xg_json_set(replaced, "reason", jv_string(why));
	*out = xg_json_set(*out, "replaced", replaced);
	if (rc) {
		free(catalog_note);
		return rc;
	}
	a = xg_conv_append_if(conv, change_record(from, *out, why), still_on, &st);
	aerr = errno;
	if (a == 1) {
		jv_free(*out);
		*out = jv_invalid();
		free(catalog_note);
		*now = st.now;
		return START_AGAIN;
	}
	jv_free(st.now);
	old = with_effort(from, effort);
	to = with_effort(xg_json_string_peek(*out, "id"), xg_json_get_peek(*out, "effort"));
	*notice = xg_asprintf("conversation %s ran on %s, which cannot be used now: %s; it "
			      "continues on %s, %s", conv, old, why, to,
			      catalog_note ? "the first model of the catalog this account can use "
			      "(no saved choice is usable)" : "the account's newest saved choice");
	free(old);
	free(to);
	free(catalog_note);
	return a < 0 ? xg_exit_for_errno(aerr) : 0;
}

/* Starts conversation conv, whose last model is last (only looked at): on
 * that model while it is usable, else on a fallback. */
static int start_conversation(struct xg_choices_resolver *x, const char *mode,
			      const char *conv, jv last, jv *out, char **notice)
{
	const char *id, *src;
	char *why = NULL;
	int code = 0, r, tries;

	last = jv_copy(last);
	for (tries = 0; ; tries++) {
		jv now = jv_null();

		if (jv_get_kind(last) == JV_KIND_NULL) {
			/* The history no longer names a model. */
			r = xg_choices_resolve_mode(x, mode, "mode", out, notice);
			break;
		}
		id = xg_json_string_peek(last, "id");
		r = xg_choices_resolve_usable(x, id, &why, &code);
		if (r < 0) {
			if (!xg_prog_records_shown())
				xg_error("cannot decide the model of conversation %s: %s", conv, why);
			*out = xg_choices_null_record("history", x->account, mode, why);
			free(why);
			r = code;
			break;
		}
		if (r > 0) {
			jv e = keep_effort(x, id, xg_json_get_peek(last, "effort"), &src);
			*out = xg_choices_model_record(jv_copy(xg_catalog_model_peek(&x->c->cat, id)),
						       e, "history", x->account, mode);
			r = 0;
			break;
		}
		r = start_fallback(x, mode, conv, last, why, out, notice, &now);
		free(why);
		why = NULL;
		if (r != START_AGAIN)
			break;
		jv_free(last);
		last = now;
		if (tries == 16) {
			/* Others keep changing it: give up as on a busy lock. */
			if (!xg_prog_records_shown())
				xg_error("the model of conversation %s keeps changing; try again", conv);
			*out = xg_choices_null_record("fallback", x->account, mode,
						      "the conversation's model keeps changing");
			r = XG_EX_TEMPFAIL;
			break;
		}
	}
	jv_free(last);
	return r;
}

/* Applies an effort asked for without a model to the started model *out
 * when that model accepts it; else returns a notice's text saying why it
 * was not applied (the caller frees it). */
static char *apply_effort(struct xg_choices *c, jv *out, const char *effort, const char *from)
{
	const char *id = xg_json_string_peek(*out, "id"), *now;
	jv m;
	char *list, *text;

	if (!id)
		return xg_asprintf("effort '%s' (%s) was not applied: no model could be started",
				   effort, from);
	m = xg_catalog_model_peek(&c->cat, id);
	if (xg_catalog_accepts_effort_peek(m, effort)) {
		*out = xg_json_set(*out, "effort", jv_string(effort));
		*out = xg_json_set(*out, "effort_from", jv_string(from));
		return NULL;
	}
	list = xg_catalog_efforts_text(jv_copy(m));
	now = xg_json_string_peek(*out, "effort");
	text = xg_asprintf("effort '%s' (%s) was not applied: model %s does not accept it "
			   "(it accepts: %s); it runs at %s", effort, from, id, list,
			   now ? now : "no effort");
	free(list);
	return text;
}

/* What one start asks for: each field from the options, else from the
 * request (borrowed from it). */
struct ask {
	const char *account, *mode, *model, *effort, *conv;
	const char *account_from, *effort_from;	/* for messages */
	/* "request on line N: " before a message about a field the request
	 * gave (empty for an option's, or a request not read from a line),
	 * and the account's origin with its line. */
	char where[48], account_where[64];
	int model_given;	/* the model is --model's, not the request's */
};

/* Fills *a from w and request (only looked at): 0, or 65 after reporting a
 * field of the wrong kind, or a mode or conversation id that is not
 * valid. */
static int read_ask(const struct xg_choices_want *w, jv request, struct ask *a)
{
	const char *account, *mode, *model, *effort, *conv;
	int bad = 0;

	/* Every field is checked, even one an option overrides or one the
	 * later stages use (variant, cwd): a wrong kind is bad input. */
	account = req_string(request, "account", w->lineno, &bad);
	mode = req_string(request, "mode", w->lineno, &bad);
	model = req_string(request, "model", w->lineno, &bad);
	effort = req_string(request, "effort", w->lineno, &bad);
	conv = req_string(request, "conversation", w->lineno, &bad);
	req_string(request, "variant", w->lineno, &bad);
	req_string(request, "cwd", w->lineno, &bad);
	a->account = w->account ? w->account : account;
	a->mode = w->mode ? w->mode : mode;
	a->model = w->model ? w->model : model;
	a->effort = w->effort ? w->effort : effort;
	a->conv = w->conversation ? w->conversation : conv;
	a->where[0] = '\0';
	if (w->lineno)
		snprintf(a->where, sizeof(a->where), "request on line %zu: ", w->lineno);
	if (w->lineno)
		snprintf(a->account_where, sizeof(a->account_where), "request.account on line %zu",
			 w->lineno);
	else
		snprintf(a->account_where, sizeof(a->account_where), "request.account");
	a->account_from = w->account ? "--account" : a->account_where;
	a->effort_from = w->effort ? "--effort" : "request.effort";
	a->model_given = w->model != NULL;
	if (!a->mode)
		a->mode = "normal";
	if (!bad && !xg_conv_mode_valid(a->mode)) {
		xg_error("%s'%s' " XG_CONV_MODE_BAD, w->mode ? "" : a->where, a->mode);
		bad = 1;
	}
	if (!bad && a->conv && !xg_conv_id_valid(a->conv)) {
		xg_error("%s'%s' " XG_CONV_ID_BAD, w->conversation ? "" : a->where, a->conv);
		bad = 1;
	}
	return bad ? XG_EX_DATAERR : 0;
}

/*
 * The start for a valid ask on account: the model record in *out, and the
 * notices appended to *records (a torn conversation's, the resolution's,
 * an effort's that was not applied).  0 or an exit code.
 */
static int start_account(struct xg_choices *c, const struct ask *a, const char *account,
			 jv *records, jv *out)
{
	struct xg_choices_resolver x;
	char *notice = NULL, *unapplied = NULL;
	int rc, torn = 0;
	jv last = jv_null();

	if ((rc = xg_choices_resolver_init(&x, c, account, a->mode))) {
		*out = xg_choices_null_record(a->model ? "flag" : "mode", account, a->mode,
					      "the saved choices cannot be read");
		xg_choices_resolver_release(&x);
		return rc;
	}
	if (a->conv) {
		last = xg_conv_last_model(a->conv, &torn);
		if (torn) {
			char *t = xg_asprintf("the last line of conversation %s is torn (an append "
					      "that did not finish); it is ignored", a->conv);
			if (!xg_prog_records_shown())
				xg_warn("%s", t);
			*records = jv_array_append(*records, notice_record(t));
			free(t);
		}
	}
	if (!jv_is_valid(last)) {
		*out = xg_choices_null_record(a->model ? "flag" : "mode", account, a->mode,
					      "the conversation cannot be read");
		rc = XG_EX_IOERR;
	} else if (a->model) {
		rc = start_explicit(&x, a->mode, a->model, a->effort, last,
				    a->model_given ? "" : a->where, out);
	} else if (jv_get_kind(last) == JV_KIND_NULL) {
		rc = xg_choices_resolve_mode(&x, a->mode, "mode", out, &notice);
	} else {
		rc = start_conversation(&x, a->mode, a->conv, last, out, &notice);
	}
	if (a->effort && !a->model && jv_is_valid(last)) {
		/* An effort without a model is for whatever model starts. */
		unapplied = apply_effort(c, out, a->effort, a->effort_from);
		if (unapplied && !xg_prog_records_shown())
			xg_warn("%s", unapplied);
	}
	if (c->verbose && !jv_is_valid(xg_json_get_peek(*out, "skipped")))
		*out = xg_json_set(*out, "skipped", jv_copy(x.skipped));
	if (notice)
		*records = jv_array_append(*records, notice_record(notice));
	if (unapplied)
		*records = jv_array_append(*records, notice_record(unapplied));
	free(notice);
	free(unapplied);
	jv_free(last);
	xg_choices_resolver_release(&x);
	return rc;
}

int xg_choices_start(struct xg_choices *c, const struct xg_choices_want *w, jv request,
		     jv *records)
{
	struct ask a;
	char *account = NULL;
	int rc;
	jv out;

	*records = jv_array();
	if (!c->told) {
		/* The catalog's problems, once: one notice each, and said on
		 * standard error unless the notice is shown (prog.h). */
		jv_array_foreach(c->cat.problems, i, t) {
			(void)i;
			if (!xg_prog_records_shown())
				xg_warn("%s", jv_string_value(t));
			*records = jv_array_append(*records, notice_record(jv_string_value(t)));
			jv_free(t);
		}
		c->told = 1;
	}
	if ((rc = read_ask(w, request, &a)))
		out = xg_choices_null_record("mode", NULL,
					     xg_conv_mode_valid(a.mode) ? a.mode : "normal",
					     "the request is not valid");
	else if ((rc = xg_account_current(a.account, a.account_from, &account, NULL)))
		out = xg_choices_null_record(a.model ? "flag" : "mode", NULL, a.mode,
					     "the account is not valid");
	else
		rc = start_account(c, &a, account, records, &out);
	if (a.conv && xg_conv_id_valid(a.conv))
		out = xg_json_set(out, "conversation", jv_string(a.conv));
	if (rc && !xg_json_string_peek(out, "id"))
		out = xg_json_set(out, "exit", jv_number(rc));
	*records = jv_array_append(*records, out);
	free(account);
	jv_free(request);
	return rc;
}
