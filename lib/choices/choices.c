/*
 * The handle that holds the catalog, the model records the files of the
 * subsystem write, and what is wrong with a command line's options.
 */
#include "xg.h"
#include "choices/internal.h"
#include "conversation.h"

int xg_choices_init(struct xg_choices *c, int verbose)
{
	memset(c, 0, sizeof(*c));
	c->verbose = verbose;
	return xg_catalog_load(&c->cat);
}

void xg_choices_release(struct xg_choices *c)
{
	xg_catalog_release(&c->cat);
}

jv xg_choices_model_record(jv m, jv effort, const char *source, const char *account,
			   const char *mode)
{
	static const char *const fields[] = {
		"provider", "name", "kind", "base_url", "context_window", "max_output_tokens", NULL
	};
	jv r = xg_rec_new("model");
	int i;

	r = xg_json_set(r, "id", jv_copy(xg_json_get_peek(m, "id")));
	for (i = 0; fields[i]; i++)
		r = xg_json_set(r, fields[i], jv_copy(xg_json_get_peek(m, fields[i])));
	if (jv_is_valid(xg_json_get_peek(m, "dialect")))
		r = xg_json_set(r, "dialect", jv_copy(xg_json_get_peek(m, "dialect")));
	r = xg_json_set(r, "effort", effort);
	r = xg_json_set(r, "source", jv_string(source));
	r = xg_json_set(r, "account", jv_string(account));
	jv_free(m);
	return xg_json_set(r, "mode", jv_string(mode));
}

jv xg_choices_null_record(const char *source, const char *account, const char *mode,
			  const char *reason)
{
	jv r = xg_rec_new("model");

	r = xg_json_set(r, "id", jv_null());
	r = xg_json_set(r, "provider", jv_null());
	r = xg_json_set(r, "effort", jv_null());
	r = xg_json_set(r, "source", jv_string(source));
	r = xg_json_set(r, "account", account ? jv_string(account) : jv_null());
	r = xg_json_set(r, "mode", jv_string(mode));
	return xg_json_set(r, "reason", jv_string(reason));
}

/* What is wrong with a mode given to set, get or resolve, NULL when
 * nothing: a person types only normal or plan, and a typo saved as a mode
 * of its own would never be used again, so the closer one is offered.
 * start, a stage of a pipeline, takes any mode name, as the other stages
 * do. */
static char *mode_misused(const char *mode)
{
	int dn, dp;

	if (!strcmp(mode, "normal") || !strcmp(mode, "plan"))
		return NULL;
	dn = xg_catalog_distance(mode, "normal");
	dp = xg_catalog_distance(mode, "plan");
	if ((dn < dp ? dn : dp) > 3)
		return xg_asprintf("'%s' is not a mode: the modes are normal and plan", mode);
	return xg_asprintf("'%s' is not a mode: the modes are normal and plan; did you mean '%s'?",
			   mode, dn <= dp ? "normal" : "plan");
}

char *xg_choices_misused(const struct xg_choices_want *w, const char *verb, const char *probe,
			 int remove)
{
	char *bad;

	if (w->mode && !xg_conv_mode_valid(w->mode))
		return xg_asprintf("'%s' " XG_CONV_MODE_BAD, w->mode);
	if (w->mode && strcmp(verb, "start") && (bad = mode_misused(w->mode)))
		return bad;
	if (w->account && !xg_account_name_valid(w->account))
		return xg_asprintf("'%s' " XG_ACCOUNT_NAME_BAD, w->account);
	if (w->conversation && !xg_conv_id_valid(w->conversation))
		return xg_asprintf("'%s' " XG_CONV_ID_BAD, w->conversation);
	if (w->conversation && strcmp(verb, "start"))
		return xg_strdup("--conversation is for 'start'");
	if (remove && strcmp(verb, "auth"))
		return xg_strdup("--remove is for 'auth'");
	if (probe && strcmp(verb, "models"))
		return xg_strdup("--probe is for 'models'");
	return NULL;
}
