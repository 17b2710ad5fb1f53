/*
 * What the files of the choices subsystem share: the handle that holds the
 * catalog, and the model record each of them writes.
 *
 * The other subjects have files of their own: account.c the accounts and
 * their keys, catalog.c the model catalog, store.c the saved choices of
 * choices.json, resolve.c the model a mode resolves to, start.c the start
 * model of a conversation, and filter.c the start stage over records.
 */
#include "xg.h"
#include "choices/internal.h"

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
