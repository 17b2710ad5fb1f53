/*
 * What a run needs before its first request: the run's id and directory,
 * the upstream records (input.c), the mode, the conversation and the
 * workspace; the model (the conversation's start model when no model
 * record came) and the provider with its credentials; the pack (compiled
 * when none came for this mode) and its stable prefix; the tool gate; and
 * the names of the credential variables no tool may see.
 *
 * Two threads shorten the wait: libcurl's global set-up starts first (on
 * another CPU than the run's, when there is one), and a --gate filter
 * compiles while the model and pack are settled.  The gate's is joined
 * before the first request, as a filter that does not compile fails the
 * run before anything is sent or appended; libcurl's once that request is
 * out (input_on_sent), or when the run ends (xg_run_prepare_join).
 */
#include "xg.h"
#include "curl.h"
#include "run/internal.h"
#include "provider/provider.h"
#include "choices/choices.h"
#include "conversation.h"
#include "prompt/prompt.h"

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

static int pick_mode(struct run *r)
{
	const char *mode = r->o->mode ? r->o->mode : xg_json_string_peek(r->request, "mode");

	r->mode = mode ? mode : "normal";
	if (!xg_conv_mode_valid(r->mode))
		return xg_run_fail(r, XG_EX_DATAERR, "'%s' " XG_CONV_MODE_BAD, r->mode);
	return 0;
}

/*
 * Another run holds the conversation: said at once, not when the run
 * starts, as a notice that names the holder (written before run_start,
 * which needs the model this wait keeps from being chosen).
 */
static void hold_waiting(void *ctx, long pid, const char *program, int timeout_ms)
{
	struct run *r = ctx;
	jv notice = xg_rec_new("notice");
	char who[96];

	if (pid > 0)
		snprintf(who, sizeof(who), "process %ld (%s)", pid, *program ? program : "unknown");
	else
		snprintf(who, sizeof(who), "another process");
	notice = xg_json_set(notice, "from", jv_string(xg_progname));
	notice = xg_json_set(notice, "text", jv_string_fmt(
		"waiting for the conversation '%s', which %s holds; giving up after %d s "
		"(XG_LOCK_TIMEOUT)", r->conv, who, (timeout_ms + 999) / 1000));
	notice = xg_json_set(notice, "wait", jv_string_fmt("the conversation, held by %s", who));
	xg_run_out_write(&r->out, notice);
}

