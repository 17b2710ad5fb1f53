/*
 * The sandbox a run's bash runs in (man 1 xg-run, Sandbox): the setting
 * from --sandbox, else XG_SANDBOX, else the key "sandbox" of the
 * configuration's config.json (man 5 xg-config), else none; the folders
 * it may write besides the workspace; and a bash that must not write (plan
 * mode, a read-only profile), which runs in the sandbox with the workspace
 * read-only whenever the sandbox is there, whatever the setting.  What is
 * in force is a record for run_start.
 *
 * A sandbox asked for that cannot be had is 78, for the caller to fail
 * before anything is sent: a run never goes on without the sandbox it was
 * asked to have.  bwrap's command line is sandbox.c.
 */
#include "xg.h"
#include "tools/internal.h"
#include "jsonfile.h"

/* What a pick is given, and what it gives back besides the sandbox. */
struct pick {
	const char *given;	/* --sandbox, or NULL */
	jv in_force;		/* run_start's "sandbox" */
	jv notices;		/* notice records, in order */
	char *msg;		/* a failure's text */
	size_t n;
};

/* Says why the pick fails into p->msg; returns rc. */
__attribute__((format(printf, 3, 4)))
static int fail(struct pick *p, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->msg, p->n, fmt, ap);
	va_end(ap);
	return rc;
}

static void notice(struct pick *p, jv text)
{
	jv n = xg_rec_new("notice");

	n = xg_json_set(n, "from", jv_string(xg_progname));
	p->notices = jv_array_append(p->notices, xg_json_set(n, "text", text));
}

/* Where each part of the setting came from, for messages. */
struct setting {
	const char *value, *from;	/* "on", "net", "off"; NULL: not set */
	jv writable;			/* the folders as given, or null */
	const char *wfrom;
};

/* The configuration's "sandbox": a mode ("on"), or an object with a mode
 * and a list of writable folders.  0, or 78 with why in p->msg. */
static int from_config(struct pick *p, struct setting *s, jv conf)
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
				return fail(p, XG_EX_CONFIG, "%s must be a list of folders",
					    s->wfrom);
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
		return fail(p, XG_EX_CONFIG, "%s must be \"on\", \"net\" or \"off\"", s->from);
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
 * writable folders: XG_SANDBOX_WRITABLE, config.json.  0, or an exit code
 * (78; 74 for a config.json not read) with why in p->msg. */
static int setting(struct pick *p, struct setting *s, jv *conf)
{
	const char *w = getenv("XG_SANDBOX_WRITABLE");
	char *path;
	int rc;

	if (p->given) {
		s->value = p->given;
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
			return fail(p, rc, "cannot read the configuration's config.json");
		if ((rc = from_config(p, s, *conf)))
			return rc;
	}
	if (s->value && strcmp(s->value, "on") && strcmp(s->value, "net") &&
	    strcmp(s->value, "off"))
		return fail(p, XG_EX_CONFIG, "%s: '%s' is not a sandbox; say on, net or off",
			    s->from, s->value);
	return 0;
}

/*
 * The writable folders, canonical, into sb->writable: "~" at the
 * start is the home directory; a folder that is not absolute is 78, one
 * that is not there is left out with a notice (a cache not made yet).
 */
static int pick_writable(struct xg_tool_sandbox *sb, struct pick *p, const struct setting *s)
{
	size_t n = 0;
	jv recs;

	if (jv_get_kind(s->writable) != JV_KIND_ARRAY)
		return 0;
	recs = jv_array();
	sb->writable = xg_calloc((size_t)jv_array_length(jv_copy(s->writable)) + 1,
					sizeof(char *));
	jv_array_foreach(s->writable, i, v) {
		const char *given = jv_get_kind(v) == JV_KIND_STRING ? jv_string_value(v) : NULL;
		const char *home = getenv("HOME");
		char *path, *real;

		(void)i;
		if (!given || !*given) {
			jv_free(v);
			jv_free(recs);
			return fail(p, XG_EX_CONFIG, "%s: each folder must be a path", s->wfrom);
		}
		if (given[0] == '~' && (given[1] == '/' || !given[1]) && home && *home)
			path = xg_asprintf("%s%s", home, given + 1);
		else
			path = xg_strdup(given);
		if (path[0] != '/') {
			free(path);
			jv_free(v);
			jv_free(recs);
			return fail(p, XG_EX_CONFIG, "%s: '%s' is not an absolute path (or ~/...)",
				    s->wfrom, given);
		}
		real = realpath(path, NULL);
		if (!real) {
			notice(p, jv_string_fmt("the sandbox leaves out the writable folder '%s' "
						"(%s): %s", given, s->wfrom, strerror(errno)));
		} else {
			sb->writable[n++] = real;
			recs = jv_array_append(recs, jv_string(real));
		}
		free(path);
		jv_free(v);
	}
	p->in_force = xg_json_set(p->in_force, "writable", recs);
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
static void in_force(struct pick *p, const struct xg_tool_sandbox *sb, const char *mode)
{
	jv_free(p->in_force);
	p->in_force = xg_json_set(jv_object(), "mode", jv_string(mode));
	p->in_force = xg_json_set(p->in_force, "read_only", jv_bool(sb->read_only));
	p->in_force = xg_json_set(p->in_force, "writable", jv_array());
}

int xg_tool_sandbox_pick(struct xg_tool_sandbox *sb, const char *given, int read_only,
			 jv *rec, jv *notices, char *msg, size_t n)
{
	struct pick p = { given, jv_null(), jv_array(), msg, n };
	struct setting s = { NULL, NULL, jv_null(), NULL };
	int ok, hide = 0, rc;
	char why[512];
	jv conf = jv_null();

	*msg = '\0';
	in_force(&p, sb, "off");
	if ((rc = setting(&p, &s, &conf)))
		goto out;
	if (!read_only && (!s.value || !strcmp(s.value, "off")))
		goto out;
	ok = xg_tool_sandbox_find(&sb->bwrap, &sb->userns, why, sizeof(why));
	if (!ok && s.value && strcmp(s.value, "off")) {
		rc = fail(&p, XG_EX_CONFIG, "%s asks for the sandbox, which cannot run: %s",
			  s.from, why);
		goto out;
	}
	if (!ok) {
		/* Read-only without one: the caller tells the person why. */
		snprintf(msg, n, "%s", why);
		goto out;
	}
	sb->net = s.value && !strcmp(s.value, "net");
	sb->read_only = read_only;
	in_force(&p, sb, sb->net ? "net" : "on");
	sb->hide = xg_calloc(3, sizeof(char *));
	if ((sb->hide[hide] = hidden(xg_path_config(NULL))))
		hide++;
	if ((sb->hide[hide] = hidden(xg_path_state(NULL))))
		hide++;
	/* The person's skills are theirs to show: the model reads them. */
	sb->show = xg_calloc(2, sizeof(char *));
	sb->show[0] = hidden(xg_path_config("skills"));
	rc = pick_writable(sb, &p, &s);
out:
	jv_free(s.writable);
	jv_free(conf);
	*rec = p.in_force;
	*notices = p.notices;
	return rc;
}

void xg_tool_sandbox_release(struct xg_tool_sandbox *sb)
{
	char **h;

	for (h = sb->hide; h && *h; h++)
		free(*h);
	free(sb->hide);
	for (h = sb->show; h && *h; h++)
		free(*h);
	free(sb->show);
	for (h = sb->writable; h && *h; h++)
		free(*h);
	free(sb->writable);
	free(sb->bwrap);
	memset(sb, 0, sizeof(*sb));
}
