/*
 * The run of "xg run", "xg plan" and "xg resume" (dispatch.h): the records
 * fed to the pipeline, its stages, its one-line shell form for --dry-run,
 * and its output: rendered, or copied through with the reply kept for
 * --reply.
 */
#include "xg.h"
#include "dispatch/dispatch.h"
#include "exec.h"
#include "pipeline.h"

/*
 * The stages of a run, in order, with their arguments: the pipeline
 * --dry-run prints.  xg runs its last stage alone, xg-run, which takes the
 * steps before it itself when no record of theirs comes (xg-run(1)): the
 * same library calls give the same records, and two processes fewer stand
 * between xg and the first request.  The snapshot is taken once that
 * request is out, by the xg-snapshot xg-run starts then.
 */
static const char *const stages[][3] = {
	{ "snapshot", NULL },
	{ "choices", "start", NULL },
	{ "prompt-compile", NULL },
	{ "run", NULL },
};
#define NSTAGES (sizeof(stages) / sizeof(*stages))
#define STAGE_RUN (NSTAGES - 1)

static jv set_opt(jv req, const char *key, const char *value)
{
	return value ? xg_json_set(req, key, jv_string(value)) : req;
}

/* Appends v (consumed) as one line and a newline, with '$', '\'' and '%'
 * as JSON escapes: they can only stand inside JSON strings, where the
 * escapes mean the same characters. */
static void add_line(struct xg_buf *out, jv v)
{
	struct xg_buf line = XG_BUF_INIT(0);
	size_t i;

	if (xg_json_dump(&line, v) < 0)
		xg_die(XG_EX_SOFTWARE, "cannot write the request");
	for (i = 0; i < line.len; i++) {
		if (line.buf[i] == '$')
			xg_buf_addstr(out, "\\u0024");
		else if (line.buf[i] == '\'')
			xg_buf_addstr(out, "\\u0027");
		else if (line.buf[i] == '%')
			xg_buf_addstr(out, "\\u0025");
		else
			xg_buf_addch(out, line.buf[i]);
	}
	xg_buf_addch(out, '\n');
	xg_buf_release(&line);
}

char *xg_dispatch_input(const struct xg_dispatch_run *o)
{
	struct xg_buf out = XG_BUF_INIT(0);
	char *cwd = getcwd(NULL, 0);
	jv req = xg_rec_new("request");

	if (o->notice) {
		jv n = xg_rec_new("notice");

		n = xg_json_set(n, "from", jv_string("xg"));
		add_line(&out, xg_json_set(n, "text", jv_string(o->notice)));
	}
	req = xg_json_set(req, "text", xg_json_string_bytes(o->text, strlen(o->text)));
	req = xg_json_set(req, "mode", jv_string(o->mode));
	req = set_opt(req, "conversation", o->conversation);
	req = set_opt(req, "account", o->account);
	req = set_opt(req, "variant", o->variant);
	req = set_opt(req, "model", o->model);
	req = set_opt(req, "effort", o->effort);
	if (cwd)
		req = xg_json_set(req, "cwd", xg_json_string_bytes(cwd, strlen(cwd)));
	free(cwd);
	add_line(&out, req);
	return xg_buf_detach(&out, NULL);
}

/*
 * Adds the stages from first on to p, xg-run with --stream when stream is
 * set and the --gate, --ask and --sandbox of o.  A stage is named by its
 * bare name when a shell would find the same program in PATH, else by its
 * path, so the printed pipeline runs the same programs xg would.
 */
static void add_stages(struct xg_pipeline *p, const struct xg_dispatch_run *o, int stream,
		       size_t first)
{
	const char *argv[10];
	char *sandbox = o->sandbox ? xg_asprintf("--sandbox=%s", o->sandbox) : NULL;
	size_t i;

	for (i = first; i < NSTAGES; i++) {
		char *name = xg_asprintf("xg-%s", stages[i][0]);
		char *path = xg_exec_find(stages[i][0]);
		/* The name shown matters only in the printed line. */
		char *in_path = path && o->dry_run ? xg_exec_find_in_path(stages[i][0]) : NULL;
		size_t n = 0;

		if (!path)
			xg_die(XG_EX_SOFTWARE, "cannot find '%s' beside xg or in PATH", name);
		argv[n++] = in_path && !strcmp(in_path, path) ? name : path;
		if (stages[i][1])
			argv[n++] = stages[i][1];
		if (i + 1 == NSTAGES) {
			if (stream)
				argv[n++] = "--stream";
			if (o->gate) {
				argv[n++] = "--gate";
				argv[n++] = o->gate;
			}
			if (o->ask) {
				argv[n++] = "--ask";
				argv[n++] = o->ask;
			}
			if (sandbox)
				argv[n++] = sandbox;
		}
		argv[n] = NULL;
		xg_pipeline_add(p, path, argv);
		free(name);
		free(path);
		free(in_path);
	}
	free(sandbox);
}

/*
 * Prints the pipeline as one line of sh(1): the input records are the
 * format of a printf, which holds no '%' (xg_dispatch_input escapes it)
 * and whose every '\' is doubled, so printf writes them as they are.
 */
