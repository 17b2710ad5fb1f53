#ifndef XG_DISPATCH_H
#define XG_DISPATCH_H
/*
 * How "xg FOO ARGS" finds and runs "xg-FOO ARGS" (as git runs git-FOO): the
 * directory of the running xg first, so an installed or built tree uses its
 * own programs, then PATH.
 */

/* The path of xg-name to run, or NULL when there is none (the caller
 * frees it).  name must be a plain word: no '/', not empty. */
char *xg_dispatch_find(const char *name);
/* Replaces the process with xg-name; returns only on failure, with errno. */
int xg_dispatch_exec(const char *path, char **argv);
/* The xg-* programs found, sorted and without duplicates, one per line on
 * fp. */
void xg_dispatch_list(FILE *fp);

#endif
