/*
 * Subagents (man 1 xg-run, Subagents; design.md section 10): child runs,
 * each an xg-run process (the one beside this program) with a conversation,
 * a run directory and records of its own, started by spawn_subagent and
 * waited on by wait_subagents.
 *
 * A child inherits the model and effort (the parent's model record, on its
 * standard input with its request), the account, the variant, the gate,
 * the work-slice policy and the workspace; its key comes through a pipe
 * (XG_KEY_FD), never a variable its tools could read.  It starts in a
 * process group of its own, with PR_SET_PDEATHSIG, so no child outlives
 * its parent even after a SIGKILL.
 *
 * The parent follows each child through its runs/ID/events.ndjson: every
 * look of the stall watch (stall.c) reads what it wrote since, and keeps
 * its clock from it, as the watch keeps the run's own.  A child quiet for
 * the reply window or inside one tool for the tool window gets SIGTERM,
 * SIGKILL after the grace, and is returned as interrupted, stalled.
 *
 * The child table lives in the watch (struct run_watch) under its lock;
 * the loop's thread adds to it (spawn) and reads it (wait), the watch's
 * thread looks after it.
 */
#include "xg.h"
#include "exec.h"
#include "conversation.h"
#include "run/internal.h"
#include "provider/provider.h"
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

/* How long a wait_subagents waits, unless told, and at most. */
#define WAIT_DEFAULT_S 1800
#define WAIT_MAX_S 7200

jv xg_run_subagent_schemas(void)
{
	static const char text[] =
	"[{\"name\":\"spawn_subagent\",\"description\":\"Start a subagent: another agent, "
	"with a conversation of its own, that does one brief in the same workspace while you "
	"go on, and reports back. Profiles: explore (read-only: read files; cannot run "
	"commands or change anything) and worker (every tool). The result names the "
	"subagent's tools. At most 4 run at once and 16 in a run; collect their reports "
	"with wait_subagents.\",\"parameters\":{\"type\":\"object\",\"properties\":{"
	"\"brief\":{\"type\":\"string\",\"description\":\"The whole assignment, with every "
	"fact, path and constraint it needs: the subagent sees nothing else.\"},"
	"\"profile\":{\"type\":\"string\",\"enum\":[\"explore\",\"worker\"]},"
	"\"name\":{\"type\":\"string\",\"description\":\"A short name: letters, digits, - "
	"and _ (default agent-N).\"}},\"required\":[\"brief\",\"profile\"],"
	"\"additionalProperties\":false}},"
	"{\"name\":\"wait_subagents\",\"description\":\"Wait until subagents end and get "
	"each one's status and final report (long reports are cut, and say where the whole "
	"is). Without names, waits on every subagent not yet collected. A subagent that "
	"stops making progress is stopped and returned as interrupted.\",\"parameters\":{"
	"\"type\":\"object\",\"properties\":{\"names\":{\"type\":\"array\",\"items\":"
	"{\"type\":\"string\"}},\"timeout\":{\"type\":\"number\",\"description\":\"Seconds "
	"to wait at most (default 1800, at most 7200); the rest are returned as running.\"}},"
	"\"additionalProperties\":false}}]";

	return jv_parse(text);
}

int xg_run_subagent_tool(const char *name)
{
	return !strcmp(name, "spawn_subagent") || !strcmp(name, "wait_subagents");
}

static jv fail(const char *fmt, const char *arg)
{
	return xg_tool_fail(fmt, arg);
}

/* ---- spawning ---- */

static int name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n > 32)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

/* The argument list of a child (strings owned by the jv array). */
static jv child_argv(const struct run *r, const struct run_child *c)
{
	jv a = jv_array();
	const char *variant = xg_json_string_peek(r->pack, "variant");
	const char *version = xg_json_string_peek(r->pack, "version");

#define ADD(flag, v) do { a = jv_array_append(a, jv_string(flag)); \
	a = jv_array_append(a, jv_string(v)); } while (0)
	a = jv_array_append(a, jv_string("xg-run"));
	ADD("--run-id", c->run);
	ADD("--parent", r->id);
	ADD("--conversation", c->conv);
	ADD("--profile", c->profile);
	if (r->account)
		ADD("--account", r->account);
	if (variant && version) {
		char *ref = xg_asprintf("%s@%s", variant, version);

		ADD("--variant", ref);
		free(ref);
	}
	if (r->o->gate)
		ADD("--gate", r->o->gate);
	if (r->o->work_slice)
		ADD("--work-slice", r->o->work_slice);
	if (r->o->sandbox) {
		char *opt = xg_asprintf("--sandbox=%s", r->o->sandbox);

		a = jv_array_append(a, jv_string(opt));
		free(opt);
	}
