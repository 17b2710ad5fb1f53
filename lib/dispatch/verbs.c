/*
 * xg's own verbs (dispatch.h): run, plan and resume read their command line
 * into a run (the operand, the text piped besides it, which conversation to
 * resume, or the list of this directory's); help prints xg's usage, a
 * verb's, or runs "xg-COMMAND --help"; version; commands.
 */
#include "xg.h"
#include "dispatch/dispatch.h"
#include "choices/choices.h"
#include "conversation.h"
#include "exec.h"

/* How many conversations "xg resume" alone lists. */
#define LIST_MAX 10
#define USAGE_MAX 8

/* A verb's own usage: xg's usage lines that start with it, and xg's
 * options for the verbs that run an agent. */
struct verb_cmd {
	struct xg_command cmd;
	const char *usage[USAGE_MAX];
};

static const struct xg_option no_options[] = { { 0 } };

enum { SAY_OPT_CONVERSATION = 1, SAY_OPT_RUN };
static const struct xg_option say_options[] = {
	{ SAY_OPT_CONVERSATION, 0, "conversation", "id", "the run that holds this conversation" },
	{ SAY_OPT_RUN, 0, "run", "id", "this run, while it holds its conversation" },
	{ 0 }
};

const struct xg_dispatch_verb *xg_dispatch_verb_find(const struct xg_dispatch_verb *verbs,
						     const char *name)
{
	for (; verbs->name; verbs++)
		if (!strcmp(verbs->name, name))
			return verbs;
	return NULL;
}

static void verb_command(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			 struct verb_cmd *vc)
{
	size_t len = strlen(v->name), n = 0, pre = strlen(cli->cmd->name) + 1;
	int i;

	for (i = 0; cli->cmd->usage[i] && n + 1 < USAGE_MAX; i++) {
		const char *u = cli->cmd->usage[i];

		if (strlen(u) > pre && !strncmp(u + pre, v->name, len) &&
		    (u[pre + len] == ' ' || !u[pre + len]))
			vc->usage[n++] = u;
	}
	vc->usage[n] = NULL;
	vc->cmd.name = cli->cmd->name;
	vc->cmd.summary = v->summary;
	vc->cmd.usage = vc->usage;
	vc->cmd.options = v->run == xg_dispatch_run_verb ? cli->cmd->options :
			  v->run == xg_dispatch_say_verb ? say_options : no_options;
}

/* Parses a verb that takes no options and at most one operand, what it
 * is (NULL: none). */
static void parse_plain(const struct xg_command *cmd, const char *verb, int argc, char **argv,
			const char *what, struct xg_opts *o)
{
	const char *arg;

	xg_opt_init(o, cmd, argc, argv);
	while (xg_opt_next(o, &arg) != -1)
		;
	if (what && o->nargs > 1)
		xg_usage_error(cmd, "'%s' takes one %s at most", verb, what);
	if (!what && o->nargs > 0)
		xg_usage_error(cmd, "'%s' takes no operand", verb);
}

/* The names of the verbs, NULL-terminated, into names (USAGE_MAX * 2). */
static void verb_names(const struct xg_dispatch_cli *cli, const char **names)
{
	const struct xg_dispatch_verb *of;
	size_t n = 0;

	for (of = cli->verbs; of->name && n + 1 < USAGE_MAX * 2; of++)
		names[n++] = of->name;
	names[n] = NULL;
}

/* What "xg commands" lists, each line indented, on fp. */
static void list_indented(FILE *fp, const char *const *verbs)
{
	char *list = NULL, *line, *next;
	size_t len = 0;
	FILE *m = open_memstream(&list, &len);

	if (!m)
		xg_die_errno(XG_EX_SOFTWARE, "cannot list the commands");
	xg_exec_list(m, verbs);
	if (fclose(m) == EOF)
		xg_die_errno(XG_EX_SOFTWARE, "cannot list the commands");
	for (line = list; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		fprintf(fp, "  %.*s", (int)(next - line), line);
	}
	free(list);
}

