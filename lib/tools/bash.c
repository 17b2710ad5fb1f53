/*
 * The bash tool: a command line run with /bin/sh -c in the workspace
 * (proc.c starts it and waits), and what the model is shown of it.
 *
 * The output is counted as it streams, its tail kept in a bounded buffer,
 * and the whole of it saved (up to XG_TOOL_FULL_OUTPUT_MAX) under the
 * run's tool-output/ directory.  The model sees all of it when it is short,
 * else its last XG_TOOL_MAX_LINES lines or XG_TOOL_MAX_BYTES bytes, with a
 * note of what was cut and where the rest is; a closing note says how the
 * command ended unless it exited 0.  The saved file is kept only when the
 * model was shown part of the output.
 */
#include "xg.h"
#include "tools/internal.h"
#include <sys/wait.h>

/* Whether the command can start in dir (else the shell's 126 would hide
 * why); errno says why not. */
static int workspace_ok(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return 0;
	}
	return 1;
}

struct bash_out {
	struct xg_buf tail;	/* the last bytes, at least XG_TOOL_MAX_BYTES + 1 */
	uint64_t bytes, newlines;
	int last;		/* the last byte seen, -1 before any */
	const struct xg_tool_ctx *ctx;
	int file;		/* the full output, or -1: not opened yet, or cannot be */
	int file_tried;
	char *file_path;
	size_t file_bytes;
	int file_full;
};

/* Opens the file for the full output under run_dir/tool-output/. */
static int bash_open_full(const struct xg_tool_ctx *ctx, char **path)
{
	char *dir, *name = NULL;
	const char *id = ctx->call_id;
	int fd = -1;

	*path = NULL;
	if (!ctx->run_dir)
		return -1;
	/* The run's own, as its directory is: only its owner reads it. */
	dir = xg_path_join(ctx->run_dir, "tool-output");
	if (xg_mkdir_p(dir, 0700) < 0)
		goto out;
	if (id && *id && id[0] != '.' && strlen(id) <= 128 &&
	    strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(id)) {
		name = xg_asprintf("%s/bash-%s.txt", dir, id);
		fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	} else {
		name = xg_asprintf("%s/bash-XXXXXX.txt", dir);
		fd = mkostemps(name, 4, O_CLOEXEC);
	}
	if (fd < 0) {
		free(name);
		name = NULL;
	}
out:
	free(dir);
	*path = name;
	return fd;
}

/* Adds p[0..n) to the saved output, up to its limit. */
static void bash_save(struct bash_out *o, const char *p, size_t n)
{
	size_t room = XG_TOOL_FULL_OUTPUT_MAX - o->file_bytes;
	size_t w = n < room ? n : room;

	if (o->file < 0 || o->file_full)
		return;
	while (w > 0) {
		ssize_t k = write(o->file, p, w);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		p += k;
		w -= (size_t)k;
		o->file_bytes += (size_t)k;
	}
	if (o->file_bytes >= XG_TOOL_FULL_OUTPUT_MAX || w > 0)
		o->file_full = 1;
}

/*
 * The full output is saved only for a command whose output the model will
 * see cut: the file is opened when the output first passes what can be
 * shown, and starts with what the tail holds then, which is all of it
 * (the tail drops nothing below twice the limit).  Most commands say
 * less, and cost no file.
 */
static void bash_sink(void *data, const char *p, size_t n)
{
	struct bash_out *o = data;
	const char *q;

	o->bytes += n;
	for (q = p; (q = memchr(q, '\n', n - (size_t)(q - p))); q++)
		o->newlines++;
	o->last = (unsigned char)p[n - 1];
	if (!o->file_tried && (o->bytes > XG_TOOL_MAX_BYTES || o->newlines >= XG_TOOL_MAX_LINES)) {
		o->file_tried = 1;
		o->file = bash_open_full(o->ctx, &o->file_path);
		bash_save(o, o->tail.buf, o->tail.len);
	}
	bash_save(o, p, n);
	/* Keep the tail bounded: trim back to what can be shown plus one
	 * byte (to know whether the first shown byte starts a line). */
	if (n > 2 * XG_TOOL_MAX_BYTES) {
		p += n - (XG_TOOL_MAX_BYTES + 1);
		n = XG_TOOL_MAX_BYTES + 1;
		xg_buf_reset(&o->tail);
	}
	xg_buf_add(&o->tail, p, n);
	if (o->tail.len > 2 * XG_TOOL_MAX_BYTES)
		xg_buf_consume(&o->tail, o->tail.len - (XG_TOOL_MAX_BYTES + 1));
}

/* How many times a sandbox that could not be set up is tried. */
#define SANDBOX_TRIES 3

/* Forgets what an attempt that ran nothing wrote (bwrap's error). */
static void bash_out_clear(struct bash_out *o)
{
	o->bytes = o->newlines = 0;
	o->last = -1;
	xg_buf_reset(&o->tail);
}

