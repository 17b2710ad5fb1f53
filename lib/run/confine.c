/*
 * The sandbox a run's bash runs in (man 1 xg-run, Sandbox): the setting
 * from --sandbox, else XG_SANDBOX, else the key "sandbox" of the
 * configuration's config.json (man 5 xg-config), else none; the folders
 * it may write besides the workspace; and plan mode, whose bash runs in
 * the sandbox with the workspace read-only whenever the sandbox is there,
 * whatever the setting.  What is in force goes into run_start.
 *
 * A sandbox asked for that cannot be had fails the run (78) before
 * anything is sent: a run never goes on without the sandbox it was asked
 * to have.  The tools' side, bwrap's command line, is sandbox.c.
 */
#include "xg.h"
#include "run/internal.h"
#include "jsonfile.h"

/* Where each part of the setting came from, for messages. */
struct setting {
	const char *value, *from;	/* "on", "net", "off"; NULL: not set */
	jv writable;			/* the folders as given, or null */
	const char *wfrom;
};

/* The configuration's "sandbox": a mode ("on"), or an object with a mode
 * and a list of writable folders.  0, or 78 after reporting. */
static int from_config(struct run *r, struct setting *s, jv conf)
{
	jv v = jv_get_kind(conf) == JV_KIND_OBJECT ? xg_json_get_peek(conf, "sandbox")
						   : jv_invalid();
	jv mode = v, w;

	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL)
		return 0;
	if (jv_get_kind(v) == JV_KIND_OBJECT) {
		mode = xg_json_get_peek(v, "mode");
		w = xg_json_get_peek(v, "writable");
		if (jv_is_valid(w) && jv_get_kind(w) != JV_KIND_NULL) {
			s->wfrom = "config.json: field 'sandbox.writable'";
			if (jv_get_kind(w) != JV_KIND_ARRAY)
				return xg_run_fail(r, XG_EX_CONFIG, "%s must be a list of "
						   "folders", s->wfrom);
			s->writable = jv_copy(w);
		}
		if (!jv_is_valid(mode) || jv_get_kind(mode) == JV_KIND_NULL)
			return 0;
		if (!s->value)
			s->from = "config.json: field 'sandbox.mode'";
	} else if (!s->value) {
		s->from = "config.json: field 'sandbox'";
	}
	if (s->value)
		return 0;
	if (jv_get_kind(mode) != JV_KIND_STRING)
		return xg_run_fail(r, XG_EX_CONFIG, "%s must be \"on\", \"net\" or \"off\"",
				   s->from);
	s->value = jv_string_value(mode);
	return 0;
}

/* The folders of XG_SANDBOX_WRITABLE, split at each colon, as a list. */
static jv env_writable(const char *list)
{
	jv out = jv_array();
	const char *p = list, *colon;

	for (;;) {
		colon = strchr(p, ':');
		if (colon != p && *p)
			out = jv_array_append(out, jv_string_sized(p, colon ? (int)(colon - p)
									      : (int)strlen(p)));
		if (!colon)
			return out;
		p = colon + 1;
	}
}

/* The setting, first found: --sandbox, XG_SANDBOX, config.json; and the
 * writable folders: XG_SANDBOX_WRITABLE, config.json.  0, or 78 after
 * reporting. */
static int setting(struct run *r, struct setting *s, jv *conf)
{
	const char *w = getenv("XG_SANDBOX_WRITABLE");
	char *path;
	int rc;

	if (r->o->sandbox) {
		s->value = r->o->sandbox;
		s->from = "--sandbox";
	} else if (getenv("XG_SANDBOX") && *getenv("XG_SANDBOX")) {
		s->value = getenv("XG_SANDBOX");
		s->from = "XG_SANDBOX";
	}
	if (w) {
		s->writable = env_writable(w);
		s->wfrom = "XG_SANDBOX_WRITABLE";
	}
	if (!s->value || !w) {
		path = xg_path_config("config.json");
		rc = xg_jsonfile_read(path, conf);
		free(path);
		if (rc)
			return xg_run_fail(r, rc, "cannot read the configuration's config.json");
		if (from_config(r, s, *conf))
			return r->rc;
	}
	if (s->value && strcmp(s->value, "on") && strcmp(s->value, "net") &&
	    strcmp(s->value, "off"))
		return xg_run_fail(r, XG_EX_CONFIG, "%s: '%s' is not a sandbox; say on, net or "
				   "off", s->from, s->value);
	return 0;
}

/*
 * The writable folders, canonical, into r->sandbox.writable: "~" at the
 * start is the home directory; a folder that is not absolute is 78, one
 * that is not there is left out with a notice (a cache not made yet).
 */
