/*
 * The agent loop: upstream records in, provider requests and tool calls,
 * run records out (man 1 xg-run).  The conversation's history is in
 * history.c, the run's own records in summary.c; struct run in run/run.h.
 */
#include "xg.h"
#include "run/internal.h"
#include "provider/provider.h"
#include "choices/choices.h"
#include "conversation.h"
#include "plan/plan.h"
#include "prompt/prompt.h"

/*
 * A signal handler can reach only globals: the signal that came, the tools'
 * process groups and the provider in flight (xg_provider_abort: the
 * transfer gives up at once, a retry wait is cut short).
 */
static volatile sig_atomic_t run_signal;
static struct xg_tool_procs *volatile run_procs;
static struct xg_provider *volatile run_provider;

static void on_signal(int sig)
{
	struct xg_provider *p = run_provider;
	int saved = errno;

	if (!run_signal)
		run_signal = sig;
	if (run_procs)
		xg_tool_kill_all(run_procs, SIGTERM);
	if (p)
		xg_provider_abort(p);
	xg_run_input_abort();
	errno = saved;
}

int xg_run_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t quiet, old;
	int rc;

	sigemptyset(&quiet);
	sigaddset(&quiet, SIGINT);
	sigaddset(&quiet, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc ? -1 : 0;
}

int xg_run_fail(struct run *r, int rc, const char *fmt, ...)
{
	va_list ap;
	char msg[2048];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* run_end says it too; said once when xg shows the records. */
	if (!xg_prog_records_shown())
		fprintf(stderr, "%s: %s\n", xg_progname, msg);
	if (!r->reason)
		r->reason = xg_strdup(msg);
	r->status = "failed";
	r->rc = rc;
	return rc;
}

static void note(const struct run *r, const char *what)
{
	if (r->o->verbose)
		fprintf(stderr, "%s: %s\n", xg_progname, what);
}


/* Writes each record of recs (consumed) as one of the run's. */
static void write_records(struct run *r, jv recs)
{
	jv_array_foreach(recs, i, v) {
		(void)i;
		xg_run_out_write(&r->out, v);
	}
	jv_free(recs);
}

/* ---- what the run needs before its first request ---- */

static int pick_conversation(struct run *r)
{
	const char *c = r->o->conversation;

	if (!c)
		c = xg_json_string_peek(r->request, "conversation");
	if (c && !xg_conv_id_valid(c))
		return xg_run_fail(r, XG_EX_DATAERR, "'%s' " XG_CONV_ID_BAD, c);
	if (c) {
		r->conv = xg_strdup(c);
		r->conv_new = !xg_conv_exists(c);
	} else {
		r->conv = xg_conv_new_id();
		r->conv_new = 1;
	}
	return 0;
}

static int pick_workspace(struct run *r)
{
	const char *cwd = xg_json_string_peek(r->request, "cwd");
	struct stat st;

	r->cwd = realpath(cwd ? cwd : ".", NULL);
	if (!r->cwd || stat(r->cwd, &st) < 0 || !S_ISDIR(st.st_mode))
		return xg_run_fail(r, XG_EX_DATAERR, "cannot use '%s' as the workspace: %s",
				   cwd ? cwd : ".", r->cwd ? "Not a directory" : strerror(errno));
	return 0;
}

