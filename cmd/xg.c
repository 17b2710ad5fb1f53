/*
 * xg: the dispatcher.  "xg FOO ARGS" runs "xg-FOO ARGS", as git runs its
 * commands; "xg commands" lists what can be run.
 */
#include "xg.h"
#include "dispatch.h"

static const char *const usage[] = {
	"xg command [argument ...]",
	"xg commands",
	NULL
};

static const struct xg_option options[] = {
	{ 0 }
};

static const struct xg_command cmd = {
	"xg", "Run the xg program named by command (xg-command) with the arguments.",
	usage, options
};

int main(int argc, char **argv)
{
	const char *name;
	char *path;

	xg_prog_init("xg");
	if (argc < 2)
		xg_usage_error(&cmd, "a command is needed; 'xg commands' lists them");
	name = argv[1];
	if (name[0] == '-') {
		/* Options of xg itself come before the command. */
		struct xg_opts o;
		const char *arg;

		xg_opt_init(&o, &cmd, 2, argv);
		while (xg_opt_next(&o, &arg) != -1)
			;
		xg_opt_release(&o);
		return xg_prog_exit(0);
	}
	if (!strcmp(name, "commands")) {
		xg_dispatch_list(stdout);
		return xg_prog_exit(0);
	}
	path = xg_dispatch_find(name);
	if (!path)
		xg_usage_error(&cmd, "'%s' is not an xg command; 'xg commands' lists them", name);
	argv[1] = path;
	xg_dispatch_exec(path, argv + 1);
	xg_die_errno(XG_EX_SOFTWARE, "cannot run '%s'", path);
}
