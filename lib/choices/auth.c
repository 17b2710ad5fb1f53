/*
 * The auth verb, xg-choices auth: a provider's key kept in the account's
 * auth.json, or removed from it, for a provider the catalog has.
 */
#include "xg.h"
#include "choices/choices.h"

/* The catalog is asked here, above both, so that account.c, which keeps
 * the keys, knows nothing of the catalog that names the providers. */
int xg_account_auth(const char *account, const char *provider, int remove)
{
	struct xg_catalog cat;
	char *key;
	int rc = xg_catalog_load(&cat);

	if (rc == 0)
		xg_catalog_warn(&cat);
	if (rc == 0 && !jv_is_valid(xg_catalog_provider_peek(&cat, provider)) &&
	    !xg_json_string_peek(cat.bad, provider)) {
		xg_error("provider '%s' is not in the model catalog", provider);
		rc = XG_EX_CONFIG;
	}
	xg_catalog_release(&cat);
	if (rc || remove)
		return rc ? rc : xg_account_remove_key(account, provider);
	/* A key never comes from the command line, where others can see it;
	 * typed at a terminal, it is asked for with the echo off. */
	if (fcntl(0, F_GETFD) < 0) {
		xg_error("the key is read from standard input, which is closed; pipe it in, "
			 "e.g. 'xg-choices auth %s < keyfile'", provider);
		return XG_EX_USAGE;
	}
	rc = isatty(0) ? xg_account_ask_key(provider, &key) : xg_account_read_key(0, &key);
	if (rc)
		return rc;
	rc = xg_account_store_key(account, provider, key);
	memset(key, 0, strlen(key));
	free(key);
	return rc;
}
