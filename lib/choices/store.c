/*
 * The store of saved choices: an account's choices.json, which holds per
 * mode the model, effort and updatedAt of the person's last deliberate
 * selection; the set verb writes it and the get verb reads it.
 */
#include "xg.h"
#include "choices/choices.h"
#include "conversation.h"
#include "jsonfile.h"

/*
 * Loading checks every entry, so the rest of the subsystem reads fields
 * without checking them again; xg_choices_set is the one writer, under
 * choices.json.lock and atomically; xg_choices_write_saved is the get
 * verb.  A file that fails the check is never rewritten: it stays as the
 * person left it, and every command names what is wrong.
 */

/* Checks one mode's entry; -1 after naming what is wrong. */
static int check_entry(const char *path, const char *mode, jv e)
{
	const char *model = xg_json_string_peek(e, "model");
	jv effort = xg_json_get_peek(e, "effort"), at = xg_json_get_peek(e, "updatedAt");
	int64_t ms;

	if (!xg_conv_mode_valid(mode))
		return xg_error("'%s': '%s' " XG_CONV_MODE_BAD,
				path, mode);
	if (jv_get_kind(e) != JV_KIND_OBJECT)
		return xg_error("'%s': mode '%s' must be an object", path, mode);
	if (!model || !xg_catalog_id_valid(model))
		return xg_error("'%s': mode '%s': 'model' must be a PROVIDER/MODEL string",
				path, mode);
	if (jv_is_valid(effort) && jv_get_kind(effort) != JV_KIND_NULL &&
	    jv_get_kind(effort) != JV_KIND_STRING)
		return xg_error("'%s': mode '%s': 'effort' must be a string or null", path, mode);
	if (jv_is_valid(at) && (jv_get_kind(at) != JV_KIND_STRING ||
				xg_clock_parse_rfc3339(jv_string_value(at), &ms) < 0))
		return xg_error("'%s': mode '%s': 'updatedAt' must be an RFC 3339 time", path, mode);
	return 0;
}

static int load_choices(const char *path, jv *choices)
{
	int rc = xg_jsonfile_read(path, choices);

	if (rc)
		return rc;
	if (jv_get_kind(*choices) == JV_KIND_NULL) {
		*choices = jv_object();
		return 0;
	}
	jv_object_foreach(*choices, mode, e) {
		if (rc == 0 && check_entry(path, jv_string_value(mode), e) < 0)
			rc = XG_EX_CONFIG;
		jv_free(mode);
		jv_free(e);
	}
	if (rc) {
		jv_free(*choices);
		*choices = jv_null();
	}
	return rc;
}

int xg_choices_load(const char *account, jv *choices)
{
	char *path = xg_account_path(account, "choices.json");
	int rc = load_choices(path, choices);

	free(path);
	return rc;
}

/* Whether the catalog lets model and effort be saved for mode; 0, or an
 * exit code after saying why not. */
static int check_choice(const struct xg_catalog *cat, const char *mode, const char *model,
			const char *effort)
{
	jv entry = xg_catalog_model_peek(cat, model);
	char *list;

	if (!xg_conv_mode_valid(mode)) {
		xg_error("'%s' " XG_CONV_MODE_BAD, mode);
		return XG_EX_USAGE;
	}
	if (!jv_is_valid(entry)) {
		char *why = xg_catalog_not_offered(cat, model);

		xg_error("cannot save %s: %s", model, why);
		free(why);
		return XG_EX_CONFIG;
	}
	if (effort && !xg_catalog_accepts_effort_peek(entry, effort)) {
		list = xg_catalog_efforts_text(jv_copy(entry));
		xg_error("model '%s' does not accept effort '%s'; it accepts: %s", model, effort,
			 list);
		free(list);
		return XG_EX_CONFIG;
	}
	return 0;
}

int xg_choices_set(const char *account, const char *mode, const char *model,
		   const char *effort)
{
	struct xg_catalog cat;
	jv choices = jv_null(), e, text;
	char *path = NULL;
	struct xg_buf out = XG_BUF_INIT(0);
	char at[25];
	int fd = -1, rc;

	if (!mode)
		mode = "normal";
	if ((rc = xg_catalog_load(&cat)) == 0) {
		xg_catalog_warn(&cat);
		rc = check_choice(&cat, mode, model, effort);
	}
	xg_catalog_release(&cat);
	if (rc)
		return rc;
	path = xg_account_path(account, "choices.json");
	if ((rc = xg_account_lock(account, "choices.json", &fd)))
		goto out;
	if ((rc = load_choices(path, &choices)))
		goto out;	/* a broken file stays as it is */
	xg_clock_rfc3339(xg_clock_wall_ms(), at);
	e = xg_json_set(jv_object(), "model", jv_string(model));
	e = xg_json_set(e, "effort", effort ? jv_string(effort) : jv_null());
	e = xg_json_set(e, "updatedAt", jv_string(at));
	choices = xg_json_set(choices, mode, e);
	text = jv_dump_string(choices, JV_PRINT_INDENT_FLAGS(2));
	choices = jv_null();
	xg_buf_addstr(&out, jv_string_value(text));
	xg_buf_addch(&out, '\n');
	jv_free(text);
	rc = xg_write_atomic(path, out.buf, out.len, 0600) < 0 ? XG_EX_IOERR : 0;
out:
	if (fd >= 0)
		close(fd);
	jv_free(choices);
	xg_buf_release(&out);
	free(path);
	return rc;
}

/* e's field, or null when it has none. */
static jv field_or_null(jv e, const char *key)
{
	jv v = xg_json_get_peek(e, key);

	return jv_is_valid(v) ? jv_copy(v) : jv_null();
}

int xg_choices_write_saved(const char *account, const char *mode, struct xg_rec_writer *w)
{
	jv choices;
	int rc = xg_choices_load(account, &choices), found = 0;

	if (rc)
		return rc;
	jv_object_foreach(choices, key, e) {
		jv rec;

		if (rc || (mode && strcmp(mode, jv_string_value(key)))) {
			jv_free(key);
			jv_free(e);
			continue;
		}
		found = 1;
		rec = xg_json_set(xg_rec_new("choice"), "account", jv_string(account));
		rec = jv_object_set(rec, jv_string("mode"), key);
		rec = xg_json_set(rec, "model", field_or_null(e, "model"));
		rec = xg_json_set(rec, "effort", field_or_null(e, "effort"));
		rec = xg_json_set(rec, "updatedAt", field_or_null(e, "updatedAt"));
		if (xg_rec_write(w, rec) < 0)
			rc = XG_EX_IOERR;
		jv_free(e);
	}
	jv_free(choices);
	return rc ? rc : mode && !found ? XG_EX_FAIL : 0;
}