static int pick_model(struct run *r)
{
	struct xg_choices_want want = { 0 };
	jv recs, last = jv_null();
	int rc;

	rc = xg_choices_init(&r->choices, r->o->verbose);
	if (rc)
		return xg_run_fail(r, rc, "cannot load the model catalog");
	r->have_catalog = 1;
	if (jv_get_kind(r->model) == JV_KIND_OBJECT && !r->o->model && !r->o->effort)
		goto check;
	note(r, "no model record: choosing the conversation's start model");
	want.account = r->o->account;
	want.mode = r->mode;
	want.model = r->o->model;
	want.effort = r->o->effort;
	want.conversation = r->conv_new ? NULL : r->conv;
	rc = xg_choices_start(&r->choices, &want, jv_copy(r->request), &recs);
	jv_array_foreach(recs, i, v) {
		(void)i;
		if (!strcmp(xg_json_string_peek(v, "type") ? xg_json_string_peek(v, "type") : "",
			    "model")) {
			jv_free(last);
			last = v;
		} else {
			xg_run_out_write(&r->out, v);
		}
	}
	jv_free(recs);
	jv_free(r->model);
	r->model = last;
	if (rc) {
		const char *why = xg_json_string_peek(r->model, "reason");

		return xg_run_fail(r, rc, "no model to run on%s%s", why ? ": " : "",
				   why ? why : "");
	}
check:
	if (!xg_json_string_peek(r->model, "id")) {
		const char *why = xg_json_string_peek(r->model, "reason");

		return xg_run_fail(r, XG_EX_NOPERM, "no model to run on%s%s", why ? ": " : "",
				   why ? why : "");
	}
	return 0;
}

static int compile_pack(struct run *r)
{
	struct xg_prompt_request rq = { 0 };
	jv notices, pack;
	const char *pm = xg_json_string_peek(r->pack, "mode");
	int rc;

	if (jv_get_kind(r->pack) == JV_KIND_OBJECT && xg_json_string_peek(r->pack, "system") &&
	    pm && !strcmp(pm, r->mode) && !r->o->variant)
		return 0;
	notices = jv_array();
	note(r, "no pack record for this mode: compiling the prompt");
	rq.variant = r->o->variant ? r->o->variant : xg_json_string_peek(r->request, "variant");
	rq.model = xg_json_string_peek(r->model, "id");
	rq.mode = r->mode;
	rq.conversation = r->conv;
	rc = xg_prompt_pack(&rq, &pack, &notices);
	write_records(r, notices);
	if (rc)
		return xg_run_fail(r, rc, "cannot compile the prompt");
	jv_free(r->pack);
	r->pack = pack;
	return 0;
}

/* The providers' key variables: no command a tool runs may see them. */
static void collect_env_drop(struct run *r)
{
	jv provs = r->choices.cat.providers;
	size_t n = 0;

	r->env_drop = xg_calloc((size_t)jv_object_length(jv_copy(provs)) + 1, sizeof(char *));
	jv_object_foreach(provs, k, v) {
		const char *env = xg_json_string_peek(v, "key_env");

		if (env)
			r->env_drop[n++] = xg_strdup(env);
		jv_free(k);
		jv_free(v);
	}
}

static int open_provider(struct run *r)
{
	const char *pname = xg_json_string_peek(r->model, "provider");
	const char *aname = r->o->account ? r->o->account :
			    xg_json_string_peek(r->request, "account");
	jv prov;
	struct xg_account_keys keys;
	char *account = NULL, *key = NULL, err[256];
	int got;

	prov = pname ? xg_catalog_provider_peek(&r->choices.cat, pname) : jv_invalid();
	if (!jv_is_valid(prov))
		return xg_run_fail(r, XG_EX_CONFIG, "the catalog has no provider '%s'",
				   pname ? pname : "(none)");
	if (xg_account_current(aname, "the request", &account, NULL))
		return xg_run_fail(r, XG_EX_CONFIG, "no usable account");
	xg_account_keys_init(&keys, account);
	got = xg_account_key(&keys, pname, jv_copy(prov), &key);
	if (got < 0) {
		xg_account_keys_release(&keys);
		free(account);
		return xg_run_fail(r, keys.status ? keys.status : XG_EX_NOPERM,
				   "cannot read the credentials of provider '%s'", pname);
	}
	if (!got && xg_json_string_peek(prov, "key_env")) {
		xg_run_fail(r, XG_EX_NOPERM, "no credentials for provider '%s': set %s or store "
			    "a key for account '%s'", pname, xg_json_string_peek(prov, "key_env"),
			    account);
		xg_account_keys_release(&keys);
		free(account);
		return r->rc;
	}
	xg_account_keys_release(&keys);
	free(account);
	r->prov = xg_provider_new(jv_copy(prov), key, err, sizeof(err));
	if (key) {
		explicit_bzero(key, strlen(key));
		free(key);
	}
	if (!r->prov)
		return xg_run_fail(r, XG_EX_CONFIG, "provider '%s': %s", pname, err);
	return 0;
}