#undef ADD
	/* The request and the model come as records on standard input. */
	return jv_array_append(a, jv_string("-"));
}

/*
 * What the child reads: its request (the brief) and the parent's model
 * record, so it runs on the model the parent runs on without choosing one
 * again (its key it has from the pipe).  A file in the parent's run
 * directory, subagents/NAME.input.ndjson; its descriptor, or -1.
 */
static int child_input(const struct run *r, const struct run_child *c, const char *dir,
		       const char *brief)
{
	struct xg_buf b = XG_BUF_INIT(0);
	jv q = xg_rec_new("request");
	char *path = xg_asprintf("%s/%s.input.ndjson", dir, c->name);
	int fd = -1;

	q = xg_json_set(q, "text", jv_string(brief));
	q = xg_json_set(q, "mode", jv_string("normal"));
	/* Kept in the run's directory: redacted as everything else there. */
	xg_json_dump(&b, xg_redact_jv(q));
	xg_buf_addch(&b, '\n');
	xg_json_dump(&b, jv_copy(r->model));
	xg_buf_addch(&b, '\n');
	if (xg_write_atomic(path, b.buf, b.len, 0600) == 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	xg_buf_release(&b);
	free(path);
	return fd;
}

/* Our environment, with XG_KEY_FD=3 in place of any of its own, less the
 * variable xg_curl_env set (the child sets it for itself), named by drop. */
static char **child_env(const char *drop)
{
	extern char **environ;
	size_t n = 0, k = 0, i, len = drop ? strlen(drop) : 0;
	char **env;

	while (environ[n])
		n++;
	env = xg_calloc(n + 2, sizeof(*env));
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "XG_KEY_FD=", 10) &&
		    !(drop && !strncmp(environ[i], drop, len) && environ[i][len] == '='))
			env[k++] = environ[i];
	env[k] = (char *)"XG_KEY_FD=3";
	return env;
}

/*
 * The child's side, from fork to exec: async-signal-safe calls only.  Its
 * group is its own, so a person's ^C reaches the parent, which ends it.
 */
__attribute__((noreturn))
static void exec_child(const char *path, char **argv, char **env, const char *dir,
		       int in_fd, int null_fd, int err_fd, int key_fd, pid_t parent)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int sig;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(126);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (chdir(dir) < 0 || dup2(in_fd, 0) < 0 || dup2(null_fd, 1) < 0 ||
	    dup2(err_fd, 2) < 0)
		_exit(126);
	if (key_fd == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(key_fd, 3) < 0)
		_exit(126);
	close_range(4, ~0U, 0);
	execve(path, argv, env);
	_exit(127);
}

/* A pipe holding the key, its read end returned (close-on-exec); -1. */
static int key_pipe(const struct run *r)
{
	int p[2];
	const char *key = r->prov && r->prov->key ? r->prov->key : "";
	size_t n = strlen(key);

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (n && write(p[1], key, n) != (ssize_t)n) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	return p[0];
}

