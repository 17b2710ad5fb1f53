/*
 * The tools xg-run offers the model: the table, the dispatch, and the tools
 * that run commands (bash, ask_user) and keep the todo list.  The file tools
 * (read, write, edit) and path resolution are in tools-files.c.
 */
#include "xg.h"
#include "run/internal.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/*
 * The table.  Each description is what the model reads to decide how to use
 * the tool, so it states the limits it will meet.
 */
static const struct {
	const char *name;
	const char *description;
	const char *parameters;
} tools[] = {
	{ "bash",
	  "Run a shell command with /bin/sh -c in the workspace directory. "
	  "Standard input is empty; standard output and standard error come back "
	  "merged, with the exit code. Long output keeps its last 2000 lines or "
	  "50 KB, whichever is less, and says where the full output was saved. "
	  "The command is stopped, with everything it started, after timeout "
	  "seconds (120 unless given, at most 600). Background jobs keep "
	  "running after the call returns but their output is lost: redirect "
	  "it to a file.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"command\":{\"type\":\"string\",\"description\":\"The command line.\"},"
	  "\"timeout\":{\"type\":\"number\",\"description\":\"Seconds before the command is stopped (default 120, at most 600).\"}},"
	  "\"required\":[\"command\"],\"additionalProperties\":false}" },
	{ "read",
	  "Read a text file, each line prefixed with its number and a tab. "
	  "At most 2000 lines or 50 KB come back at once; when there is more "
	  "the result says which offset to read next. Binary files are refused. "
	  "Paths are relative to the workspace and must stay inside it.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\",\"description\":\"The file, relative to the workspace.\"},"
	  "\"offset\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"The first line to show, from 1 (default 1).\"},"
	  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"How many lines to show at most (default and ceiling 2000).\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}" },
	{ "write",
	  "Write a whole file, replacing it if it exists and creating missing "
	  "parent directories. The file is replaced in one step, so no reader "
	  "sees half of it. Paths must stay inside the workspace. Prefer edit "
	  "for changing part of an existing file.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\",\"description\":\"The file, relative to the workspace.\"},"
	  "\"content\":{\"type\":\"string\",\"description\":\"The file's complete new text.\"}},"
	  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}" },
	{ "edit",
	  "Change a file by replacing pieces of its text. Each old_text must "
	  "occur exactly once in the file as it is now, and no two edits may "
	  "touch the same text; otherwise nothing is changed and the result "
	  "names the edit at fault. Include enough surrounding lines to make "
	  "old_text unique. The file's line endings and byte order mark are "
	  "kept. Paths must stay inside the workspace.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\",\"description\":\"The file, relative to the workspace.\"},"
	  "\"edits\":{\"type\":\"array\",\"minItems\":1,\"description\":\"The replacements, applied together.\","
	  "\"items\":{\"type\":\"object\",\"properties\":{"
	  "\"old_text\":{\"type\":\"string\",\"description\":\"Text that occurs exactly once in the file.\"},"
	  "\"new_text\":{\"type\":\"string\",\"description\":\"What replaces it.\"}},"
	  "\"required\":[\"old_text\",\"new_text\"],\"additionalProperties\":false}}},"
	  "\"required\":[\"path\",\"edits\"],\"additionalProperties\":false}" },
	{ "todo_write",
	  "Replace the todo list that shows the progress of the work. Send the "
	  "whole list each time. It records progress; it does not limit what "
	  "the work may include.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"items\":{\"type\":\"array\",\"maxItems\":100,\"items\":{\"type\":\"object\",\"properties\":{"
	  "\"content\":{\"type\":\"string\",\"description\":\"What the step is.\"},"
	  "\"status\":{\"type\":\"string\",\"enum\":[\"pending\",\"in_progress\",\"completed\"]}},"
	  "\"required\":[\"content\",\"status\"],\"additionalProperties\":false}}},"
	  "\"required\":[\"items\"],\"additionalProperties\":false}" },
	{ "ask_user",
	  "Ask the person a question. Often nobody is there to answer: then "
	  "the result says so, and you proceed on your best judgement and state "
	  "in your reply what you assumed.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"question\":{\"type\":\"string\",\"description\":\"The question, complete enough to answer without context.\"}},"
	  "\"required\":[\"question\"],\"additionalProperties\":false}" },
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

jv xg_tool_schemas(void)
{
	jv list = jv_array();
	size_t i;

	for (i = 0; i < NTOOLS; i++) {
		jv t = jv_object();
		jv params = jv_parse(tools[i].parameters);

		if (!jv_is_valid(params))
			xg_die(XG_EX_SOFTWARE, "the schema of tool '%s' is not JSON", tools[i].name);
		t = xg_json_set(t, "name", jv_string(tools[i].name));
		t = xg_json_set(t, "description", jv_string(tools[i].description));
		t = xg_json_set(t, "parameters", params);
		list = jv_array_append(list, t);
	}
	return list;
}

int xg_tool_exists(const char *name)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			return 1;
	return 0;
}

