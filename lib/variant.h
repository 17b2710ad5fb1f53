#ifndef XG_VARIANT_H
#define XG_VARIANT_H
/*
 * Prompt variants and their versions (design.md B2 and section 4).
 *
 * A variant is a named set of section files; a version is an immutable
 * snapshot of them, named by the hash of its files (xg_prompt_version_id).
 * Saved versions live under the data tree:
 *
 *   $data/variants/NAME/versions/ID/   manifest, section files, meta.json
 *   $data/variants/NAME/HEAD           the newest adopted version, one line
 *
 * meta.json holds parent, created, tunedFor and note; it is written once,
 * when the version is first saved.  The shipped prompts directory
 * (xg_path_share("prompts")) is the read-only variant "default", whose head
 * is the hash of its files.  When a conversation is pinned to a version of
 * default, that version is also copied under the data tree, so the
 * conversation keeps compiling after an upgrade replaces the shipped files.
 *
 * A conversation's selected version is the "to" of its last variant_change
 * entry ("NAME@ID").  Only the person changes it (select); the first compile
 * for a conversation without one appends a variant_change pinning the version
 * it used, so a head moved later is shown, never followed.
 *
 * Functions report their own errors and return the exit code to use
 * (XG_EX_*), or 0.
 */
#include "json.h"

#define XG_VARIANT_DEFAULT "default"

/* 1 to 64 of [a-z0-9._-], starting with a letter or digit. */
int xg_variant_name_valid(const char *name);
/* 1 to 64 of [A-Za-z0-9._-], starting with a letter or digit. */
int xg_variant_version_valid(const char *version);
/* Splits "NAME" or "NAME@VERSION" into new strings (*version NULL for a
 * bare name); XG_EX_DATAERR for a malformed reference. */
int xg_variant_parse_ref(const char *ref, char **name, char **version);

/* The head version of name (a new string). */
int xg_variant_head(const char *name, char **version);
/* The directory holding name@version (a new string). */
int xg_variant_dir(const char *name, const char *version, char **dir);
/*
 * Loads name@version into *m (version NULL: the head).  *loaded gets the
 * version loaded and *head the variant's head (new strings).  The shipped
 * default's files are read once.
 */
struct xg_prompt_manifest;
int xg_variant_load(const char *name, const char *version, struct xg_prompt_manifest *m,
		    char **loaded, char **head);
/* The version's meta.json into *meta, an object ({} for a shipped default
 * version that was never kept); 78 naming the file (and the line of a parse
 * error) when it is missing, not a JSON object, or has a field of the wrong
 * kind. */
int xg_variant_meta(const char *name, const char *version, jv *meta);

/* A "variant" record for each variant, by name, into the array *out. */
int xg_variant_list(jv *out);
/* A "version" record for each version of name, oldest first. */
int xg_variant_versions(const char *name, jv *out);
/* The "version" record of name@version; with_sections adds each section's
 * manifest line and text. */
int xg_variant_describe(const char *name, const char *version, int with_sections, jv *out);

/*
 * Saves the variant in dir (a manifest and its section files) as a version
 * of name whose parent is the head, and moves the head to it.  Saving the
 * files of an existing version moves the head there and leaves its meta,
 * with a warning on standard error that says so.
 * *version gets the id.
 */
int xg_variant_save(const char *name, const char *dir, const char *tuned_for,
		    const char *note, char **version);
/* Moves name's head to an existing version (restore or revert). */
int xg_variant_set_head(const char *name, const char *version);
/* Copies a shipped default version under the data tree, if not there yet. */
int xg_variant_keep(const char *name, const char *version);

/* The conversation's selected "NAME@VERSION" (new string) into *ref, NULL
 * when it has none. */
int xg_variant_selected(const char *conversation, char **ref);
/* Appends a variant_change to the conversation: from its selected version
 * (if any) to ref ("NAME@VERSION", which must exist); *entry gets the entry
 * (owned) when entry is not NULL. */
int xg_variant_select(const char *conversation, const char *ref, const char *reason, jv *entry);

#endif
