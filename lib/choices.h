#ifndef XG_CHOICES_H
#define XG_CHOICES_H
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
 * model of the catalog, with its default effort, and a notice.
 *
 * The functions return 0 or an exit code (XG_EX_*), and report their own
 * errors on stderr.
 */
#include "json.h"
#include "catalog.h"

struct xg_choices {
	struct xg_catalog cat;
	int verbose;		/* -v: skipped candidates on stderr and in the record */
};

/* Loads the catalog; 0 or an exit code. */
int xg_choices_init(struct xg_choices *c, int verbose);
void xg_choices_release(struct xg_choices *c);


/* The account's choices.json as an object ({} when there is none), checked;
 * 0, or 78 naming the file (and the line of a parse error). */
int xg_choices_load(const char *account, jv *choices);

/* Saves model (checked against the catalog) and effort (NULL for none;
 * checked against the model) for mode, with updatedAt now. */
int xg_choices_set(struct xg_choices *c, const char *account, const char *mode,
		   const char *model, const char *effort);

/*
 * The model record for mode's resolution ("source": "mode").  On success
 * *model is the record and *notice a notice's text or NULL (the caller
 * frees it).  When nothing is usable *model still is a record, with "id":
 * null and a "reason", and the exit code is 77 (78 for an empty catalog).
 */
int xg_choices_resolve(struct xg_choices *c, const char *account, const char *mode,
		       jv *model, char **notice);

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

/*
 * The start model of the conversation request names (request may be
 * jv_null()): an explicit model, else the conversation's own while it is
 * usable, else the resolution for the request's mode.  A fallback from the
 * conversation's model is appended to the conversation as a model_change
 * entry (never to choices.json).  *records (an array) receives what to
 * write: notice records, then exactly one model record, whose "id" is null
 * (with a "reason") when the exit code is not 0.  Consumes request.
 */
int xg_choices_start(struct xg_choices *c, const struct xg_choices_want *w, jv request,
		     jv *records);

/* ---- the commands of xg-choices, as library calls ---- */
struct xg_rec_reader;
struct xg_rec_writer;

/* A catalog_model record per offered model, saying whether account is
 * authenticated for its provider. */
int xg_choices_write_models(const char *account, struct xg_rec_writer *w);
/* An account record per account directory, and for current. */
int xg_choices_write_accounts(const char *current, struct xg_rec_writer *w);
/* A choice record per saved mode (only mode's when not NULL: exit 1 when
 * it has none). */
int xg_choices_write_saved(const char *account, const char *mode, struct xg_rec_writer *w);
/*
 * The start filter: passes every record of r (which may be NULL, for no
 * input) to w, writing each request's notices and model record right after
 * it, or one model record at the end when no request came.  init_rc is
 * xg_choices_init's: when it failed, each model record has "id": null.
 * Returns the first failure's exit code, 0 when every start succeeded.
 */
int xg_choices_filter(struct xg_choices *c, int init_rc, const struct xg_choices_want *want,
		      struct xg_rec_reader *r, struct xg_rec_writer *w);

#endif