int xg_dispatch_help(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
		     int argc, char **argv)
{
	const struct xg_dispatch_verb *of;
	struct verb_cmd vc;
	struct xg_opts o;
	char *path, *args[3];

	verb_command(cli, v, &vc);
	parse_plain(&vc.cmd, v->name, argc, argv, "command", &o);
	if (!o.nargs) {
		const char *verbs[USAGE_MAX * 2];

		verb_names(cli, verbs);
		xg_opt_help(cli->cmd, stdout);
		printf("\nThe commands ('%s help COMMAND' tells of one):\n", cli->cmd->name);
		list_indented(stdout, verbs);
		xg_opt_release(&o);
		return 0;
	}
	if ((of = xg_dispatch_verb_find(cli->verbs, o.args[0]))) {
		verb_command(cli, of, &vc);
		xg_opt_help(&vc.cmd, stdout);
		xg_opt_release(&o);
		return 0;
	}
	if (!(path = xg_exec_find(o.args[0])))
		xg_usage_error(cli->cmd, "'%s' is not an xg command; 'xg commands' lists them",
			       o.args[0]);
	args[0] = path;
	args[1] = "--help";
	args[2] = NULL;
	fflush(stdout);
	xg_exec(path, args);
	xg_die_errno(XG_EX_SOFTWARE, "cannot run '%s'", path);
}

int xg_dispatch_version(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			int argc, char **argv)
{
	struct verb_cmd vc;
	struct xg_opts o;

	verb_command(cli, v, &vc);
	parse_plain(&vc.cmd, v->name, argc, argv, NULL, &o);
	xg_opt_release(&o);
	xg_print_version(cli->cmd);
	return 0;
}

int xg_dispatch_commands(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			 int argc, char **argv)
{
	const char *verbs[USAGE_MAX * 2];
	struct verb_cmd vc;
	struct xg_opts o;

	verb_command(cli, v, &vc);
	parse_plain(&vc.cmd, v->name, argc, argv, NULL, &o);
	xg_opt_release(&o);
	verb_names(cli, verbs);
	xg_exec_list(stdout, verbs);
	return 0;
}

/* "xg resume" alone: this directory's conversations, or a word that there
 * are none. */
static int list_here(void)
{
	char *here;

	if (xg_dispatch_list_here(stdout, LIST_MAX))
		return 0;
	here = getcwd(NULL, 0);
	xg_warn("no conversation was started in '%s'; 'xg run TEXT' starts one",
		here ? here : ".");
	free(here);
	return 0;
}

/* The words args[0..n) joined by spaces, as echo joins them (the caller
 * frees it). */
static char *join_words(char **args, size_t n)
{
	struct xg_buf b = XG_BUF_INIT(0);
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			xg_buf_addch(&b, ' ');
		xg_buf_addstr(&b, args[i]);
	}
	return xg_buf_detach(&b, NULL);
}

/* Which conversation "xg resume" goes on with, and its text, from the
 * operands: [ID] WORD...; ID a conversation's or a run's (*conv, the
 * caller frees it, holds the conversation's).  The text is the caller's
 * to free. */
static char *resume_operands(const struct xg_command *cmd, struct xg_opts *o,
			     struct xg_dispatch_run *r, char **conv)
{
	const char *last = o->args[o->nargs - 1];
	size_t first = 0;

	if (o->nargs >= 2 && !r->conversation && xg_dispatch_is_conversation_id(o->args[0])) {
		r->conversation = o->args[0];
		first = 1;
	} else if (o->nargs == 1 && strcmp(last, "-") && xg_dispatch_is_conversation_id(last)) {
		xg_usage_error(cmd, "'%s' is a conversation or run id, not a text to send: give "
			       "the text after it ('xg resume %s TEXT')", last, last);
	}
	if (r->conversation) {
		*conv = xg_dispatch_conversation_of(r->conversation, 1);
		r->conversation = *conv;
	} else if ((*conv = xg_dispatch_newest_here())) {
		r->conversation = *conv;
	} else {
		char *here = getcwd(NULL, 0);

		xg_die(XG_EX_DATAERR, "there is no conversation to resume in '%s'; 'xg run "
		       "TEXT' starts one", here ? here : ".");
	}
	return join_words(o->args + first, o->nargs - first);
}