static void *gate_thread(void *arg)
{
	struct run *r = arg;

	r->gate = xg_gate_new(r->o->gate, &r->gate_err);
	return NULL;
}

/*
 * Compiling a jq filter costs tens of milliseconds (libjq 1.6 compiles its
 * builtins each time), so a --gate filter compiles on a thread of its own
 * while the rest is prepared; it shares no value with the main thread.
 */
static void start_gate(struct run *r)
{
	if (!r->o->gate)
		return;
	if (xg_run_thread_start(&r->gate_thread, gate_thread, r) == 0)
		r->gate_running = 1;
	else
		gate_thread(r);
}

/* Joins the gate's compilation: 0, or exit 78 for a filter that does not
 * compile, before anything is sent or appended. */
static int join_gate(struct run *r)
{
	if (r->gate_running) {
		pthread_join(r->gate_thread, NULL);
		r->gate_running = 0;
	}
	if (r->o->gate && !r->gate) {
		xg_run_fail(r, XG_EX_CONFIG, "--gate: %s", r->gate_err ? r->gate_err :
			    "the filter does not compile");
		return r->rc;
	}
	return 0;
}

static int prepare(struct run *r)
{
	const char *mode = r->o->mode ? r->o->mode : xg_json_string_peek(r->request, "mode");

	r->mode = mode ? mode : "normal";
	if (!xg_conv_mode_valid(r->mode))
		return xg_run_fail(r, XG_EX_DATAERR, "'%s' " XG_CONV_MODE_BAD, r->mode);
	if (pick_conversation(r) || pick_workspace(r))
		return r->rc;
	start_gate(r);
	xg_run_start_input(r);
	if (pick_model(r))
		return r->rc;
	collect_env_drop(r);
	if (open_provider(r) || compile_pack(r))
		return r->rc;
	return join_gate(r);
}

/* ---- the order of the run's records ---- */

/*
 * The run's own records wait until run_start is out; begin() writes it (and
 * run.json) once the snapshot is in, at the first event of the first reply
 * or when the run ends before one.
 */
void xg_run_emit(struct run *r, jv rec)
{
	if (r->begun)
		xg_run_out_write(&r->out, rec);
	else
		r->pending = jv_array_append(r->pending, rec);
}

static void begin(struct run *r)
{
	if (r->begun)
		return;
	xg_run_join_input(r, &run_signal);
	xg_run_write_start(r);
	xg_run_write_summary(r, NULL);
	r->begun = 1;
	jv_array_foreach(r->pending, i, v) {
		(void)i;
		xg_run_out_write(&r->out, v);
	}
	jv_free(r->pending);
	r->pending = jv_array();
}

/* ---- one request ---- */

struct turn {
	struct run *r;
	struct xg_buf text;
	jv reasoning;		/* reasoning blocks to send back */
	jv calls;		/* {id, name, args, bad_args?} */
	jv usage;
	char finish[32];
};

static void turn_reset(struct turn *t)
{
	xg_buf_reset(&t->text);
	jv_free(t->reasoning);
	jv_free(t->calls);
	jv_free(t->usage);
	t->reasoning = jv_array();
	t->calls = jv_array();
	t->usage = jv_null();
	t->finish[0] = 0;
}

