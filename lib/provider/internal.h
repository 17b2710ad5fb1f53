#ifndef XG_PROVIDER_INTERNAL_H
#define XG_PROVIDER_INTERNAL_H
/*
 * Private to lib/provider: nothing outside this folder includes it.
 *
 * The files, in the order calls run, from the top down:
 *
 *   client.c     a provider: opening it, a call with its retries, abort
 *   wire.c       the table of the wire kinds, by name
 *   chat.c, responses.c, anthropic.c
 *                the wire kinds: each fills in a struct xg_wire, what a
 *                request looks like on its wire and how its stream's
 *                events read, and keeps only what is its own
 *   encode.c     the one walk over a request that every kind shares
 *   decoder.c    one response's SSE events in, events out; the helpers the
 *                kinds deliver events with
 *   retry.c      the retry policy, its backoff, and the wait before a retry
 *   errors.c     classifying what went wrong
 *   address.c    where a provider is: its host, its URL as shown, and
 *                whether an address is near (for retry.c)
 *   sse.c, http.c
 *
 * encode.c and decoder.c drive a kind through the function pointers of its
 * struct xg_wire (curl's vtls shape) and never name one: the client finds
 * the kind in wire.c's table and hands it down.
 */
#include "provider/provider.h"

struct xg_wire;

/* Decoding (decoder.c). */

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

/* The client reads stopped, done, failed, err and delivered after a
 * transfer to learn what the attempt came to. */
