/*
 * A driver that exposes libxg's core to the tests: each verb calls one
 * library function the way a program would.
 */
#include "xg.h"
#include "xg-test.h"
#include "conversation.h"
#include "thread.h"
#include "choices/choices.h"

static const char *const usage[] = {
	"xg-test-lib cat [--rewrite]",
	"xg-test-lib write-atomic path",
	"xg-test-lib append path",
	"xg-test-lib hold-lock path seconds",
	"xg-test-lib buf max bytes",
	"xg-test-lib path config|data|state|share [rel]",
	"xg-test-lib opts [args]",
	"xg-test-lib die code",
	"xg-test-lib choices-set mode model",
	"xg-test-lib conv-append id",
	"xg-test-lib conv-scan id",
	"xg-test-lib conv-last id type",
	"xg-test-lib conv-last-model id",
	"xg-test-lib conv-new-id",
	"xg-test-lib json-dump",
	"xg-test-lib filter type|-",
	"xg-test-lib verb [verb [operand ...]]",
	"xg-test-lib redact secret... <in",
	"xg-test-lib threads n",
	NULL
};

enum { OPT_REWRITE = 1, OPT_QUIET, OPT_LIMIT, OPT_SIZE };

static const struct xg_option options[] = {
	{ OPT_REWRITE, 0, "rewrite", NULL, "write records through the writer, not raw" },
	{ OPT_QUIET, 'q', "quiet", NULL, "a flag" },
	{ OPT_LIMIT, 'n', "limit", "n", "an option with a value" },
	{ OPT_SIZE, 0, "size", "bytes", "a size" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-test-lib", "Exercise libxg's core for the tests.", usage, options
};

/* Says on stderr what xg_rec_filter gave it; a record with "stop" stops
 * the reading with that code. */
static int on_filtered(const struct xg_rec *rec, void *ctx)
{
	int *calls = ctx;
	long long stop = 0;

	(*calls)++;
	if (!rec) {
		fprintf(stderr, "end\n");
		return 0;
	}
	fprintf(stderr, "%s %zu\n", rec->type ? rec->type : "(none)", rec->lineno);
	xg_json_int_peek(rec->v, "stop", &stop);
	return (int)stop;
}

static int do_filter(const char *type)
{
	struct xg_rec_reader r;
	struct xg_rec_writer w;
	int calls = 0, rc;

	xg_rec_reader_init(&r, 0, "standard input");
	xg_rec_writer_init(&w, stdout);
	rc = xg_rec_filter(&r, &w, strcmp(type, "-") ? type : NULL, on_filtered, &calls);
	xg_rec_writer_release(&w);
	xg_rec_reader_release(&r);
	return rc;
}

static int verb_run(struct xg_opts *o, void *ctx)
{
	printf("%s with %d\n", o->args[0], o->nargs - 1);
	return 0;
}

static const struct xg_verb verbs[] = {
	{ "none", 0, 0, verb_run },
	{ "one", 1, 1, verb_run },
	{ "some", 1, -1, verb_run },
	{ "few", 0, 2, verb_run },
	{ 0 }
};

static int do_cat(int rewrite)
{
	struct xg_rec_reader r;
	struct xg_rec_writer w;
	struct xg_rec rec;
	int rc = 0;

	xg_rec_reader_init(&r, 0, "standard input");
	xg_rec_writer_init(&w, stdout);
	while (xg_rec_next_or_die(&r, &rec) > 0) {
		if (rewrite)
			rc = xg_rec_write(&w, jv_copy(rec.v));
		else
			rc = xg_rec_pass(&w, &rec);
		xg_rec_release(&rec);
		if (rc < 0)
			break;
	}
	xg_rec_writer_release(&w);
	xg_rec_reader_release(&r);
	return 0;
}

/*
 * Each line of standard input, parsed, written by xg_json_dump and by
 * libjq's jv_dump_string: prints "same N" when every line came out
 * alike, else the first line that did not, both ways.
 */
static int do_json_dump(void)
{
	char *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, stdin)) > 0) {
		struct xg_buf ours = XG_BUF_INIT(0);
		jv v = jv_parse_sized(line, (int)len), theirs;

		if (!jv_is_valid(v))
			xg_die(XG_EX_DATAERR, "line %zu is not JSON", n + 1);
		theirs = jv_dump_string(jv_copy(v), 0);
		if (xg_json_dump(&ours, v) < 0)
			xg_die(XG_EX_SOFTWARE, "xg_json_dump failed on line %zu", n + 1);
		n++;
		if (strcmp(ours.buf, jv_string_value(theirs))) {
			printf("line %zu differs\nours:   %s\nlibjq:  %s\n", n, ours.buf,
			       jv_string_value(theirs));
			return 1;
		}
		jv_free(theirs);
		xg_buf_release(&ours);
	}
	free(line);
	printf("same %zu\n", n);
	return 0;
}