static int on_event(void *ctx, jv ev)
{
	struct turn *t = ctx;
	const char *type = xg_json_string_peek(ev, "type");
	const char *s;

	begin(t->r);
	if (t->r->rc >= 0) {	/* the rest of the input was bad */
		jv_free(ev);
		return 1;
	}
	if (!type)
		type = "";
	if (!strcmp(type, "text") && (s = xg_json_string_peek(ev, "text"))) {
		xg_buf_addstr(&t->text, s);
		if (t->r->o->stream) {
			jv rec = xg_rec_new("text");

			xg_run_emit(t->r, xg_json_set(rec, "text", jv_string(s)));
		}
	} else if (!strcmp(type, "reasoning_block")) {
		jv b = jv_object();

		b = xg_json_set(b, "text", jv_copy(xg_json_get_peek(ev, "text")));
		if (xg_json_string_peek(ev, "signature"))
			b = xg_json_set(b, "signature", jv_copy(xg_json_get_peek(ev, "signature")));
		t->reasoning = jv_array_append(t->reasoning, b);
	} else if (!strcmp(type, "tool_call")) {
		jv c = jv_object();

		c = xg_json_set(c, "id", jv_copy(xg_json_get_peek(ev, "id")));
		c = xg_json_set(c, "name", jv_copy(xg_json_get_peek(ev, "name")));
		c = xg_json_set(c, "args", jv_copy(xg_json_get_peek(ev, "args")));
		if (jv_is_valid(xg_json_get_peek(ev, "bad_args")))
			c = xg_json_set(c, "bad_args", jv_copy(xg_json_get_peek(ev, "bad_args")));
		t->calls = jv_array_append(t->calls, c);
	} else if (!strcmp(type, "usage")) {
		jv_free(t->usage);
		t->usage = jv_copy(ev);
	} else if (!strcmp(type, "finish") && (s = xg_json_string_peek(ev, "reason"))) {
		snprintf(t->finish, sizeof(t->finish), "%s", s);
	}
	jv_free(ev);
	return run_signal != 0;
}

static void on_retry(void *ctx, const struct xg_provider_retry *rr)
{
	struct turn *t = ctx;
	jv v = xg_rec_new("retry");

	begin(t->r);
	if (t->r->rc >= 0)
		xg_provider_abort(t->r->prov);
	v = xg_json_set(v, "attempt", jv_number(rr->attempt));
	v = xg_json_set(v, "of", jv_number(rr->of));
	v = xg_json_set(v, "delay_ms", jv_number((double)rr->delay_ms));
	v = xg_json_set(v, "reason", string_or_null(rr->reason));
	if (rr->message && *rr->message)
		v = xg_json_set(v, "message", jv_string(rr->message));
	v = xg_json_set(v, "partial", jv_bool(rr->partial));
	xg_run_emit(t->r, v);
	/* What the failed attempt delivered is dropped: the next starts over. */
	if (rr->partial)
		turn_reset(t);
}

/*
 * How many bytes at the start of the pack's system prompt are its stable
 * prefix (the stable sections and the blank lines between them), for the
 * provider's cache hints; -1 when it is all of it or cannot be told.
 */
static long long stable_bytes(jv pack)
{
	const char *sys = xg_json_string_peek(pack, "system");
	jv secs = xg_json_get_peek(pack, "sections");
	long long cps = 0, n = 0, chars;
	const unsigned char *p;

	if (!sys || jv_get_kind(secs) != JV_KIND_ARRAY)
		return -1;
	jv_array_foreach(secs, i, sec) {
		const char *kind = xg_json_string_peek(sec, "kind");
		int stable = kind && !strcmp(kind, "stable");

		(void)i;
		if (stable && xg_json_int_peek(sec, "chars", &chars) == 0) {
			cps += chars;
			n++;
		}
		jv_free(sec);
		if (!stable)
			break;
	}
	if (!n)
		return -1;
	cps += 2 * (n - 1);
	/* Walk that many code points into the UTF-8 text. */
	for (p = (const unsigned char *)sys; *p && cps > 0; cps--)
		for (p++; (*p & 0xC0) == 0x80; p++)
			;
	/* The dynamic sections follow after a blank line; anything else means
	 * the pack is not laid out as expected, and then all of it counts. */
	if (cps > 0 || p[0] != '\n' || p[1] != '\n')
		return -1;
	return (long long)(p - (const unsigned char *)sys);
}

