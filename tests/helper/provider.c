/*
 * A driver for the provider clients: reads a request (JSON) on standard
 * input, sends it to a provider and prints the events as NDJSON, with each
 * wait before a retry as {"type":"retry",...}.  The key comes from
 * $XG_TEST_KEY, never from the command line.  --where prints what messages
 * name of each URL or address operand, and whether it is near.
 */
#include "xg.h"
#include "xg-test.h"
#include "provider/provider.h"

static const char *const usage[] = {
	"xg-test-provider [--encode] [--stats] [--sent] [--repeat n] [--dialect name] [--name name] kind base-url",
	"xg-test-provider --policy",
	"xg-test-provider --where url-or-address...",
	NULL
};

enum { OPT_ENCODE = 1, OPT_STATS, OPT_REPEAT, OPT_DIALECT, OPT_POLICY, OPT_NAME, OPT_WHERE,
       OPT_SENT };

static const struct xg_option options[] = {
	{ OPT_DIALECT, 0, "dialect", "name", "the openai-chat dialect (llama.cpp, ollama, ...)" },
	{ OPT_ENCODE, 0, "encode", NULL, "print the request body instead of sending it" },
	{ OPT_NAME, 0, "name", "name", "the provider's name, for messages" },
	{ OPT_POLICY, 0, "policy", NULL, "print the retry policy XG_RETRY gives" },
	{ OPT_REPEAT, 0, "repeat", "n", "send the request n times on the one client" },
	{ OPT_SENT, 0, "sent", NULL, "print {\"type\":\"sent\"} when the first request's sent hook runs" },
	{ OPT_STATS, 0, "stats", NULL, "print connection and timing figures per request" },
	{ OPT_WHERE, 0, "where", NULL, "print the host, the shown URL and nearness of each operand" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-test-provider", "Send a request to a model provider and print its events.",
	usage, options
};

static int on_event(void *ctx, jv ev)
{
	return xg_rec_write(ctx, ev) < 0;
}

/* The client's sent hook, as xg-run sets it for its first request. */
static void on_sent(void *ctx)
{
	xg_rec_write(ctx, xg_rec_new("sent"));
}

static void on_retry(void *ctx, const struct xg_provider_retry *r)
{
	jv ev = xg_rec_new("retry");

	ev = xg_json_set(ev, "attempt", jv_number(r->attempt));
	ev = xg_json_set(ev, "of", jv_number(r->of));
	ev = xg_json_set(ev, "delay_ms", jv_number((double)r->delay_ms));
	ev = xg_json_set(ev, "reason", jv_string(r->reason));
	ev = xg_json_set(ev, "message", jv_string(r->message));
	ev = xg_json_set(ev, "partial", jv_bool(r->partial));
	ev = xg_json_set(ev, "provider", jv_string(r->provider));
	ev = xg_json_set(ev, "host", jv_string(r->host));
	xg_rec_write(ctx, ev);
}

/* For each operand: its host with and without the port, the URL as
 * shown, and whether the host without the port (an operand that is not
 * a URL: the operand) is near. */
static void print_where(char **args, int n)
{
	struct xg_buf b = XG_BUF_INIT(0);
	int i;

	for (i = 0; i < n; i++) {
		char *host = xg_http_url_host(args[i], 1), *name = xg_http_url_host(args[i], 0);
		char *shown = xg_http_url_shown(args[i]);
		jv v = jv_object();

		v = xg_json_set(v, "host", jv_string(host));
		v = xg_json_set(v, "hostname", jv_string(name));
		v = xg_json_set(v, "shown", jv_string(shown));
		v = xg_json_set(v, "near", jv_bool(xg_http_address_is_local(
			strstr(args[i], "://") ? name : args[i])));
		xg_buf_reset(&b);
		xg_json_dump(&b, v);
		printf("%s\n", b.buf);
		free(host);
		free(name);
		free(shown);
	}
	xg_buf_release(&b);
}

static void print_policy(void)
{
	struct xg_provider_policy pol;
	uint64_t rng = (uint64_t)getpid();
	int i;

	xg_provider_policy_from_env(&pol);
	printf("{\"attempts\":%d,\"base_ms\":%ld,\"cap_ms\":%ld,\"idle_ms\":%ld,\"connect_ms\":%ld,\"delays_ms\":[",
	       pol.attempts, pol.base_ms, pol.cap_ms, pol.idle_ms, pol.connect_ms);
	for (i = 1; i <= pol.attempts; i++)
		printf("%s%ld", i > 1 ? "," : "", xg_provider_retry_delay(&pol, i, -1, &rng));
	printf("]}\n");
}

jv xg_test_read_request(void)
{
	struct xg_buf in = XG_BUF_INIT(0);
	jv req;

	if (xg_read_fd(0, &in) < 0)
		xg_die_errno(XG_EX_IOERR, "cannot read standard input");
	req = jv_parse_sized(in.buf, (int)in.len);
	xg_buf_release(&in);
	if (jv_get_kind(req) != JV_KIND_OBJECT)
		xg_die(XG_EX_DATAERR, "standard input: the request is not a JSON object");
	return req;
}

jv xg_test_provider_config(const char *kind, const char *base_url)
{
	jv config = xg_json_set(jv_object(), "kind", jv_string(kind));

	return xg_json_set(config, "base_url", jv_string(base_url));
}

int cmd__provider(int argc, char **argv)
{
	struct xg_opts o;
	struct xg_rec_writer w;
	struct xg_buf body = XG_BUF_INIT(0);
	struct xg_provider *p;
	struct xg_provider_callbacks cb = { on_event, on_retry, NULL };
	const char *arg, *dialect = NULL, *name = NULL;
	char err[256];
	int id, encode = 0, stats = 0, sent = 0, policy = 0, where = 0, rc = 0;
	unsigned long long repeat = 1, i;
	jv config, req;

	xg_prog_init("xg-test-provider");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_DIALECT: dialect = arg; break;
		case OPT_ENCODE: encode = 1; break;
		case OPT_STATS: stats = 1; break;
		case OPT_SENT: sent = 1; break;
		case OPT_REPEAT: repeat = xg_opt_number(&cmd, "--repeat", arg, 0); break;
		case OPT_POLICY: policy = 1; break;
		case OPT_NAME: name = arg; break;
		case OPT_WHERE: where = 1; break;
		}
	}
	if (where) {
		print_where(o.args, o.nargs);
		xg_opt_release(&o);
		return xg_prog_exit(0);
	}
	if (policy) {
		print_policy();
		xg_opt_release(&o);
		return xg_prog_exit(0);
	}
	if (o.nargs != 2)
		xg_usage_error(&cmd, "a kind and a base URL are needed");
	if (!xg_stdin_readable())
		xg_die(XG_EX_USAGE, "the request is read from standard input");
	req = xg_test_read_request();
	config = xg_test_provider_config(o.args[0], o.args[1]);
	if (dialect)
		config = xg_json_set(config, "dialect", jv_string(dialect));
	if (name)
		config = xg_json_set(config, "name", jv_string(name));
	p = xg_provider_new(config, getenv("XG_TEST_KEY"), err, sizeof(err));
	if (!p)
		xg_die(XG_EX_CONFIG, "%s", err);
	xg_rec_writer_init(&w, stdout);
	cb.ctx = &w;
	if (sent) {
		p->http.sent_fn = on_sent;
		p->http.sent_arg = &w;
	}
	if (encode) {
		if (xg_provider_encode(p, jv_copy(req), &body, err, sizeof(err)) < 0)
			xg_die(XG_EX_DATAERR, "%s", err);
		printf("%s\n", body.buf);
	}
	for (i = 0; i < repeat && !encode; i++) {
		struct timespec start;

		clock_gettime(CLOCK_REALTIME, &start);
		rc = xg_provider_stream(p, jv_copy(req), &cb, NULL);
		if (stats) {
			jv ev = xg_rec_new("stats");

			ev = xg_json_set(ev, "status", jv_number(p->last.status));
			ev = xg_json_set(ev, "new_connections", jv_number(p->last.new_connections));
			ev = xg_json_set(ev, "encode_us", jv_number((double)p->last_encode_us));
			ev = xg_json_set(ev, "pretransfer_us", jv_number((double)p->last.pretransfer_us));
			ev = xg_json_set(ev, "first_byte_us", jv_number((double)p->last.first_byte_us));
			ev = xg_json_set(ev, "start_wall_us", jv_number((double)start.tv_sec * 1e6 +
								      (double)(start.tv_nsec / 1000)));
			xg_rec_write(&w, ev);
		}
		if (rc)
			break;
	}
	jv_free(req);
	xg_provider_free(p);
	xg_rec_writer_release(&w);
	xg_buf_release(&body);
	xg_opt_release(&o);
	return xg_prog_exit(rc < 0 ? XG_EX_FAIL : rc);
}