static int pick_conversation(struct run *r)
{
	const char *c = r->o->conversation;

	if (!c)
		c = xg_json_string_peek(r->request, "conversation");
	if (c && !xg_conv_id_valid(c))
		return xg_run_fail(r, XG_EX_DATAERR, "'%s' " XG_CONV_ID_BAD, c);
	r->conv = c ? xg_strdup(c) : xg_conv_new_id();
	/* Held before it is read, so what is read is what the run goes on. */
	if ((r->conv_hold = xg_conv_hold(r->conv, hold_waiting, r)) < 0)
		return errno == EWOULDBLOCK
			? xg_run_fail(r, XG_EX_TEMPFAIL, "the conversation '%s' is in use by "
				      "another run; try again when it ends", r->conv)
			: xg_run_fail(r, XG_EX_IOERR, "cannot hold the conversation '%s'",
				      r->conv);
	r->conv_new = !c || !xg_conv_exists(c);
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

/*
 * The sandbox of bash (tools/confine.c) into r->sandbox, and what is in
 * force into r->sandbox_rec.  A bash that must not write (plan mode, or a
 * read-only profile such as a subagent's "explore") gets it whenever it
 * can run; without it the person is told.  0, or fails the run (78 when a
 * sandbox asked for cannot be had).
 */
static int pick_sandbox(struct run *r)
{
	int plan = !strcmp(r->mode, "plan");
	int read_only = plan || xg_tool_profile_read_only(r->o->profile), rc;
	char msg[2048];
	jv notices, n;

	jv_free(r->sandbox_rec);
	rc = xg_tool_sandbox_pick(&r->sandbox, r->o->sandbox, read_only, &r->sandbox_rec,
				  &notices, msg, sizeof(msg));
	jv_array_foreach(notices, i, v) {
		(void)i;
		xg_run_emit(r, v);
	}
	jv_free(notices);
	if (rc)
		return xg_run_fail(r, rc, "%s", msg);
	if (!read_only || r->sandbox.bwrap)
		return 0;
	/* Its gate still holds, and the person is told once. */
	n = xg_rec_new("notice");
	n = xg_json_set(n, "from", jv_string(xg_progname));
	xg_run_emit(r, xg_json_set(n, "text", plan ?
		jv_string_fmt("plan mode: bash runs without the sandbox (%s), so the "
			      "workspace is not read-only to it", msg) :
		jv_string_fmt("the %s profile gets no bash without the sandbox (%s)",
			      r->o->profile ? r->o->profile : "read-only", msg)));
	return 0;
}

/* A field of the model record that must be a string or null when
 * present; -1 after failing. */
static int model_field(struct run *r, const char *key)
{
	jv v = xg_json_get_peek(r->model, key);

	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL || jv_get_kind(v) == JV_KIND_STRING)
		return 0;
	return xg_run_fail(r, XG_EX_DATAERR, "standard input: field '%s' of the model record is "
			   "%s, not a string", key, xg_json_kind_peek(v)), -1;
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
	if (model_field(r, "id") < 0 || model_field(r, "provider") < 0)
		return r->rc;
	if (!xg_json_string_peek(r->model, "id")) {
		/* The code xg-choices gave: 77 for a missing key, 78 for a model
		 * not offered or nothing configured (the default). */
		const char *why = xg_json_string_peek(r->model, "reason");
		long long code = XG_EX_CONFIG;

		if (xg_json_int_peek(r->model, "exit", &code) < 0 || code <= 0 || code > 125)
			code = XG_EX_CONFIG;
		return xg_run_fail(r, (int)code, "no model to run on%s%s", why ? ": " : "",
				   why ? why : "");
	}
	return 0;
}

/* The request's text when a person wrote it, else NULL. */
static const char *person_text(struct run *r)
{
	bool hidden = false;

	xg_json_bool_peek(r->request, "hidden", &hidden);
	return hidden || xg_json_string_peek(r->request, "kind") ? NULL :
	       xg_json_string_peek(r->request, "text");
}

/* The skills the request names as $NAME go with its text, as the pack
 * says (xg-prompt-compile(1)); a hidden request or one of a kind names
 * none. */
static void attach_skills(struct run *r)
{
	const char *add = xg_json_string_peek(r->pack, "attach");
	const char *text = person_text(r);

	if (add && *add && text)
		r->request = xg_json_set(r->request, "text", jv_string_fmt("%s%s", text, add));
}

/* The pack, compiled here when none came for this mode; then the skills
 * the request names go with its text. */
static int compile_pack(struct run *r)
{
	struct xg_prompt_request rq = { 0 };
	char why[512];
	jv notices, pack;
	const char *pm = xg_json_string_peek(r->pack, "mode");
	int rc;

	if (jv_get_kind(r->pack) == JV_KIND_OBJECT && xg_json_string_peek(r->pack, "system") &&
	    pm && !strcmp(pm, r->mode) && !r->o->variant) {
		attach_skills(r);
		return 0;
	}
	notices = jv_array();
	note(r, "no pack record for this mode: compiling the prompt");
	rq.variant = r->o->variant ? r->o->variant : xg_json_string_peek(r->request, "variant");
	rq.model = xg_json_string_peek(r->model, "id");
	rq.mode = r->mode;
	/* Not a conversation the run starts: it is pinned once the run goes
	 * ahead (xg_run_note_version), as when the pack comes. */
	rq.conversation = r->conv_new ? NULL : r->conv;
	rq.cwd = r->cwd;
	rq.text = person_text(r);
	/* Why it could not goes with the run's failure, said once. */
	xg_error_keep(why, sizeof(why));
	rc = xg_prompt_pack(&rq, &pack, &notices);
	xg_error_keep(NULL, 0);
	write_records(r, notices);
	if (rc)
		return xg_run_fail(r, rc, "cannot compile the prompt%s%s", *why ? ": " : "", why);
	jv_free(r->pack);
	r->pack = pack;
	attach_skills(r);
	return 0;
}

