/*
 * The sandbox a run's bash runs in (man 1 xg-run, Sandbox): the setting
 * from --sandbox, else XG_SANDBOX, else the key "sandbox" of the
 * configuration's config.json (man 5 xg-config), else none; and plan
 * mode, whose bash runs in the sandbox with the workspace read-only
 * whenever the sandbox is there, whatever the setting.
 *
 * A sandbox asked for that cannot be had fails the run (78) before
 * anything is sent: a run never goes on without the sandbox it was asked
 * to have.  The tools' side, bwrap's command line, is sandbox.c.
 */
#include "xg.h"
#include "run/internal.h"
#include "jsonfile.h"

/* The setting: "on", "net" or "off", from where it was found (named in
 * messages); *value NULL when nothing sets it.  0, or 78 after reporting. */
static int setting(struct run *r, const char **value, const char **from, jv *conf)
{
	char *path;
	jv v;
	int rc;

	*value = NULL;
	*from = NULL;
	if (r->o->sandbox) {
		*value = r->o->sandbox;
		*from = "--sandbox";
	} else if (getenv("XG_SANDBOX") && *getenv("XG_SANDBOX")) {
		*value = getenv("XG_SANDBOX");
		*from = "XG_SANDBOX";
	} else {
		path = xg_path_config("config.json");
		rc = xg_jsonfile_read(path, conf);
		free(path);
		if (rc)
			return xg_run_fail(r, rc, "cannot read the configuration's config.json");
		v = jv_get_kind(*conf) == JV_KIND_OBJECT ? xg_json_get_peek(*conf, "sandbox")
							   : jv_invalid();
		if (jv_is_valid(v) && jv_get_kind(v) != JV_KIND_NULL) {
			*from = "config.json: field 'sandbox'";
			if (jv_get_kind(v) != JV_KIND_STRING)
				return xg_run_fail(r, XG_EX_CONFIG, "%s must be \"on\", \"net\" "
						   "or \"off\"", *from);
			*value = jv_string_value(v);
		}
	}
	if (*value && strcmp(*value, "on") && strcmp(*value, "net") && strcmp(*value, "off"))
		return xg_run_fail(r, XG_EX_CONFIG, "%s: '%s' is not a sandbox; say on, net or "
				   "off", *from, *value);
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

int xg_run_sandbox_pick_read_only(struct run *r, int read_only)
{
	const char *value, *from;
	int plan = read_only, ok, n = 0;
	char why[512];
	jv conf = jv_null();

	if (setting(r, &value, &from, &conf)) {
		jv_free(conf);
		return r->rc;
	}
	if (!plan && (!value || !strcmp(value, "off"))) {
		jv_free(conf);
		return 0;
	}
	ok = xg_tool_sandbox_find(&r->sandbox.bwrap, why, sizeof(why));
	if (!ok && value && strcmp(value, "off")) {
		xg_run_fail(r, XG_EX_CONFIG, "%s asks for the sandbox, which cannot run: %s",
			    from, why);
		jv_free(conf);
		return r->rc;
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
		jv_free(conf);
		return 0;
	}
	r->sandbox.net = value && !strcmp(value, "net");
	r->sandbox.read_only = plan;
	r->sandbox.hide = xg_calloc(3, sizeof(char *));
	if ((r->sandbox.hide[n] = hidden(xg_path_config(NULL))))
		n++;
	if ((r->sandbox.hide[n] = hidden(xg_path_state(NULL))))
		n++;
	jv_free(conf);
	return 0;
}

void xg_run_sandbox_release(struct run *r)
{
	char **h;

	for (h = r->sandbox.hide; h && *h; h++)
		free(*h);
	free(r->sandbox.hide);
	free(r->sandbox.bwrap);
}