static jv build_request(struct run *r)
{
	jv q = jv_object();
	const char *name = xg_json_string_peek(r->model, "name");
	const char *id = xg_json_string_peek(r->model, "id");
	const char *effort = xg_json_string_peek(r->model, "effort");

	if (!name)
		name = strchr(id, '/') ? strchr(id, '/') + 1 : id;
	q = xg_json_set(q, "model", jv_string(name));
	q = xg_json_set(q, "system", jv_copy(xg_json_get_peek(r->pack, "system")));
	if (r->stable >= 0)
		q = xg_json_set(q, "system_stable", jv_number((double)r->stable));
	q = xg_json_set(q, "messages", jv_copy(r->messages));
	q = xg_json_set(q, "tools", jv_copy(r->tools));
	if (effort)
		q = xg_json_set(q, "effort", jv_string(effort));
	return xg_json_set(q, "cache_key", jv_string(r->conv));
}

static void count_usage(struct run *r, jv u)
{
	long long in = 0, cached = 0, out = 0;
	jv v;

	if (jv_get_kind(u) != JV_KIND_OBJECT)
		return;
	xg_json_int_peek(u, "input", &in);
	xg_json_int_peek(u, "cached_input", &cached);
	xg_json_int_peek(u, "output", &out);
	r->in += in;
	r->cached += cached;
	r->output += out;
	v = xg_rec_new("usage");
	v = xg_json_set(v, "input", jv_number((double)in));
	v = xg_json_set(v, "cached_input", jv_number((double)cached));
	v = xg_json_set(v, "output", jv_number((double)out));
	v = xg_json_set(v, "cumulative", xg_run_usage(r->in, r->cached, r->output));
	xg_run_emit(r, v);
}

/* The reply as an assistant message: in the request, the conversation and
 * the records. */
static int add_reply(struct run *r, struct turn *t)
{
	jv m = jv_object(), e;
	int has_calls = jv_array_length(jv_copy(t->calls)) > 0;

	m = xg_json_set(m, "role", jv_string("assistant"));
	m = xg_json_set(m, "text", xg_json_string_bytes(t->text.buf, t->text.len));
	if (jv_array_length(jv_copy(t->reasoning)))
		m = xg_json_set(m, "reasoning", jv_copy(t->reasoning));
	if (has_calls) {
		jv calls = jv_array();

		jv_array_foreach(t->calls, i, c) {
			(void)i;
			calls = jv_array_append(calls, jv_object_delete(c, jv_string("bad_args")));
		}
		m = xg_json_set(m, "tool_calls", calls);
	}
	r->messages = jv_array_append(r->messages, jv_copy(m));
	free(r->reply);
	r->reply = xg_strndup(t->text.buf, t->text.len);
	e = xg_rec_new("message");
	jv_object_foreach(m, k, v)
		e = jv_object_set(e, k, v);
	jv_free(m);
	e = xg_json_set(e, "model", jv_copy(xg_json_get_peek(r->model, "id")));
	e = xg_json_set(e, "effort", string_or_null(xg_json_string_peek(r->model, "effort")));
	if (t->finish[0])
		e = xg_json_set(e, "finish", jv_string(t->finish));
	xg_run_emit(r, jv_copy(e));
	return xg_run_remember(r, jv_object_delete(e, jv_string("finish")));
}

/* ---- tools ---- */

static jv refusal(const char *why)
{
	jv res = jv_object();

	res = xg_json_set(res, "ok", jv_false());
	res = xg_json_set(res, "output", jv_string(why));
	return xg_json_set(res, "refused", jv_true());
}

/* Whether the gates let the call run; NULL, or the refusal's result. */
static jv gate_call(struct run *r, const char *id, const char *name, jv args)
{
	char *reason = NULL, *why;
	jv res;

	if (!strcmp(r->mode, "plan") &&
	    !xg_gate_plan_check(xg_gate_call(id, name, jv_copy(args)), &reason))
		goto refused;
	if (r->gate && !xg_gate_check(r->gate, xg_gate_call(id, name, jv_copy(args)), &reason))
		goto refused;
	jv_free(args);
	return jv_null();
refused:
	jv_free(args);
	why = xg_asprintf("refused: %s; nothing was run", reason ? reason : XG_GATE_DEFAULT_REASON);
	res = refusal(why);
	free(why);
	free(reason);
	return res;
}

