#ifndef XG_CHOICES_H
#define XG_CHOICES_H
/*
 * The choices subsystem, xg_choices_, xg_account_, xg_catalog_: accounts and
 * their keys, the model catalog, saved model choices and the start model of a
 * conversation.  Its one public header.  Each verb of xg-choices is one call
 * here (xg_catalog_write_models, xg_account_write_list, xg_account_auth,
 * xg_choices_set, xg_choices_write_saved, xg_choices_write_resolved,
 * xg_choices_filter, xg_catalog_probe), so its main only parses and
 * dispatches; xg_choices_view_open draws a listing for a person.
 */
#include <stdio.h>
#include "json.h"

struct xg_rec_writer;
struct xg_buf;

/*
 * Accounts and their credentials (man 5 xg-config).
 *
 * An account is a directory $config/accounts/NAME holding choices.json and
 * auth.json.  The current account is the one named explicitly (--account,
 * request.account), else $XG_ACCOUNT, else the first line of
 * $config/account, else "default".
 *
 * A provider is authenticated for an account when its key variable is set
 * and not empty, or the account's auth.json holds a key for it, or the
 * provider needs no key.  auth.json is created 0600 and written atomically;
 * one that group or others may read is refused (exit 77) and never read.
 * No function here prints a key.
 */

/* 1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-'. */
#define XG_ACCOUNT_NAME_BAD "is not an account name (1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-')"
int xg_account_name_valid(const char *name);

/*
 * The current account.  explicit (may be NULL) wins, with source naming
 * where it came from for messages ("--account").  Sets *name (the caller
 * frees it) and, when from is not NULL, *from to a word saying where the
 * name came from.  0, or 78 for a name that is not valid (reported).
 */
int xg_account_current(const char *explicit, const char *source, char **name,
		       const char **from);
/* $config/accounts/NAME/FILE (FILE may be NULL); the caller frees it. */
char *xg_account_path(const char *account, const char *file);
/* Makes the account's directory and locks its file (FILE.lock beside it,
 * as long as the lock timeout allows): 0 and *fd the descriptor holding the
 * lock, or 75 (held too long by another) or 74 after a message, with *fd
 * -1. */
int xg_account_lock(const char *account, const char *file, int *fd);
/* The names of the accounts that have a directory, sorted (a jv array). */
jv xg_account_list(void);
/* The accounts verb: an account record per account directory, and one for
 * current when it has none. */
int xg_account_write_list(const char *current, struct xg_rec_writer *w);

/* An account's keys, read from auth.json when first needed. */
struct xg_account_keys {
	char *account;
	char *path;
	jv keys;	/* provider -> {"key": ...}; jv_null() until read */
	int status;	/* 0 until read; 1 read; else the exit code of the failure */
};

void xg_account_keys_init(struct xg_account_keys *k, const char *account);
void xg_account_keys_release(struct xg_account_keys *k);

/*
 * Whether provider (its catalog entry, with key_env; only looked at) is
 * authenticated for the account: 1 (and *how, when not NULL, "env",
 * "auth.json" or "none"), 0 when it is not, -1 when auth.json had to be
 * read and could not be (reported once; k->status holds the exit code, 77
 * or 78 or 74).
 */
int xg_account_authenticated_peek(struct xg_account_keys *k, const char *name, jv provider,
				  const char **how);

/* Adds every key of the account's auth.json to the secrets redacted
 * (redact.h); an auth.json that cannot be read adds none. */
void xg_account_keys_redact(struct xg_account_keys *k);
/*
 * The key for provider (consumed): from its key variable, else auth.json.
 * 1 and *key set (the caller frees it, ideally after clearing it), 0 when
 * there is none (or the provider needs none), -1 as above (k->status the
 * exit code), or for a key holding a space or a control character, which
 * would break the request's header (reported, the value never shown; k->status
 * is not a failure's then: exit 77).  It consumes
 * provider rather than peek at it because *key is the caller's own, not
 * borrowed, as a _peek's answer would be.
 */
int xg_account_key(struct xg_account_keys *k, const char *name, jv provider, char **key);