/* Checks what the options asked for together, and that the reply file can
 * be made, before anything runs. */
static void check_run(const struct xg_command *cmd, const struct xg_dispatch_run *r)
{
	/* xg's usage, not xg-run's, for a value xg passes on. */
	if (r->sandbox && strcmp(r->sandbox, "on") && strcmp(r->sandbox, "net") &&
	    strcmp(r->sandbox, "off"))
		xg_usage_error(cmd, "--sandbox takes on, net or off, not '%s'", r->sandbox);
	if (r->account && !xg_account_name_valid(r->account))
		xg_usage_error(cmd, "'%s' " XG_ACCOUNT_NAME_BAD, r->account);
	if (r->dry_run && r->reply)
		xg_usage_error(cmd, "--reply is xg's own work, not part of the pipeline "
			       "--dry-run prints; leave one out");
	if (r->dry_run && ((r->gate && strchr(r->gate, '\n')) || (r->ask && strchr(r->ask, '\n'))))
		xg_usage_error(cmd, "--dry-run prints one line, and --%s holds a newline",
			       r->gate && strchr(r->gate, '\n') ? "gate" : "ask");
	if (r->reply && strcmp(r->reply, "-")) {
		const char *slash = strrchr(r->reply, '/');
		char *dir = slash ? xg_strndup(r->reply, (size_t)(slash - r->reply + 1))
				  : xg_strdup(".");
		struct stat st;

		if (!*r->reply || (slash && !slash[1]))
			xg_usage_error(cmd, "--reply needs a file name");
		if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
			errno = ENOTDIR;
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) < 0)
			xg_die_errno(XG_EX_IOERR, "cannot write the reply to '%s'", r->reply);
		free(dir);
	}
}

/* The request's text: the operand, or standard input for "-"; with what
 * was piped besides an operand in a block after it. */
static char *request_text(const struct xg_command *cmd, const char *operand,
			  struct xg_dispatch_run *r)
{
	char *text, *piped;
	int cut;

	if (!strcmp(operand, "-")) {
		text = xg_dispatch_read_text(0);
		if (!*text)
			xg_usage_error(cmd, "the text is empty");
		return text;
	}
	if (!*operand)
		xg_usage_error(cmd, "the text is empty");
	if (!(piped = xg_dispatch_read_piped(0, &cut)))
		return xg_strdup(operand);
	if (cut)
		r->notice = "standard input is longer than 1 MiB: only its first 1048576 bytes "
			    "are sent with the request";
	text = xg_dispatch_with_piped(operand, piped, cut);
	free(piped);
	return text;
}