static uint64_t count_lines(const char *p, size_t n)
{
	uint64_t lines = 0;
	const char *q, *end = p + n;

	for (q = p; q < end && (q = memchr(q, '\n', (size_t)(end - q))); q++)
		lines++;
	if (n > 0 && p[n - 1] != '\n')
		lines++;
	return lines;
}

/*
 * The saved output with every secret of this process replaced, as in
 * everything else the run keeps: rewritten only when it holds one.
 */
static void bash_redact_full(const char *path)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t len;

	if (!xg_redact_longest() || xg_read_file(path, &b) < 0)
		goto out;
	if (xg_redact_find(b.buf, b.len, &len) < b.len) {
		xg_redact_buf(&b);
		if (xg_write_atomic(path, b.buf, b.len, 0600) < 0)
			unlink(path);	/* better lost than kept with a key */
	}
out:
	xg_buf_release(&b);
}

/*
 * The text the model sees: the whole output, or its tail of at most
 * XG_TOOL_MAX_LINES lines and XG_TOOL_MAX_BYTES bytes starting at a line's
 * start (or inside the last line, when that alone is too long).
 */
static int bash_tail(struct bash_out *o, struct xg_buf *text, uint64_t *shown_lines)
{
	uint64_t total_lines = o->newlines + (o->bytes && o->last != '\n');
	const char *p = o->tail.buf, *end = p + o->tail.len, *q;
	uint64_t lines;

	if (o->bytes <= XG_TOOL_MAX_BYTES && total_lines <= XG_TOOL_MAX_LINES) {
		xg_buf_add(text, p, o->tail.len);
		*shown_lines = total_lines;
		return 0;
	}
	if (end - p > XG_TOOL_MAX_BYTES) {
		p = end - XG_TOOL_MAX_BYTES;
		if (p[-1] != '\n') {
			q = memchr(p, '\n', (size_t)(end - p));
			/* A last line longer than the limit shows its end. */
			if (q && q + 1 < end)
				p = q + 1;
		}
	}
	lines = count_lines(p, (size_t)(end - p));
	while (lines > XG_TOOL_MAX_LINES) {
		q = memchr(p, '\n', (size_t)(end - p));
		p = q + 1;
		lines--;
	}
	xg_buf_add(text, p, (size_t)(end - p));
	*shown_lines = lines;
	return 1;
}

/* Says what of the output was cut, and where the whole of it is. */
static void bash_cut_note(struct xg_buf *text, const struct bash_out *o, uint64_t shown,
			  const char *full_path)
{
	uint64_t total = o->newlines + (o->last != '\n');

	xg_buf_addf(text, "[output cut: showing the last %llu of %llu lines (%zu of %llu bytes)",
		    (unsigned long long)shown, (unsigned long long)total,
		    text->len, (unsigned long long)o->bytes);
	if (full_path && o->file_full)
		xg_buf_addf(text, "; the first %zu bytes are saved in %s]\n",
			    o->file_bytes, full_path);
	else if (full_path)
		xg_buf_addf(text, "; the full output is in %s]\n", full_path);
	else
		xg_buf_addstr(text, "; the full output was not saved]\n");
}

/* Says how the command ended, unless it exited 0. */
static void bash_end_note(struct xg_buf *text, const struct xg_tool_proc *c, double timeout_s)
{
	switch (c->end) {
	case XG_TOOL_PROC_TIMEOUT:
		xg_buf_addf(text, "[timed out after %g s: the command and everything it "
			    "started were killed]\n", timeout_s);
		break;
	case XG_TOOL_PROC_DEADLINE:
		xg_buf_addstr(text, "[stopped at the run's time limit: the command and "
			      "everything it started were killed]\n");
		break;
	case XG_TOOL_PROC_ABORT:
		xg_buf_addstr(text, "[interrupted: the command and everything it started "
			      "were killed]\n");
		break;
	case XG_TOOL_PROC_EXIT:
		if (WIFEXITED(c->status) && WEXITSTATUS(c->status))
			xg_buf_addf(text, "[exit code %d]\n", WEXITSTATUS(c->status));
		else if (WIFSIGNALED(c->status))
			xg_buf_addf(text, "[killed by signal %d]\n", WTERMSIG(c->status));
		break;
	}
}

/* The timeout argument in seconds, lowered to the ceiling (then *clamped
 * is set); -1 when it is not a number above 0. */
static int timeout_arg_peek(jv args, double *timeout_s, int *clamped)
{
	jv tv = xg_json_get_peek(args, "timeout");

	*timeout_s = XG_TOOL_BASH_TIMEOUT_S;
	*clamped = 0;
	if (!jv_is_valid(tv) || jv_get_kind(tv) == JV_KIND_NULL)
		return 0;
	if (jv_get_kind(tv) != JV_KIND_NUMBER || !(jv_number_value(tv) > 0))
		return -1;
	*timeout_s = jv_number_value(tv);
	if (*timeout_s > XG_TOOL_BASH_MAX_TIMEOUT_S) {
		*timeout_s = XG_TOOL_BASH_MAX_TIMEOUT_S;
		*clamped = 1;
	}
	return 0;
}

