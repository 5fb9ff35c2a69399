// SPDX-License-Identifier: MIT
/*
 * atomkit-report: the command line, `check`, and the exit statuses every
 * subcommand shares (doc/report.md).
 */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: atomkit-report tables SET...          Markdown tables of each set\n"
"       atomkit-report select SET...          primitive-selection report\n"
"       atomkit-report compare A B            every benchmark of A beside B\n"
"       atomkit-report index DIR              index of the sets under DIR\n"
"       atomkit-report plot SET... -o OUTDIR  SVG plots through gnuplot\n"
"       atomkit-report check SET...           validate only\n"
"       atomkit-report --help\n"
"\n"
"--format=text (before or after the subcommand) writes plain text for mail\n"
"and commit messages: aligned columns, no Markdown; --format=markdown is\n"
"the default.\n"
"\n"
"A SET is a folder scripts/run-bench wrote: results/<arch>/<machine>/\n"
"<date>-<rev>/ with machine.json and <suite>.json files.  Markdown goes to\n"
"stdout; problems go to stderr, one line each, naming the file.\n"
"\n"
"Exit status:\n"
"  0  every input was read\n"
"  1  some file or set was rejected (reported on stderr); the output was\n"
"     rendered from the rest\n"
"  2  usage error: unknown subcommand or option, missing argument\n"
"  3  nothing usable: every set was rejected or empty (compare: A or B was,\n"
"     e.g. of another schema, so nothing was compared; index: no set found)\n"
"\n"
"plot runs $AK_GNUPLOT if set, else the gnuplot configure found; without\n"
"one it writes the scripts and data, no SVG, and the exit status is\n"
"unaffected.  Details: doc/report.md.\n";

static int usage(FILE *f, int status)
{
	fputs(usage_text, f);
	fprintf(f, "(configure found gnuplot: %s)\n",
		*AK_GNUPLOT ? AK_GNUPLOT : "none");
	return status;
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("atomkit-report: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (try atomkit-report --help)\n", stderr);
	return RP_EXIT_USAGE;
}

/* `check`: validation only, a line per set on stdout. */
static int cmd_check(int argc, char **argv)
{
	int i, usable = 0;

	for (i = 0; i < argc; i++) {
		struct rp_set *s = rp_set_load(argv[i]);
		int j, nb = 0;

		for (j = 0; j < s->nr_suites; j++)
			nb += s->suites[j].nr_bench;
		if (!s->usable) {
			printf("%s: rejected: %s\n", s->path, rp_why(s));
		} else {
			usable++;
			printf("%s: %s (%d suites, %d benchmarks", s->path,
			       s->nr_problems ? "problems" : "ok",
			       s->nr_suites, nb);
			if (s->nr_problems)
				printf("; %d problem%s, reported above", s->nr_problems,
				       s->nr_problems > 1 ? "s" : "");
			rp_macro_check(s);
			if (s->missing.n) {
				fputs("; missing:", stdout);
				for (j = 0; j < s->missing.n; j++)
					printf(" %s", s->missing.v[j]);
			}
			if (s->emulated)
				fputs("; emulated: figures mean nothing", stdout);
			puts(")");
		}
		rp_set_free(s);
	}
	return rp_exit_status(usable);
}

static int cmd_plot_o(int argc, char **argv);

/* The subcommands: how many operands each takes (0: one or more). */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	int nargs;
	const char *need;
} cmds[] = {
	{ "tables", cmd_tables, 0, NULL }, { "select", cmd_select, 0, NULL },
	{ "compare", cmd_compare, 2, "%s: needs two sets, A and B" },
	{ "index", cmd_index, 1, "%s: needs one folder (e.g. results/)" },
	{ "plot", cmd_plot_o, 0, NULL }, { "check", cmd_check, 0, NULL },
};

static const char *outdir;

static int cmd_plot_o(int argc, char **argv)
{
	return cmd_plot(argc, argv, outdir);
}

static int format(const char *a)
{
	if (rp_set_format(a + strlen("--format=")))
		return 0;
	return usage_error("unknown format '%s' (markdown or text)",
			   a + strlen("--format="));
}

static int run(int argc, char **argv, char **args)
{
	const char *cmd = argv[1];
	bool plot = !strcmp(cmd, "plot");
	size_t c;
	int i, n = 0;

	for (c = 0; strcmp(cmd, cmds[c].name); )
		if (++c == sizeof(cmds) / sizeof(cmds[0]))
			return usage_error("unknown subcommand '%s'", cmd);
	/* operands, with -o for plot; "--" ends the options */
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (++i < argc)
				args[n++] = argv[i];
			break;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(stdout, RP_EXIT_OK);
		if (plot && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
			if (i + 1 >= argc)
				return usage_error("%s needs a folder", a);
			outdir = argv[++i];
		} else if (rp_has_prefix(a, "--format=")) {
			if (format(a))
				return RP_EXIT_USAGE;
		} else if (plot && rp_has_prefix(a, "--output=")) {
			outdir = a + strlen("--output=");
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else {
			args[n++] = argv[i];
		}
	}
	if (cmds[c].nargs && n != cmds[c].nargs)
		return usage_error(cmds[c].need, cmd);
	if (!n)
		return usage_error("%s: needs at least one set", cmd);
	if (plot && (!outdir || !*outdir))
		return usage_error("%s: needs -o OUTDIR", cmd);
	return cmds[c].fn(n, args);
}

int main(int argc, char **argv)
{
	char **args;
	int status;

	/* --format may come first: "atomkit-report --format=text compare" */
	for (; argc > 1 && rp_has_prefix(argv[1], "--format="); argv++, argc--)
		if (format(argv[1]))
			return RP_EXIT_USAGE;
	if (argc < 2)
		return usage(stderr, RP_EXIT_USAGE);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		return usage(stdout, RP_EXIT_OK);
	if (argv[1][0] == '-')
		return usage_error("unknown option '%s'", argv[1]);
	args = calloc(argc, sizeof(*args));
	if (!args)
		return RP_EXIT_NOTHING;
	status = run(argc, argv, args);
	free(args);
	/* a full disk must not pass for a complete report */
	if (fflush(stdout) || ferror(stdout)) {
		rp_problem("cannot write the output: %s", strerror(errno));
		return RP_EXIT_NOTHING;
	}
	return status;
}
