/*
 * A driver for the tools and the gate of lib/run: runs one tool call the
 * way xg-run will, and prints {"gate":DECISION,"result":RESULT} on one line
 * (gate null without --gate; result null when the gate refused).
 *
 * race races the file tools: a child swaps the workspace's directory d
 * with x, a symlink to a directory outside, as fast as renameat2 can,
 * while count writes, reads and edits under d go through; each result is
 * printed as {"tool":NAME,"result":RESULT}.
 *
 * --no-openat2 makes the kernel answer openat2 with ENOSYS, as one without
 * it would, so the walk that stands in for it is what gets tested.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "xg.h"
#include "xg-test.h"
#include "tools/internal.h"

static const char *const usage[] = {
	"xg-test-tools [--workspace dir] [--run-dir dir] [--ask command] "
	"[--ask-timeout seconds] [--deadline ms] [--drop-env name] [--gate filter] [--plan] [--plan-jq] [--id id] [--no-openat2] name args",
	"xg-test-tools schemas",
	"xg-test-tools --gate filter gate",
	"xg-test-tools --workspace dir race outside count",
	NULL
};

enum { OPT_WORKSPACE = 1, OPT_RUN_DIR, OPT_ASK, OPT_ASK_TIMEOUT, OPT_DEADLINE, OPT_DROP_ENV, OPT_GATE, OPT_PLAN, OPT_PLAN_JQ, OPT_ID, OPT_NO_OPENAT2 };

static const struct xg_option options[] = {
	{ OPT_WORKSPACE, 0, "workspace", "dir", "the workspace (default: the current directory)" },
	{ OPT_RUN_DIR, 0, "run-dir", "dir", "where full bash output is saved" },
	{ OPT_ASK, 0, "ask", "command", "the command that answers ask_user" },
	{ OPT_ASK_TIMEOUT, 0, "ask-timeout", "seconds", "how long the ask command may take" },
	{ OPT_DEADLINE, 0, "deadline", "ms", "the run's time limit, from now" },
	{ OPT_DROP_ENV, 0, "drop-env", "name", "hide a variable from the commands (repeatable)" },
	{ OPT_GATE, 0, "gate", "filter", "a jq filter deciding the call" },
	{ OPT_PLAN, 0, "plan", NULL, "apply plan mode's built-in gate first" },
	{ OPT_PLAN_JQ, 0, "plan-jq", NULL, "the same, through its jq filter" },
	{ OPT_ID, 0, "id", "id", "the call's id (default call-1)" },
	{ OPT_NO_OPENAT2, 0, "no-openat2", NULL, "act as a kernel without openat2" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-test-tools", "Run one tool call for the tests.", usage, options
};

static struct xg_tool_procs procs;
static volatile sig_atomic_t stop;

/* What xg-run's SIGINT handler will do: stop the tools, kill their groups. */
static void on_signal(int sig)
{
	stop = 1;
	xg_tool_procs_kill(&procs, SIGTERM);
}

static jv gate_decide(const char *filter, jv call)
{
	struct xg_gate *g;
	char *err = NULL;
	jv d;

	if (!filter)
		return xg_gate_decide(NULL, call);
	g = xg_gate_new(filter, &err);
	if (!g) {
		xg_error("bad gate filter: %s", err);
		free(err);
		jv_free(call);
		exit(xg_prog_exit(XG_EX_CONFIG));
	}
	d = xg_gate_decide(g, call);
	xg_gate_free(g);
	return d;
}

/* Decides each tool_call record on stdin with one compiled gate, as the
 * loop does through a run, and prints the decisions with their ids. */
static void gate_many(const char *filter, struct xg_rec_writer *w)
{
	struct xg_rec_reader r;
	struct xg_rec rec;
	struct xg_gate *g;
	char *err = NULL;

	if (!(g = xg_gate_new(filter, &err))) {
		xg_error("bad gate filter: %s", err);
		free(err);
		exit(xg_prog_exit(XG_EX_CONFIG));
	}
	xg_rec_reader_init(&r, 0, "standard input");
	while (xg_rec_next_or_die(&r, &rec) > 0) {
		jv d = xg_gate_decide(g, jv_copy(rec.v));
		jv id = jv_copy(xg_json_get_peek(rec.v, "id"));

		xg_rec_write(w, xg_json_set(d, "id", jv_is_valid(id) ? id : jv_null()));
		xg_rec_release(&rec);
	}
	xg_rec_reader_release(&r);
	xg_gate_free(g);
}

/* A seccomp filter: openat2 fails with ENOSYS, every other call runs. */
static void refuse_openat2(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		xg_die(XG_EX_SOFTWARE, "cannot filter openat2: %s", strerror(errno));
}

/* Exchanges a and b, both in the current directory, until killed,
 * counting the swaps in *swaps. */
static void swap_forever(const char *a, const char *b, volatile int *swaps)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */) < 0)
			_exit(1);
		*swaps = 1;
	}
}

static void race(struct xg_tool_ctx *ctx, const char *outside, int count,
		 struct xg_rec_writer *w)
{
	struct stat st;
	volatile int *swaps;
	pid_t pid;
	int i;