/* Starts c's process; 0, or -1 with errno set. */
static int start_child(struct run *r, struct run_child *c, const char *brief)
{
	char *path = xg_exec_find("run"), **argv, **env, *errpath, *dir;
	jv a = child_argv(r, c);
	int n = jv_array_length(jv_copy(a)), i, null_fd, err_fd, key_fd, in_fd, e;
	pid_t pid, me = getpid();

	if (!path) {
		jv_free(a);
		errno = ENOENT;
		return -1;
	}
	dir = xg_path_join(r->out.dir, "subagents");
	xg_mkdir_p(dir, 0700);
	errpath = xg_asprintf("%s/%s.stderr", dir, c->name);
	argv = xg_calloc((size_t)n + 1, sizeof(*argv));
	for (i = 0; i < n; i++) {
		jv s = jv_array_get(jv_copy(a), i);

		argv[i] = xg_strdup(jv_string_value(s));
		jv_free(s);
	}
	env = child_env(r->env_set);
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	in_fd = child_input(r, c, dir, brief);
	err_fd = open(errpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	key_fd = key_pipe(r);
	pid = null_fd < 0 || err_fd < 0 || key_fd < 0 || in_fd < 0 ? -1 : fork();
	if (pid == 0)
		exec_child(path, argv, env, r->cwd, in_fd, null_fd, err_fd, key_fd, me);
	e = errno;
	if (in_fd >= 0)
		close(in_fd);
	if (null_fd >= 0)
		close(null_fd);
	if (err_fd >= 0)
		close(err_fd);
	if (key_fd >= 0)
		close(key_fd);
	for (i = 0; i < n; i++)
		free(argv[i]);
	free(argv);
	free(env);
	free(errpath);
	free(dir);
	free(path);
	jv_free(a);
	if (pid < 0) {
		errno = e;
		return -1;
	}
	c->pid = pid;
	return 0;
}

/* Counts the children still running (under the lock). */
static int running_children(const struct run_watch *w)
{
	int i, n = 0;

	for (i = 0; i < w->nchildren; i++)
		n += !w->child[i].ended;
	return n;
}

static const struct run_child *child_named(const struct run_watch *w, const char *name)
{
	int i;

	for (i = 0; i < w->nchildren; i++)
		if (!strcmp(w->child[i].name, name))
			return &w->child[i];
	return NULL;
}

/* Whether the spawn may go on (under the lock): NULL, or why not. */
static const char *spawn_refused(const struct run_watch *w, const char *name)
{
	if (w->nchildren >= XG_RUN_MAX_CHILDREN)
		return "refused: this run has started 16 subagents, the most it may";
	if (running_children(w) >= XG_RUN_MAX_RUNNING)
		return "refused: 4 subagents are running, the most at once; collect one with "
		       "wait_subagents first";
	if (child_named(w, name))
		return "refused: a subagent of that name exists already; choose another";
	return NULL;
}

static jv spawned_result(const struct run_child *c)
{
	struct xg_buf b = XG_BUF_INIT(0);
	int read_only = xg_tool_profile_read_only(c->profile);
	/* A read-only child has bash where the sandbox can hold the
	 * workspace read-only for it: as it will find when it starts. */
	int sandboxed = read_only && xg_tool_sandbox_available();
	jv tools = xg_tool_profile_schemas(c->profile, sandboxed), names = jv_array(), res;
	char *text;

	jv_array_foreach(tools, i, t) {
		xg_buf_addf(&b, "%s%s", i ? ", " : "", xg_json_string_peek(t, "name"));
		names = jv_array_append(names, jv_copy(xg_json_get_peek(t, "name")));
		jv_free(t);
	}
	jv_free(tools);
	/* A read-only profile says so first (ADR-0069 item 7). */
	text = xg_asprintf("%s%s started (run %s, profile %s) with the tools: %s.%s Collect "
			   "its report with wait_subagents.",
			   read_only ? "Read-only: " : "", c->name, c->run, c->profile, b.buf,
			   !read_only ? "" : sandboxed ?
			   " Its bash runs in a sandbox with the workspace read-only: it cannot "
			   "change files, and a brief that needs that gets a reply that says so." :
			   " It cannot run commands or change files; a brief that needs them "
			   "gets a reply that says so.");
	xg_buf_release(&b);
	res = xg_tool_result(1, jv_string(text));
	free(text);
	res = xg_json_set(res, "subagent", jv_string(c->name));
	res = xg_json_set(res, "run", jv_string(c->run));
	res = xg_json_set(res, "conversation", jv_string(c->conv));
	res = xg_json_set(res, "profile", jv_string(c->profile));
	return xg_json_set(res, "tools", names);
}

static jv spawned_record(const struct run *r, const struct run_child *c)
{
	jv v = xg_rec_new("subagent");

	v = xg_json_set(v, "event", jv_string("spawned"));
	v = xg_json_set(v, "run", jv_string(c->run));
	v = xg_json_set(v, "conversation", jv_string(c->conv));
	v = xg_json_set(v, "name", jv_string(c->name));
	v = xg_json_set(v, "profile", jv_string(c->profile));
	v = xg_json_set(v, "parent", jv_string(r->id));
	return xg_json_set(v, "pid", jv_number(c->pid));
}

jv xg_run_subagent_spawn(struct run *r, jv args)
{
	struct run_watch *w = &r->watch;
	const char *brief = xg_json_string_peek(args, "brief");
	const char *profile = xg_json_string_peek(args, "profile");
	const char *name = xg_json_string_peek(args, "name");
	const char *why;
	struct run_child *c;
	char auto_name[24], *rel;
	jv res;

	if (!brief || !*brief)
		res = fail("spawn_subagent: 'brief' must be a non-empty string%s", "");
	else if (!profile || !xg_tool_profile_tools(profile, NULL))
		res = fail("spawn_subagent: 'profile' must be explore or worker, not '%s'",
			   profile ? profile : "(none)");
	else if (!strcmp(r->mode, "plan") && strcmp(profile, "explore"))
		res = fail("spawn_subagent: %s", "refused: a plan-mode run changes nothing, so its "
			   "subagents are explore ones");
	else if (name && !name_ok(name))
		res = fail("spawn_subagent: 'name' must be 1 to 32 letters, digits, - or _, "
			   "not '%s'", name);
	else if (!w->running)
		res = fail("spawn_subagent: %s", "no subagent can start: the stall watch is not running");
	else
		res = jv_null();
	if (jv_get_kind(res) != JV_KIND_NULL) {
		jv_free(args);
		return res;
	}
	pthread_mutex_lock(&w->lock);
	snprintf(auto_name, sizeof(auto_name), "agent-%d", w->nchildren + 1);
	if (!name)
		name = auto_name;
	if ((why = spawn_refused(w, name))) {
		pthread_mutex_unlock(&w->lock);
		jv_free(args);
		return xg_tool_fail("%s", why);
	}
	c = &w->child[w->nchildren];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->profile, sizeof(c->profile), "%s", profile);
	snprintf(c->phase, sizeof(c->phase), "starting");
	c->run = xg_conv_new_id();
	c->conv = xg_conv_new_id();
	rel = xg_asprintf("runs/%s/events.ndjson", c->run);
	c->events = xg_path_state(rel);
	free(rel);
	c->fd = -1;
	xg_buf_init(&c->line, 0);
	c->t0 = c->last_event = xg_clock_ms();
	if (start_child(r, c, brief) < 0) {
		int e = errno;

		pthread_mutex_unlock(&w->lock);
		free(c->run);
		free(c->conv);
		free(c->events);
		xg_buf_release(&c->line);
		jv_free(args);
		return xg_tool_fail("spawn_subagent: cannot start xg-run: %s", strerror(e));
	}
	w->nchildren++;
	res = spawned_result(c);
	pthread_mutex_unlock(&w->lock);
	xg_run_emit(r, spawned_record(r, c));
	jv_free(args);
	return res;
}