int xg_dispatch_run_verb(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			 int argc, char **argv)
{
	struct xg_dispatch_run r = { 0 };
	struct verb_cmd vc;
	struct xg_opts o;
	const char *arg;
	char *text, *newest = NULL, *why, *operand;
	int id, rc, resume = !strcmp(v->name, "resume");

	verb_command(cli, v, &vc);
	r.mode = strcmp(v->name, "plan") ? "normal" : "plan";
	xg_opt_init(&o, &vc.cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1) {
		switch (id) {
		case XG_DISPATCH_OPT_ACCOUNT: r.account = arg; break;
		case XG_DISPATCH_OPT_ASK: r.ask = arg; break;
		case XG_DISPATCH_OPT_CONVERSATION: r.conversation = arg; break;
		case XG_DISPATCH_OPT_DRY_RUN: r.dry_run = 1; break;
		case XG_DISPATCH_OPT_EFFORT: r.effort = arg; break;
		case XG_DISPATCH_OPT_GATE: r.gate = arg; break;
		case XG_DISPATCH_OPT_JSON: r.json = 1; break;
		case XG_DISPATCH_OPT_QUIET: r.quiet = 1; break;
		case XG_DISPATCH_OPT_MODEL: r.model = arg; break;
		case XG_DISPATCH_OPT_REPLY: r.reply = arg; break;
		case XG_DISPATCH_OPT_VARIANT: r.variant = arg; break;
		case XG_DISPATCH_OPT_SANDBOX: r.sandbox = arg ? arg : "on"; break;
		}
	}
	/* A tree that cannot be where XG_HOME (or the XDG variables) put it
	 * fails every stage: said once, naming the variable. */
	if (!r.dry_run && xg_path_check(&why) < 0)
		xg_die(XG_EX_CONFIG, "%s", why);
	if (resume && !o.nargs && !r.conversation) {
		xg_opt_release(&o);
		return list_here();
	}
	if (!o.nargs)
		xg_usage_error(&vc.cmd, "'%s' needs a text to send", v->name);
	if (!resume && r.conversation && !xg_conv_id_valid(r.conversation))
		xg_usage_error(&vc.cmd, "'%s' " XG_CONV_ID_BAD, r.conversation);
	check_run(&vc.cmd, &r);
	/* A run's id names its conversation; an id of neither starts one. */
	if (!resume && r.conversation &&
	    (newest = xg_dispatch_conversation_of(r.conversation, 0)))
		r.conversation = newest;
	operand = resume ? resume_operands(&vc.cmd, &o, &r, &newest)
			 : join_words(o.args, (size_t)o.nargs);
	text = request_text(&vc.cmd, operand, &r);
	free(operand);
	r.text = text;
	rc = xg_dispatch_run(&r);
	free(text);
	free(newest);
	xg_opt_release(&o);
	return rc;
}

int xg_dispatch_compact_verb(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			     int argc, char **argv)
{
	struct verb_cmd vc;
	struct xg_opts o;

	verb_command(cli, v, &vc);
	parse_plain(&vc.cmd, v->name, argc, argv, "conversation", &o);
	xg_dispatch_compact(o.nargs ? o.args[0] : NULL);
}

/* "xg say": the text is the operand, or standard input without one (or
 * for "-"), which is then not a terminal. */
int xg_dispatch_say_verb(const struct xg_dispatch_cli *cli, const struct xg_dispatch_verb *v,
			 int argc, char **argv)
{
	const char *arg, *conversation = NULL, *run = NULL;
	struct verb_cmd vc;
	struct xg_opts o;
	char *text;
	int id, rc;

	verb_command(cli, v, &vc);
	xg_opt_init(&o, &vc.cmd, argc, argv);
	while ((id = xg_opt_next(&o, &arg)) != -1)
		*(id == SAY_OPT_RUN ? &run : &conversation) = arg;
	if (conversation && run)
		xg_usage_error(&vc.cmd, "name the conversation or the run, not both");
	if (o.nargs > 1)
		xg_usage_error(&vc.cmd, "'say' takes one text (quote it)");
	if ((conversation && !xg_conv_id_valid(conversation)) || (run && !xg_conv_id_valid(run)))
		xg_usage_error(&vc.cmd, "'%s' " XG_CONV_ID_BAD, conversation ? conversation : run);
	if (o.nargs && strcmp(o.args[0], "-")) {
		text = xg_strdup(o.args[0]);
	} else {
		if (isatty(0))
			xg_usage_error(&vc.cmd, "'say' needs a text, or one on standard input");
		text = xg_dispatch_read_text(0);
	}
	if (!*text) {
		free(text);
		xg_opt_release(&o);
		xg_usage_error(&vc.cmd, "the text is empty");
	}
	rc = xg_dispatch_say(conversation, run, text);
	free(text);
	xg_opt_release(&o);
	return rc;
}
