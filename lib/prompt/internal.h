#ifndef XG_PROMPT_INTERNAL_H
#define XG_PROMPT_INTERNAL_H
/*
 * Private to lib/prompt/: nothing outside the folder includes this header.
 *
 * How compile.c counts characters, for project.c; and what the store
 * (variant.c) tells the verbs (verbs.c) about its layout, so that listing
 * variants and versions needs no path of its own.  Lists of
 * names are sorted, NULL-terminated, and freed with xg_variant_strings_free.
 *
 * The files, top down: a file calls only files below it.
 *
 *   verbs.c     what xg-prompt-compile's verbs write
 *   filter.c    xg-prompt-compile as a filter: a pack after each request
 *   pack.c      a pack for a request: which version, compiled how
 *   variant.c   the variant store: names, HEADs, versions saved
 *   skills.c    the skills: SKILL.md files found, listed, named as $name
 *   project.c   the project instructions (AGENTS.md) a pack carries
 *   manifest.c  a variant's manifest and section files, its version id
 *   compile.c   a loaded variant compiled into a pack for a model and mode
 *   compaction.c
 *               what compaction sends, filled from the pack's templates
 *   template.c  a section's text with its placeholders filled in
 */
#include <stddef.h>

/* The characters (code points) in p[0..n), which is valid UTF-8. */
size_t xg_prompt_chars(const char *p, size_t n);

/*
 * The directories whose files hold for workspace (a real path), top down:
 * from the top of the git work tree holding it down to it, or it alone
 * outside one.  *nr gets their number; the caller frees each and the array.
 */
char **xg_prompt_project_dirs(const char *workspace, size_t *nr);
/* path as the person would name it: under their home, with ~ (new). */
char *xg_prompt_path_shown(const char *path);

/* Whether name is the shipped, read-only variant. */
int xg_variant_is_default(const char *name);
/* Whether name@version has its directory under the data tree. */
int xg_variant_stored(const char *name, const char *version);
/* Whether name has a HEAD file under the data tree. */
int xg_variant_has_head(const char *name);
/* The directories under $data/variants that are variant names. */
char **xg_variant_stored_names(size_t *nr);
/* The version ids stored for name, in name order. */
char **xg_variant_stored_versions(const char *name, size_t *nr);
void xg_variant_strings_free(char **v);

#endif
