/*
 * Encoding a request: the one walk over it that every wire kind shares.
 *
 * xg_provider_encode checks what every kind needs (a model, a role for
 * each message, an id for each tool result) and walks the request in the
 * order its body is written: "model", the kind's opening members, the
 * system prompt, the messages one by one, the tool schemas, the kind's
 * closing members.  At each piece it asks the kind's struct xg_encoder
 * (internal.h) what that piece looks like on its wire; the kinds fill in
 * their tables in chat.c, responses.c and anthropic.c.  A body's members
 * keep the order in which they were set, so this order is the order of
 * the bytes, which tests/fixtures/provider/encode-*.json hold.
 *
 * A run's next request is its last plus new messages.  The walk of the
 * last is kept (struct xg_provider's walked), and when the new request's
 * other fields are equal to the last's and its first messages are the very
 * values the last walked, the walk goes on from there: the messages' parts
 * depend on nothing else, and jv values are never changed in place, so
 * the body is the one the whole walk makes, byte for byte.  So is its
 * writing: the list's first items, when they are the very values the
 * last body's list began with, are written as the bytes they were then.
 */
#include "xg.h"
#include "provider/internal.h"

static int64_t int_peek(jv obj, const char *key)
{
	long long v;

	return xg_json_int_peek(obj, key, &v) < 0 ? -1 : v;
}

/* How much of system stays the same from request to request, for the
 * cache hints: "system_stable" bytes, backed off to a UTF-8 boundary, or
 * all of it. */
static size_t stable_len_peek(jv req, const char *system, size_t len)
{
	int64_t n = int_peek(req, "system_stable");

	if (n < 0 || (size_t)n >= len)
		return len;
	n = xg_utf8_start(system, n);
	return (size_t)n;
}

jv xg_encode_args_text(jv args)
{
	if (jv_get_kind(args) == JV_KIND_STRING)
		return args;
	if (jv_get_kind(args) == JV_KIND_OBJECT)
		return jv_dump_string(args, 0);
	jv_free(args);
	return jv_string("{}");
}

static jv add_part(jv parts, jv part)
{
	if (!jv_is_valid(part)) {
		jv_free(part);
		return parts;
	}
	return jv_array_append(parts, part);
}

/* An assistant message: its parts, then the message. */
static void add_assistant_peek(struct xg_encode *e, const struct xg_encoder *enc, jv m)
{
	jv r = xg_json_get_peek(m, "reasoning"), calls = xg_json_get_peek(m, "tool_calls");
	const char *text = xg_json_string_peek(m, "text");
	jv parts = jv_array();
	int i, n;

	n = enc->reasoning && jv_get_kind(r) == JV_KIND_ARRAY ? xg_json_length_peek(r) : 0;
	for (i = 0; i < n; i++) {
		jv b = jv_array_get(jv_copy(r), i);
		struct xg_encode_reasoning rb = {
			xg_json_string_peek(b, "text"), xg_json_string_peek(b, "signature"),
			xg_json_string_peek(b, "redacted"), xg_json_string_peek(b, "id")
		};

		parts = add_part(parts, enc->reasoning(&rb));
		jv_free(b);
	}
	if (enc->text && text && *text)
		parts = add_part(parts, enc->text(text));
	n = jv_get_kind(calls) == JV_KIND_ARRAY ? xg_json_length_peek(calls) : 0;
	for (i = 0; i < n; i++) {
		jv c = jv_array_get(jv_copy(calls), i);
		const char *id = xg_json_string_peek(c, "id"), *name = xg_json_string_peek(c, "name");

		parts = add_part(parts, enc->tool_call(id ? id : "", name ? name : "",
						       jv_copy(xg_json_get_peek(c, "args"))));
		jv_free(c);
	}
	enc->assistant(e, text, parts);
}

/* Message number i by its role; -1 with err set when it has no role the
 * walk knows, or is a tool result without an id. */
static int add_message_peek(struct xg_encode *e, const struct xg_encoder *enc, jv m, int i,
			    char *err, size_t errlen)
{
	const char *role = xg_json_string_peek(m, "role");
	const char *id = xg_json_string_peek(m, "id");
	const char *s;
	bool ok = true;

	if (!role) {
		snprintf(err, errlen, "request: messages[%d]: %s", i, enc->no_role);
		return -1;
	}
	if (!strcmp(role, "user")) {
		s = xg_json_string_peek(m, "text");
		enc->user(e, s ? s : "");
	} else if (!strcmp(role, "assistant")) {
		add_assistant_peek(e, enc, m);
	} else if (!strcmp(role, "tool")) {
		if (!id) {
			snprintf(err, errlen, "request: messages[%d]: missing field 'id'", i);
			return -1;
		}
		s = xg_json_string_peek(m, "output");
		xg_json_bool_peek(m, "ok", &ok);
		enc->tool_result(e, id, s ? s : "", ok);
	} else {
		snprintf(err, errlen, "request: messages[%d]: unknown role '%s'", i, role);
		return -1;
	}
	return 0;
}