/*
 * Stores key for provider in the account's auth.json, under a lock,
 * atomically, mode 0600.  0, or an exit code after reporting (77 for an
 * auth.json others can read, 75 when the lock is busy).
 */
int xg_account_store_key(const char *account, const char *provider, const char *key);
/* Removes provider's key; 0 (also when there was none) or an exit code. */
int xg_account_remove_key(const char *account, const char *provider);

/* Reads a key from fd: surrounding white space dropped; one that is empty,
 * too long or holds a space or a control character is refused (exit 65,
 * with a message that does not show it).  0 and *key set, or the exit code. */
int xg_account_read_key(int fd, char **key);
/* The same check of a key read into b, which is cleared and released. */
int xg_account_take_key(struct xg_buf *b, char **key);
/*
 * Asks for provider's key on the terminal (/dev/tty, else standard input
 * and error) with the echo off, and puts the terminal back on every way
 * out, a signal's too (tty.c).  0 and *key set, 65 for a key that is not
 * one (as xg_account_read_key), 74, or 128 + the signal that stopped it.
 */
int xg_account_ask_key(const char *provider, char **key);

/*
 * The auth verb: checks that the catalog has provider (78 if not), then
 * removes its stored key (remove set), or stores the key read from standard
 * input, which must not be a terminal or closed (2).  0, or an exit code
 * after reporting.
 */
int xg_account_auth(const char *account, const char *provider, int remove);

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

struct xg_catalog {
	jv models;		/* id -> model record fields, in catalog order */
	jv providers;		/* name -> provider, without its models */
	jv bad;			/* id or provider name -> why its entry is left out */
	jv problems;		/* what is wrong in the files, one message a cause */
	jv configured;		/* provider -> true: named by the user's file, or
				 * its base_url_env variable is set */
	jv preferred;		/* id -> true for the models the user's file gives,
				 * in its order */
	char *share_path;	/* the shipped file */
	char *user_path;	/* the user's file, which may not exist */
};

/*
 * Loads and checks the merged catalog.  An entry that is wrong (a field of
 * the wrong kind, an unknown API kind) is left out, and cat->problems and
 * cat->bad say why, naming the file, the line and the field; the rest of
 * the catalog is usable.  A field no entry has is a problem that leaves
 * nothing out.  Nothing is printed but for the failures: 0, or an exit
 * code (78 for a missing shipped file or one that is not JSON, 74) after
 * reporting it; then there is nothing to release (releasing anyway is
 * harmless).
 *
 * A model entry may leave out what xg can guess: context_window is then
 * XG_CATALOG_CONTEXT_WINDOW, max_output_tokens XG_CATALOG_MAX_OUTPUT (no
 * more than a quarter of the context window), efforts none, and
 * default_effort "medium" when the model accepts it, else its first effort.
 * A provider's kind defaults to "openai-chat"; its base_url_env, when set
 * and not empty, replaces its base_url.
 */
#define XG_CATALOG_CONTEXT_WINDOW 32768
#define XG_CATALOG_MAX_OUTPUT 4096
int xg_catalog_load(struct xg_catalog *cat);
void xg_catalog_release(struct xg_catalog *cat);
/* Keeps of the catalog only model id's entry (its limits and prices), for
 * a process that has chosen its model and opened its provider: the rest
 * is some 25 KB of values it would hold for its whole life. */
void xg_catalog_narrow(struct xg_catalog *cat, const char *id);
/* Prints cat->problems on standard error, one warning each. */
void xg_catalog_warn(const struct xg_catalog *cat);
/* Why the model id (or its provider) is left out of the catalog, borrowed;
 * NULL when it is not. */
const char *xg_catalog_bad_peek(const struct xg_catalog *cat, const char *id);
/* Whether provider is configured: named by the user's models.json, or its
 * base_url_env variable set. */
int xg_catalog_configured_peek(const struct xg_catalog *cat, const char *provider);
/*
 * Why id cannot be used, for a model that is not offered: its bad entry's
 * message, or "'id' is not offered by the catalog" with the closest ids of
 * the catalog as a "did you mean" (the same model name under another
 * provider, else the ids fewest edits away).  The caller frees it.
 */