/* ---- waiting ---- */

/* The children a wait is on (indexes into w->child), or a failure. */
static jv wait_set(const struct run_watch *w, jv names, int *set, int *n)
{
	int i;

	*n = 0;
	if (jv_get_kind(names) == JV_KIND_ARRAY) {
		jv_array_foreach(names, k, v) {
			const char *s = jv_get_kind(v) == JV_KIND_STRING ? jv_string_value(v) : NULL;
			const struct run_child *c = s ? child_named(w, s) : NULL;

			(void)k;
			if (!c) {
				jv res = xg_tool_fail("wait_subagents: 'names' holds %s%s%s, not the name "
						      "of a subagent of this run", s ? "'" : "",
						      s ? s : "something other than a string",
						      s ? "'" : "");
				jv_free(v);
				jv_free(names);
				return res;
			}
			jv_free(v);
			for (i = 0; i < *n; i++)
				if (set[i] == c - w->child)
					break;
			if (i == *n)
				set[(*n)++] = (int)(c - w->child);
		}
		jv_free(names);
		return jv_null();
	}
	if (jv_is_valid(names) && jv_get_kind(names) != JV_KIND_NULL) {
		jv res = xg_tool_fail("wait_subagents: 'names' must be an array of names, not %s",
				      xg_json_kind_peek(names));

		jv_free(names);
		return res;
	}
	jv_free(names);
	for (i = 0; i < w->nchildren; i++)
		if (!w->child[i].delivered)
			set[(*n)++] = i;
	return jv_null();
}