/* The call's result: a refusal, or what the tool gave. */
static jv call_result(struct run *r, jv call, const char *id, const char *name, jv args)
{
	struct xg_tool_ctx ctx = { 0 };
	jv res;

	if (jv_is_valid(xg_json_get_peek(call, "bad_args"))) {
		jv_free(args);
		return refusal("the arguments were not a JSON object; nothing was run");
	}
	if (run_signal) {
		jv_free(args);
		return refusal("not run: the run was interrupted");
	}
	res = gate_call(r, id, name, jv_copy(args));
	if (jv_get_kind(res) != JV_KIND_NULL) {
		jv_free(args);
		return res;
	}
	ctx.workspace = r->cwd;
	ctx.run_dir = r->out.dir;
	ctx.call_id = id;
	ctx.ask_command = r->o->ask;
	ctx.env_drop = r->env_drop;
	ctx.abort = &run_signal;
	ctx.procs = &r->procs;
	return xg_tool_run(&ctx, name, args);
}

/* The result (consumed) into the records, the next request and the
 * conversation. */
static int keep_result(struct run *r, const char *id, const char *name, jv res, int64_t t0)
{
	jv rec, m, e;

	if (!strcmp(name, "todo_write") && jv_get_kind(xg_json_get_peek(res, "items")) == JV_KIND_ARRAY) {
		rec = xg_rec_new("todo");
		xg_run_emit(r, xg_json_set(rec, "items", jv_copy(xg_json_get_peek(res, "items"))));
	}
	rec = xg_rec_new("tool_result");
	rec = xg_json_set(rec, "id", jv_string(id));
	rec = xg_json_set(rec, "name", jv_string(name));
	rec = jv_object_merge(rec, jv_copy(res));
	xg_run_emit(r, xg_json_set(rec, "ms", jv_number((double)(xg_clock_ms() - t0))));

	m = jv_object();
	m = xg_json_set(m, "role", jv_string("tool"));
	m = xg_json_set(m, "id", jv_string(id));
	m = xg_json_set(m, "name", jv_string(name));
	m = xg_json_set(m, "output", jv_copy(xg_json_get_peek(res, "output")));
	m = xg_json_set(m, "ok", jv_copy(xg_json_get_peek(res, "ok")));
	r->messages = jv_array_append(r->messages, m);
	e = xg_rec_new("tool_result");
	e = xg_json_set(e, "id", jv_string(id));
	e = xg_json_set(e, "name", jv_string(name));
	e = xg_json_set(e, "ok", jv_copy(xg_json_get_peek(res, "ok")));
	e = xg_json_set(e, "output", jv_copy(xg_json_get_peek(res, "output")));
	jv_free(res);
	return xg_run_remember(r, e);
}

/* One tool call (consumed): its record, the gates, the tool, its result. */
static int run_call(struct run *r, jv call)
{
	const char *id = xg_json_string_peek(call, "id");
	const char *name = xg_json_string_peek(call, "name");
	jv args = jv_copy(xg_json_get_peek(call, "args")), rec, res;
	int64_t t0 = xg_clock_ms();
	int rc;

	if (!id)
		id = "";
	if (!name)
		name = "";
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		args = jv_object();
	}
	rec = xg_rec_new("tool_call");
	rec = xg_json_set(rec, "id", jv_string(id));
	rec = xg_json_set(rec, "name", jv_string(name));
	xg_run_emit(r, xg_json_set(rec, "args", jv_copy(args)));
	r->calls++;
	res = call_result(r, call, id, name, args);
	rc = keep_result(r, id, name, res, t0);
	jv_free(call);
	return rc;
}

/* ---- plan mode ---- */

/*
 * Classifies the settled reply and writes the plan record.  Returns 1 when
 * it is invalid (worth the one repair), with *problems the problems'
 * messages joined for the template.
 */
