#ifndef XG_SNAPSHOT_IGNORE_H
#define XG_SNAPSHOT_IGNORE_H
/*
 * Patterns in gitignore syntax (gitignore(5)): the .gitignore files,
 * .git/info/exclude and core.excludesFile for what a snapshot leaves out,
 * and .worktreeinclude for what a replay copies.  Matching follows git's
 * rules: the last matching pattern of a list decides, "!" re-includes, a
 * trailing "/" matches directories only, a pattern without a "/" matches a
 * name at any depth, "**" spans directories.
 */
#include <stddef.h>

struct xg_snapshot_pattern {
	char *text;
	size_t len;
	size_t literal;		/* bytes before the first wildcard */
	unsigned flags;
};

struct xg_snapshot_rules {
	char *base;		/* the directory the file sits in: "" or "a/b" */
	size_t baselen;
	struct xg_snapshot_pattern *pat;
	size_t nr, alloc;
};

/* Adds the patterns in buf (a file's contents) to r. */
void xg_snapshot_rules_add(struct xg_snapshot_rules *r, const char *buf, size_t len);
/* Reads a file of patterns into r; a missing file adds nothing (0). */
int xg_snapshot_rules_load(struct xg_snapshot_rules *r, const char *base, const char *file);
void xg_snapshot_rules_release(struct xg_snapshot_rules *r);
/*
 * Whether path (relative to the top) matches r: 1 excluded, 0 re-included
 * by a "!" pattern, -1 no pattern matched.
 */
int xg_snapshot_rules_match(const struct xg_snapshot_rules *r, const char *path,
			    size_t len, int is_dir);
/* wildmatch: 1 when text matches pattern; pathname makes '*' stop at '/'. */
int xg_snapshot_wildmatch(const char *pattern, const char *text, int pathname);

#endif
