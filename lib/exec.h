#ifndef XG_EXEC_H
#define XG_EXEC_H
/*
 * Finding and running xg-FOO (as git runs git-FOO): the directory of the
 * running program first, so an installed or built tree uses its own
 * programs, then PATH.  "xg FOO" execs what it finds; xg run finds xg-run
 * (and, for --dry-run, the stages before it), and xg-run the xg-snapshot
 * beside it, the same way.
 */
#include <stdio.h>

/* The path of xg-name to run, or NULL when there is none (the caller
 * frees it).  name must be a plain word: no '/', not empty. */
char *xg_exec_find(const char *name);
/* The same, looking only in PATH (what a shell would run). */
char *xg_exec_find_in_path(const char *name);
/* Replaces the process with path, its keys handed on through a pipe;
 * returns only on failure, with errno. */
int xg_exec(const char *path, char **argv);
/* The environment for a program this one starts: environ without the
 * variables drop names (NULL-terminated, may be NULL), then add (a
 * "NAME=value" string, or NULL).  The strings are borrowed; the caller
 * frees the array alone. */
char **xg_exec_env(const char *const *drop, char *add);
/*
 * Keys are handed to an xg program this one starts through a pipe, never
 * its environment, whose block /proc/PID/environ shows: every variable
 * named as a secret (xg_prog_secret_name) is written to the pipe as
 * NAME=value NUL, and the program's xg_prog_init puts them back in its
 * environment from XG_KEYS_FD.  fd is the pipe's read end (close-on-exec:
 * the caller keeps it open across its exec), -1 when there is no key;
 * var is "XG_KEYS_FD=N".
 */
struct xg_exec_keys {
	int fd;
	char var[32];
};
/* 0 with k filled (k->fd -1 when the environment holds no key), or -1
 * with errno. */
int xg_exec_keys_open(struct xg_exec_keys *k);
void xg_exec_keys_close(struct xg_exec_keys *k);
/* As xg_exec_env, and without the keys k holds, named by k->var instead
 * (k may be NULL, or hold none). */
char **xg_exec_env_keys(const char *const *drop, char *add, const struct xg_exec_keys *k);
/* A copy of environ less every variable named as a secret
 * (xg_prog_secret_name): for a program that needs no key.  The strings
 * and the array are the caller's, freed by xg_exec_env_free. */
char **xg_exec_env_nokeys(void);
void xg_exec_env_free(char **env);
/* The verbs given (NULL-terminated, may be NULL) and the xg-* programs
 * found, sorted and without duplicates, one per line on fp. */
void xg_exec_list(FILE *fp, const char *const *verbs);

#endif