static int classify_plan(struct run *r, char **problems)
{
	struct xg_plan_result pr;
	struct xg_buf b = XG_BUF_INIT(0);
	const char *reply = r->reply ? r->reply : "";
	size_t i;
	int invalid;

	if (xg_plan_classify(reply, strlen(reply), &pr) < 0) {
		xg_run_fail(r, XG_EX_SOFTWARE, "cannot classify the plan reply");
		return -1;
	}
	xg_run_emit(r, xg_plan_record(&pr));
	invalid = pr.outcome == XG_PLAN_INVALID;
	for (i = 0; invalid && i < pr.nproblems; i++)
		xg_buf_addf(&b, "%s%s", i ? "; " : "", pr.problems[i].message);
	/* The template puts its own full stop after the list. */
	while (b.len && (b.buf[b.len - 1] == '.' || isspace((unsigned char)b.buf[b.len - 1])))
		xg_buf_setlen(&b, b.len - 1);
	*problems = xg_buf_detach(&b, NULL);
	xg_plan_result_release(&pr);
	return invalid;
}

static char *repair_text(const struct run *r, const char *problems)
{
	jv tmpl = xg_json_get_peek(xg_json_get_peek(r->pack, "templates"), "plan-repair");
	jv vars = jv_object();
	char *esc = xg_prompt_escape_data(problems), *out;

	vars = xg_json_set(vars, "problems", jv_string(esc));
	free(esc);
	if (jv_get_kind(tmpl) == JV_KIND_STRING)
		out = xg_prompt_render_peek(jv_string_value(tmpl),
					    (size_t)jv_string_length_bytes(jv_copy(tmpl)), vars);
	else
		out = xg_asprintf("Your last reply in plan mode could not be read as written: %s. "
				  "End it again with exactly one complete <proposed_plan> or "
				  "<plan_blocked> block, or with plain prose if there is nothing "
				  "to plan.", problems);
	jv_free(vars);
	return out;
}

/* ---- the loop ---- */

static int stream_one(struct run *r, struct turn *t, struct xg_provider_error *perr)
{
	struct xg_provider_callbacks cb = { on_event, on_retry, t };
	int rc;

	r->requests++;
	run_provider = r->prov;
	/* A signal that came before the provider was in reach still aborts
	 * it: the abort is for good, so no retry wait can outlast it. */
	if (run_signal)
		xg_provider_abort(r->prov);
	rc = xg_provider_stream(r->prov, build_request(r), &cb, perr);
	run_provider = NULL;
	begin(r);
	return rc;
}

static int converse(struct run *r)
{
	struct turn t = { r, XG_BUF_INIT(0), jv_array(), jv_array(), jv_null(), "" };
	struct xg_provider_error perr;
	int repaired = 0, rc = 0, n, i;
	char *problems = NULL, *text;

	r->tools = xg_tool_schemas();
	r->stable = stable_bytes(r->pack);
	if (xg_run_load_history(r) || xg_run_note_model_change(r) ||
	    xg_run_add_user_message(r, xg_json_string_peek(r->request, "text"), NULL))
		goto out;
	for (;;) {
		if (run_signal)
			break;
		turn_reset(&t);
		memset(&perr, 0, sizeof(perr));
		rc = stream_one(r, &t, &perr);
		count_usage(r, t.usage);
		if (run_signal || rc == -1 || r->rc >= 0)
			break;
		if (rc) {
			xg_run_fail(r, rc, "%s: %s", perr.class ? perr.class : "error",
				    perr.message);
			break;
		}
		if (add_reply(r, &t))
			break;
		n = jv_array_length(jv_copy(t.calls));
		for (i = 0; i < n; i++)
			if (run_call(r, jv_array_get(jv_copy(t.calls), i)))
				goto out;
		if (n)
			continue;
		if (!strcmp(t.finish, "length")) {
			r->status = "interrupted";
			r->stop = "unfinished";
			r->reason = xg_strdup("the reply reached the model's output limit");
			r->rc = XG_EX_FAIL;
			break;
		}
		if (!strcmp(r->mode, "plan")) {
			free(problems);
			problems = NULL;
			rc = classify_plan(r, &problems);
			if (rc < 0)
				break;
			if (rc == 1 && !repaired && !run_signal) {
				repaired = 1;
				text = repair_text(r, problems);
				rc = xg_run_add_user_message(r, text, "plan-repair");
				free(text);
				if (rc)
					break;
				continue;
			}
		}
		r->status = "completed";
		r->rc = 0;
		break;
	}
out:
	free(problems);
	xg_buf_release(&t.text);
	jv_free(t.reasoning);
	jv_free(t.calls);
	jv_free(t.usage);
	return r->rc;
}

