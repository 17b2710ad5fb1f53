/*
 * "xg goal VERB ..." (xg(1)): xg-goal with its records shown for a person
 * on a terminal, or in a pipe the last round's reply with plain lines on
 * standard error, or, with --json, xg-goal itself in xg's place, writing
 * its records.  A ^C from the terminal reaches xg-goal and
 * its round (the process group has it); xg waits for the goal's last
 * records, as for a run.
 */
#include "xg.h"
#include "dispatch/dispatch.h"
#include "exec.h"
#include "pipeline.h"

int xg_dispatch_goal_verb(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			  int argc, char **argv)
{
	struct xg_pipeline p;
	char *path = xg_exec_find("goal"), *why;
	const char *term = getenv("TERM");
	struct xg_render_out how = { 0 };
	int json = argc > 1 && !strcmp(argv[1], "--json"), rc;

	if (!path)
		xg_usage_error(cli->cmd, "'goal' needs xg-goal, which is not installed");
	if (xg_path_check(&why) < 0)
		xg_die(XG_EX_CONFIG, "%s", why);
	argv[0] = (char *)"xg-goal";
	if (json) {
		/* --json goes on: xg-goal's views (get) heed it too. */
		xg_exec(path, argv);
		xg_die_errno(XG_EX_SOFTWARE, "cannot run '%s'", path);
	}
	xg_pipeline_init(&p);
	xg_pipeline_add(&p, path, (const char *const *)argv);
	fflush(stdout);
	setenv("XG_RENDERED", "1", 1);
	rc = xg_pipeline_start(&p, "", 0, XG_PIPELINE_CAPTURE);
	unsetenv("XG_RENDERED");
	if (rc < 0) {
		rc = XG_EX_SOFTWARE;
	} else {
		how.mode = isatty(1) ? XG_RENDER_TERMINAL : XG_RENDER_PLAIN;
		how.name = "xg-goal's output";
		how.sent_fd = -1;
		how.color = !getenv("NO_COLOR") && !(term && !strcmp(term, "dumb"));
		xg_render_output(p.out_fd, &how, NULL);
		close(p.out_fd);
		p.out_fd = -1;
		rc = xg_pipeline_wait(&p);
	}
	xg_pipeline_release(&p);
	free(path);
	return rc;
}
