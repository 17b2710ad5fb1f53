/*
 * A driver for the renderer of xg on a terminal (lib/render.c): records on
 * standard input, the text a person would see on standard output.
 */
#include "xg.h"
#include "xg-test.h"
#include "dispatch/dispatch.h"

static const char *const usage[] = {
	"xg-test-render [--color]",
	NULL
};

enum { OPT_COLOR = 1 };

static const struct xg_option options[] = {
	{ OPT_COLOR, 0, "color", NULL, "use bold and dim" },
	{ 0 }
};

static const struct xg_command cmd = {
	"xg-test-render", "Render records for a person.", usage, options
};

int cmd__render(int argc, char **argv)
{
	struct xg_opts o;
	const char *arg;
	int id, color = 0, rc;

	xg_prog_init("xg-test-render");
	xg_opt_init(&o, &cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1)
		if (id == OPT_COLOR)
			color = 1;
	xg_opt_release(&o);
	rc = xg_render_stream(0, "standard input", stdout, color, NULL) < 0 ? XG_EX_IOERR : 0;
	return xg_prog_exit(rc);
}