char *xg_catalog_not_offered(const struct xg_catalog *cat, const char *id);

/*
 * The model's entry, borrowed; jv_invalid() when it is not offered.  Its
 * fields: id, provider, name (the model part of the id), kind, base_url,
 * key_env, dialect (when the provider has one), context_window,
 * max_output_tokens, efforts, default_effort, and price when it has one.
 */
jv xg_catalog_model_peek(const struct xg_catalog *cat, const char *id);
/*
 * What tokens cost on model (an entry of the catalog, only looked at), in
 * dollars, from its price (xg-config(5)): input less cached_input at the
 * input price, cached_input at the cached price (the input price when it
 * has none), output at the output price.  -1 when the model has no price.
 */
double xg_catalog_cost_peek(jv model, long long input, long long cached, long long output);
/* The provider (kind, base_url, key_env, and dialect and headers when
 * given), borrowed; jv_invalid() if none. */
jv xg_catalog_provider_peek(const struct xg_catalog *cat, const char *name);

/* Whether the model accepts effort (a string). */
int xg_catalog_accepts_effort_peek(jv model, const char *effort);
/* The model's default effort, or NULL for a model that takes none. */
const char *xg_catalog_default_effort_peek(jv model);
/* "low, medium, high" (or "none") for messages, from model (consumed); the
 * caller frees it. */
char *xg_catalog_efforts_text(jv model);

/* Whether s has the form PROVIDER/MODEL. */
int xg_catalog_id_valid(const char *s);

/* The models verb: a catalog_model record per offered model, saying
 * whether account is authenticated for its provider, and how, and whether
 * resolution may pick it by itself (configured). */
int xg_catalog_write_models(const char *account, struct xg_rec_writer *w);

/*
 * The models verb with --probe: asks provider's server for the models it
 * serves (GET {base_url}/models, with the account's key for it when there
 * is one, which is never shown), and writes a served_model record for
 * each, saying whether the catalog offers it and, when not, the line to
 * add under the provider's "models" in models.json.  0, or 78 for a
 * provider the catalog does not have, 69 when the server cannot be reached
 * (within a few seconds) or does not answer with a list, 77 when it refuses
 * the key; each after reporting, naming the provider and the URL.
 */
int xg_catalog_probe(const char *account, const char *provider, struct xg_rec_writer *w);

/*
 * An account's saved model choices, and the start model of a conversation
 * (design.md B1, ADR-0064; man 1 xg-choices).
 *
 * $config/accounts/NAME/choices.json holds, per mode ("normal", "plan", or
 * any other name a caller uses), the model, effort and updatedAt of the
 * person's last deliberate selection.  It is written only by
 * xg_choices_set, atomically and under choices.json.lock; a reader never
 * rewrites it, so a broken file stays as the person left it.
 *
 * Resolution for a mode, field by field: the candidates are the mode's
 * choice, then normal's, then every other mode's newest first by
 * updatedAt.  The model is the first candidate's that the catalog offers
 * and the account is authenticated for; the effort is that candidate's when
 * the model accepts it, else the first later candidate's that it accepts,
 * else the model's default.  With no usable candidate, the first usable
 * model of the catalog, with its default effort, and a notice; there a
 * provider that needs no key counts only when configured
 * (xg_catalog_configured_peek), and within a provider the models the
 * user's file gives come first.
 *
 * The functions return 0 or an exit code (XG_EX_*), and report their own
 * errors on stderr.
 */

struct xg_choices {
	struct xg_catalog cat;
	int verbose;		/* -v: skipped candidates on stderr and in the record */
	int told;		/* the catalog's problems have been given as notices */
};

/* Loads the catalog; 0 or an exit code. */
int xg_choices_init(struct xg_choices *c, int verbose);
void xg_choices_release(struct xg_choices *c);

/* The account's choices.json as an object ({} when there is none), checked;
 * 0, or 78 naming the file (and the line of a parse error). */
