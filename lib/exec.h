#ifndef XG_EXEC_H
#define XG_EXEC_H
/*
 * Finding and running xg-FOO (as git runs git-FOO): the directory of the
 * running program first, so an installed or built tree uses its own
 * programs, then PATH.  "xg FOO" execs what it finds; xg run finds its
 * pipeline's stages, and xg-run the xg-snapshot beside it, the same way.
 */
#include <stdio.h>

/* The path of xg-name to run, or NULL when there is none (the caller
 * frees it).  name must be a plain word: no '/', not empty. */
char *xg_exec_find(const char *name);
/* The same, looking only in PATH (what a shell would run). */
char *xg_exec_find_in_path(const char *name);
/* Replaces the process with path; returns only on failure, with errno. */
int xg_exec(const char *path, char **argv);
/* The environment for a program this one starts: environ without the
 * variables drop names (NULL-terminated, may be NULL), then add (a
 * "NAME=value" string, or NULL).  The strings are borrowed; the caller
 * frees the array alone. */
char **xg_exec_env(const char *const *drop, char *add);
/* The verbs given (NULL-terminated, may be NULL) and the xg-* programs
 * found, sorted and without duplicates, one per line on fp. */
void xg_exec_list(FILE *fp, const char *const *verbs);

#endif
