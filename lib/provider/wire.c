/*
 * The wire kinds by name: the one table that knows them all.  Each kind
 * fills in its struct xg_wire (internal.h) in a file of its own (chat.c,
 * responses.c, anthropic.c); the client and the decoder reach a kind only
 * through the pointer xg_wire_find gives, so a new kind is a new file and
 * a line here.
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