static void install_signals(struct run *r)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	run_procs = &r->procs;
	/* A signal ignored by whoever started the run stays ignored (a job
	 * started with &, nohup), as xg keeps it. */
	if (sigaction(SIGINT, NULL, &old) || old.sa_handler != SIG_IGN)
		sigaction(SIGINT, &sa, NULL);
	if (sigaction(SIGTERM, NULL, &old) || old.sa_handler != SIG_IGN)
		sigaction(SIGTERM, &sa, NULL);
}

static void run_release(struct run *r)
{
	size_t i;

	xg_run_out_release(&r->out);
	if (r->prov)
		xg_provider_free(r->prov);
	if (r->gate)
		xg_gate_free(r->gate);
	if (r->have_catalog)
		xg_choices_release(&r->choices);
	for (i = 0; r->env_drop && r->env_drop[i]; i++)
		free((char *)r->env_drop[i]);
	free(r->env_drop);
	jv_free(r->request);
	xg_run_input_release(r);
	jv_free(r->snapshot);
	jv_free(r->model);
	jv_free(r->pack);
	jv_free(r->messages);
	jv_free(r->tools);
	jv_free(r->pending);
	free(r->id);
	free(r->conv);
	free(r->cwd);
	free(r->reply);
	free(r->reason);
	free(r->gate_err);
}

int xg_run(const struct xg_run_opts *o, FILE *fp)
{
	struct run r;
	char ended[25];

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.t0 = xg_clock_ms();
	xg_clock_rfc3339(xg_clock_wall_ms(), r.started);
	r.request = r.snapshot = r.model = r.pack = jv_null();
	r.messages = r.tools = jv_null();
	r.pending = jv_array();
	r.rc = -1;
	install_signals(&r);
	/* libcurl's set-up overlaps with reading the input. */
	r.warm_running = xg_run_thread_start(&r.warm_thread, xg_http_warm, NULL) == 0;
	xg_run_out_init(&r.out, fp);
	r.id = xg_conv_new_id();
	if (xg_run_out_open(&r.out, r.id) < 0)
		xg_run_fail(&r, XG_EX_IOERR, "cannot make the run's directory");
	if (r.rc < 0 && !xg_run_read_input(&r) && r.rc < 0)
		prepare(&r);
	if (r.rc < 0)
		converse(&r);
	if (r.gate_running)
		pthread_join(r.gate_thread, NULL);
	if (r.warm_running)
		pthread_join(r.warm_thread, NULL);
	/* run_start, if it is not out yet; the rest of the input is joined
	 * first, and a signal that comes meanwhile counts too. */
	begin(&r);
	if (run_signal) {
		r.status = "interrupted";
		r.stop = "user";
		free(r.reason);
		r.reason = xg_asprintf("stopped by %s", run_signal == SIGINT ? "SIGINT" : "SIGTERM");
		r.rc = 128 + run_signal;
	}
	if (!r.status)
		xg_run_fail(&r, XG_EX_SOFTWARE, "the run ended without a status");
	xg_run_write_end(&r);
	xg_clock_rfc3339(xg_clock_wall_ms(), ended);
	xg_run_write_summary(&r, ended);
	if (r.out.write_error && !r.rc)
		r.rc = XG_EX_IOERR;
	run_procs = NULL;
	run_release(&r);
	return r.rc;
}