/* The body's "tools", when the request has any. */
static void add_tools_peek(struct xg_encode *e, const struct xg_encoder *enc, jv tools)
{
	int i, n = jv_get_kind(tools) == JV_KIND_ARRAY ? xg_json_length_peek(tools) : 0;
	jv arr;

	if (n <= 0)
		return;
	arr = jv_array();
	for (i = 0; i < n; i++) {
		jv t = jv_array_get(jv_copy(tools), i), params = xg_json_get_peek(t, "parameters");
		const char *name = xg_json_string_peek(t, "name");

		params = jv_is_valid(params) ? jv_copy(params) :
			xg_json_set(jv_object(), "type", jv_string("object"));
		arr = jv_array_append(arr, enc->tool(name ? name : "",
						     xg_json_string_peek(t, "description"), params));
		jv_free(t);
	}
	e->body = xg_json_set(e->body, "tools", arr);
}

void xg_provider_walked_release(struct xg_provider *p)
{
	if (p->walked.n) {
		jv_free(p->walked.head);
		jv_free(p->walked.src);
		jv_free(p->walked.body);
		jv_free(p->walked.list);
	}
	p->walked.n = 0;
}

/* No item of the last dump is known any more: the next writes them all. */
static void dumped_forget(struct xg_provider *p)
{
	if (p->dumped.n)
		jv_free(p->dumped.items);
	p->dumped.n = p->dumped.known = 0;
}

/* How many of src's n messages the kept walk covers (head consumed): 0
 * when it does not fit this request. */
static int walked_peek(const struct xg_provider *p, jv head, jv src, int n)
{
	int i, k = p->walked.n;

	if (!k || k > n) {
		jv_free(head);
		return 0;
	}
	if (!jv_equal(head, jv_copy(p->walked.head)))
		return 0;
	for (i = k - 1; i >= 0; i--)
		if (!jv_identical(jv_array_get(jv_copy(src), i),
				  jv_array_get(jv_copy(p->walked.src), i)))
			return 0;
	return k;
}

/* The walk; -1 with err set when the request is malformed. */
static int encode_peek(struct xg_provider *p, jv req, jv *out, char *err, size_t errlen)
{
	const struct xg_encoder *enc = &p->wire->encode;
	const char *model = xg_json_string_peek(req, "model");
	jv src = xg_json_get_peek(req, "messages"), head, before;
	struct xg_encode e = { .dialect = p->dialect };
	int i, k, n;

	if (!model) {
		snprintf(err, errlen, "request: missing field 'model'");
		return -1;
	}
	e.system = xg_json_string_peek(req, "system");
	e.system_v = xg_json_get_peek(req, "system");
	e.system_len = e.system ? strlen(e.system) : 0;
	e.system_stable = e.system ? stable_len_peek(req, e.system, e.system_len) : 0;
	e.effort = xg_json_string_peek(req, "effort");
	e.cache_key = xg_json_string_peek(req, "cache_key");
	e.max_output = int_peek(req, "max_output");
	n = jv_get_kind(src) == JV_KIND_ARRAY ? xg_json_length_peek(src) : 0;
	head = jv_object_delete(jv_object_delete(jv_copy(req), jv_string("messages")),
				jv_string("tools"));
	k = walked_peek(p, jv_copy(head), src, n);
	if (k) {
		/* Taken, not shared: a list with a second holder would be
		 * copied whole by the first message added to it.  The last
		 * dump's list is this one (its items are this list's first,
		 * which dump_list need not compare again). */
		e.body = p->walked.body;
		e.list = p->walked.list;
		p->walked.body = p->walked.list = jv_null();
		if (p->dumped.n && jv_identical(jv_copy(p->dumped.items), jv_copy(e.list))) {
			p->dumped.known = p->dumped.n;
			jv_free(p->dumped.items);
			p->dumped.items = jv_null();
		}
	} else {
		e.body = xg_json_set(jv_object(), "model", jv_string(model));
		e.list = jv_array();
		if (enc->begin)
			enc->begin(&e);
		if (e.system && *e.system)
			enc->system(&e);
		p->dumped.lead = xg_json_length_peek(e.list);
	}
	before = jv_copy(e.body);
	for (i = k; i < n; i++) {
		jv m = jv_array_get(jv_copy(src), i);
		int rc = add_message_peek(&e, enc, m, i, err, errlen);

		jv_free(m);
		if (rc < 0) {
			jv_free(e.list);
			jv_free(e.body);
			jv_free(head);
			jv_free(before);
			xg_provider_walked_release(p);
			dumped_forget(p);
			return -1;
		}
	}
	xg_provider_walked_release(p);
	if (n > 0) {
		p->walked.head = head;
		p->walked.src = jv_copy(src);
		p->walked.body = before;
		p->walked.list = jv_copy(e.list);
		p->walked.n = n;
	} else {
		jv_free(head);
		jv_free(before);
	}
	e.body = xg_json_set(e.body, enc->list_key, e.list);
	add_tools_peek(&e, enc, xg_json_get_peek(req, "tools"));
	enc->end(&e);
	*out = e.body;
	return 0;
}

