#ifndef XG_PROMPT_H
#define XG_PROMPT_H
/*
 * The prompt subsystem, xg_prompt_, xg_variant_: variants and their store,
 * the manifest, templates and the compiled pack.  Its one public header.
 *
 * Its files are layers, each calling only those below it:
 *
 *   filter.c    xg-prompt-compile's filter: a pack for each request
 *   pack.c      a pack for a request: pick the version, load, compile, pin
 *   verbs.c     the records xg-prompt-compile's verbs write
 *   variant.c   the variant store: names, HEAD, versions, save, selection
 *   skills.c    the skills: SKILL.md files found, listed, named as $name
 *   compile.c   a loaded variant compiled into a pack record
 *   project.c   the project instructions: AGENTS.md files found and fitted
 *   manifest.c  a variant's files read and checked; the version id
 *   compaction.c
 *               what compaction sends: its instruction, the transcript,
 *               the checkpoint
 *   template.c  placeholders filled in
 */
#include "json.h"

struct xg_rec_reader;
struct xg_rec_writer;

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
 * prefix, whose SHA-256 is the pack's stable_sha256), then the project
 * instructions when there are any, then the dynamic sections of the mode,
 * joined by blank lines.  A section over its budget is
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

/*
 * Project instructions (man 1 xg-prompt-compile): the person's own
 * AGENTS.md (xg_path_config), then those of the git work tree holding the
 * workspace from its top down to the workspace (outside one, the
 * workspace's own), each headed by its path relative to the workspace, in
 * one section "project" of at most XG_PROMPT_PROJECT_BUDGET characters,
 * cut with a notice.  It goes right after the stable prefix.
 */
#define XG_PROMPT_PROJECT_BUDGET 32768

struct xg_prompt_project {
	char *text;		/* the section, NULL when no file has text */
	size_t len;
	jv entry;		/* its sections[] entry, with its files[] */
};

/*
 * Reads the instructions for the workspace cwd (NULL: the current
 * directory) into *pj.  It does not fail: a file that cannot be read, is
 * not a regular file or was cut, and a cwd that is not a directory, each
 * add a notice to *notices.
 */
void xg_prompt_project_read(const char *cwd, struct xg_prompt_project *pj, jv *notices);
void xg_prompt_project_release(struct xg_prompt_project *pj);

/*
 * Skills (man 1 xg-prompt-compile): a folder holding a SKILL.md, whose
 * front matter gives its name and description.  They are the person's own
 * (xg_path_config("skills")/NAME/SKILL.md) and the project's
 * (.agents/skills/NAME/SKILL.md in each directory from the top of the git
 * work tree down to the workspace, as for AGENTS.md).  Of two with one name
 * the person's wins, then the one deeper in the tree, with a notice.  A
 * file whose front matter is missing or malformed is left out with a
 * notice naming its line.  The pack lists them, sorted by name, in one
 * section "skills" of at most XG_PROMPT_SKILLS_BUDGET characters after the
 * project instructions, leaving out whole entries with a notice.
 */
#define XG_PROMPT_SKILLS_BUDGET 8000
#define XG_PROMPT_SKILL_MAX ((size_t)256 << 10)	/* bytes of one SKILL.md */
#define XG_PROMPT_SKILL_DESCRIPTION_MAX 1024	/* characters */

struct xg_prompt_skill {
	char *name, *description;	/* the description on one line */
	char *file;		/* the SKILL.md, an absolute path */
	char *shown;		/* as the model is given it: relative to the
				 * workspace inside it, else absolute */
	int person;		/* the person's own, not the project's */
	char *text;		/* the whole file, valid UTF-8 */
	size_t len;
};

struct xg_prompt_skills {
	struct xg_prompt_skill *v;	/* sorted by name */
	size_t nr, alloc;
	char *text;		/* the section, NULL when there is no skill */
	size_t len;
	jv entry;		/* its sections[] entry, with its skills[] */
};

/* Finds the skills for the workspace cwd (NULL: the current directory) and
 * lays out their section.  It does not fail: what is left out is a notice
 * on *notices. */
void xg_prompt_skills_read(const char *cwd, struct xg_prompt_skills *sk, jv *notices);
void xg_prompt_skills_release(struct xg_prompt_skills *sk);
/*
 * The skills a request's text names as $NAME, in the order first named:
 * each one's SKILL.md in a block, as the text to append to the request
 * (a new string, NULL for none); *named gets their names (an array).  A
 * $NAME that fits a skill's name (a lower-case letter, then lower-case
 * letters, digits and hyphens) but names none is a notice and stays as
 * typed; $HOME, $1, ${x} and $x_y are shell text unless a skill has the
 * name.
 */
char *xg_prompt_skills_named(const struct xg_prompt_skills *sk, const char *text, jv *named,
			     jv *notices);

/* What a pack is compiled for. */
struct xg_prompt_target {
	const char *variant;
	const char *version;
	const char *model;	/* NULL when unknown */
	const char *mode;	/* a mode name: "normal", "plan", ... */
	const struct xg_prompt_project *project;	/* NULL: none */
	const struct xg_prompt_skills *skills;		/* NULL: none */
};

