#include "xg.h"
#include "dispatch/dispatch.h"
#include "exec.h"
#include "pipeline.h"
#include "conversation.h"
#include <dirent.h>

/* The stages of a run, in order, with their arguments. */
static const char *const stages[][3] = {
	{ "snapshot", NULL },
	{ "choices", "start", NULL },
	{ "prompt-compile", NULL },
	{ "run", NULL },
};
#define NSTAGES (sizeof(stages) / sizeof(*stages))

static jv set_opt(jv req, const char *key, const char *value)
{
	return value ? xg_json_set(req, key, jv_string(value)) : req;
}

char *xg_dispatch_read_text(int fd)
{
	struct xg_buf b = XG_BUF_INIT(XG_DISPATCH_MAX_TEXT);

	if (xg_read_fd(fd, &b) < 0) {
		if (errno == EFBIG)
			xg_die(XG_EX_DATAERR, "the text on standard input is longer than %zu "
			       "bytes", XG_DISPATCH_MAX_TEXT);
		xg_die_errno(XG_EX_IOERR, "cannot read standard input");
	}
	while (b.len && (b.buf[b.len - 1] == '\n' || b.buf[b.len - 1] == '\r'))
		xg_buf_setlen(&b, b.len - 1);
	if (memchr(b.buf, '\0', b.len))
		xg_die(XG_EX_DATAERR, "the text on standard input holds a NUL byte");
	return xg_buf_detach(&b, NULL);
}

char *xg_dispatch_request(const struct xg_dispatch_run *o)
{
	struct xg_buf line = XG_BUF_INIT(0), out = XG_BUF_INIT(0);
	char *cwd = getcwd(NULL, 0);
	jv req = xg_rec_new("request");
	size_t i;

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
	if (xg_json_dump(&line, req) < 0)
		xg_die(XG_EX_SOFTWARE, "cannot write the request");
	/* Both can only stand inside JSON strings, where the escapes mean
	 * the same characters. */
	for (i = 0; i < line.len; i++) {
		if (line.buf[i] == '$')
			xg_buf_addstr(&out, "\\u0024");
		else if (line.buf[i] == '\'')
			xg_buf_addstr(&out, "\\u0027");
		else
			xg_buf_addch(&out, line.buf[i]);
	}
	xg_buf_release(&line);
	return xg_buf_detach(&out, NULL);
}

/*
 * Adds the stages to p.  A stage is named by its bare name when a shell
 * would find the same program in PATH, else by its path, so the printed
 * pipeline runs the same programs xg would.
 */
static void add_stages(struct xg_pipeline *p, int stream)
{
	const char *argv[4];
	size_t i;

	for (i = 0; i < NSTAGES; i++) {
		char *name = xg_asprintf("xg-%s", stages[i][0]);
		char *path = xg_exec_find(stages[i][0]);
		char *in_path = path ? xg_exec_find_in_path(stages[i][0]) : NULL;
		size_t n = 0;

		if (!path)
			xg_die(XG_EX_SOFTWARE, "cannot find '%s' beside xg or in PATH", name);
		argv[n++] = in_path && !strcmp(in_path, path) ? name : path;
		if (stages[i][1])
			argv[n++] = stages[i][1];
		if (stream && i + 1 == NSTAGES)
			argv[n++] = "--stream";
		argv[n] = NULL;
		xg_pipeline_add(p, path, argv);
		free(name);
		free(path);
		free(in_path);
	}
}

static void print_shell(const struct xg_pipeline *p, const char *request)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t i, j;

	xg_buf_addstr(&b, "printf '%s\\n' ");
	xg_shell_quote(&b, request);
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

int xg_dispatch_run(const struct xg_dispatch_run *o)
{
	struct xg_pipeline p;
	char *request = xg_dispatch_request(o), *input;
	int render = !o->json && !o->dry_run && isatty(1), rc;

	xg_pipeline_init(&p);
	add_stages(&p, render);
	if (o->dry_run) {
		print_shell(&p, request);
		rc = 0;
		goto out;
	}
	input = xg_asprintf("%s\n", request);
	fflush(stdout);
	if (xg_pipeline_start(&p, input, strlen(input), render ? XG_PIPELINE_CAPTURE : 1) < 0) {
		free(input);
		rc = XG_EX_SOFTWARE;
		goto out;
	}
	free(input);
	if (render) {
		xg_render_stream(p.out_fd, "xg-run's output", stdout, use_color());
		close(p.out_fd);
		p.out_fd = -1;
	}
	rc = xg_pipeline_wait(&p);
out:
	xg_pipeline_release(&p);
	free(request);
	return rc;
}

char *xg_dispatch_newest_conversation(void)
{
	char *dir = xg_path_state("conversations"), *best = NULL;
	struct timespec best_t = { 0, 0 };
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d) {
		free(dir);
		return NULL;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat st;
		char *id, *path;

		if (len <= 6 || strcmp(e->d_name + len - 6, ".jsonl"))
			continue;
		id = xg_strndup(e->d_name, len - 6);
		path = xg_path_join(dir, e->d_name);
		if (xg_conv_id_valid(id) && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    (!best || st.st_mtim.tv_sec > best_t.tv_sec ||
		     (st.st_mtim.tv_sec == best_t.tv_sec &&
		      (st.st_mtim.tv_nsec > best_t.tv_nsec ||
		       (st.st_mtim.tv_nsec == best_t.tv_nsec && strcmp(id, best) > 0))))) {
			free(best);
			best = id;
			id = NULL;
			best_t = st.st_mtim;
		}
		free(id);
		free(path);
	}
	closedir(d);
	free(dir);
	return best;
}