void xg_provider_dumped_free(struct xg_provider *p)
{
	xg_provider_walked_release(p);
	dumped_forget(p);
	xg_buf_release(&p->dumped.bytes);
	free(p->dumped.ends);
	p->dumped.ends = NULL;
	p->dumped.alloc = 0;
}

/* The list (borrowed) into out, the items the last list began with as
 * their bytes then, and what it wrote kept for the next; its lead items
 * are written from their values.  With hole, the kept bytes are left out
 * of out, and *hole says where they go. */
static int dump_list(struct xg_provider *p, struct xg_buf *out, jv list, size_t *hole)
{
	int i, k = 0, n = xg_json_length_peek(list), rc;
	int lead = p->dumped.lead < n ? p->dumped.lead : n;
	size_t at;

	if (p->dumped.known)
		k = p->dumped.known < n ? p->dumped.known : n;
	else
		while (k < p->dumped.n && k < n &&
		       jv_identical(jv_array_get(jv_copy(list), k),
				    jv_array_get(jv_copy(p->dumped.items), k)))
			k++;
	dumped_forget(p);
	xg_buf_setlen(&p->dumped.bytes, k ? p->dumped.ends[k - 1] : 0);
	if (n > p->dumped.alloc) {
		p->dumped.alloc = n * 2;
		p->dumped.ends = xg_realloc(p->dumped.ends, (size_t)p->dumped.alloc * sizeof(size_t));
	}
	for (i = k; i < n; i++) {
		at = p->dumped.bytes.len;
		if (i < lead) {	/* no bytes kept of them (provider.h) */
			p->dumped.ends[i] = 0;
			continue;
		}
		if ((i && xg_buf_addch(&p->dumped.bytes, ',') < 0) ||
		    xg_json_dump(&p->dumped.bytes, jv_array_get(jv_copy(list), i)) < 0) {
			xg_buf_setlen(&p->dumped.bytes, at);
			return -1;
		}
		/* Kept as it goes out: with no secret of this process. */
		xg_redact_buf_range(&p->dumped.bytes, at, p->dumped.bytes.len);
		p->dumped.ends[i] = p->dumped.bytes.len;
	}
	if (n) {
		p->dumped.items = jv_copy(list);
		p->dumped.n = n;
	}
	rc = xg_buf_addch(out, '[');
	for (i = 0; !rc && i < lead; i++)
		if (!(rc = i ? xg_buf_addch(out, ',') : 0))
			rc = xg_json_dump(out, jv_array_get(jv_copy(list), i));
	if (!rc && hole)
		*hole = out->len;
	else if (!rc)
		rc = xg_buf_add(out, p->dumped.bytes.buf, p->dumped.bytes.len);
	return rc ? rc : xg_buf_addch(out, ']');
}

/* The body (consumed) into out, as xg_json_dump writes it, its list by
 * dump_list (hole as there). */
static int dump_body(struct xg_provider *p, struct xg_buf *out, jv body, size_t *hole)
{
	const char *key = p->wire->encode.list_key;
	int rc = xg_buf_addch(out, '{'), first = 1;

	jv_object_foreach(body, k, v) {
		if (!rc && !first)
			rc = xg_buf_addch(out, ',');
		if (!rc)
			rc = xg_json_dump(out, jv_copy(k));
		if (!rc)
			rc = xg_buf_addch(out, ':');
		if (!rc && jv_get_kind(v) == JV_KIND_ARRAY && !strcmp(jv_string_value(k), key))
			rc = dump_list(p, out, v, hole);
		else if (!rc)
			rc = xg_json_dump(out, jv_copy(v));
		jv_free(k);
		jv_free(v);
		first = 0;
	}
	jv_free(body);
	return rc ? rc : xg_buf_addch(out, '}');
}

int xg_provider_encode_split(struct xg_provider *p, jv request, struct xg_buf *body,
			     size_t *hole, char *err, size_t errlen)
{
	jv out;
	int rc;

	if (hole)
		*hole = SIZE_MAX;
	if (jv_get_kind(request) != JV_KIND_OBJECT) {
		snprintf(err, errlen, "request: not a JSON object");
		jv_free(request);
		return -1;
	}
	rc = encode_peek(p, request, &out, err, errlen);
	jv_free(request);
	if (rc < 0)
		return -1;
	return dump_body(p, body, out, hole);
}

int xg_provider_encode(struct xg_provider *p, jv request, struct xg_buf *body,
		       char *err, size_t errlen)
{
	return xg_provider_encode_split(p, request, body, NULL, err, errlen);
}