jv xg_tool_result(int ok, jv output)
{
	jv r = jv_object();

	r = xg_json_set(r, "ok", jv_bool(ok));
	return xg_json_set(r, "output", output);
}

jv xg_tool_fail(const char *fmt, ...)
{
	va_list ap;
	char *s;
	jv r;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		xg_die(XG_EX_SOFTWARE, "out of memory");
	va_end(ap);
	r = xg_tool_result(0, xg_json_string_bytes(s, strlen(s)));
	free(s);
	return r;
}

/* ---- Child processes: bash and the ask command ---- */

static void procs_add(struct xg_tool_procs *p, pid_t pgid)
{
	int i;

	if (!p)
		return;
	/* Calls may run in parallel threads: claim a slot atomically. */
	for (i = 0; i < XG_TOOL_MAX_PROCS; i++)
		if (__sync_bool_compare_and_swap(&p->pgid[i], 0, pgid))
			return;
	/* Full: the call still kills its own group on timeout or abort. */
}

static void procs_remove(struct xg_tool_procs *p, pid_t pgid)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < XG_TOOL_MAX_PROCS; i++)
		if (p->pgid[i] == pgid)
			p->pgid[i] = 0;
}

void xg_tool_kill_all(struct xg_tool_procs *procs, int sig)
{
	int i;

	if (!procs)
		return;
	for (i = 0; i < XG_TOOL_MAX_PROCS; i++) {
		pid_t g = procs->pgid[i];
		if (g > 0)
			kill(-g, sig);
	}
}

/* Signals the child's group; before the child's setsid the group does not
 * exist yet, so the child itself gets it too. */
static void kill_group(pid_t pid, int sig)
{
	if (kill(-pid, sig) < 0 && errno == ESRCH)
		kill(pid, sig);
}

enum child_end { END_EXIT, END_TIMEOUT, END_DEADLINE, END_ABORT };

struct child {
	pid_t pid;
	int out;		/* the merged output, or -1 once at its end */
	int in;			/* the command's stdin (a socket), or -1 */
	const char *in_data;
	size_t in_len, in_off;
	int pidfd;		/* readable when the shell ends, or -1 (old kernels) */
	int status;
	int reaped;
	enum child_end end;
	/* Called with each piece of output. */
	void (*sink)(void *data, const char *p, size_t n);
	void *sink_data;
};

/* The environment for a command: ours without the dropped names.  The
 * strings are borrowed from environ; the caller frees the array. */
static char **child_env(const char *const *drop)
{
	extern char **environ;
	size_t n = 0, k = 0, i;
	char **env;

	while (environ[n])
		n++;
	env = xg_calloc(n + 1, sizeof(*env));
	for (i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		const char *const *d;

		for (d = drop; d && *d; d++)
			if (strlen(*d) == len && !memcmp(*d, environ[i], len))
				break;
		if (!d || !*d)
			env[k++] = environ[i];
	}
	return env;
}

/*
 * Starts /bin/sh -c command in dir, in a session (and so a process group)
 * of its own, with no controlling terminal, so nothing it runs can wait on
 * the person's terminal.  Standard output and error go to one pipe; standard
 * input is /dev/null, or a socket the caller writes (ask_user).  Returns 0,
 * or -1 with errno set.
 */
