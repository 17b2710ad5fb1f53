#ifndef XG_PROMPT_H
#define XG_PROMPT_H
/*
 * Prompt packs (design.md B2, B8; man 1 xg-prompt-compile).
 *
 * A variant version is a directory holding a manifest and one text file per
 * section.  The manifest has one line per section,
 *
 *   name  file  budget  kind  mode
 *
 * where budget is the most characters (Unicode code points) the section may
 * hold, kind is "stable" or "dynamic", and mode says where the section goes:
 * "all" (every system prompt), a mode name such as "normal" or "plan" (the
 * system prompt of that mode only), or "-" (a template other programs fill
 * in and send on their own: the goal continuation, the compaction request,
 * ...).  Blank lines and lines starting with '#' are comments.
 *
 * The system prompt is the stable sections in manifest order (the stable
 * prefix, whose SHA-256 is the pack's stable_sha256), then the dynamic
 * sections of the mode, joined by blank lines.  A section over its budget is
 * cut at the last paragraph boundary that fits, with a notice; "reporting"
 * is never cut, and going over its budget is a configuration error.
 *
 * Section texts may hold placeholders: {{NAME}} is replaced by the value of
 * NAME, and {{?NAME}}...{{/NAME}} is kept only when NAME has a non-empty
 * value.  In the system prompt the only value is "model", the model id when
 * it is known.  Templates are left as written for their users to render.
 *
 * Functions that fail report the error themselves and return the exit code
 * to use (XG_EX_*); they return 0 on success.
 */
#include "json.h"

#define XG_PROMPT_MANIFEST "manifest"
#define XG_PROMPT_MAX_FILE ((size_t)4 << 20)
#define XG_PROMPT_MAX_BUDGET 1000000

struct xg_prompt_section {
	char *name;
	char *file;
	size_t budget;
	int stable;		/* 1 for stable, 0 for dynamic */
	char *mode;		/* "all", a mode name, or "-" */
	char *text;		/* the file's bytes */
	size_t len;
	size_t lineno;		/* its line in the manifest */
};

struct xg_prompt_manifest {
	char *dir;
	char *path;		/* dir/manifest, for messages */
	char *raw;		/* the manifest's bytes */
	size_t rawlen;
	struct xg_prompt_section *sec;
	size_t nr, alloc;
};

/* Reads dir/manifest and every section file it names. */
int xg_prompt_manifest_load(const char *dir, struct xg_prompt_manifest *m);
void xg_prompt_manifest_release(struct xg_prompt_manifest *m);
/* The section named name, or NULL. */
const struct xg_prompt_section *xg_prompt_section_find(const struct xg_prompt_manifest *m,
							const char *name);

/*
 * The version id of a loaded variant: the first 12 hex digits of the
 * SHA-256 of its files (the manifest and each section file, in name order,
 * each as "name NUL length NUL bytes").  Equal files give equal ids, wherever
 * they live.
 */
#define XG_PROMPT_VERSION_LEN 12
void xg_prompt_version_id(const struct xg_prompt_manifest *m, char out[XG_PROMPT_VERSION_LEN + 1]);

/* What a pack is compiled for. */
struct xg_prompt_target {
	const char *variant;
	const char *version;
	const char *model;	/* NULL when unknown */
	const char *mode;	/* a mode name: "normal", "plan", ... */
};

/*
 * Whether mode is a mode name: 1 to 64 of [a-z0-9_-], starting with a
 * letter, the names xg-choices accepts ("normal", "plan", or any other a
 * caller uses).  A pack can be compiled for any of them; a mode no manifest
 * line names gets the stable prefix and the "all" sections alone.
 */
#define XG_PROMPT_MODE_MAX XG_MODE_MAX
#define XG_PROMPT_MODE_RULE "1 to 64 of [a-z0-9_-], starting with a letter"

/*
 * Compiles m into a pack record (*pack, owned by the caller) and appends a
 * notice record to *notices (an array) for each section it cut.
 */
int xg_prompt_compile(const struct xg_prompt_manifest *m, const struct xg_prompt_target *t,
		      jv *pack, jv *notices);

/*
 * Renders a template: {{NAME}} becomes the string vars[NAME] (empty when
 * absent) and {{?NAME}}...{{/NAME}} is kept when vars[NAME] is a non-empty
 * string.  vars is only looked at.  Returns a new string.
 */
char *xg_prompt_render(const char *tmpl, size_t len, jv vars);
/* Escapes s for use as data inside a tagged block: & < > become entities. */
char *xg_prompt_escape_data(const char *s);

/* A notice record from this program. */
jv xg_prompt_notice(const char *text);

/*
 * One call for a whole pack, as xg-prompt-compile does it: picks the version
 * (the request's NAME@VERSION, else the conversation's last variant_change,
 * else the variant's head), pins it to a conversation that has none, loads
 * and compiles it.  Notices (head moved, tunedFor, cut sections) are appended
 * to *notices.
 */
struct xg_prompt_request {
	const char *variant;	/* "NAME", "NAME@VERSION" or NULL for default */
	const char *model;	/* NULL when unknown */
	const char *mode;	/* NULL means "normal" */
	const char *conversation;	/* NULL for none */
};
int xg_prompt_pack(const struct xg_prompt_request *rq, jv *pack, jv *notices);

/*
 * xg-prompt-compile's filter: passes every record from r (NULL: none) to w
 * and writes the notices and a pack for each request as soon as a model
 * record follows it, else at the end; with no request, one pack at the end.
 * flags (mode, model, variant) win over the records.  With text_only nothing
 * passes; the system prompt for the last request is written at the end and
 * notices go to stderr.  Returns 0 or an exit code; a bad record dies
 * naming its line (65).
 */
struct xg_rec_reader;
struct xg_rec_writer;
int xg_prompt_filter(const struct xg_prompt_request *flags, int text_only,
		     struct xg_rec_reader *r, struct xg_rec_writer *w);

#endif
