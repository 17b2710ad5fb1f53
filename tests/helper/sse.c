/*
 * A driver for the SSE parser and the stream decoders: replays recorded
 * streams (tests/fixtures/wire) whole, one byte at a time and split at
 * every offset, and compares what comes out with the fixture's
 * .expect.json; also measures parse throughput for bench/provider.sh.
 */
#include "xg.h"
#include "xg-test.h"
#include <jq.h>
#include "provider/provider.h"

static const char *const usage[] = {
	"xg-test-sse check file.sse ...",
	"xg-test-sse events [--max bytes] file",
	"xg-test-sse decode [--max bytes] kind file",
	"xg-test-sse bench file megabytes",
	NULL
};

enum { OPT_MAX = 1 };

static const struct xg_option options[] = {
	{ OPT_MAX, 0, "max", "bytes", "the per-event ceiling" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-test-sse", "Replay recorded event streams through the parsers.", usage, options
};

/* What a correct client rebuilds from a stream, per wire kind, in the
 * shape the driver's aggregate has (jq programs over .expect.json). */
static const char *const expect_chat =
	"def fin(r): {\"length\":\"length\",\"tool_calls\":\"tool_calls\","
	"\"function_call\":\"tool_calls\",\"content_filter\":\"content_filter\"}[r] // \"stop\";"
	"{sse_events, text, reasoning: (.reasoning // \"\"),"
	" tool_calls: [.tool_calls[] | {id, name, args: .arguments_parsed}],"
	" reasoning_blocks: (.reasoning_blocks // []),"
	" finish: (if .error then null elif .refusal then \"refusal\""
	"   elif (.tool_calls|length) > 0 and fin(.finish_reason) == \"stop\" then \"tool_calls\""
	"   else fin(.finish_reason) end),"
	" usage: (if .error or .usage == null then null else {input: .usage.prompt_tokens,"
	"   cached_input: (.usage.prompt_tokens_details.cached_tokens // 0), cache_write: 0,"
	"   output: .usage.completion_tokens,"
	"   reasoning: (.usage.completion_tokens_details.reasoning_tokens // 0)} end),"
	" error: (.error.class // null)}";

static const char *const expect_responses =
	"{sse_events, text, reasoning: (.reasoning_summary // \"\"),"
	" tool_calls: [.function_calls[] | {id: .call_id, name, args: .arguments_parsed}],"
	" reasoning_blocks: (.reasoning_blocks // []),"
	" finish: (if .error then null elif .status == \"incomplete\" then"
	"   (if .incomplete_details.reason == \"content_filter\" then \"content_filter\" else \"length\" end)"
	"   elif (.function_calls|length) > 0 then \"tool_calls\" else \"stop\" end),"
	" usage: (if .error or .usage == null then null else {input: .usage.input_tokens,"
	"   cached_input: (.usage.input_tokens_details.cached_tokens // 0), cache_write: 0,"
	"   output: .usage.output_tokens,"
	"   reasoning: (.usage.output_tokens_details.reasoning_tokens // 0)} end),"
	" error: (.error.class // null)}";

static const char *const expect_anthropic =
	"def fin(r): {\"max_tokens\":\"length\",\"tool_use\":\"tool_calls\",\"refusal\":\"refusal\"}[r] // \"stop\";"
	"{sse_events, text: ([.blocks[] | select(.type == \"text\") | .text] | add // \"\"),"
	" reasoning: ([.blocks[] | select(.type == \"thinking\") | .thinking] | add // \"\"),"
	" tool_calls: [.blocks[] | select(.type == \"tool_use\") | {id, name, args: .input}],"
	" reasoning_blocks: [.blocks[] | select(.type == \"thinking\") | {text: .thinking, signature}],"
	" finish: (if .error then null else fin(.stop_reason) end),"
	" usage: (if .error or .usage == null then null else"
	"   {input: (.usage.input_tokens + (.usage.cache_read_input_tokens // 0)"
	"     + (.usage.cache_creation_input_tokens // 0)),"
	"   cached_input: (.usage.cache_read_input_tokens // 0),"
	"   cache_write: (.usage.cache_creation_input_tokens // 0),"
	"   output: .usage.output_tokens, reasoning: 0} end),"
	" error: (.error.class // null)}";

static const char *const expect_framing =
	"{events: [.expected_events[] | {event, data, id}],"
	" tail: .unterminated_tail_discarded}";

static jv run_jq(const char *program, jv input)
{
	jq_state *jq = jq_init();
	jv out;

	if (!jq || !jq_compile(jq, program))
		xg_die(XG_EX_SOFTWARE, "cannot compile a jq program");
	jq_start(jq, input, 0);
	out = jq_next(jq);
	jq_teardown(&jq);
	return out;
}

/* The aggregate of a decoder's events. */
struct agg {
	struct xg_buf text, reasoning;
	jv calls, blocks, usage, finish, error;
};

static void agg_init(struct agg *a)
{
	xg_buf_init(&a->text, 0);
	xg_buf_init(&a->reasoning, 0);
	a->calls = jv_array();
	a->blocks = jv_array();
	a->usage = a->finish = a->error = jv_null();
}

static int agg_event(void *ctx, jv ev)
{
	struct agg *a = ctx;
	const char *type = xg_json_string_peek(ev, "type");
	const char *t = xg_json_string_peek(ev, "text");

	if (!strcmp(type, "text")) {
		xg_buf_addstr(&a->text, t);
	} else if (!strcmp(type, "reasoning")) {
		xg_buf_addstr(&a->reasoning, t);
	} else if (!strcmp(type, "reasoning_block")) {
		jv b = xg_json_set(jv_object(), "text", jv_string(t ? t : ""));

		b = xg_json_set(b, "signature", jv_copy(xg_json_get_peek(ev, "signature")));
		a->blocks = jv_array_append(a->blocks, b);
	} else if (!strcmp(type, "tool_call")) {
		jv c = xg_json_set(jv_object(), "id", jv_copy(xg_json_get_peek(ev, "id")));

		c = xg_json_set(c, "name", jv_copy(xg_json_get_peek(ev, "name")));
		c = xg_json_set(c, "args", jv_copy(xg_json_get_peek(ev, "args")));
		a->calls = jv_array_append(a->calls, c);
	} else if (!strcmp(type, "usage")) {
		jv_free(a->usage);
		a->usage = jv_object_delete(jv_copy(ev), jv_string("type"));
	} else if (!strcmp(type, "finish")) {
		jv_free(a->finish);
		a->finish = jv_copy(xg_json_get_peek(ev, "reason"));
	}
	jv_free(ev);
	return 0;
}

static jv decode(const char *kind, const char *data, size_t len, const size_t *cuts, size_t ncuts)
{
	struct agg a;
	struct xg_provider_decoder *d;
	struct xg_provider_error e;
	size_t i, at = 0;
	jv out;

	agg_init(&a);
	d = xg_provider_decoder_new(kind, agg_event, &a);
	if (!d)
		xg_die(XG_EX_USAGE, "unknown kind '%s'", kind);
	for (i = 0; i <= ncuts; i++) {
		size_t to = i < ncuts ? cuts[i] : len;

		xg_provider_decoder_feed(d, data + at, to - at);
		at = to;
	}
	if (xg_provider_decoder_finish(d, &e) < 0) {
		jv_free(a.error);
		a.error = jv_string(e.class);
	}
	out = xg_json_set(jv_object(), "sse_events",
			  jv_number((double)xg_provider_decoder_sse_events(d)));
	out = xg_json_set(out, "text", jv_string(a.text.buf));
	out = xg_json_set(out, "reasoning", jv_string(a.reasoning.buf));
	out = xg_json_set(out, "tool_calls", a.calls);
	out = xg_json_set(out, "reasoning_blocks", a.blocks);
	out = xg_json_set(out, "finish", a.finish);
	out = xg_json_set(out, "usage", a.usage);
	out = xg_json_set(out, "error", a.error);
	xg_buf_release(&a.text);
	xg_buf_release(&a.reasoning);
	xg_provider_decoder_free(d);
	return out;
}

struct framing {
	jv events;
	int tail;
};

static int framing_event(void *ctx, const struct xg_sse_event *ev)
{
	struct framing *f = ctx;
	jv o = xg_json_set(jv_object(), "event", ev->type ? jv_string(ev->type) : jv_null());

	o = xg_json_set(o, "data", xg_json_string_bytes(ev->data, ev->data_len));
	o = xg_json_set(o, "id", ev->id ? jv_string(ev->id) : jv_null());
	f->events = jv_array_append(f->events, o);
	return 0;
}

static jv frame(const char *data, size_t len, const size_t *cuts, size_t ncuts, size_t max)
{
	struct xg_sse p;
	struct framing f = { jv_array(), 0 };
	size_t i, at = 0;
	jv out;
	int rc = 0;

	xg_sse_init(&p, max);
	for (i = 0; i <= ncuts && !rc; i++) {
		size_t to = i < ncuts ? cuts[i] : len;

		rc = xg_sse_feed(&p, data + at, to - at, framing_event, &f);
		at = to;
	}
	f.tail = xg_sse_finish(&p);
	out = xg_json_set(jv_object(), "events", f.events);
	out = xg_json_set(out, "tail", jv_bool(f.tail));
	if (rc)
		out = xg_json_set(out, "error", jv_string(p.err));
	xg_sse_release(&p);
	return out;
}

static const char *kind_of(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "openai-chat", 11) || !strncmp(base, "llamacpp", 8) ||
	    !strncmp(base, "ollama", 6) || !strncmp(base, "vllm", 4) || !strncmp(base, "openrouter", 10))
		return "openai-chat";
	if (!strncmp(base, "openai-responses", 16))
		return "openai-responses";
	if (!strncmp(base, "anthropic", 9))
		return "anthropic-messages";
	return NULL;
}

