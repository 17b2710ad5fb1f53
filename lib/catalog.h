#ifndef XG_CATALOG_H
#define XG_CATALOG_H
/*
 * The model catalog: the shipped $share/models.json with the user's
 * $config/models.json merged over it (man 5 xg-config).
 *
 * A provider has a kind, its wire protocol ("openai-responses",
 * "openai-chat", "anthropic-messages"), a base URL, the environment
 * variable that holds its key (null when it needs none), and optionally a
 * "dialect" and "headers" for the provider library: its entry is the
 * provider object xg_provider_new() takes.  A model has a context window, an
 * output limit, the efforts it accepts (maybe none) and its default effort.
 * Model ids are PROVIDER/MODEL, split at the first '/': the model part may
 * hold more ("openrouter/anthropic/claude-sonnet-4.5").
 *
 * A model is offered when the merged catalog lists it.  The user's file adds
 * providers and models, overrides fields of shipped ones, and removes one by
 * setting it to null.
 */
#include "json.h"

struct xg_catalog {
	jv models;		/* id -> model record fields, in catalog order */
	jv providers;		/* name -> provider, without its models */
	char *share_path;	/* the shipped file */
	char *user_path;	/* the user's file, which may not exist */
};

/* Loads and checks the merged catalog.  0, or an exit code (78 for a
 * missing shipped file or a bad one, 74) after reporting it; then there is
 * nothing to release (releasing anyway is harmless). */
int xg_catalog_load(struct xg_catalog *cat);
void xg_catalog_release(struct xg_catalog *cat);

/*
 * The model's entry, borrowed; jv_invalid() when it is not offered.  Its
 * fields: id, provider, name (the model part of the id), kind, base_url,
 * key_env, dialect (when the provider has one), context_window,
 * max_output_tokens, efforts, default_effort.
 */
jv xg_catalog_model_peek(const struct xg_catalog *cat, const char *id);
/* The provider (kind, base_url, key_env, and dialect and headers when
 * given), borrowed; jv_invalid() if none. */
jv xg_catalog_provider_peek(const struct xg_catalog *cat, const char *name);

/* Whether the model accepts effort (a string). */
int xg_catalog_accepts_effort(jv model, const char *effort);
/* The model's default effort, or NULL for a model that takes none. */
const char *xg_catalog_default_effort_peek(jv model);
/* "low, medium, high" (or "none") for messages; the caller frees it. */
char *xg_catalog_efforts_text(jv model);

/* Whether s has the form PROVIDER/MODEL. */
int xg_catalog_id_valid(const char *s);

#endif
