/*
 * Fuzz target: the conversation loader (lib/conversation.c): the input is
 * a conversation's file, read from its end whole, for its last model and
 * for its newest entry of a type, as xg-run and xg-choices start read it.
 */
#include "xg.h"
#include "fuzz.h"
#include "conversation.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_home();
	return 0;
}

static int visit(jv entry, void *ctx)
{
	long *n = ctx;

	if (jv_get_kind(entry) != JV_KIND_OBJECT)
		abort();
	(*n)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xg_conv_damage damage;
	long n = 0;
	int torn;

	fuzz_write("state/conversations/f.jsonl", data, size);
	if (xg_conv_scan_back_checked("f", visit, &n, &damage) == 0 &&
	    damage.bad && damage.first_bad < 1)
		abort();
	jv_free(xg_conv_last_model("f", &torn));
	jv_free(xg_conv_last_of_type("f", "message", &torn));
	return 0;
}