static jv run(const char *kind, const char *data, size_t len, const size_t *cuts, size_t ncuts)
{
	return kind ? decode(kind, data, len, cuts, ncuts) : frame(data, len, cuts, ncuts, 0);
}

static int differs(const char *path, const char *how, jv want, jv got)
{
	jv a = jv_dump_string(jv_copy(want), 0), b = jv_dump_string(jv_copy(got), 0);
	int eq = jv_equal(jv_copy(want), got);

	if (!eq)
		printf("FAIL %s (%s)\n  want %s\n  got  %s\n", path, how,
		       jv_string_value(a), jv_string_value(b));
	jv_free(a);
	jv_free(b);
	return !eq;
}

static int check(const char *path)
{
	struct xg_buf data = XG_BUF_INIT(0), exp = XG_BUF_INIT(0);
	const char *kind = kind_of(path);
	char *expect_path;
	size_t len, base, k, *cuts;
	jv want, got;
	int bad = 0;

	len = strlen(path);
	base = len > 4 && !strcmp(path + len - 4, ".sse") ? len - 4 : len;
	expect_path = xg_asprintf("%.*s.expect.json", (int)base, path);
	if (xg_read_file(path, &data) < 0 || xg_read_file(expect_path, &exp) < 0)
		xg_die(XG_EX_IOERR, "cannot read '%s' or its .expect.json", path);
	want = jv_parse_sized(exp.buf, (int)exp.len);
	if (!jv_is_valid(want))
		xg_die(XG_EX_DATAERR, "'%s' is not JSON", expect_path);
	want = run_jq(kind ? (!strcmp(kind, "openai-chat") ? expect_chat :
			      !strcmp(kind, "openai-responses") ? expect_responses : expect_anthropic) :
		      expect_framing, want);
	got = run(kind, data.buf, data.len, NULL, 0);
	bad |= differs(path, "whole", want, got);
	/* One byte at a time. */
	cuts = xg_calloc(data.len + 1, sizeof(*cuts));
	for (k = 0; k < data.len; k++)
		cuts[k] = k;
	if (!bad)
		bad |= differs(path, "byte by byte", want, run(kind, data.buf, data.len, cuts, data.len));
	/* Split in two at every offset. */
	for (k = 0; k <= data.len && !bad; k++) {
		char how[64];

		snprintf(how, sizeof(how), "split at %zu", k);
		bad |= differs(path, how, want, run(kind, data.buf, data.len, &k, 1));
	}
	if (!bad)
		printf("ok %s (whole, byte by byte, %zu splits)\n", path, data.len + 1);
	free(cuts);
	jv_free(want);
	free(expect_path);
	xg_buf_release(&data);
	xg_buf_release(&exp);
	return bad;
}

