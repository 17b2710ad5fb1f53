/*
 * xg-run --settings (man 1 xg-run, OPTIONS): the policies a run would
 * follow, read as a run reads them, and where each came from, without
 * running anything.  No provider, model or request is needed, so a person
 * can check what an environment or a config.json changes before a long run.
 *
 * The policies: the stall watch's windows and heartbeat (stall.c), the
 * retry policy with the least and the most its waits add up to
 * (provider/retry.c), the work slices (slice.c) and compaction's reserve
 * (compaction.c).  Each is {"value", "from"}, from being "default", the
 * option, the variable or config.json's field that set it.  A setting that
 * does not parse is a notice first, as in a run, and the defaults stand.
 *
 * To a pipe or a file the output is records (man 5 xg-records, settings);
 * to a terminal, a short table of the same (dispatch/settings.c).
 */
#include "xg.h"
#include "run/internal.h"
#include "provider/provider.h"
#include "dispatch/dispatch.h"

static jv part(jv value, const char *from)
{
	return xg_json_set(xg_json_set(jv_object(), "value", value), "from", jv_string(from));
}

static jv notice(const char *text)
{
	jv n = xg_rec_new("notice");

	n = xg_json_set(n, "from", jv_string("xg-run"));
	return xg_json_set(n, "text", jv_string(text));
}

static jv stall_part(jv *notices)
{
	struct run_stall_policy pol;
	const char *from;
	char *problem;
	jv v = jv_object();

	if (xg_run_stall_policy(&pol, &from, &problem) < 0) {
		*notices = jv_array_append(*notices, notice(problem));
		free(problem);
	}
	v = xg_json_set(v, "reply_ms", jv_number((double)pol.reply_ms));
	v = xg_json_set(v, "tool_ms", jv_number((double)pol.tool_ms));
	v = xg_json_set(v, "grace_ms", jv_number((double)pol.grace_ms));
	v = xg_json_set(v, "beat_ms", jv_number((double)pol.beat_ms));
	return part(v, from);
}

/* The retry policy as XG_RETRY makes it; a part that does not parse is
 * ignored while the rest applies, as the provider does. */
static jv retry_part(jv *notices)
{
	struct xg_provider_policy pol;
	const char *spec = getenv("XG_RETRY"), *from = "default";
	char err[160], *text;
	long lo, hi, least = 0, most = 0;
	jv v = jv_object();
	int i;

	xg_provider_policy_default(&pol);
	if (spec && *spec) {
		from = "XG_RETRY";
		if (xg_provider_policy_parse(&pol, spec, err, sizeof(err)) < 0) {
			text = xg_asprintf("%s; ignoring that part", err);
			*notices = jv_array_append(*notices, notice(text));
			free(text);
		}
	}
	for (i = 1; i <= pol.attempts; i++) {
		xg_provider_retry_range(&pol, i, &lo, &hi);
		least += lo;
		most += hi;
	}
	v = xg_json_set(v, "attempts", jv_number(pol.attempts));
	v = xg_json_set(v, "base_ms", jv_number((double)pol.base_ms));
	v = xg_json_set(v, "cap_ms", jv_number((double)pol.cap_ms));
	v = xg_json_set(v, "idle_ms", jv_number((double)pol.idle_ms));
	v = xg_json_set(v, "connect_ms", jv_number((double)pol.connect_ms));
	v = xg_json_set(v, "budget_ms", jv_number((double)pol.budget_ms));
	v = xg_json_set(v, "waits_ms", xg_json_set(xg_json_set(jv_object(), "least",
							       jv_number((double)least)),
						   "most", jv_number((double)most)));
	return part(v, from);
}

static jv slice_part(const struct xg_run_opts *o, jv *notices)
{
	struct run_slice s;
	const char *from;
	char *problem;
	jv v = jv_object();

	memset(&s, 0, sizeof(s));
	if (xg_run_slice_policy(&s, o->work_slice, &from, &problem) < 0) {
		*notices = jv_array_append(*notices, notice(problem));
		free(problem);
	}
	v = xg_json_set(v, "off", jv_bool(s.off));
	v = xg_json_set(v, "max_tool_calls", jv_number(s.max_calls));
	v = xg_json_set(v, "max_ms", jv_number((double)s.max_ms));
	v = xg_json_set(v, "max_slices", jv_number(s.max_slices));
	return part(v, from);
}

int xg_run_settings(const struct xg_run_opts *o, FILE *out)
{
	struct xg_rec_writer w;
	jv notices = jv_array(), rec = xg_rec_new("settings");
	int tty = isatty(fileno(out));

	rec = xg_json_set(rec, "stall", stall_part(&notices));
	rec = xg_json_set(rec, "retry", retry_part(&notices));
	rec = xg_json_set(rec, "work_slice", slice_part(o, &notices));
	rec = xg_json_set(rec, "compaction", part(xg_run_compact_policy(), "default"));
	xg_rec_writer_init(&w, out);
	/* A person at a terminal reads the notices on stderr, as xg-run's
	 * warnings; a pipe gets them as records, before the settings. */
	jv_array_foreach(notices, i, n) {
		(void)i;
		if (tty) {
			xg_warn("%s", jv_string_value(xg_json_get_peek(n, "text")));
			jv_free(n);
		} else {
			xg_rec_write(&w, n);
		}
	}
	jv_free(notices);
	if (tty) {
		xg_render_settings_peek(out, rec);
		jv_free(rec);
	} else {
		xg_rec_write(&w, rec);
	}
	xg_rec_writer_release(&w);
	return 0;
}
