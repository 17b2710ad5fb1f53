/*
 * Options from one table per program (opt.h): parsing, and the --help the
 * same table prints, whose usage lines are the man page's SYNOPSIS.
 */
#include "xg.h"

enum { OPT_HELP = -100, OPT_VERSION = -101 };

void xg_opt_init(struct xg_opts *o, const struct xg_command *cmd, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->argc = argc;
	o->argv = argv;
	o->i = 1;
	o->args = xg_calloc((size_t)argc + 1, sizeof(char *));
}

void xg_opt_release(struct xg_opts *o)
{
	free(o->args);
	o->args = NULL;
}

void xg_opt_help(const struct xg_command *cmd, FILE *fp)
{
	const struct xg_option *opt;
	int i;

	for (i = 0; cmd->usage[i]; i++)
		fprintf(fp, "%s %s\n", i ? "   or:" : "usage:", cmd->usage[i]);
	fprintf(fp, "\n%s\n\n", cmd->summary);
	for (opt = cmd->options; opt->id; opt++) {
		char left[64];
		int n = 0;

		if (opt->short_name)
			n = snprintf(left, sizeof(left), "  -%c%s", opt->short_name,
				     opt->long_name ? "," : "");
		else
			n = snprintf(left, sizeof(left), "     ");
		if (opt->long_name)
			n += snprintf(left + n, sizeof(left) - (size_t)n, " --%s", opt->long_name);
		if (opt->argname)
			snprintf(left + n, sizeof(left) - (size_t)n,
				 opt->argname[0] == '[' ? "%s" : " %s", opt->argname);
		fprintf(fp, "%-28s %s\n", left, opt->help);
	}
	fprintf(fp, "%-28s %s\n", "  -h, --help", "print this help and exit");
	fprintf(fp, "%-28s %s\n", "      --version", "print the version and exit");
	fprintf(fp, "\nSee %s(1).\n", cmd->name);
}