static int print_entry(jv entry, void *ctx)
{
	struct xg_rec_writer *w = ctx;

	return xg_rec_write(w, jv_copy(entry)) < 0 ? -1 : 0;
}

static int do_conv(const char *verb, char **args, int nargs)
{
	struct xg_rec_writer w;
	int torn = 0, rc = 0;

	xg_rec_writer_init(&w, stdout);
	if (!strcmp(verb, "conv-append") && nargs == 1) {
		struct xg_rec_reader r;
		struct xg_rec rec;

		xg_rec_reader_init(&r, 0, "standard input");
		while (rc == 0 && xg_rec_next_or_die(&r, &rec) > 0) {
			int a = xg_conv_append(args[0], jv_copy(rec.v));
			rc = a < 0 ? xg_exit_for_errno(errno) : 0;
			xg_rec_release(&rec);
		}
		xg_rec_reader_release(&r);
	} else if (!strcmp(verb, "conv-scan") && nargs == 1) {
		if (xg_conv_scan_back(args[0], print_entry, &w, &torn) < 0)
			rc = XG_EX_IOERR;
	} else if (!strcmp(verb, "conv-last-model") && nargs == 1) {
		jv v = xg_conv_last_model(args[0], &torn);
		if (!jv_is_valid(v))
			rc = XG_EX_IOERR;
		else
			xg_rec_write(&w, v);
	} else if (!strcmp(verb, "conv-last") && nargs == 2) {
		jv v = xg_conv_last_of_type(args[0], args[1], &torn);
		if (!jv_is_valid(v))
			rc = XG_EX_IOERR;
		else
			xg_rec_write(&w, v);
	} else {
		xg_usage_error(&cmd, "wrong operands for '%s'", verb);
	}
	if (torn)
		xg_warn("the last line of conversation '%s' is torn; it was ignored", args[0]);
	xg_rec_writer_release(&w);
	return rc;
}

/* A thread that writes two pages of its stack and says where. */
static void *touch_stack(void *arg)
{
	volatile char pages[8192];

	pages[0] = pages[sizeof(pages) - 1] = 1;
	*(uintptr_t *)arg = (uintptr_t)&pages[0];
	return NULL;
}

/* Whether addr lies in a mapping of this process. */
static int mapped(uintptr_t addr)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];
	int in = 0;

	if (!fp)
		xg_die_errno(XG_EX_IOERR, "cannot open /proc/self/maps");
	while (!in && fgets(line, sizeof(line), fp))
		in = sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi;
	fclose(fp);
	return in;
}

/* n threads started with xg_thread_start and joined: how many of their
 * stacks are still mapped after. */
static int do_threads(int n)
{
	struct xg_thread t[16];
	uintptr_t at[16];
	int i, left = 0;

	if (n < 1 || n > 16)
		xg_die(XG_EX_USAGE, "threads: n is 1 to 16");
	for (i = 0; i < n; i++)
		if (xg_thread_start(&t[i], touch_stack, &at[i]) < 0)
			xg_die_errno(XG_EX_SOFTWARE, "cannot start a thread");
	for (i = 0; i < n; i++)
		xg_thread_join(&t[i]);
	for (i = 0; i < n; i++)
		left += mapped(at[i]);
	printf("%d threads, %d stacks left\n", n, left);
	return 0;
}

static struct xg_buf read_stdin(void)
{
	struct xg_buf b = XG_BUF_INIT(0);

	if (xg_read_fd(0, &b) < 0)
		xg_die_errno(XG_EX_IOERR, "cannot read standard input");
	return b;
}

