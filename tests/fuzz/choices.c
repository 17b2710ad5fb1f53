/*
 * Fuzz target: the account's files (lib/choices/store.c, account.c): the
 * input is choices.json when its first byte is even, else auth.json, and
 * is read as xg-choices and xg-run read it.
 */
#include "xg.h"
#include "fuzz.h"
#include "choices/choices.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_home();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xg_account_keys k;
	char *key = NULL;
	jv choices;

	if (size < 1)
		return 0;
	if (data[0] % 2 == 0) {
		fuzz_write("config/accounts/default/choices.json", data + 1, size - 1);
		if (xg_choices_load("default", &choices) == 0)
			jv_free(choices);
		return 0;
	}
	fuzz_write("config/accounts/default/auth.json", data + 1, size - 1);
	xg_account_keys_init(&k, "default");
	if (xg_account_key(&k, "openai", xg_json_set(jv_object(), "key_env",
						     jv_string("XG_FUZZ_NO_SUCH_KEY")), &key) > 0) {
		if (!*key)
			abort();
		free(key);
	}
	xg_account_keys_release(&k);
	return 0;
}
