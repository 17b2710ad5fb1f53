/*
 * The wire kinds by name: the one table that knows them all.  Each kind
 * fills in its struct xg_wire (internal.h) in a file of its own (chat.c,
 * responses.c, anthropic.c); the client reaches a kind only through the
 * pointer xg_wire_find gives and hands it down to the decoder, so a new
 * kind is a new file and a line here.
 */
#include "xg.h"
#include "provider/internal.h"

const struct xg_wire *xg_wire_find(const char *kind)
{
	static const struct xg_wire *const wires[] = {
		&xg_wire_openai_responses, &xg_wire_openai_chat, &xg_wire_anthropic
	};
	size_t i;

	if (!kind)
		return NULL;
	for (i = 0; i < sizeof(wires) / sizeof(wires[0]); i++)
		if (!strcmp(wires[i]->name, kind))
			return wires[i];
	return NULL;
}

/* A decoder of a kind named by its caller: the tests' and the fuzzers'. */
struct xg_provider_decoder *xg_provider_decoder_new(const char *kind,
		int (*emit)(void *ctx, jv ev), void *ctx)
{
	const struct xg_wire *w = xg_wire_find(kind);

	return w ? xg_decoder_new(w, NULL, emit, ctx) : NULL;
}
