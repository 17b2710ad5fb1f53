#ifndef XG_WIRE_H
#define XG_WIRE_H
/*
 * Inside lib/provider: what the three wire kinds share.  Each kind is a
 * struct xg_wire (an encoder and an SSE-event decoder); the decoder state
 * below is common to all of them.
 */
#include "provider/provider.h"

/* A content block or tool call being assembled, found by its index (Chat
 * Completions, Anthropic) or item id (Responses). */
struct xg_slot {
	long index;
	char *key;		/* item id; NULL when found by index */
	char *id;		/* the call id to send back */
	char *name;
	int kind;		/* XG_SLOT_* */
	struct xg_buf text;	/* text, thinking, or arguments */
	struct xg_buf sig;	/* thinking signature / encrypted reasoning */
	int done;
};

enum { XG_SLOT_TOOL = 1, XG_SLOT_TEXT, XG_SLOT_THINKING, XG_SLOT_REDACTED };

struct xg_usage {
	int64_t input, cached_input, cache_write, output, reasoning;
	int64_t raw_input;	/* Anthropic: input not read from or written to cache */
	int have;
};

struct xg_provider_decoder {
	const struct xg_wire *wire;
	const char *dialect;
	const char *secret;
	struct xg_sse sse;
	int (*emit)(void *ctx, jv ev);
	void *ctx;
	size_t delivered;
	int stopped;		/* the callback asked to stop */
	int done;		/* the final event came */
	int failed;		/* err holds an error met in the stream */
	struct xg_provider_error err;
	const char *finish;	/* a finish reason seen so far */
	int refusal;
	int tool_calls;		/* tool calls delivered */
	struct xg_usage usage;
	struct xg_slot *slots;
	size_t nslots, aslots;
};

struct xg_wire {
	const char *name;
	const char *path;
	/* Builds the request body's JSON; -1 with err set. */
	int (*encode)(const struct xg_provider *p, jv req, jv *out, char *err, size_t errlen);
	/* One SSE event; -1 to stop (d->stopped or d->failed set). */
	int (*event)(struct xg_provider_decoder *d, const struct xg_sse_event *ev);
	/* At a clean end of the stream without the final event: 0 when the
	 * kind accepts it as complete (and has delivered finish), else -1. */
	int (*eof)(struct xg_provider_decoder *d);
};

extern const struct xg_wire xg_wire_openai_chat;
extern const struct xg_wire xg_wire_openai_responses;
extern const struct xg_wire xg_wire_anthropic;

const struct xg_wire *xg_wire_find(const char *kind);

/* Delivering events; each returns -1 once the callback asked to stop. */
int xg_decoder_emit(struct xg_provider_decoder *d, jv ev);
int xg_decoder_delta(struct xg_provider_decoder *d, const char *type, const char *s, size_t n);
int xg_decoder_tool_call(struct xg_provider_decoder *d, struct xg_slot *s);
int xg_decoder_reasoning_block(struct xg_provider_decoder *d, struct xg_slot *s);
/* Usage (when any came) and finish, then done. */
int xg_decoder_finish(struct xg_provider_decoder *d, const char *reason);
/* Records an error object met in the stream; always -1. */
int xg_decoder_stream_error(struct xg_provider_decoder *d, jv errobj);
/*
 * Adds to a slot's buffer; past its ceiling, fails the stream with a
 * protocol error that is not transient ("WHAT larger than N bytes") and
 * returns -1.
 */
int xg_decoder_add(struct xg_provider_decoder *d, struct xg_buf *b, const char *s, size_t n,
		   const char *what);
int xg_decoder_addstr(struct xg_provider_decoder *d, struct xg_buf *b, const char *s,
		      const char *what);

struct xg_slot *xg_decoder_slot_index(struct xg_provider_decoder *d, long index, int create);
struct xg_slot *xg_decoder_slot_key(struct xg_provider_decoder *d, const char *key, int create);
struct xg_slot *xg_decoder_slot_new(struct xg_provider_decoder *d);
void xg_decoder_slot_set(char **field, const char *value);

/* Shared pieces of encoding. */
int64_t xg_wire_int(jv obj, const char *key);
/* The stable prefix's length in bytes, backed off to a UTF-8 boundary. */
size_t xg_wire_stable_len(jv req, const char *system, size_t len);
/* The arguments of a tool call as JSON text. */
jv xg_wire_args_text(jv call);

#endif