int xg_choices_load(const char *account, jv *choices);

/* The set verb: saves model (checked against the catalog, which it loads)
 * and effort (NULL for none; checked against the model) for mode (NULL:
 * normal), with updatedAt now. */
int xg_choices_set(const char *account, const char *mode, const char *model,
		   const char *effort);
/* The get verb: a choice record per saved mode (only mode's when not NULL:
 * exit 1 when it has none). */
int xg_choices_write_saved(const char *account, const char *mode, struct xg_rec_writer *w);

/*
 * The model record for mode's resolution ("source": "mode").  On success
 * *model is the record and *notice a notice's text or NULL (the caller
 * frees it).  When nothing is usable *model still is a record, with "id":
 * null, a "reason" that says how to go on, and "exit": the exit code, 77
 * when a saved model (or one the user's file gives) lacks its key, else 78.
 */
int xg_choices_resolve(struct xg_choices *c, const char *account, const char *mode,
		       jv *model, char **notice);
/* The resolve verb: loads the catalog, resolves mode (NULL: normal) and
 * writes the model record to w, its notice to stderr. */
int xg_choices_write_resolved(const char *account, const char *mode, int verbose,
			      struct xg_rec_writer *w);

/* What a caller of xg_choices_start asks for; each field may be NULL, and
 * then the request's field (or the default) is used. */
struct xg_choices_want {
	const char *account;	/* --account */
	const char *mode;	/* --mode */
	const char *model;	/* --model: an explicit model */
	const char *effort;	/* --effort */
	const char *conversation;	/* --conversation */
	size_t lineno;		/* the request's line, for messages; 0 for none */
};

/* What is wrong with the options given for verb (an option of another
 * verb; for set, get and resolve a mode other than normal and plan, with
 * the closer as a "did you mean"; for start a mode that is not a mode
 * name; an account or conversation that is not valid), as the text of a
 * usage error; NULL when nothing.  The caller frees it.  start, a request's
 * mode and the modes of choices.json take any mode name, as the other
 * stages do: a person's typo is caught where it would be saved. */
char *xg_choices_misused(const struct xg_choices_want *w, const char *verb, const char *probe,
			 int remove);

/*
 * The start model of the conversation request names (request may be
 * jv_null()): an explicit model, else the conversation's own while it is
 * usable, else the resolution for the request's mode.  A fallback from the
 * conversation's model is appended to the conversation as a model_change
 * entry (never to choices.json).  *records (an array) receives what to
 * write: notice records, one per cause (the catalog's problems, on the
 * first call for c only; a torn conversation; the fallback or the
 * catalog's model; an effort not applied), then exactly one model record,
 * whose "id" is null (with a "reason" and "exit", the exit code) when the
 * exit code is not 0.  Consumes request.
 */
int xg_choices_start(struct xg_choices *c, const struct xg_choices_want *w, jv request,
		     jv *records);

/*
 * The start stage: loads the catalog, then passes every record read from fd
 * (standard input; -1 for no input) to w, writing each request's notices
 * and model record right after it, or one model record at the end when no
 * request came.  When the catalog cannot be read each model record has
 * "id": null.  Returns the first failure's exit code, 74 when w cannot be
 * written, 0 when every start succeeded.
 */
int xg_choices_filter(const struct xg_choices_want *want, int verbose, int fd,
		      struct xg_rec_writer *w);

/*
 * The views of models, get and accounts for a person (xg-choices(1)): on a
 * terminal, unless json, the records the verb writes are kept and drawn as
 * a table when it ends.  xg_choices_view_open gives the stream the verb's
 * record writer writes to (out itself when records are wanted);
 * xg_choices_view_close draws what was kept and returns rc, or 74 when
 * it could not be kept.
 */
struct xg_choices_view {
	FILE *out;
	FILE *mem;		/* the records kept, or NULL */
	const char *verb;
	char *text;
	size_t len;
};
FILE *xg_choices_view_open(struct xg_choices_view *v, const char *verb, FILE *out, int json);
int xg_choices_view_close(struct xg_choices_view *v, int rc);

#endif
