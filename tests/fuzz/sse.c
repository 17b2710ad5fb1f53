/*
 * Fuzz target: the SSE parser and one wire kind's stream decoder
 * (lib/provider/sse.c, decoder.c and the kind's file), FUZZ_KIND at build
 * time.  The first byte of the input says where to cut it, so the same
 * stream is also fed in two pieces; a small ceiling is met too.
 */
#include "xg.h"
#include "fuzz.h"
#include "provider/provider.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_home();
	return 0;
}

static int count(void *ctx, jv ev)
{
	size_t *n = ctx;

	if (!xg_json_string_peek(ev, "type"))
		abort();
	(*n)++;
	jv_free(ev);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xg_provider_decoder *d;
	struct xg_provider_error err;
	size_t n = 0, cut;

	if (size < 1)
		return 0;
	cut = size > 1 ? data[0] % size : 0;
	data++;
	size--;
	if (cut > size)
		cut = size;
	d = xg_provider_decoder_new(FUZZ_KIND, count, &n);
	if (!d)
		abort();
	xg_provider_decoder_set_max(d, 1 << 16);
	if (xg_provider_decoder_feed(d, (const char *)data, cut) == 0)
		xg_provider_decoder_feed(d, (const char *)data + cut, size - cut);
	memset(&err, 0, sizeof(err));
	xg_provider_decoder_finish(d, &err);
	xg_provider_decoder_free(d);
	return 0;
}