/* One child's part of the result (under the lock), its text added to b. */
static jv child_report(const struct run_child *c, struct xg_buf *b)
{
	jv v = jv_object();
	size_t len = c->reply ? strlen(c->reply) : 0, cut = len;

	v = xg_json_set(v, "name", jv_string(c->name));
	v = xg_json_set(v, "run", jv_string(c->run));
	v = xg_json_set(v, "status", jv_string(c->ended ? c->status : "running"));
	v = xg_json_set(v, "stop", string_or_null(c->ended ? c->stop : NULL));
	if (c->ended)
		v = xg_json_set(v, "exit", jv_number(c->exit));
	if (c->ended && c->reason)
		v = xg_json_set(v, "reason", jv_string(c->reason));
	if (cut > XG_RUN_CHILD_REPLY_MAX) {
		cut = XG_RUN_CHILD_REPLY_MAX;
		/* Not inside a UTF-8 sequence. */
		cut = xg_utf8_start(c->reply, cut);
	}
	v = xg_json_set(v, "reply", c->reply ? xg_json_string_bytes(c->reply, cut) : jv_null());
	v = xg_json_set(v, "reply_bytes", jv_number((double)len));
	v = xg_json_set(v, "events", jv_string(c->events));
	xg_buf_addf(b, "## %s (run %s): %s%s%s\n", c->name, c->run,
		    c->ended ? c->status : "still running", c->ended && c->stop ? ", " : "",
		    c->ended && c->stop ? c->stop : "");
	if (c->ended && c->reason)
		xg_buf_addf(b, "reason: %s\n", c->reason);
	if (c->reply)
		xg_buf_addf(b, "%.*s\n", (int)cut, c->reply);
	if (cut < len)
		xg_buf_addf(b, "[the reply is cut at %zu of its %zu bytes; the whole is the "
			    "\"reply\" of the run_end record in %s]\n", cut, len, c->events);
	return v;
}

jv xg_run_subagent_wait(struct run *r, jv args)
{
	struct run_watch *w = &r->watch;
	int set[XG_RUN_MAX_CHILDREN], n, i, done;
	double timeout = WAIT_DEFAULT_S;
	jv res, bad, kids;
	struct xg_buf b = XG_BUF_INIT(0);
	int64_t deadline;
	struct timespec ts;

	if (jv_is_valid(xg_json_get_peek(args, "timeout"))) {
		jv t = xg_json_get_peek(args, "timeout");

		if (jv_get_kind(t) != JV_KIND_NUMBER || jv_number_value(t) < 0) {
			jv_free(args);
			return xg_tool_fail("wait_subagents: 'timeout' must be a number of seconds%s", "");
		}
		timeout = jv_number_value(t) > WAIT_MAX_S ? WAIT_MAX_S : jv_number_value(t);
	}
	deadline = xg_clock_ms() + (int64_t)(timeout * 1000);
	pthread_mutex_lock(&w->lock);
	bad = wait_set(w, jv_copy(xg_json_get_peek(args, "names")), set, &n);
	jv_free(args);
	if (jv_is_valid(bad) && jv_get_kind(bad) != JV_KIND_NULL) {
		pthread_mutex_unlock(&w->lock);
		return bad;
	}
	for (;;) {
		for (done = 1, i = 0; i < n; i++)
			done &= w->child[set[i]].reported;
		if (done || r->signal || xg_clock_ms() >= deadline || !w->running)
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 200 * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	}
	kids = jv_array();
	if (!n)
		xg_buf_addstr(&b, "No subagent to wait for: every one was collected already.\n");
	for (i = 0; i < n; i++) {
		struct run_child *c = &w->child[set[i]];

		kids = jv_array_append(kids, child_report(c, &b));
		if (c->reported)
			c->delivered = 1;
	}
	pthread_mutex_unlock(&w->lock);
	while (b.len && b.buf[b.len - 1] == '\n')
		xg_buf_setlen(&b, b.len - 1);
	res = xg_tool_result(1, jv_string(b.buf));
	xg_buf_release(&b);
	return xg_json_set(res, "subagents", kids);
}