struct xg_provider_decoder {
	const struct xg_wire *wire;
	const char *secret;	/* redacted from error messages; not owned */
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

/* A decoder for wire w delivering to emit; secret (borrowed, may be NULL)
 * is redacted from the messages of errors met in the stream. */
struct xg_provider_decoder *xg_decoder_new(const struct xg_wire *w, const char *secret,
					   int (*emit)(void *ctx, jv ev), void *ctx);

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
 * An event's data as a JSON object, or jv_invalid() with the stream failed
 * ("provider stream: WHAT is not a JSON object") when it is not one.
 */
jv xg_decoder_parse(struct xg_provider_decoder *d, const struct xg_sse_event *ev,
		    const char *what);
/* The event's type: its data's "type" field, else its SSE event name, else
 * "" (borrowed from e or ev). */
const char *xg_decoder_type_peek(jv e, const struct xg_sse_event *ev);
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

/*
 * Encoding (encode.c).  xg_provider_encode walks a request in the order its
 * body is written and asks the kind's struct xg_encoder at each piece what
 * that piece looks like on its wire.  The body's members keep the order in
 * which they were set, so the walk's order is the order of the bytes.
 */

/* The walk's state, which the callbacks build on. */
/* Drops the walk and the list's bytes encode.c keeps of the last request;
 * the second frees their buffers too. */
void xg_provider_walked_release(struct xg_provider *p);
/* xg_provider_encode, but the list's kept bytes (p->dumped.bytes, as they
 * stand until the next encode) are left out of body: *hole is where they
 * go, SIZE_MAX when the body has no list. */
int xg_provider_encode_split(struct xg_provider *p, jv request, struct xg_buf *body,
			     size_t *hole, char *err, size_t errlen);
void xg_provider_dumped_free(struct xg_provider *p);

struct xg_encode {
	const char *dialect;	/* the openai-chat dialect; "" for the others */
	/* The request's fields, borrowed from it. */
	const char *system;	/* NULL when absent */
	jv system_v;		/* the same as a value, borrowed: shared, not
				 * copied, by a body that sends it whole */
	size_t system_len;
	size_t system_stable;	/* the bytes of system that stay the same from
				 * request to request, backed off to a UTF-8
				 * boundary; system_len when not given */
	const char *effort;	/* NULL when absent */
	const char *cache_key;	/* NULL when absent */
	int64_t max_output;	/* -1 when absent */
	/* What is being built. */
	jv body;		/* the request body; "model" comes first */
	jv list;		/* the conversation: the messages, or Responses'
				 * input items */
};

/* A reasoning block of an assistant message; each field borrowed, NULL
 * when absent. */
struct xg_encode_reasoning {
	const char *text;
	const char *signature;
	const char *redacted;
	const char *id;
};

/*
 * How one wire kind writes each piece of a request.  The callbacks that
 * return a jv return a new value for the walk to place; those that take a
 * jv consume it; strings are borrowed from the request.
 */
struct xg_encoder {
	/* The body's member that holds e->list: "messages", "input". */
	const char *list_key;
	/* The words for a message without a role ("missing field 'role'");
	 * the kinds worded it differently, and error records keep each
	 * kind's words. */
	const char *no_role;
	/* Members that follow "model" at the head of the body; may be NULL. */
	void (*begin)(struct xg_encode *e);
	/* The system prompt, when the request has one that is not empty. */
	void (*system)(struct xg_encode *e);
	/* A user message (text "" when absent), added to e->list. */
	void (*user)(struct xg_encode *e, const char *text);
	/*
	 * The parts of an assistant message, in this order: each reasoning
	 * block, its text when not empty, each tool call.  A part callback
	 * returns jv_invalid() for a part its wire does not send back, and a
	 * NULL one sends none of its kind.  A tool call's args are its "args"
	 * as the request has them (jv_invalid() when absent); its id and name
	 * are "" when absent.
	 */
	jv (*reasoning)(const struct xg_encode_reasoning *b);
	jv (*text)(const char *text);
	jv (*tool_call)(const char *id, const char *name, jv args);
	/* The assistant message from its text (NULL when absent) and its
	 * parts (consumed), added to e->list. */
	void (*assistant)(struct xg_encode *e, const char *text, jv parts);
	/* A tool's result (output "" when absent), added to e->list. */
	void (*tool_result)(struct xg_encode *e, const char *id, const char *output, bool ok);
	/* A tool schema as an entry of the body's "tools": name "" when
	 * absent, description NULL when absent, parameters (consumed)
	 * {"type":"object"} when absent. */
	jv (*tool)(const char *name, const char *description, jv parameters);
	/* Members at the tail of the body, after "tools". */
	void (*end)(struct xg_encode *e);
};

/* A tool call's arguments (consumed) as JSON text: a string as it is, an
 * object dumped, anything else "{}". */
jv xg_encode_args_text(jv args);

/* The wire kinds (wire.c, and each kind's own file). */

struct xg_wire {
	const char *name;
	const char *path;		/* after base_url */
	const char *header;		/* a header line every request carries, or NULL */
	const char *key_header;		/* the key's header line, up to the key */
	/* The dialect a base URL speaks, when the provider names none; NULL
	 * for a kind without dialects. */
	const char *(*guess_dialect)(const char *base_url);
	struct xg_encoder encode;
	/* One SSE event; -1 to stop (d->stopped or d->failed set). */
	int (*event)(struct xg_provider_decoder *d, const struct xg_sse_event *ev);
	/* At a clean end of the stream without the final event: 0 when the
	 * kind accepts it as complete (and has delivered finish), else -1. */
	int (*eof)(struct xg_provider_decoder *d);
};

extern const struct xg_wire xg_wire_openai_chat;
extern const struct xg_wire xg_wire_openai_responses;
extern const struct xg_wire xg_wire_anthropic;

/* The kind of that name, or NULL (kind may be NULL). */
const struct xg_wire *xg_wire_find(const char *kind);

/* Retrying (retry.c). */

/*
 * After a failed attempt (attempt 0 is the first try) whose error is e:
 * when e is worth a retry and the policy has one left, reports the wait to
 * cb and waits it out (less once p is aborted).  Returns whether to try
 * again: false when e is not transient, no retry is left, the retry budget
 * is spent, or p was aborted.  A retry-after hint past what is left of the
 * budget makes e's exit code 75 and its message say so.  Before a retry it
 * sets p->http.idle_ms to no more than what the budget leaves.  delivered
 * is how many events the failed attempt had delivered.
 */
bool xg_provider_retry_wait(struct xg_provider *p, int attempt,
			    struct xg_provider_error *e, size_t delivered,
			    const struct xg_provider_callbacks *cb);

#endif
