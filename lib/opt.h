#ifndef XG_OPT_H
#define XG_OPT_H
/*
 * Option parsing from one table per program.  The same table prints --help,
 * whose usage lines are the man page's SYNOPSIS (a test compares them).
 *
 *   static const char *const usage[] = { "xg-foo [-q] [file]", NULL };
 *   static const struct xg_option options[] = {
 *           { 'q', 'q', "quiet", NULL, "write nothing" },
 *           { OPT_LIMIT, 0, "limit", "n", "stop after n records" },
 *           { 0 }
 *   };
 *   static const struct xg_command cmd = { "xg-foo", "Do foo.", usage, options };
 *
 *   xg_opt_init(&o, &cmd, argc, argv);
 *   while ((id = xg_opt_next(&o, &arg)) != -1)
 *           switch (id) { ... }
 *   then o.args[0 .. o.nargs-1] are the operands.
 *
 * Long options take "--name value" or "--name=value", short ones "-n value"
 * or "-nvalue", flags cluster ("-qv"), "--" ends the options and "-" is an
 * operand.  Options may follow operands (xg-snapshot replay C D --base R).
 * An argname that starts with '[' ("[=mode]") makes the value optional:
 * it comes only as "--name=value", and a bare "--name" gives NULL.
 * -h/--help and --version are handled here: they print and exit 0.  Anything
 * else unknown is exit 2 with the usage.
 */
struct xg_option {
	int id;			/* what xg_opt_next returns; nonzero */
	char short_name;	/* 0 when there is none */
	const char *long_name;	/* NULL when there is none */
	const char *argname;	/* NULL for a flag; "[=x]" for an optional value */
	const char *help;
};

struct xg_command {
	const char *name;
	const char *summary;
	const char *const *usage;	/* SYNOPSIS lines, NULL-terminated */
	const struct xg_option *options;	/* ends with an all-zero entry */
};

struct xg_opts {
	const struct xg_command *cmd;
	int argc;
	char **argv;
	int i;
	const char *cluster;	/* the rest of a group of short flags */
	int only_operands;	/* after "--" */
	char **args;		/* the operands, in order */
	int nargs;
};

void xg_opt_init(struct xg_opts *o, const struct xg_command *cmd, int argc, char **argv);
/* The next option's id, with *arg its value (NULL for a flag); -1 at the
 * end, when o->args holds the operands. */
int xg_opt_next(struct xg_opts *o, const char **arg);
void xg_opt_release(struct xg_opts *o);

void xg_opt_help(const struct xg_command *cmd, FILE *fp);
/* Prints "PROG: message" and the usage lines on stderr; exits 2. */
__attribute__((noreturn, format(printf, 2, 3)))
void xg_usage_error(const struct xg_command *cmd, const char *fmt, ...);
void xg_print_version(const struct xg_command *cmd);

/*
 * Verbs (git's OPT_SUBCOMMAND, tmux's cmd_entry): a program whose first
 * operand names what it does declares its verbs as a table, ending with an
 * all-zero entry, and dispatches in one line:
 *
 *   static const struct xg_verb verbs[] = {
 *           { "models", 0, 0, cmd_models },
 *           { "auth", 1, 1, cmd_auth },
 *           { 0 }
 *   };
 *   rc = xg_opt_verb(&o, verbs)->run(&o, &ctx);
 *
 * xg_opt_verb returns the entry o->args[0] names, after checking that
 * between min_args and max_args operands follow it (max_args -1: any);
 * anything else is a usage error (exit 2) that says what was wrong: no
 * verb (listing them), an unknown one, or the wrong count.
 */
struct xg_verb {
	const char *name;
	int min_args, max_args;
	int (*run)(struct xg_opts *o, void *ctx);
};

const struct xg_verb *xg_opt_verb(struct xg_opts *o, const struct xg_verb *verbs);

/* Parses a non-negative decimal number, with an optional k/M/G suffix when
 * sizes is set; exits 2 naming the option when it is not one. */
unsigned long long xg_opt_number(const struct xg_command *cmd, const char *opt,
				 const char *arg, int sizes);

#endif