static int child_start(struct child *c, const char *command, const char *dir,
		       char **env, int with_input, int stderr_too)
{
	char *const argv[] = { "sh", "-c", (char *)command, NULL };
	int out[2], in[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(out, O_CLOEXEC) < 0)
		return -1;
	if (with_input && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(out[0]);
		close(out[1]);
		if (in[0] >= 0) {
			close(in[0]);
			close(in[1]);
		}
		errno = e;
		return -1;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls from here: the parent may have
		 * threads. */
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigset_t none;
		int sig, fd;

		setsid();
		for (sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				sigaction(sig, &dfl, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dir && chdir(dir) < 0)
			_exit(126);
		if (with_input) {
			fd = in[1];
		} else {
			fd = open("/dev/null", O_RDONLY);
			if (fd < 0)
				_exit(126);
		}
		if (dup2(fd, 0) < 0 || dup2(out[1], 1) < 0)
			_exit(126);
		if (stderr_too && dup2(out[1], 2) < 0)
			_exit(126);
		/* Descriptors the caller left inheritable (a lock, a socket)
		 * must not outlive it in a background job. */
		if (close_range(3, ~0U, 0) < 0)
			for (fd = 3; fd < 1024; fd++)
				close(fd);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	close(out[1]);
	c->pid = pid;
#ifdef SYS_pidfd_open
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
	c->pidfd = -1;
#endif
	c->out = out[0];
	c->in = -1;
	if (with_input) {
		close(in[1]);
		c->in = in[0];
		fcntl(c->in, F_SETFL, fcntl(c->in, F_GETFL) | O_NONBLOCK);
	}
	c->reaped = 0;
	c->status = 0;
	c->end = END_EXIT;
	return 0;
}

static int aborted(const struct xg_tool_ctx *ctx)
{
	return ctx->abort && *ctx->abort;
}

static void child_read(struct child *c)
{
	char chunk[65536];
	ssize_t n = read(c->out, chunk, sizeof(chunk));

	if (n > 0) {
		c->sink(c->sink_data, chunk, (size_t)n);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(c->out);
		c->out = -1;
	}
}

static void child_write(struct child *c)
{
	ssize_t n = send(c->in, c->in_data + c->in_off, c->in_len - c->in_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n > 0)
		c->in_off += (size_t)n;
	if ((n < 0 && errno != EINTR && errno != EAGAIN) || c->in_off == c->in_len) {
		/* Done, or the command does not read: either way, EOF. */
		close(c->in);
		c->in = -1;
	}
}

static void child_reap(struct child *c, int options)
{
	if (c->reaped)
		return;
	if (waitpid(c->pid, &c->status, options) == c->pid)
		c->reaped = 1;
}

/* How long output may keep coming through the pipe after the shell has
 * gone (from a background job that still holds it). */
#define DRAIN_AFTER_EXIT_MS 500

/*
 * Feeds the input, hands the output to the sink, and waits for the command
 * to end; at timeout_ms, the run's deadline or an abort it kills the whole
 * process group: TERM, a grace for it to go, then KILL.
 */
static void child_wait(const struct xg_tool_ctx *ctx, struct child *c, int64_t timeout_ms)
{
	int64_t now = xg_clock_ms();
	int64_t stop_at = now + timeout_ms, exit_at = 0, term_at = 0;
	enum child_end why = END_TIMEOUT;
	int killed = 0;

	if (ctx->deadline_ms && ctx->deadline_ms < stop_at) {
		stop_at = ctx->deadline_ms;
		why = END_DEADLINE;
	}
	procs_add(ctx->procs, c->pid);
	for (;;) {
		struct pollfd pfd[3];
		int nfd = 0, wait_ms = 100;

		/* The flag is read before reaping: a signal handler sets it and
		 * then kills the group, so a shell found dead here may have been
		 * killed by the interrupt, and the rest of its group still
		 * needs stopping. */
		int ab = aborted(ctx), was_reaped = c->reaped;

		now = xg_clock_ms();
		child_reap(c, WNOHANG);
		if (c->reaped && !exit_at)
			exit_at = now;
		if (!term_at && ((ab && !was_reaped) || (!c->reaped && now >= stop_at))) {
			c->end = ab ? END_ABORT : why;
			kill_group(c->pid, SIGTERM);
			term_at = now;
		}
		if (term_at && !killed) {
			/* Once the whole group has gone there is nothing to KILL;
			 * what it wrote is still read below. */
			if (c->reaped && kill(-c->pid, 0) < 0 && errno == ESRCH) {
				killed = 1;
				exit_at = now;
			} else if (now - term_at >= XG_TOOL_KILL_GRACE_MS) {
				kill_group(c->pid, SIGKILL);
				killed = 1;
				child_reap(c, 0);
				exit_at = xg_clock_ms();
			}
		}
		if (c->reaped && (c->out < 0 || now - exit_at >= DRAIN_AFTER_EXIT_MS) &&
		    (!term_at || killed))
			break;
		if (c->out >= 0) {
			pfd[nfd].fd = c->out;
			pfd[nfd++].events = POLLIN;
		}
		if (c->in >= 0) {
			pfd[nfd].fd = c->in;
			pfd[nfd++].events = POLLOUT;
		}
		if (!c->reaped && c->pidfd >= 0) {
			pfd[nfd].fd = c->pidfd;
			pfd[nfd++].events = POLLIN;
		} else if (!c->reaped && c->out < 0) {
			/* No pidfd: look for the shell's end often. */
			wait_ms = 5;
		}
		if (c->reaped && (!term_at || killed) &&
		    wait_ms > DRAIN_AFTER_EXIT_MS - (now - exit_at))
			wait_ms = (int)(DRAIN_AFTER_EXIT_MS - (now - exit_at));
		if (!term_at && stop_at - now < wait_ms)
			wait_ms = stop_at - now < 0 ? 0 : (int)(stop_at - now);
		if (wait_ms < 1)
			wait_ms = 1;
		if (poll(pfd, (nfds_t)nfd, wait_ms) <= 0)
			continue;
		nfd = 0;
		if (c->out >= 0) {
			if (pfd[nfd].revents)
				child_read(c);
			nfd++;
		}
		if (c->in >= 0 && pfd[nfd].revents)
			child_write(c);
	}
	child_reap(c, 0);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	procs_remove(ctx->procs, c->pid);
	if (c->out >= 0)
		close(c->out);
	if (c->in >= 0)
		close(c->in);
	c->out = c->in = -1;
}

/* ---- bash ---- */

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
	int file;		/* the full output, or -1 */
	size_t file_bytes;
	int file_full;
};

static void bash_sink(void *data, const char *p, size_t n)
{
	struct bash_out *o = data;
	const char *q;

	o->bytes += n;
	for (q = p; (q = memchr(q, '\n', n - (size_t)(q - p))); q++)
		o->newlines++;
	o->last = (unsigned char)p[n - 1];
	if (o->file >= 0 && !o->file_full) {
		size_t room = XG_TOOL_FULL_OUTPUT_MAX - o->file_bytes;
		size_t w = n < room ? n : room;
		const char *s = p;

		while (w > 0) {
			ssize_t k = write(o->file, s, w);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			s += k;
			w -= (size_t)k;
			o->file_bytes += (size_t)k;
		}
		if (o->file_bytes >= XG_TOOL_FULL_OUTPUT_MAX || w > 0)
			o->file_full = 1;
	}
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

/* Opens the file for the full output under run_dir/tool-output/. */
static int bash_open_full(const struct xg_tool_ctx *ctx, char **path)
{
	char *dir, *name = NULL;
	const char *id = ctx->call_id;
	int fd = -1;

	*path = NULL;
	if (!ctx->run_dir)
		return -1;
	dir = xg_path_join(ctx->run_dir, "tool-output");
	name = xg_path_join(dir, "x");
	if (xg_tool_mkdir_parents(name) < 0)
		goto out;
	free(name);
	name = NULL;
	if (id && *id && id[0] != '.' && strlen(id) <= 128 &&
	    strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(id)) {
		name = xg_asprintf("%s/bash-%s.txt", dir, id);
		fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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
static void bash_end_note(struct xg_buf *text, const struct child *c, double timeout_s)
{
	switch (c->end) {
	case END_TIMEOUT:
		xg_buf_addf(text, "[timed out after %g s: the command and everything it "
			    "started were killed]\n", timeout_s);
		break;
	case END_DEADLINE:
		xg_buf_addstr(text, "[stopped at the run's time limit: the command and "
			      "everything it started were killed]\n");
		break;
	case END_ABORT:
		xg_buf_addstr(text, "[interrupted: the command and everything it started "
			      "were killed]\n");
		break;
	case END_EXIT:
		if (WIFEXITED(c->status) && WEXITSTATUS(c->status))
			xg_buf_addf(text, "[exit code %d]\n", WEXITSTATUS(c->status));
		else if (WIFSIGNALED(c->status))
			xg_buf_addf(text, "[killed by signal %d]\n", WTERMSIG(c->status));
		break;
	}
}

static jv bash_run(const struct xg_tool_ctx *ctx, jv args)
{
	const char *command = xg_json_string_peek(args, "command");
	jv tv = xg_json_get_peek(args, "timeout");
	double timeout_s = XG_TOOL_BASH_TIMEOUT_S;
	struct bash_out o = { XG_BUF_INIT(0), 0, 0, -1, -1, 0, 0 };
	struct child c;
	struct xg_buf text = XG_BUF_INIT(0);
	char *full_path = NULL;
	uint64_t shown = 0;
	int cut, clamped = 0, started;
	char **env;
	jv r;

	if (!command)
		return xg_tool_fail("bash: 'command' must be a string");
	if (jv_is_valid(tv) && jv_get_kind(tv) != JV_KIND_NULL) {
		if (jv_get_kind(tv) != JV_KIND_NUMBER || !(jv_number_value(tv) > 0))
			return xg_tool_fail("bash: 'timeout' must be a number of seconds above 0");
		timeout_s = jv_number_value(tv);
		if (timeout_s > XG_TOOL_BASH_MAX_TIMEOUT_S) {
			timeout_s = XG_TOOL_BASH_MAX_TIMEOUT_S;
			clamped = 1;
		}
	}
	if (aborted(ctx))
		return xg_tool_fail("bash: not run: the run is being interrupted");
	if (!workspace_ok(ctx->workspace))
		return xg_tool_fail("bash: cannot enter the workspace '%s': %s",
				    ctx->workspace, strerror(errno));
	o.file = bash_open_full(ctx, &full_path);
	memset(&c, 0, sizeof(c));
	c.sink = bash_sink;
	c.sink_data = &o;
	env = child_env(ctx->env_drop);
	started = child_start(&c, command, ctx->workspace, env, 0, 1);
	free(env);
	if (started < 0) {
		r = xg_tool_fail("bash: cannot start /bin/sh: %s", strerror(errno));
		goto out;
	}
	child_wait(ctx, &c, (int64_t)(timeout_s * 1000));

	cut = bash_tail(&o, &text, &shown);
	if (o.bytes == 0)
		xg_buf_addstr(&text, "(no output)");
	if (text.len && text.buf[text.len - 1] != '\n')
		xg_buf_addch(&text, '\n');
	if (cut)
		bash_cut_note(&text, &o, shown, full_path);
	if (clamped)
		xg_buf_addf(&text, "[the timeout was lowered to the ceiling of %d s]\n",
			    XG_TOOL_BASH_MAX_TIMEOUT_S);
	bash_end_note(&text, &c, timeout_s);
	xg_buf_setlen(&text, text.len - 1);

	r = xg_tool_result(c.end == END_EXIT && WIFEXITED(c.status) && !WEXITSTATUS(c.status),
			   xg_json_string_bytes(text.buf, text.len));
	r = xg_json_set(r, "exit_code", WIFEXITED(c.status) && c.end == END_EXIT
			? jv_number(WEXITSTATUS(c.status)) : jv_null());
	if (WIFSIGNALED(c.status))
		r = xg_json_set(r, "signal", jv_number(WTERMSIG(c.status)));
	r = xg_json_set(r, "timed_out", jv_bool(c.end == END_TIMEOUT || c.end == END_DEADLINE));
	if (c.end == END_ABORT)
		r = xg_json_set(r, "aborted", jv_true());
	r = xg_json_set(r, "truncated", jv_bool(cut));
	r = xg_json_set(r, "timeout", jv_number(timeout_s));
	if (cut && full_path)
		r = xg_json_set(r, "full_output_path", jv_string(full_path));
out:
	if (o.file >= 0) {
		close(o.file);
		/* Kept only when the model was shown part of it. */
		if (!jv_is_valid(xg_json_get_peek(r, "full_output_path")))
			unlink(full_path);
	}
	free(full_path);
	xg_buf_release(&o.tail);
	xg_buf_release(&text);
	return r;
}

/* ---- ask_user ---- */

static void ask_sink(void *data, const char *p, size_t n)
{
	struct xg_buf *b = data;
	size_t room = XG_TOOL_ASK_MAX_ANSWER + 1 - b->len;

	/* One byte past the ceiling says the answer was longer. */
	xg_buf_add(b, p, n < room ? n : room);
}

static const char no_person[] =
	"Nobody is available to answer questions during this run. Proceed on "
	"your best judgement, and state in your reply what you assumed.";

static jv ask_run(const struct xg_tool_ctx *ctx, jv args)
{
	const char *question = xg_json_string_peek(args, "question");
	struct xg_buf answer = XG_BUF_INIT(0);
	struct child c;
	int timeout_s = ctx->ask_timeout_s > 0 ? ctx->ask_timeout_s : XG_TOOL_ASK_TIMEOUT_S;
	int started;
	char **env;
	size_t n;
	jv r;

	if (!question || !*question)
		return xg_tool_fail("ask_user: 'question' must be a non-empty string");
	if (!ctx->ask_command || !*ctx->ask_command) {
		r = xg_tool_result(1, jv_string(no_person));
		return xg_json_set(r, "answered", jv_false());
	}
	if (aborted(ctx))
		return xg_tool_fail("ask_user: not asked: the run is being interrupted");
	memset(&c, 0, sizeof(c));
	c.sink = ask_sink;
	c.sink_data = &answer;
	c.in_data = question;
	c.in_len = strlen(question);
	env = child_env(ctx->env_drop);
	started = child_start(&c, ctx->ask_command, ctx->workspace, env, 1, 0);
	free(env);
	if (started < 0) {
		r = xg_tool_fail("ask_user: cannot start the ask command: %s. %s",
				 strerror(errno), no_person);
		return xg_json_set(r, "answered", jv_false());
	}
	child_wait(ctx, &c, (int64_t)timeout_s * 1000);

	n = answer.len;
	while (n > 0 && isspace((unsigned char)answer.buf[n - 1]))
		n--;
	if (c.end == END_TIMEOUT || c.end == END_DEADLINE) {
		r = xg_tool_fail("No answer came within %d s. %s", timeout_s, no_person);
	} else if (c.end == END_ABORT) {
		r = xg_tool_fail("ask_user: interrupted before an answer came");
	} else if (!WIFEXITED(c.status) || WEXITSTATUS(c.status)) {
		if (WIFEXITED(c.status))
			r = xg_tool_fail("The ask command failed (exit code %d) and gave no "
					 "answer. %s", WEXITSTATUS(c.status), no_person);
		else
			r = xg_tool_fail("The ask command was killed by signal %d and gave no "
					 "answer. %s", WTERMSIG(c.status), no_person);
	} else if (n == 0) {
		r = xg_tool_result(1, jv_string("The person gave no answer. Proceed on your "
						 "best judgement, and state in your reply "
						 "what you assumed."));
	} else {
		int cut = answer.len > XG_TOOL_ASK_MAX_ANSWER;
		if (cut)
			n = XG_TOOL_ASK_MAX_ANSWER;
		answer.len = n;
		if (cut)
			xg_buf_addf(&answer, "\n[the answer was cut at %d bytes]",
				    XG_TOOL_ASK_MAX_ANSWER);
		r = xg_tool_result(1, xg_json_string_bytes(answer.buf, answer.len));
		r = xg_json_set(r, "answered", jv_true());
		xg_buf_release(&answer);
		return r;
	}
	xg_buf_release(&answer);
	return xg_json_set(r, "answered", jv_false());
}

/* ---- todo_write ---- */

static const char *const todo_states[] = { "pending", "in_progress", "completed" };

/* The state's index in todo_states, or -1 when the item is not valid (then
 * *why says why). */
static int todo_item_state(jv it, const char **why)
{
	const char *content = xg_json_string_peek(it, "content");
	const char *status = xg_json_string_peek(it, "status");
	const char *s;
	int k;

	if (!content) {
		*why = "'content' must be a string";
		return -1;
	}
	for (s = content; isspace((unsigned char)*s); s++)
		;
	if (!*s) {
		*why = "'content' is empty";
		return -1;
	}
	for (k = 0; k < 3; k++)
		if (status && !strcmp(status, todo_states[k]))
			return k;
	*why = "'status' must be pending, in_progress or completed";
	return -1;
}

static jv todo_run(jv args)
{
	static const char marks[] = { ' ', '~', 'x' };
	jv items = xg_json_get_peek(args, "items");
	struct xg_buf text = XG_BUF_INIT(0);
	const char *why;
	jv list, r;
	int i, n, k, open = 0;

	if (jv_get_kind(items) != JV_KIND_ARRAY)
		return xg_tool_fail("todo_write: 'items' must be an array, found %s",
				    xg_json_kind_peek(items));
	n = xg_json_length_peek(items);
	if (n > XG_TOOL_TODO_MAX_ITEMS)
		return xg_tool_fail("todo_write: %d items; the list holds at most %d",
				    n, XG_TOOL_TODO_MAX_ITEMS);
	/* All or nothing: check every item before keeping any. */
	for (i = 0; i < n; i++) {
		jv it = jv_array_get(jv_copy(items), i);
		k = todo_item_state(it, &why);
		jv_free(it);
		if (k < 0)
			return xg_tool_fail("todo_write: items[%d]: %s", i, why);
	}
	list = jv_array();
	for (i = 0; i < n; i++) {
		jv it = jv_array_get(jv_copy(items), i);
		const char *content = xg_json_string_peek(it, "content");

		k = todo_item_state(it, &why);
		open += k != 2;
		xg_buf_addf(&text, "[%c] %s\n", marks[k], content);
		list = jv_array_append(list, xg_json_set(xg_json_set(jv_object(),
			"content", jv_string(content)), "status", jv_string(todo_states[k])));
		jv_free(it);
	}
	if (n == 0)
		xg_buf_addstr(&text, "The todo list is now empty.\n");
	else
		xg_buf_addf(&text, "%d of %d done.\n", n - open, n);
	xg_buf_setlen(&text, text.len - 1);
	r = xg_tool_result(1, xg_json_string_bytes(text.buf, text.len));
	xg_buf_release(&text);
	return xg_json_set(r, "items", list);
}

/* ---- dispatch ---- */

jv xg_tool_run(const struct xg_tool_ctx *ctx, const char *name, jv args)
{
	jv r;

	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		r = xg_tool_fail("%s: the arguments must be a JSON object, found %s",
				 name, xg_json_kind_peek(args));
	} else if (!strcmp(name, "bash")) {
		r = bash_run(ctx, args);
	} else if (!strcmp(name, "read")) {
		r = xg_tool_read(ctx, args);
	} else if (!strcmp(name, "write")) {
		r = xg_tool_write(ctx, args);
	} else if (!strcmp(name, "edit")) {
		r = xg_tool_edit(ctx, args);
	} else if (!strcmp(name, "todo_write")) {
		r = todo_run(args);
	} else if (!strcmp(name, "ask_user")) {
		r = ask_run(ctx, args);
	} else {
		struct xg_buf names = XG_BUF_INIT(0);
		size_t i;

		for (i = 0; i < NTOOLS; i++)
			xg_buf_addf(&names, "%s%s", i ? ", " : "", tools[i].name);
		r = xg_tool_fail("there is no tool '%s'; the tools are %s", name, names.buf);
		xg_buf_release(&names);
	}
	jv_free(args);
	return r;
}