/* The result of a command that ran: the text the model sees, and how the
 * command ended. */
static jv bash_result(struct bash_out *o, const struct xg_tool_proc *c, double timeout_s,
		      int clamped, const char *full_path)
{
	struct xg_buf text = XG_BUF_INIT(0);
	uint64_t shown = 0;
	int cut;
	jv r;

	cut = bash_tail(o, &text, &shown);
	if (o->bytes == 0)
		xg_buf_addstr(&text, "(no output)");
	if (text.len && text.buf[text.len - 1] != '\n')
		xg_buf_addch(&text, '\n');
	if (cut)
		bash_cut_note(&text, o, shown, full_path);
	if (clamped)
		xg_buf_addf(&text, "[the timeout was lowered to the ceiling of %d s]\n",
			    XG_TOOL_BASH_MAX_TIMEOUT_S);
	bash_end_note(&text, c, timeout_s);
	xg_buf_setlen(&text, text.len - 1);

	r = xg_tool_result(c->end == XG_TOOL_PROC_EXIT && WIFEXITED(c->status) && !WEXITSTATUS(c->status),
			   xg_json_string_bytes(text.buf, text.len));
	xg_buf_release(&text);
	r = xg_json_set(r, "exit_code", WIFEXITED(c->status) && c->end == XG_TOOL_PROC_EXIT
			? jv_number(WEXITSTATUS(c->status)) : jv_null());
	if (WIFSIGNALED(c->status))
		r = xg_json_set(r, "signal", jv_number(WTERMSIG(c->status)));
	r = xg_json_set(r, "timed_out", jv_bool(c->end == XG_TOOL_PROC_TIMEOUT ||
						 c->end == XG_TOOL_PROC_DEADLINE));
	if (c->end == XG_TOOL_PROC_ABORT)
		r = xg_json_set(r, "aborted", jv_true());
	r = xg_json_set(r, "truncated", jv_bool(cut));
	r = xg_json_set(r, "timeout", jv_number(timeout_s));
	if (cut && full_path)
		r = xg_json_set(r, "full_output_path", jv_string(full_path));
	return r;
}

jv xg_tool_bash_peek(const struct xg_tool_ctx *ctx, jv args)
{
	const char *command = xg_json_string_peek(args, "command");
	double timeout_s;
	struct bash_out o = { XG_BUF_INIT(0), 0, 0, -1, NULL, -1, 0, NULL, 0, 0 };
	struct xg_tool_proc c;
	int clamped, tries;
	int64_t stop_at;
	jv r;

	if (!command)
		return xg_tool_fail("bash: 'command' must be a string");
	if (xg_json_string_has_nul_peek(args, "command"))
		return xg_tool_fail("bash: 'command' holds a NUL byte, which a shell command cannot");
	if (timeout_arg_peek(args, &timeout_s, &clamped) < 0)
		return xg_tool_fail("bash: 'timeout' must be a number of seconds above 0");
	if (xg_tool_proc_aborted(ctx))
		return xg_tool_fail("bash: not run: the run is being interrupted");
	if (!workspace_ok(ctx->workspace))
		return xg_tool_fail("bash: cannot enter the workspace '%s': %s",
				    ctx->workspace, strerror(errno));
	o.ctx = ctx;
	stop_at = xg_clock_ms() + (int64_t)(timeout_s * 1000);
	for (tries = 1;; tries++) {
		memset(&c, 0, sizeof(c));
		c.sink = bash_sink;
		c.sink_data = &o;
		if (xg_tool_proc_start_sandboxed(ctx, &c, command, 1) < 0) {
			r = xg_tool_fail("bash: cannot start %s: %s",
					 ctx->sandbox && ctx->sandbox->bwrap ?
					 ctx->sandbox->bwrap : "/bin/sh", strerror(errno));
			goto out;
		}
		xg_tool_proc_wait(ctx, &c, stop_at - xg_clock_ms());
		/* A sandbox not set up ran nothing: the usual cause is a
		 * socket gone between its listing and bwrap's mount over it,
		 * which the next listing leaves out. */
		if (c.end != XG_TOOL_PROC_UNSET || tries == SANDBOX_TRIES ||
		    xg_tool_proc_aborted(ctx))
			break;
		bash_out_clear(&o);
	}
	if (c.end == XG_TOOL_PROC_UNSET)
		r = xg_tool_fail("bash: not run: the sandbox could not be set up: %.*s",
				 (int)(o.tail.len && o.tail.buf[o.tail.len - 1] == '\n' ?
				       o.tail.len - 1 : o.tail.len), o.tail.buf);
	else
		r = bash_result(&o, &c, timeout_s, clamped, o.file_path);
out:
	if (o.file >= 0) {
		close(o.file);
		/* Kept only when the model was shown part of it. */
		if (!jv_is_valid(xg_json_get_peek(r, "full_output_path")))
			unlink(o.file_path);
		else
			bash_redact_full(o.file_path);
	}
	free(o.file_path);
	xg_buf_release(&o.tail);
	return r;
}