static void print_shell(const struct xg_pipeline *p, const char *input)
{
	struct xg_buf b = XG_BUF_INIT(0);
	const char *s;
	size_t i, j;

	xg_buf_addstr(&b, "printf '");
	for (s = input; *s; s++) {
		if (*s == '\\')
			xg_buf_addstr(&b, "\\\\");
		else if (*s == '\n')
			xg_buf_addstr(&b, "\\n");
		else
			xg_buf_addch(&b, *s);
	}
	xg_buf_addch(&b, '\'');
	for (i = 0; i < p->n; i++) {
		xg_buf_addstr(&b, " | ");
		for (j = 0; p->stages[i].argv[j]; j++) {
			if (j)
				xg_buf_addch(&b, ' ');
			xg_shell_quote(&b, p->stages[i].argv[j]);
		}
	}
	printf("%s\n", b.buf);
	xg_buf_release(&b);
}

static int use_color(void)
{
	const char *term = getenv("TERM");

	return !getenv("NO_COLOR") && !(term && !strcmp(term, "dumb"));
}

/* Writes reply (NULL: none) and a newline after it to path, as
 * xg_write_named does ("-" is standard output); 0 or XG_EX_IOERR
 * (reported). */
static int write_reply(const char *path, const char *reply)
{
	struct xg_buf b = XG_BUF_INIT(0);
	int rc;

	if (reply && *reply) {
		xg_buf_addstr(&b, reply);
		if (reply[strlen(reply) - 1] != '\n')
			xg_buf_addch(&b, '\n');
	}
	if (!strcmp(path, "-"))
		fflush(stdout);
	rc = xg_write_named(path, b.buf, b.len) < 0 ? XG_EX_IOERR : 0;
	xg_buf_release(&b);
	return rc;
}

/* Whether the current directory is in a git work tree: a .git in it or
 * above it, or GIT_DIR set.  A plain look, which is all a note needs;
 * xg-snapshot decides. */
static int in_repository(void)
{
	char *dir = getcwd(NULL, 0), *slash;
	int found = !dir || getenv("GIT_DIR");

	while (!found) {
		char *git = xg_path_join(dir, ".git");

		found = access(git, F_OK) == 0;
		free(git);
		if (!dir[1] || !(slash = strrchr(dir, '/')))
			break;
		slash[slash == dir] = '\0';	/* the parent, "/" itself at the top */
	}
	free(dir);
	return found;
}

#define NO_REPOSITORY "the workspace is not in a git repository: no snapshot is taken, " \
	"so 'xg log diff' and replay have nothing of this run"

int xg_dispatch_run(const struct xg_dispatch_run *o)
{
	struct xg_pipeline p;
	struct xg_render_out how = { 0 };
	char *input = xg_dispatch_input(o), *reply = NULL;
	int rc;

	how.mode = o->json ? XG_RENDER_JSON : isatty(1) ? XG_RENDER_TERMINAL : XG_RENDER_PLAIN;
	how.name = "xg-run's output";
	how.color = use_color();
	how.quiet = o->quiet;
	how.plan = !strcmp(o->mode, "plan");
	if (how.mode == XG_RENDER_TERMINAL && !o->quiet && how.color && isatty(2))
		how.row = stderr;
	xg_pipeline_init(&p);
	add_stages(&p, o, how.mode == XG_RENDER_TERMINAL, o->dry_run ? 0 : STAGE_RUN);
	if (o->dry_run) {
		print_shell(&p, input);
		rc = 0;
		goto out;
	}
	/* xg-run says when its first request is out: the phase row waits
	 * for that. */
	xg_pipeline_cue(&p, 0, "XG_RUN_SENT_FD");
	/* Said once, at the start; the records carry the notice, which the
	 * terminal and the plain lines show. */
	if (o->notice && how.mode == XG_RENDER_JSON && !o->quiet)
		xg_warn("%s", o->notice);
	if (how.mode != XG_RENDER_JSON && !(o->quiet && how.mode == XG_RENDER_PLAIN) &&
	    !in_repository())
		fputs("note: " NO_REPOSITORY "\n", how.mode == XG_RENDER_TERMINAL ? stdout : stderr);
	fflush(stdout);
	/* xg-run leaves off standard error what its records say (prog.h):
	 * xg says it, once.  Nothing else xg starts inherits it. */
	setenv("XG_RENDERED", "1", 1);
	rc = xg_pipeline_start(&p, input, strlen(input), XG_PIPELINE_CAPTURE);
	unsetenv("XG_RENDERED");
	if (rc < 0) {
		rc = XG_EX_SOFTWARE;
		goto out;
	}
	how.sent_fd = p.cue_fd;
	xg_render_output(p.out_fd, &how, &reply);
	close(p.out_fd);
	p.out_fd = -1;
	rc = xg_pipeline_wait(&p);
	if (o->reply && write_reply(o->reply, reply) && !rc)
		rc = XG_EX_IOERR;
out:
	xg_pipeline_release(&p);
	free(input);
	free(reply);
	return rc;
}
