#ifndef XG_CHOICES_INTERNAL_H
#define XG_CHOICES_INTERNAL_H
/*
 * Private to lib/choices/: nothing outside the folder includes this header.
 * The public entry is choices/choices.h.
 *
 * What the files of the choices subsystem share: the resolver, which holds
 * one account's keys and saved choices while a model is decided for it
 * (resolve.c, start.c); the model records they and filter.c write (made in
 * choices.c); and what loading the catalog works with (catalog.c and the
 * files beneath it).  The files, top down: a file calls only files below
 * it.
 *
 *   view.c      the views a person reads: the records of models, get and
 *               accounts drawn as a table on a terminal
 *   filter.c    the start stage: the records flow through, each request
 *               followed by its notices and its model record
 *   start.c     the start model of a conversation: an explicit model, the
 *               conversation's own while it is usable, else the resolution
 *   resolve.c   resolution: the model and effort a mode runs on for an
 *               account, from its saved choices and the catalog
 *   store.c     the saved choices of choices.json: their check, the set
 *               and get verbs
 *   choices.c   the handle that holds the catalog, the model records, and
 *               what is wrong with a command line's options
 *   models.c    the models verb: each model with the account's
 *               authentication, and --probe, what a provider's server serves
 *   auth.c      the auth verb: a key kept for a provider the catalog has
 *   tty.c       a key typed at the terminal, the echo off
 *   suggest.c   "did you mean" for a model the catalog does not offer
 *   catalog.c   the model catalog: both files merged, checked and
 *               flattened, and the lookups into it
 *   check.c     the checks of the catalog's names and entries, the defaults
 *               of what an entry leaves out, where a field is in its file
 *   effort.c    a model's efforts: whether it accepts one, its default
 *   price.c     a model's price: its check, and the cost of tokens
 *   lines.c     the line of a key in a JSON file, for messages
 *   account.c   the accounts, the current one, and their keys in auth.json
 *
 * The catalog and the accounts know nothing of each other: whether an
 * account is authenticated for a provider is decided above both, by the
 * files that hold the catalog and the keys (resolve.c, models.c), and the
 * auth verb asks the catalog before it keeps a key.
 */
#include "choices/choices.h"

/* A saved choice in the order resolution tries them; defined in resolve.c. */
struct xg_choices_cand;

/* What resolution for one account works with. */
struct xg_choices_resolver {
	struct xg_choices *c;
	const char *account;
	struct xg_account_keys keys;
	jv choices;		/* the account's choices.json */
	struct xg_choices_cand *cands;	/* mode's first, normal's, then newest first */
	size_t ncands;
	jv skipped;		/* [{mode, id, reason}]: what -v shows */
	char *nokey;		/* why the first candidate skipped for want of a key was */
};

/* Reads the account's choices and orders them for mode (NULL: normal).  0,
 * or the exit code of a choices.json that cannot be used; release the
 * resolver either way. */
int xg_choices_resolver_init(struct xg_choices_resolver *x, struct xg_choices *c,
			     const char *account, const char *mode);
void xg_choices_resolver_release(struct xg_choices_resolver *x);

/*
 * Whether model id can be used by the account: 1; 0 with *why saying why
 * not and *code the exit code that goes with it; -1 with *why and *code set
 * when auth.json was refused.  The caller frees *why.
 */
int xg_choices_resolve_usable(struct xg_choices_resolver *x, const char *id, char **why,
			      int *code);
/* The effort for model id (which the catalog offers): the first effort of
 * the candidates from index from on that it accepts, else its default (null
 * for a model that takes none).  *src names where it came from: a mode, or
 * "default". */
jv xg_choices_resolve_effort(struct xg_choices_resolver *x, const char *id, size_t from,
			     const char **src);
/*
 * Resolves mode into *out, a model record with source.  *notice is set (the
 * caller frees it) when the catalog's first usable model had to be used.
 * 0, or an exit code after reporting, and then *out has "id": null.
 */
int xg_choices_resolve_mode(struct xg_choices_resolver *x, const char *mode,
			    const char *source, jv *out, char **notice);

/* A model record for catalog entry m at effort; consumes both. */
jv xg_choices_model_record(jv m, jv effort, const char *source, const char *account,
			   const char *mode);
/* The model record for no usable model: "id": null and the reason
 * (account may be NULL). */
jv xg_choices_null_record(const char *source, const char *account, const char *mode,
			  const char *reason);

/* What loading the catalog works with (catalog.c, check.c): both files'
 * values (the user's jv_null() when there is none) and their text, for the
 * lines of messages. */
struct xg_catalog_loading {
	struct xg_catalog *cat;
	jv shipped, user;
	struct xg_buf stext, utext;
};

int xg_catalog_provider_name_valid(const char *s);
int xg_catalog_model_name_valid(const char *s);
/* An http:// or https:// URL with something after the scheme. */
int xg_catalog_url_valid(const char *url);
/* What is wrong with a provider's or a model's merged entry (only looked
 * at): NULL when nothing, else the message (the caller frees it) and in
 * *field the field at fault (NULL for the entry itself). */
char *xg_catalog_check_provider(const char *name, jv p, const char **field);
char *xg_catalog_check_model(const char *prov, const char *name, jv m, const char **field);
/* The model entry m (consumed, checked) with the defaults of what it does
 * not give. */
jv xg_catalog_defaults(jv m);
/* What is wrong with a model's price (only looked at), NULL when nothing:
 * an object of "input", "cached_input" (optional) and "output", each a
 * number of dollars per million tokens, not negative (price.c).  The
 * caller frees it. */
char *xg_catalog_check_price(jv price);
/* "'FILE' line N" for field of provider prov's entry, or of its model
 * (model NULL for the provider's own; field NULL for the entry): the file
 * that gives it.  The caller frees it. */
char *xg_catalog_where(const struct xg_catalog_loading *l, const char *prov, const char *model,
		       const char *field);
/* Adds a problem to l->cat for each field of entry (only looked at) that a
 * provider's entry (model NULL) or a model's does not have. */
void xg_catalog_unknown_fields(struct xg_catalog_loading *l, const char *prov,
			       const char *model, jv entry);
/* The line of the deepest key of path (n keys from the top object) in the
 * JSON text; 0 when not even the first is there.  lines.c. */
size_t xg_catalog_line(const char *text, size_t len, const char *const *path, size_t n);
/* How many edits (case ignored) turn a into b; 99 for long strings. */
int xg_catalog_distance(const char *a, const char *b);

#endif