void xg_usage_error(const struct xg_command *cmd, const char *fmt, ...)
{
	va_list ap;
	int i;

	fflush(stdout);
	fprintf(stderr, "%s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	for (i = 0; cmd->usage[i]; i++)
		fprintf(stderr, "%s %s\n", i ? "   or:" : "usage:", cmd->usage[i]);
	exit(XG_EX_USAGE);
}

void xg_print_version(const struct xg_command *cmd)
{
	printf("%s (xg) %s\n", cmd->name, XG_VERSION);
}

static const struct xg_option *find_long(const struct xg_command *cmd, const char *name,
					 size_t len)
{
	const struct xg_option *opt;

	for (opt = cmd->options; opt->id; opt++)
		if (opt->long_name && strlen(opt->long_name) == len &&
		    !strncmp(opt->long_name, name, len))
			return opt;
	return NULL;
}

static const struct xg_option *find_short(const struct xg_command *cmd, char c)
{
	const struct xg_option *opt;

	for (opt = cmd->options; opt->id; opt++)
		if (opt->short_name == c)
			return opt;
	return NULL;
}

static void builtin(struct xg_opts *o, int id)
{
	if (id == OPT_HELP) {
		xg_opt_help(o->cmd, stdout);
		exit(xg_prog_exit(0));
	}
	xg_print_version(o->cmd);
	exit(xg_prog_exit(0));
}

static int next_long(struct xg_opts *o, const char *word, const char **arg)
{
	const char *name = word + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct xg_option *opt = find_long(o->cmd, name, len);

	if (!opt) {
		if (len == 4 && !strncmp(name, "help", 4))
			builtin(o, OPT_HELP);
		if (len == 7 && !strncmp(name, "version", 7))
			builtin(o, OPT_VERSION);
		xg_usage_error(o->cmd, "unknown option '--%.*s'", (int)len, name);
	}
	if (!opt->argname) {
		if (eq)
			xg_usage_error(o->cmd, "option '--%s' takes no value", opt->long_name);
		*arg = NULL;
		return opt->id;
	}
	if (opt->argname[0] == '[') {
		/* An optional value comes only after '='. */
		*arg = eq ? eq + 1 : NULL;
		return opt->id;
	}
	if (eq) {
		*arg = eq + 1;
	} else {
		if (o->i >= o->argc)
			xg_usage_error(o->cmd, "option '--%s' needs a value", opt->long_name);
		*arg = o->argv[o->i++];
	}
	return opt->id;
}

static int next_short(struct xg_opts *o, const char **arg)
{
	char c = *o->cluster++;
	const struct xg_option *opt = find_short(o->cmd, c);

	if (!opt) {
		if (c == 'h')
			builtin(o, OPT_HELP);
		xg_usage_error(o->cmd, "unknown option '-%c'", c);
	}
	if (!opt->argname) {
		*arg = NULL;
		return opt->id;
	}
	if (*o->cluster) {
		*arg = o->cluster;
	} else {
		if (o->i >= o->argc)
			xg_usage_error(o->cmd, "option '-%c' needs a value", c);
		*arg = o->argv[o->i++];
	}
	o->cluster = NULL;
	return opt->id;
}

int xg_opt_next(struct xg_opts *o, const char **arg)
{
	*arg = NULL;
	if (o->cluster && *o->cluster)
		return next_short(o, arg);
	o->cluster = NULL;
	while (o->i < o->argc) {
		const char *word = o->argv[o->i++];

		if (o->only_operands || word[0] != '-' || !word[1]) {
			o->args[o->nargs++] = (char *)word;
			continue;
		}
		if (!strcmp(word, "--")) {
			o->only_operands = 1;
			continue;
		}
		if (word[1] == '-')
			return next_long(o, word, arg);
		o->cluster = word + 1;
		return next_short(o, arg);
	}
	o->args[o->nargs] = NULL;
	return -1;
}

unsigned long long xg_opt_number(const struct xg_command *cmd, const char *opt,
				 const char *arg, int sizes)
{
	unsigned long long n, mul = 1;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*arg))
		goto bad;
	n = strtoull(arg, &end, 10);
	if (errno)
		goto bad;
	if (sizes && *end) {
		switch (*end++) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'M': mul = 1ULL << 20; break;
		case 'G': mul = 1ULL << 30; break;
		default: goto bad;
		}
	}
	if (*end || (mul > 1 && n > ULLONG_MAX / mul))
		goto bad;
	return n * mul;
bad:
	xg_usage_error(cmd, "option '%s' needs a non-negative number%s, not '%s'",
		       opt, sizes ? " (with k, M or G)" : "", arg);
}

static const char *count_text(int n)
{
	static char buf[32];

	if (n == 0)
		return "no operands";
	if (n == 1)
		return "one operand";
	snprintf(buf, sizeof(buf), "%d operands", n);
	return buf;
}

const struct xg_verb *xg_opt_verb(struct xg_opts *o, const struct xg_verb *verbs)
{
	const struct xg_verb *v;
	struct xg_buf names = XG_BUF_INIT(0);
	int n;

	if (o->nargs < 1) {
		for (v = verbs; v->name; v++)
			xg_buf_addf(&names, "%s%s", v == verbs ? "" : v[1].name ? ", " : " or ",
				    v->name);
		xg_usage_error(o->cmd, "a command is needed: %s", names.buf);
	}
	for (v = verbs; v->name && strcmp(v->name, o->args[0]); v++)
		;
	if (!v->name)
		xg_usage_error(o->cmd, "unknown command '%s'", o->args[0]);
	n = o->nargs - 1;
	if (n < v->min_args || (v->max_args >= 0 && n > v->max_args)) {
		if (v->min_args == v->max_args)
			xg_usage_error(o->cmd, "'%s' takes %s", v->name, count_text(v->min_args));
		if (n < v->min_args)
			xg_usage_error(o->cmd, "'%s' takes at least %s", v->name,
				       count_text(v->min_args));
		xg_usage_error(o->cmd, "'%s' takes at most %s", v->name, count_text(v->max_args));
	}
	return v;
}