int cmd__lib(int argc, char **argv)
{
	struct xg_opts o;
	const char *arg, *verb;
	int id, rewrite = 0, rc = 0;

	xg_prog_init("xg-test-lib");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case OPT_REWRITE:
			rewrite = 1;
			break;
		case OPT_QUIET:
			printf("quiet\n");
			break;
		case OPT_LIMIT:
			printf("limit=%llu\n", xg_opt_number(&cmd, "--limit", arg, 0));
			break;
		case OPT_SIZE:
			printf("size=%llu\n", xg_opt_number(&cmd, "--size", arg, 1));
			break;
		}
	}
	if (o.nargs < 1)
		xg_usage_error(&cmd, "a verb is needed");
	verb = o.args[0];
	if (!strcmp(verb, "cat")) {
		rc = do_cat(rewrite);
	} else if (!strcmp(verb, "choices-set") && o.nargs == 3) {
		/* The store under contention, any mode name: xg-choices
		 * itself takes only normal and plan. */
		rc = xg_choices_set("default", o.args[1], o.args[2], NULL);
	} else if (!strcmp(verb, "write-atomic") && o.nargs == 2) {
		struct xg_buf b = read_stdin();
		rc = xg_write_atomic(o.args[1], b.buf, b.len, 0644) < 0 ? XG_EX_IOERR : 0;
		xg_buf_release(&b);
	} else if (!strcmp(verb, "append") && o.nargs == 2) {
		struct xg_buf b = read_stdin();
		int r = xg_append_locked(o.args[1], b.buf, b.len, xg_lock_timeout_ms());
		rc = r < 0 ? xg_exit_for_errno(errno) : 0;
		xg_buf_release(&b);
	} else if (!strcmp(verb, "hold-lock") && o.nargs == 3) {
		int fd = xg_lock_file(o.args[1], O_WRONLY | O_CREAT, 0);
		if (fd < 0)
			return XG_EX_TEMPFAIL;
		printf("locked\n");
		fflush(stdout);
		sleep((unsigned)atoi(o.args[2]));
		close(fd);
	} else if (!strcmp(verb, "buf") && o.nargs == 3) {
		struct xg_buf b = XG_BUF_INIT(strtoul(o.args[1], NULL, 10));
		unsigned long i, n = strtoul(o.args[2], NULL, 10);
		for (i = 0; i < n; i++)
			if (xg_buf_addch(&b, 'x') < 0) {
				printf("refused at %lu, len %zu\n", i, b.len);
				break;
			}
		if (i == n)
			printf("len %zu\n", b.len);
		xg_buf_release(&b);
	} else if (!strcmp(verb, "path") && o.nargs >= 2) {
		const char *rel = o.nargs > 2 ? o.args[2] : NULL;
		char *p = !strcmp(o.args[1], "config") ? xg_path_config(rel) :
			  !strcmp(o.args[1], "data") ? xg_path_data(rel) :
			  !strcmp(o.args[1], "state") ? xg_path_state(rel) : xg_path_share(rel);
		printf("%s\n", p);
		free(p);
	} else if (!strcmp(verb, "opts")) {
		int i;
		for (i = 1; i < o.nargs; i++)
			printf("arg=%s\n", o.args[i]);
	} else if (!strncmp(verb, "conv-", 5) && strcmp(verb, "conv-new-id")) {
		rc = do_conv(verb, o.args + 1, o.nargs - 1);
	} else if (!strcmp(verb, "filter") && o.nargs == 2) {
		rc = do_filter(o.args[1]);
	} else if (!strcmp(verb, "verb")) {
		o.args++;
		o.nargs--;
		rc = xg_opt_verb(&o, verbs)->run(&o, NULL);
		o.args--;
	} else if (!strcmp(verb, "json-dump")) {
		rc = do_json_dump();
	} else if (!strcmp(verb, "conv-new-id")) {
		char *cid = xg_conv_new_id();
		printf("%s\n", cid);
		free(cid);
	} else if (!strcmp(verb, "threads") && o.nargs == 2) {
		rc = do_threads(atoi(o.args[1]));
	} else if (!strcmp(verb, "redact") && o.nargs >= 2) {
		struct xg_buf b = XG_BUF_INIT(0);
		int i;

		for (i = 1; i < o.nargs; i++)
			xg_redact_add(o.args[i]);
		if (xg_read_fd(0, &b) < 0)
			xg_die_errno(XG_EX_IOERR, "cannot read standard input");
		xg_redact_buf(&b);
		fwrite(b.buf, 1, b.len, stdout);
		xg_buf_release(&b);
		xg_redact_clear();
	} else if (!strcmp(verb, "die") && o.nargs == 2) {
		errno = ENOENT;
		xg_die_errno(atoi(o.args[1]), "cannot open '%s'", "nowhere");
	} else {
		xg_usage_error(&cmd, "unknown verb or wrong operands: '%s'", verb);
	}
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