static int pick_writable(struct run *r, const struct setting *s)
{
	size_t n = 0;
	jv recs;

	if (jv_get_kind(s->writable) != JV_KIND_ARRAY)
		return 0;
	recs = jv_array();
	r->sandbox.writable = xg_calloc((size_t)jv_array_length(jv_copy(s->writable)) + 1,
					sizeof(char *));
	jv_array_foreach(s->writable, i, v) {
		const char *given = jv_get_kind(v) == JV_KIND_STRING ? jv_string_value(v) : NULL;
		const char *home = getenv("HOME");
		char *path, *real;

		(void)i;
		if (!given || !*given) {
			jv_free(v);
			jv_free(recs);
			return xg_run_fail(r, XG_EX_CONFIG, "%s: each folder must be a path",
					   s->wfrom);
		}
		if (given[0] == '~' && (given[1] == '/' || !given[1]) && home && *home)
			path = xg_asprintf("%s%s", home, given + 1);
		else
			path = xg_strdup(given);
		if (path[0] != '/') {
			xg_run_fail(r, XG_EX_CONFIG, "%s: '%s' is not an absolute path (or ~/...)",
				    s->wfrom, given);
			free(path);
			jv_free(v);
			jv_free(recs);
			return r->rc;
		}
		real = realpath(path, NULL);
		if (!real) {
			jv notice = xg_rec_new("notice");

			notice = xg_json_set(notice, "from", jv_string(xg_progname));
			notice = xg_json_set(notice, "text", jv_string_fmt(
				"the sandbox leaves out the writable folder '%s' (%s): %s",
				given, s->wfrom, strerror(errno)));
			xg_run_emit(r, notice);
		} else {
			r->sandbox.writable[n++] = real;
			recs = jv_array_append(recs, jv_string(real));
		}
		free(path);
		jv_free(v);
	}
	r->sandbox_rec = xg_json_set(r->sandbox_rec, "writable", recs);
	return 0;
}

/* The canonical path of an xg directory to hide, or NULL when it is not
 * there (nothing to hide). */
static char *hidden(char *dir)
{
	char *real = realpath(dir, NULL);

	free(dir);
	return real;
}

/* What run_start says of the sandbox in force. */
static void in_force(struct run *r, const char *mode)
{
	jv_free(r->sandbox_rec);
	r->sandbox_rec = xg_json_set(jv_object(), "mode", jv_string(mode));
	r->sandbox_rec = xg_json_set(r->sandbox_rec, "read_only", jv_bool(r->sandbox.read_only));
	r->sandbox_rec = xg_json_set(r->sandbox_rec, "writable", jv_array());
}

int xg_run_sandbox_pick_read_only(struct run *r, int read_only)
{
	struct setting s = { NULL, NULL, jv_null(), NULL };
	int plan = read_only, ok, n = 0, rc = 0;
	char why[512];
	jv conf = jv_null();

	in_force(r, "off");
	if (setting(r, &s, &conf)) {
		rc = r->rc;
		goto out;
	}
	if (!plan && (!s.value || !strcmp(s.value, "off")))
		goto out;
	ok = xg_tool_sandbox_find(&r->sandbox.bwrap, &r->sandbox.userns, why, sizeof(why));
	if (!ok && s.value && strcmp(s.value, "off")) {
		rc = xg_run_fail(r, XG_EX_CONFIG, "%s asks for the sandbox, which cannot run: %s",
				 s.from, why);
		goto out;
	}
	if (!ok) {
		/* Plan mode without one: its gate still holds, and the person
		 * is told once. */
		jv notice = xg_rec_new("notice");

		notice = xg_json_set(notice, "from", jv_string(xg_progname));
		notice = xg_json_set(notice, "text", strcmp(r->mode, "plan") ?
			jv_string_fmt("the %s profile gets no bash without the sandbox (%s)",
				      r->o->profile ? r->o->profile : "read-only", why) :
			jv_string_fmt("plan mode: bash runs without the sandbox (%s), so the "
				      "workspace is not read-only to it", why));
		xg_run_emit(r, notice);
		goto out;
	}
	r->sandbox.net = s.value && !strcmp(s.value, "net");
	r->sandbox.read_only = plan;
	in_force(r, r->sandbox.net ? "net" : "on");
	r->sandbox.hide = xg_calloc(3, sizeof(char *));
	if ((r->sandbox.hide[n] = hidden(xg_path_config(NULL))))
		n++;
	if ((r->sandbox.hide[n] = hidden(xg_path_state(NULL))))
		n++;
	rc = pick_writable(r, &s);
out:
	jv_free(s.writable);
	jv_free(conf);
	return rc;
}

void xg_run_sandbox_release(struct run *r)
{
	char **h;

	for (h = r->sandbox.hide; h && *h; h++)
		free(*h);
	free(r->sandbox.hide);
	for (h = r->sandbox.writable; h && *h; h++)
		free(*h);
	free(r->sandbox.writable);
	free(r->sandbox.bwrap);
	jv_free(r->sandbox_rec);
	r->sandbox_rec = jv_invalid();
}