static int print_event(void *ctx, jv ev)
{
	struct xg_rec_writer *w = ctx;

	xg_rec_write(w, ev);
	return 0;
}

static int count_event(void *ctx, const struct xg_sse_event *ev)
{
	(*(size_t *)ctx)++;
	return 0;
}

static int drop_event(void *ctx, jv ev)
{
	jv_free(ev);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Feeds the file over and over in 16 KiB reads, as a socket would. */
static void bench(const char *path, double mb)
{
	struct xg_buf data = XG_BUF_INIT(0), big = XG_BUF_INIT(0);
	const char *kind = kind_of(path);
	size_t target = (size_t)(mb * 1048576), at, n, events = 0;
	struct xg_sse p;
	struct xg_provider_decoder *d;
	double t0, t1;

	if (xg_read_file(path, &data) < 0)
		xg_die(XG_EX_IOERR, "cannot read '%s'", path);
	while (big.len < target)
		xg_buf_add(&big, data.buf, data.len);
	xg_sse_init(&p, 0);
	t0 = now_s();
	for (at = 0; at < big.len; at += n) {
		n = big.len - at < 16384 ? big.len - at : 16384;
		xg_sse_feed(&p, big.buf + at, n, count_event, &events);
	}
	t1 = now_s();
	xg_sse_release(&p);
	printf("{\"what\":\"sse\",\"file\":\"%s\",\"bytes\":%zu,\"events\":%zu,\"seconds\":%.4f,\"mb_per_s\":%.1f}\n",
	       path, big.len, events, t1 - t0, (double)big.len / 1048576 / (t1 - t0));
	if (kind) {
		/* The whole decoder (JSON included), on one stream at a time. */
		t0 = now_s();
		for (at = 0; at < big.len; at += data.len) {
			d = xg_provider_decoder_new(kind, drop_event, NULL);
			xg_provider_decoder_feed(d, big.buf + at, data.len);
			xg_provider_decoder_free(d);
		}
		t1 = now_s();
		printf("{\"what\":\"decode\",\"file\":\"%s\",\"kind\":\"%s\",\"bytes\":%zu,\"seconds\":%.4f,\"mb_per_s\":%.1f}\n",
		       path, kind, big.len, t1 - t0, (double)big.len / 1048576 / (t1 - t0));
	}
	xg_buf_release(&data);
	xg_buf_release(&big);
}

int cmd__sse(int argc, char **argv)
{
	struct xg_opts o;
	struct xg_rec_writer w;
	struct xg_buf data = XG_BUF_INIT(0);
	const char *arg, *verb;
	size_t max = 0;
	int id, i, rc = 0;
	jv out;

	xg_prog_init("xg-test-sse");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1)
		if (id == OPT_MAX)
			max = (size_t)xg_opt_number(&cmd, "--max", arg, 1);
	if (o.nargs < 2)
		xg_usage_error(&cmd, "a verb and a file are needed");
	verb = o.args[0];
	xg_rec_writer_init(&w, stdout);
	if (!strcmp(verb, "check")) {
		for (i = 1; i < o.nargs; i++)
			rc |= check(o.args[i]);
	} else if (!strcmp(verb, "events")) {
		if (xg_read_file(o.args[1], &data) < 0)
			xg_die(XG_EX_IOERR, "cannot read '%s'", o.args[1]);
		out = frame(data.buf, data.len, NULL, 0, max);
		rc = jv_is_valid(xg_json_get_peek(out, "error"));
		xg_rec_write(&w, out);
	} else if (!strcmp(verb, "decode") && o.nargs == 3) {
		struct xg_provider_decoder *d = xg_provider_decoder_new(o.args[1], print_event, &w);
		struct xg_provider_error e;

		if (!d)
			xg_usage_error(&cmd, "unknown kind '%s'", o.args[1]);
		if (max)
			xg_provider_decoder_set_max(d, max);
		if (xg_read_file(o.args[2], &data) < 0)
			xg_die(XG_EX_IOERR, "cannot read '%s'", o.args[2]);
		xg_provider_decoder_feed(d, data.buf, data.len);
		if (xg_provider_decoder_finish(d, &e) < 0) {
			xg_rec_write(&w, xg_provider_error_event(&e));
			rc = e.exit_code;
		}
		xg_provider_decoder_free(d);
	} else if (!strcmp(verb, "bench") && o.nargs == 3) {
		bench(o.args[1], atof(o.args[2]));
	} else {
		xg_usage_error(&cmd, "unknown verb '%s'", verb);
	}
	xg_buf_release(&data);
	xg_rec_writer_release(&w);
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