/*
 * What no command a tool runs may see: every catalog provider's key
 * variable, the providers' usual ones even when the catalog names others,
 * and where xg keeps its configuration and state (the accounts' keys are
 * there).  XDG_CONFIG_HOME stays: it is every program's, and hiding it
 * hides nothing, the default being as easy to guess.
 */
static const char *const key_vars[] = {
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", NULL
};
static const char *const path_vars[] = { "XG_HOME", NULL };

/* A variable kept in the run's own environment but from its tools': a
 * path, or the one xg_curl_env set. */
static int is_kept_var(const struct run *r, const char *name)
{
	const char *const *p;

	for (p = path_vars; *p; p++)
		if (!strcmp(*p, name))
			return 1;
	return r->env_set && !strcmp(r->env_set, name);
}

static void collect_env_drop(struct run *r)
{
	jv provs = r->choices.cat.providers;
	size_t n = 0, i, fixed = sizeof(key_vars) / sizeof(*key_vars) +
				 sizeof(path_vars) / sizeof(*path_vars);

	r->env_drop = xg_calloc((size_t)jv_object_length(jv_copy(provs)) + fixed + 1,
				sizeof(char *));
	for (i = 0; key_vars[i]; i++)
		r->env_drop[n++] = xg_strdup(key_vars[i]);
	for (i = 0; path_vars[i]; i++)
		r->env_drop[n++] = xg_strdup(path_vars[i]);
	if (r->env_set)
		r->env_drop[n++] = xg_strdup(r->env_set);
	jv_object_foreach(provs, k, v) {
		const char *env = xg_json_string_peek(v, "key_env");

		if (env)
			r->env_drop[n++] = xg_strdup(env);
		jv_free(k);
		jv_free(v);
	}
}

/*
 * Every key the run could come across is redacted from what it writes and
 * sends: the key variables' values and the account's auth.json, read while
 * they are still there.
 */
static void collect_secrets(struct run *r, struct xg_account_keys *keys)
{
	const char **d;

	for (d = r->env_drop; d && *d; d++)
		if (!is_kept_var(r, *d))
			xg_redact_add(getenv(*d));
	xg_account_keys_redact(keys);
}

/*
 * Once the key is read, the key variables leave our environment: unset,
 * and their values zeroed where they stand, as unsetenv only drops the
 * pointer and /proc/PID/environ shows the block the process began with.
 */
static void scrub_key_vars(struct run *r)
{
	extern char **environ;
	const char **d;
	char **e;

	for (d = r->env_drop; d && *d; d++) {
		size_t len = strlen(*d);

		if (is_kept_var(r, *d))
			continue;
		for (e = environ; *e; e++)
			if (!strncmp(*e, *d, len) && (*e)[len] == '=')
				explicit_bzero(*e + len + 1, strlen(*e + len + 1));
		unsetenv(*d);
	}
}

/*
 * A subagent's key comes from its parent through a pipe, XG_KEY_FD naming
 * it: the parent read it once and scrubbed its variables, and a variable
 * would reach the child's tools.  The descriptor is read once and closed.
 * Returns 1 with *key set, 0 when there is no such descriptor, -1 when it
 * could not be read.
 */