	if (chdir(ctx->workspace) < 0 || symlink(outside, "x") < 0)
		xg_die(XG_EX_IOERR, "cannot set the race up: %s", strerror(errno));
	ctx->workspace = ".";
	swaps = mmap(NULL, sizeof(*swaps), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (swaps == MAP_FAILED)
		xg_die(XG_EX_SOFTWARE, "cannot map: %s", strerror(errno));
	*swaps = 0;
	if ((pid = fork()) < 0)
		xg_die(XG_EX_SOFTWARE, "cannot fork: %s", strerror(errno));
	if (pid == 0)
		swap_forever("d", "x", swaps);
	/* The calls start once the swapping has. */
	while (!*swaps)
		sched_yield();
	for (i = 0; i < count; i++) {
		const char *name[] = { "write", "read", "edit" };
		jv args[3];
		int k;

		args[0] = xg_json_set(xg_json_set(jv_object(), "path",
			jv_string_fmt("d/w-%d.txt", i)), "content", jv_string("written\n"));
		args[1] = xg_json_set(jv_object(), "path", jv_string("d/r.txt"));
		args[2] = jv_parse("{\"path\":\"d/e.txt\",\"edits\":"
				   "[{\"old_text\":\"a\",\"new_text\":\"a\"}]}");
		for (k = 0; k < 3; k++)
			xg_rec_write(w, xg_json_set(xg_json_set(jv_object(), "tool",
				jv_string(name[k])), "result", xg_tool_run(ctx, name[k], args[k])));
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Leave d the directory again. */
	if (lstat("d", &st) == 0 && S_ISLNK(st.st_mode))
		syscall(SYS_renameat2, AT_FDCWD, "d", AT_FDCWD, "x", 2);
}

int cmd__tools(int argc, char **argv)
{
	struct xg_tool_ctx ctx = { 0 };
	struct xg_rec_writer w;
	struct xg_opts o;
	struct sigaction sa;
	const char *arg, *gate = NULL, *id = "call-1";
	const char *drop[16] = { NULL };
	int opt, plan = 0, allowed = 1, ndrop = 0;
	jv args, out, decision = jv_null();

	xg_prog_init("xg-test-tools");
	ctx.workspace = ".";
	xg_opt_init(&o, &cmd, argc, argv);
	while ((opt = xg_opt_next(&o, &arg)) != -1)
		switch (opt) {
		case OPT_WORKSPACE: ctx.workspace = arg; break;
		case OPT_RUN_DIR: ctx.run_dir = arg; break;
		case OPT_ASK: ctx.ask_command = arg; break;
		case OPT_ASK_TIMEOUT:
			ctx.ask_timeout_s = (int)xg_opt_number(&cmd, "--ask-timeout", arg, 0);
			break;
		case OPT_DEADLINE:
			ctx.deadline_ms = xg_clock_ms() +
				(int64_t)xg_opt_number(&cmd, "--deadline", arg, 0);
			break;
		case OPT_DROP_ENV:
			if (ndrop < 15)
				drop[ndrop++] = arg;
			break;
		case OPT_GATE: gate = arg; break;
		case OPT_PLAN: plan = 1; break;
		case OPT_PLAN_JQ: plan = 2; break;
		case OPT_ID: id = arg; break;
		case OPT_NO_OPENAT2: refuse_openat2(); break;
		}
	xg_rec_writer_init(&w, stdout);
	if (o.nargs == 1 && !strcmp(o.args[0], "schemas")) {
		jv list = xg_tool_schemas();
		int i, n = xg_json_length_peek(list);

		for (i = 0; i < n; i++)
			xg_rec_write(&w, jv_array_get(jv_copy(list), i));
		jv_free(list);
		goto done;
	}
	if (o.nargs == 1 && !strcmp(o.args[0], "gate")) {
		if (!gate)
			xg_usage_error(&cmd, "gate needs --gate");
		gate_many(gate, &w);
		goto done;
	}
	if (o.nargs == 3 && !strcmp(o.args[0], "race")) {
		race(&ctx, o.args[1], (int)xg_opt_number(&cmd, "count", o.args[2], 0), &w);
		goto done;
	}
	if (o.nargs != 2)
		xg_usage_error(&cmd, "expected a tool name and its arguments");
	args = jv_parse(o.args[1]);
	if (!jv_is_valid(args)) {
		jv_free(args);
		xg_die(XG_EX_DATAERR, "the arguments are not JSON");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ctx.env_drop = drop;
	ctx.abort = &stop;
	ctx.procs = &procs;
	ctx.call_id = id;
	if (plan) {
		decision = gate_decide(plan == 2 ? XG_GATE_PLAN : NULL,
				       xg_gate_call(id, o.args[0], jv_copy(args)));
		allowed = jv_get_kind(xg_json_get_peek(decision, "allow")) == JV_KIND_TRUE;
	}
	if (allowed && gate) {
		jv_free(decision);
		decision = gate_decide(gate, xg_gate_call(id, o.args[0], jv_copy(args)));
		allowed = jv_get_kind(xg_json_get_peek(decision, "allow")) == JV_KIND_TRUE;
	}
	out = xg_json_set(jv_object(), "gate", decision);
	if (allowed)
		out = xg_json_set(out, "result", xg_tool_run(&ctx, o.args[0], args));
	else
		jv_free(args), out = xg_json_set(out, "result", jv_null());
	xg_rec_write(&w, out);
done:
	xg_rec_writer_release(&w);
	xg_opt_release(&o);
	return xg_prog_exit(0);
}
