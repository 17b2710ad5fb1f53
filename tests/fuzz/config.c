/*
 * Fuzz target: the model catalog reader (lib/choices/catalog.c), the
 * user's models.json being the input, merged with the shipped catalog as
 * every program loads it; then each model found is looked up.
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
	struct xg_catalog cat;
	jv models;

	fuzz_write("config/models.json", data, size);
	if (xg_catalog_load(&cat) == 0) {
		/* jv_object_foreach names its object more than once. */
		models = cat.models;
		jv_object_foreach(models, id, m) {
			char *why = xg_catalog_not_offered(&cat, jv_string_value(id));
			char *efforts = xg_catalog_efforts_text(jv_copy(m));

			free(why);
			free(efforts);
			jv_free(id);
			jv_free(m);
		}
	}
	xg_catalog_release(&cat);
	return 0;
}
