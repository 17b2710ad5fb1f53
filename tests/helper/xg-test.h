#ifndef XG_TEST_H
#define XG_TEST_H
/*
 * The sub-commands of tests/bin/xg-test, one a file of tests/helper/ (git's
 * t/helper/test-tool.h).  Each is called as main would be, with argv[0] its
 * own name: "xg-test lib cat" runs cmd__lib with argv { "lib", "cat" }.
 */
#include "json.h"

int cmd__lib(int argc, char **argv);
int cmd__plan(int argc, char **argv);
int cmd__prompt(int argc, char **argv);
int cmd__provider(int argc, char **argv);
int cmd__provider_abort(int argc, char **argv);
int cmd__render(int argc, char **argv);
int cmd__run(int argc, char **argv);
int cmd__snapshot(int argc, char **argv);
int cmd__sse(int argc, char **argv);
int cmd__tools(int argc, char **argv);

/* What the provider sub-commands share (provider.c): the request object
 * read whole from standard input (exit 65 when it is not one), and the
 * provider config {"kind", "base_url"} for the two operands. */
jv xg_test_read_request(void);
jv xg_test_provider_config(const char *kind, const char *base_url);

#endif