static int key_from_fd(char **key)
{
	const char *v = getenv("XG_KEY_FD");
	char buf[8192];
	size_t n = 0;
	ssize_t got;
	int fd;

	if (!v || !*v)
		return 0;
	fd = atoi(v);
	unsetenv("XG_KEY_FD");
	if (fd < 3)
		return -1;
	while (n < sizeof(buf) - 1 && (got = read(fd, buf + n, sizeof(buf) - 1 - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	buf[n] = 0;
	*key = n ? xg_strdup(buf) : NULL;
	explicit_bzero(buf, sizeof(buf));
	return 1;
}

/* The tools of profile as a list for people: "read, bash". */
static char *tool_list(const char *profile, int sandboxed)
{
	jv t = xg_tool_profile_schemas(profile, sandboxed);
	struct xg_buf b = XG_BUF_INIT(0);

	jv_array_foreach(t, i, s) {
		xg_buf_addf(&b, "%s%s", i ? ", " : "", xg_json_string_peek(s, "name"));
		jv_free(s);
	}
	jv_free(t);
	return xg_buf_detach(&b, NULL);
}

/* What a child's (or a profile's) system prompt gets first: its profile's
 * words and tools, then the variant's subagent text. */
static char *profile_prompt(const struct run *r, const char *profile)
{
	const char *what = xg_tool_profile_what(profile);
	int read_only = xg_tool_profile_read_only(profile);
	jv tmpl = xg_json_get_peek(xg_json_get_peek(r->pack, "templates"), "subagent");
	struct xg_buf b = XG_BUF_INIT(0);
	char *tools = tool_list(profile, r->sandbox.bwrap != NULL);

	if (what && read_only)
		/* First, so it is read before the brief (ADR-0069 item 7). */
		xg_buf_addf(&b, "%s Your tools are: %s. When the brief needs a tool you do not "
			    "have (to run a command, or to change a file), say so in the first "
			    "line of your reply, naming the tool, and do the part you can.\n\n",
			    what, tools);
	else if (what)
		xg_buf_addf(&b, "%s Your tools are: %s.\n\n", what, tools);
	if (r->o->parent && jv_get_kind(tmpl) == JV_KIND_STRING) {
		jv vars = jv_object();
		char *text = xg_prompt_render_peek(jv_string_value(tmpl),
						   (size_t)jv_string_length_bytes(jv_copy(tmpl)), vars);

		xg_buf_addstr(&b, text);
		free(text);
		jv_free(vars);
	}
	free(tools);
	while (b.len && b.buf[b.len - 1] == '\n')
		xg_buf_setlen(&b, b.len - 1);
	return xg_buf_detach(&b, NULL);
}

/* A subagent's system prompt: the pack's, then the subagent template and
 * its profile's words, after the stable prefix. */
static void child_prompt(struct run *r)
{
	char *extra = r->o->parent || r->o->profile ? profile_prompt(r, r->o->profile) : NULL;
	const char *sys = xg_json_string_peek(r->pack, "system");
	char *all;

	if (!extra || !sys) {
		free(extra);
		return;
	}
	all = xg_asprintf("%s\n\n%s", sys, extra);
	r->pack = xg_json_set(r->pack, "system", jv_string(all));
	free(all);
	free(extra);
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
	got = key_from_fd(&key);
	if (got == 0)
		got = xg_account_key(&keys, pname, jv_copy(prov), &key);
	else if (got > 0 && !key)
		got = 0;
	if (got < 0) {
		/* Released, keys no longer says why: keep it first. */
		int why = keys.status > 1 ? keys.status : XG_EX_NOPERM;

		xg_account_keys_release(&keys);
		free(account);
		return xg_run_fail(r, why, "cannot read the credentials of provider '%s'", pname);
	}
	if (!got && xg_json_string_peek(prov, "key_env")) {
		xg_run_fail(r, XG_EX_NOPERM, "no credentials for provider '%s': set %s or store "
			    "a key for account '%s'", pname, xg_json_string_peek(prov, "key_env"),
			    account);
		xg_account_keys_release(&keys);
		free(account);
		return r->rc;
	}
	xg_redact_add(key);
	collect_secrets(r, &keys);
	xg_account_keys_release(&keys);
	free(r->account);
	r->account = account;
	r->prov = xg_provider_new(xg_json_set(jv_copy(prov), "name", jv_string(pname)), key, err,
				  sizeof(err));
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
		xg_thread_join(&r->gate_thread);
		r->gate_running = 0;
	}
	if (r->o->gate && !r->gate) {
		xg_run_fail(r, XG_EX_CONFIG, "--gate: %s", r->gate_err ? r->gate_err :
			    "the filter does not compile");
		return r->rc;
	}
	return 0;
}

/*
 * How many bytes at the start of the pack's system prompt are its stable
 * prefix (the stable sections and the blank lines between them), for the
 * provider's cache hints; -1 when it is all of it or cannot be told.
 */
static long long stable_bytes_peek(jv pack)
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

/*
 * Moves libcurl's loading off the CPU the run is on, when it may run on
 * another: a new thread is queued where it was made and waits there while
 * the run chooses its model and compiles its prompt, and that loading is
 * what the first request waits for (bench/start.sh: xg-run 1.23 to 1.15
 * times curl, medians of six runs each).  Threads it would make inherit
 * the mask; it makes none, and ends once libcurl is loaded.
 */
static void load_elsewhere(pthread_t thread)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu >= 0 && sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1 &&
	    CPU_ISSET(cpu, &set)) {
		CPU_CLR(cpu, &set);
		pthread_setaffinity_np(thread, sizeof(set), &set);
	}
}