/*
 * A pack can be compiled for any mode name (xg_conv_mode_valid); a mode no
 * manifest line names gets the stable prefix and the "all" sections alone.
 */

/*
 * Compiles m into a pack record (*pack, owned by the caller) and appends a
 * notice record to *notices (an array) for each section it cut.
 */
int xg_prompt_compile(const struct xg_prompt_manifest *m, const struct xg_prompt_target *t,
		      jv *pack, jv *notices);

/*
 * Renders a template: {{NAME}} becomes the string vars[NAME] (empty when
 * absent) and {{?NAME}}...{{/NAME}} is kept when vars[NAME] is a non-empty
 * string.  vars is only looked at, not consumed.  Returns a new string.
 */
char *xg_prompt_render_peek(const char *tmpl, size_t len, jv vars);
/* Escapes s for use as data inside a tagged block: & < > become entities. */
char *xg_prompt_escape_data(const char *s);

/* A notice record from this program. */
jv xg_prompt_notice(const char *text);

/*
 * What compaction sends (compaction.c; man 1 xg-run, COMPACTION).  The
 * instruction that asks for a summary: the pack's "compaction" template,
 * else ours.
 */
const char *xg_prompt_compaction_peek(jv pack);
/* A todo list's items (consumed) as the todo tool shows them, a line an
 * item ("[x] ", "[~] " or "[ ] " and the item), no newline after the last;
 * NULL when none has content. */
char *xg_prompt_todo_text(jv items);
/* The provider messages before cut as the text of one user message (new)
 * that fits room tokens: a transcript, its middle left out when longer. */
char *xg_prompt_transcript_peek(jv messages, int cut, long long room);
/* The checkpoint after a summary (new), or NULL when there is neither a
 * todo list (todo: its items, null when none) nor plan instructions
 * (plan NULL): the pack's "checkpoint" template, else ours, filled with
 * the request record's text (escaped as data unless the request is
 * hidden, the harness's own), the list and the plan. */
char *xg_prompt_checkpoint_peek(jv pack, jv request, jv todo, const char *plan);

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

/* The conversation's selected "NAME@VERSION" (new string) into *ref, NULL
 * when it has none. */
int xg_variant_selected(const char *conversation, char **ref);
/* A variant_change entry into *entry (owned): from from (NULL: none) to ref
 * ("NAME", its head, or "NAME@VERSION", which must exist), with reason
 * (NULL: none); a shipped default version is copied under the data tree
 * first, if not there yet.  Nothing is appended. */
int xg_variant_change(const char *from, const char *ref, const char *reason, jv *entry);
/* Appends a variant_change to the conversation: from its selected version
 * (if any) to ref ("NAME@VERSION", which must exist); *entry gets the entry
 * (owned) when entry is not NULL. */
int xg_variant_select(const char *conversation, const char *ref, const char *reason, jv *entry);

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
	const char *cwd;	/* the workspace; NULL: the current directory */
	const char *text;	/* a person's request whose $NAME skills go with
				 * it (pack fields attach, named_skills); NULL */
};
int xg_prompt_pack(const struct xg_prompt_request *rq, jv *pack, jv *notices);

/*
 * xg-prompt-compile's verbs, each writing its records to w (none when it
 * fails): variants, a "variant" record for each variant, by name; versions,
 * a "version" record for each version of name, oldest first; save,
 * xg_variant_save and the new head's "version" record; head, the head's
 * record, after moving the head to version when it is not NULL; show, the
 * record of ref (NAME or NAME@VERSION) with each section's manifest line
 * and text; select, the variant_change xg_variant_select appended, with the
 * conversation's id.
 */
int xg_prompt_verb_variants(struct xg_rec_writer *w);
int xg_prompt_verb_versions(const char *name, struct xg_rec_writer *w);
int xg_prompt_verb_save(const char *name, const char *dir, const char *tuned_for,
			const char *note, struct xg_rec_writer *w);
int xg_prompt_verb_head(const char *name, const char *version, struct xg_rec_writer *w);
int xg_prompt_verb_show(const char *ref, struct xg_rec_writer *w);
int xg_prompt_verb_select(const char *conversation, const char *ref, struct xg_rec_writer *w);
/* skills: the notices and a "skill" record for each skill of the current
 * directory, by name. */
int xg_prompt_verb_skills(struct xg_rec_writer *w);
/* "xg skills [--json]" (xg(1)): argv[0] is the verb; the skills as a table
 * for a person, the records with --json.  Returns the exit status. */
int xg_prompt_skills_main(int argc, char **argv);

/*
 * xg-prompt-compile's filter: passes every record from r (NULL: none) to w
 * and writes the notices and a pack for each request as soon as a model
 * record follows it, else at the end; with no request, one pack at the end.
 * flags (mode, model, variant) win over the records.  With text_only nothing
 * passes; the system prompt for the last request is written at the end and
 * notices go to stderr.  Returns 0 or an exit code; a bad record dies
 * naming its line (65).
 */
int xg_prompt_filter(const struct xg_prompt_request *flags, int text_only,
		     struct xg_rec_reader *r, struct xg_rec_writer *w);

#endif
