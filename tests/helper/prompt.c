/*
 * A driver for the prompt library's pieces the command does not expose
 * alone: the SHA-256, template rendering and data escaping.
 */
#include "xg.h"
#include "xg-test.h"
#include "prompt/prompt.h"
#include "sha256.h"

static const char *const usage[] = {
	"xg-test-prompt sha256 [--portable] [repeat]",
	"xg-test-prompt render template vars-json",
	"xg-test-prompt escape text",
	NULL
};

static const struct xg_option options[] = {
	{ 'p', 0, "portable", NULL, "hash without the SHA extensions" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-test-prompt", "Exercise the prompt library for the tests.", usage, options
};

/* The digest of standard input, fed repeat times in odd-sized pieces so
 * block boundaries are crossed in every way. */
static int sha256(int portable, unsigned long long repeat)
{
	struct xg_buf in = XG_BUF_INIT(0);
	struct xg_sha256 c;
	unsigned char d[XG_SHA256_LEN];
	char hex[65];
	unsigned long long r;

	if (xg_read_fd(0, &in) < 0)
		xg_die_errno(XG_EX_IOERR, "cannot read standard input");
	if (portable)
		xg_sha256_init_portable(&c);
	else
		xg_sha256_init(&c);
	for (r = 0; r < repeat; r++) {
		size_t off = 0, step = 1;

		while (off < in.len) {
			size_t take = in.len - off < step ? in.len - off : step;

			xg_sha256_update(&c, in.buf + off, take);
			off += take;
			step = step * 3 % 97 + 1;
		}
	}
	xg_sha256_final(&c, d);
	xg_sha256_hex(d, hex);
	printf("%s\n", hex);
	xg_buf_release(&in);
	return 0;
}

int cmd__prompt(int argc, char **argv)
{
	struct xg_opts o;
	const char *arg;
	char *s;
	int rc = 0, portable = 0, id;

	xg_prog_init("xg-test-prompt");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1)
		portable |= id == 'p';
	if (o.nargs >= 1 && !strcmp(o.args[0], "sha256")) {
		rc = sha256(portable, o.nargs > 1 ? xg_opt_number(&cmd, "repeat", o.args[1], 0) : 1);
	} else if (o.nargs == 3 && !strcmp(o.args[0], "render")) {
		jv vars = jv_parse(o.args[2]);

		s = xg_prompt_render_peek(o.args[1], strlen(o.args[1]), vars);
		printf("%s\n", s);
		free(s);
		jv_free(vars);
	} else if (o.nargs == 2 && !strcmp(o.args[0], "escape")) {
		s = xg_prompt_escape_data(o.args[1]);
		printf("%s\n", s);
		free(s);
	} else {
		xg_usage_error(&cmd, "unknown test");
	}
	xg_opt_release(&o);
	return xg_prog_exit(rc);
}
