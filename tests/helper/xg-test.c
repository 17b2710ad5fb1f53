/*
 * xg-test: the one test driver, after git's t/helper/test-tool.c.  The
 * first operand names a sub-command, and the rest go to it:
 *
 *   xg-test lib cat --rewrite <in
 *   xg-test provider openai-chat http://127.0.0.1:8080/v1 <request.json
 *
 * Each sub-command is a file of tests/helper/ whose cmd__NAME is what was
 * the main of a driver program of its own, xg-test-NAME.  It still names
 * itself so in its messages, its usage and --version ("xg-test-lib: ..."),
 * so that what the tests hold those to is what it was.
 *
 * provider-abort.c defines poll, ppoll, nanosleep and clock_nanosleep for
 * the whole program; unless that sub-command has armed them, they pass each
 * call straight on to the C library's.
 */
#include "xg.h"
#include "xg-test.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "lib", cmd__lib },
	{ "plan", cmd__plan },
	{ "prompt", cmd__prompt },
	{ "provider", cmd__provider },
	{ "provider-abort", cmd__provider_abort },
	{ "render", cmd__render },
	{ "run", cmd__run },
	{ "snapshot", cmd__snapshot },
	{ "sse", cmd__sse },
	{ "tools", cmd__tools },
};

static void print_usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: xg-test <sub-command> [<argument>...]\n\nThe sub-commands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(fp, "   %s\n", cmds[i].name);
}

int main(int argc, char **argv)
{
	size_t i;

	xg_prog_init("xg-test");
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		print_usage(stdout);
		return xg_prog_exit(0);
	}
	for (i = 0; argc >= 2 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	if (argc < 2)
		xg_error("a sub-command is needed");
	else
		xg_error("unknown sub-command '%s'", argv[1]);
	print_usage(stderr);
	return XG_EX_USAGE;
}
