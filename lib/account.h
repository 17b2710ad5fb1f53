#ifndef XG_ACCOUNT_H
#define XG_ACCOUNT_H
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
#include "json.h"

/* 1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-'. */
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
 * as long as the lock timeout allows): the descriptor holding the lock, or
 * -XG_EX_TEMPFAIL (held too long by another) or -XG_EX_IOERR after a
 * message. */
int xg_account_lock(const char *account, const char *file);
/* The names of the accounts that have a directory, sorted (a jv array). */
jv xg_account_list(void);

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
 * Whether provider (its catalog entry, with key_env) is authenticated for
 * the account: 1 (and *how, when not NULL, "env", "auth.json" or "none"),
 * 0 when it is not, -1 when auth.json had to be read and could not be
 * (reported once; k->status holds the exit code, 77 or 78 or 74).
 */
int xg_account_authenticated(struct xg_account_keys *k, const char *name, jv provider,
			     const char **how);

/*
 * The key for provider: from its key variable, else auth.json.  1 and *key
 * set (the caller frees it, ideally after clearing it), 0 when there is none
 * (or the provider needs none), -1 as above.
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

#endif