/* Joins libcurl's loading, if it is not joined yet. */
static void join_warm(struct run *r)
{
	if (r->warm_running)
		xg_thread_join(&r->warm_thread);
	r->warm_running = 0;
}

static void input_on_sent(void *arg)
{
	/* The request went through libcurl: its loading is over, and the
	 * thread's stack can go. */
	join_warm(arg);
	xg_run_start_input(arg);
}

/*
 * In the order that lets the slow parts overlap: libcurl's loading and
 * set-up and the gate's compilation run on threads of their own while the
 * model is chosen and the pack compiled, and then, once the first request
 * is out, the rest of the input (with a snapshot to take) on another.
 */
void xg_run_prepare_start(struct run *r)
{
	/* Before any thread that reads the environment starts. */
	r->env_set = xg_curl_env();
	r->cue = xg_env_fd("XG_RUN_SENT_FD");
	/* Threads come first: one being created waits for a dlopen under way
	 * to end.  The gate's filter compiles meanwhile, and libcurl loads
	 * while the input is read, the model chosen and the pack compiled. */
	start_gate(r);
	r->warm_running = xg_run_thread_start(&r->warm_thread, xg_http_warm, NULL) == 0;
	if (r->warm_running)
		load_elsewhere(r->warm_thread.id);
}

int xg_run_prepare(struct run *r, FILE *fp)
{
	int rc;

	xg_run_out_init(&r->out, fp);
	r->id = r->o->run_id ? xg_strdup(r->o->run_id) : xg_conv_new_id();
	if (xg_run_out_open(&r->out, r->id) < 0)
		return xg_run_fail(r, XG_EX_IOERR, "cannot make the run's directory");
	if (xg_run_read_input(r) || r->rc >= 0)
		return r->rc;
	if (pick_mode(r) || pick_conversation(r) || pick_workspace(r) || pick_sandbox(r))
		return r->rc;
	if (pick_model(r))
		return r->rc;
	collect_env_drop(r);
	rc = open_provider(r);
	scrub_key_vars(r);
	if (rc || compile_pack(r))
		return r->rc;
	/* The rest of the input, and the snapshot, once the first request is
	 * out: the first reply's first event is the earliest they are needed,
	 * and until then libcurl's loading and the request want the CPUs (a
	 * thread made while libcurl loads would wait for it, too). */
	r->prov->http.sent_fn = input_on_sent;
	r->prov->http.sent_arg = r;
	if (join_gate(r))
		return r->rc;
	r->tools = xg_tool_profile_schemas(r->o->profile, r->sandbox.bwrap != NULL);
	/* A subagent starts none of its own: the tree is one level deep; and
	 * a profile's tools are all a run of it gets. */
	if (!r->o->parent && !r->o->profile)
		r->tools = jv_array_concat(r->tools, xg_run_subagent_schemas());
	xg_run_goal_prepare(r);
	/* From here the catalog gives only the model's limits and prices. */
	xg_catalog_narrow(&r->choices.cat, xg_json_string_peek(r->model, "id"));
	r->stable = stable_bytes_peek(r->pack);
	/* The list of sections served the stable prefix; nothing else reads it. */
	r->pack = jv_object_delete(r->pack, jv_string("sections"));
	child_prompt(r);
	/* The model, the workspace and the request are known, and the first
	 * request is about to go out. */
	xg_run_keep_start(r);
	return 0;
}

void xg_run_prepare_join(struct run *r)
{
	if (r->gate_running)
		xg_thread_join(&r->gate_thread);
	r->gate_running = 0;
	join_warm(r);
}
