// SPDX-License-Identifier: MIT
/*
 * `plot SET... -o OUTDIR`: SVGs through gnuplot.  The data (tab-separated)
 * and one script, plots.gp, are written to OUTDIR first, so that they can
 * be rerun or edited where gnuplot is; then gnuplot runs in OUTDIR and each
 * SVG is checked.  Without gnuplot the tables are unaffected: that is said,
 * and the exit status only reflects the input.
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct plots {
	const char *outdir;
	FILE *gp;
	struct rp_strs svg;	/* the SVGs the script writes */
	struct rp_strs title;	/* and their titles */
	struct rp_strs tags;
	bool failed;		/* a data file could not be written */
};

/* mkdir -p */
static bool make_dir(const char *path)
{
	char *p = rp_strdup(path), *q;
	struct stat st;
	bool ok = true;

	for (q = p + 1; ; q++) {
		if (*q && *q != '/')
			continue;
		if (q[-1] != '/') {
			char c = *q;

			*q = 0;
			if (mkdir(p, 0777) && errno != EEXIST)
				ok = false;
			*q = c;
		}
		if (!*q)
			break;
	}
	ok = ok && !stat(path, &st) && S_ISDIR(st.st_mode);
	free(p);
	return ok;
}

static FILE *open_out(struct plots *pl, const char *name)
{
	char *path = rp_asprintf("%s/%s", pl->outdir, name);
	FILE *f = fopen(path, "w");

	if (!f) {
		rp_problem("%s: cannot write: %s", path, strerror(errno));
		pl->failed = true;
	}
	free(path);
	return f;
}

static bool close_out(struct plots *pl, FILE *f, const char *name)
{
	if (fclose(f)) {
		rp_problem("%s/%s: cannot write: %s", pl->outdir, name,
			   strerror(errno));
		pl->failed = true;
		return false;
	}
	return true;
}

/* A gnuplot string literal. */
static void gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s == '\n' || *s == '\t' ? ' ' : *s, f);
	}
	fputc('"', f);
}

/* A field of a tab-separated data file. */
static void dat_str(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(strchr("\t\n\r\"", *s) ? ' ' : *s, f);
}

static void dat_num(FILE *f, double v)
{
	if (isnan(v))
		fputs("\t-", f);
	else
		fprintf(f, "\t%.6g", v);
}

/* A file-name-safe tag per set: machine and set name. */
static const char *set_tag(struct plots *pl, const struct rp_set *s)
{
	char buf[200], *p;
	int n = 1;

	snprintf(buf, sizeof(buf), "%s-%s", rp_machine_name(s),
		 rp_set_name(s));
	for (p = buf; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    *p))
			*p = '_';
	while (rp_strs_find(&pl->tags, buf) >= 0) {
		size_t l = strlen(buf);

		/* two sets of one name: keep both */
		snprintf(buf + (l > 180 ? 180 : l), 20, "-%d", ++n);
	}
	return rp_strs_add(&pl->tags, buf);
}

/* Appends, duplicates kept: two sets of one machine share titles. */
static void push(struct rp_strs *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = rp_realloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = rp_strdup(s);
}

static void gp_begin(struct plots *pl, const char *svg, const char *title)
{
	fputs("\nreset\nset datafile separator \"\\t\"\nset datafile missing \"-\"\n",
	      pl->gp);
	fprintf(pl->gp, "set output \"%s\"\nset title ", svg);
	gp_str(pl->gp, title);
	fputs("\nset key noenhanced\nset grid ytics\n", pl->gp);
	push(&pl->svg, svg);
	push(&pl->title, title);
}

FILE *rp_plot_file(struct plots *pl, const char *name)
{
	return open_out(pl, name);
}

bool rp_plot_file_done(struct plots *pl, FILE *f, const char *name)
{
	return close_out(pl, f, name);
}

FILE *rp_plot_begin(struct plots *pl, const char *svg, const char *title)
{
	gp_begin(pl, svg, title);
	return pl->gp;
}

/* ---- cost per primitive: bars, a cluster per primitive, a bar per set */

static bool plotted_prim(const struct rp_bench *b, char *key, size_t n)
{
	/* arch primitives of 64 and 128 bits, and the locks for reference */
	if (!rp_is(b, "suite", "prim") || !rp_is(b, "metric", "lat"))
		return false;
	if (rp_is(b, "arch", "ref") && (rp_is(b, "op", "spinlock") ||
					rp_is(b, "op", "mutex"))) {
		snprintf(key, n, "%s", rp_f(b, "op"));
		return true;
	}
	if (rp_is(b, "arch", "ref") || rp_is(b, "arch", "generic") ||
	    rp_n(b, "width") == 32 || !*rp_f(b, "variant"))
		return false;
	snprintf(key, n, "%s/%s", rp_f(b, "op"), rp_f(b, "variant"));
	return true;
}

static void plot_prims(struct plots *pl, struct rp_set **sets, int n)
{
	struct rp_strs keys = { 0 };
	char key[128];
	FILE *f;
	int i, j, k;

	for (i = 0; i < n; i++)
		for (j = 0; j < sets[i]->nr_bench; j++)
			if (!sets[i]->bench[j].skip &&
			    plotted_prim(&sets[i]->bench[j], key,
					 sizeof(key)))
				rp_strs_add(&keys, key);
	if (!keys.n) {
		rp_note("plot: no uncontended primitives in the sets: no primitives.svg");
		return;
	}
	f = open_out(pl, "primitives.dat");
	if (!f)
		goto out;
	fputs("primitive", f);
	for (i = 0; i < n; i++) {
		fputc('\t', f);
		dat_str(f, rp_machine_name(sets[i]));
		fputc(' ', f);
		dat_str(f, rp_set_name(sets[i]));
	}
	fputc('\n', f);
	for (k = 0; k < keys.n; k++) {
		dat_str(f, keys.v[k]);
		for (i = 0; i < n; i++) {
			struct rp_fig t;

			rp_fig(NULL, "", &t);
			for (j = 0; j < sets[i]->nr_bench; j++)
				if (plotted_prim(&sets[i]->bench[j], key,
						 sizeof(key)) &&
				    !strcmp(key, keys.v[k]) &&
				    rp_fig(&sets[i]->bench[j], "real_time", &t))
					break;
			dat_num(f, t.v);
		}
		fputc('\n', f);
	}
	if (!close_out(pl, f, "primitives.dat"))
		goto out;
	gp_begin(pl, "primitives.svg",
		 "Cost per primitive, uncontended latency (median, ns)");
	fputs("set style data histograms\nset style histogram clustered gap 1\n"
	      "set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
	      "set xtics rotate by -45 scale 0 noenhanced\nset ylabel \"ns\"\n"
	      "set yrange [0:*]\nset key outside top center horizontal\nplot ", pl->gp);
	for (i = 0; i < n; i++)
		fprintf(pl->gp, "%s\"primitives.dat\" using %d%s title columnhead(%d)",
			i ? ", " : "", i + 2, i ? "" : ":xtic(1)", i + 2);
	fputc('\n', pl->gp);
out:
	rp_strs_free(&keys);
}

/* ---- contention: Mops/s against threads, a line per primitive ---- */

/* the benchmarks of one line plot: a placement, generic C11 or not */
#define CONT	"suite=contention placement=%s arch%s=generic"

static void plot_contention(struct plots *pl, const struct rp_set *s,
			    const char *tag, const char *place, bool generic)
{
	struct rp_strs keys = { 0 }, thr = { 0 };
	char key[128], name[256], title[300], tb[32];
	const char *neg = generic ? "" : "!";
	const struct rp_bench *b;
	FILE *f;
	int j, k;

	rp_each(b, s, CONT, place, neg)
		if (!b->skip) {
			rp_strs_add(&keys, rp_prim_id(b, key, sizeof(key)));
			snprintf(tb, sizeof(tb), "%d", b->threads);
			rp_strs_add(&thr, tb);
		}
	if (!keys.n)
		goto out;
	rp_strs_sort_num(&thr);
	snprintf(name, sizeof(name), "contention-%s-%s%s.dat", tag, place,
		 generic ? "-generic" : "");
	f = open_out(pl, name);
	if (!f)
		goto out;
	fputs("threads", f);
	for (k = 0; k < keys.n; k++) {
		fputc('\t', f);
		dat_str(f, keys.v[k]);
	}
	fputc('\n', f);
	for (j = 0; j < thr.n; j++) {
		fputs(thr.v[j], f);
		for (k = 0; k < keys.n; k++) {
			struct rp_fig ops;

			rp_fig(NULL, "", &ops);
			rp_each(b, s, CONT, place, neg)
				if (b->threads == atol(thr.v[j]) &&
				    !strcmp(rp_prim_id(b, key, sizeof(key)),
					    keys.v[k]) &&
				    rp_fig(b, "ops", &ops))
					break;
			dat_num(f, ops.v / 1e6);
		}
		fputc('\n', f);
	}
	if (!close_out(pl, f, name))
		goto out;
	snprintf(title, sizeof(title),
		 "Contention on one line, %s %s, placement %s%s (Mops/s, all threads, median)",
		 rp_machine_name(s), rp_set_name(s), place,
		 generic ? ", generic C11" : "");
	name[strlen(name) - 4] = 0;
	{
		char *svg = rp_asprintf("%s.svg", name);

		gp_begin(pl, svg, title);
		free(svg);
	}
	fputs("set xlabel \"threads\"\nset ylabel \"Mops/s\"\nset yrange [0:*]\n"
	      "set key outside right noenhanced\nset logscale x 2\nplot ",
	      pl->gp);
	for (k = 0; k < keys.n; k++)
		fprintf(pl->gp, "%s\"%s.dat\" using 1:%d with linespoints title columnhead(%d)",
			k ? ", " : "", name, k + 2, k + 2);
	fputc('\n', pl->gp);
out:
	rp_strs_free(&keys);
	rp_strs_free(&thr);
}

/* ---- bulk: ns per object against the batch size, per design ---- */

static void plot_bulk(struct plots *pl, const struct rp_set *s,
		      const char *tag)
{
	struct rp_strs cols = { 0 }, sizes = { 0 }, impls = { 0 };
	const struct rp_bench *b;
	char name[256], title[300];
	FILE *f;
	int j, k;

	/* columns "<impl> bulk" and "<impl> single calls" */
	rp_each(b, s, "suite=slab workload=bulk|bulk_fallback bulk!=") {
		if (b->skip)
			continue;
		snprintf(name, sizeof(name), "%s %s", rp_f(b, "design"),
			 rp_is(b, "workload", "bulk") ? "bulk" :
			 "single calls");
		rp_strs_add(&cols, name);
		snprintf(name, sizeof(name), "%ld", rp_n(b, "bulk"));
		rp_strs_add(&sizes, name);
	}
	if (!cols.n)
		goto out;
	rp_strs_sort_num(&sizes);
	snprintf(name, sizeof(name), "bulk-%s.dat", tag);
	f = open_out(pl, name);
	if (!f)
		goto out;
	fputs("bulk", f);
	for (k = 0; k < cols.n; k++) {
		fputc('\t', f);
		dat_str(f, cols.v[k]);
	}
	fputc('\n', f);
	for (j = 0; j < sizes.n; j++) {
		fputs(sizes.v[j], f);
		for (k = 0; k < cols.n; k++) {
			char impl[128];
			const char *sp = strchr(cols.v[k], ' ');
			bool single = strstr(cols.v[k], " single calls");
			struct rp_fig t;

			snprintf(impl, sizeof(impl), "%.*s",
				 (int)(sp - cols.v[k]), cols.v[k]);
			rp_fig(rp_find(s,
				       "suite=slab workload=%s design=%s bulk=%ld",
				       single ? "bulk_fallback" : "bulk", impl,
				       atol(sizes.v[j])),
			       "real_time", &t);
			dat_num(f, t.v);
		}
		fputc('\n', f);
	}
	if (!close_out(pl, f, name))
		goto out;
	snprintf(title, sizeof(title),
		 "Bulk alloc+free of 256-byte objects, %s %s (ns per object, median; dashed: single calls)",
		 rp_machine_name(s), rp_set_name(s));
	name[strlen(name) - 4] = 0;
	{
		char *svg = rp_asprintf("%s.svg", name);

		gp_begin(pl, svg, title);
		free(svg);
	}
	fputs("set xlabel \"objects per call (N)\"\nset ylabel \"ns per object\"\n"
	      "set logscale x 2\nset logscale y\nset key outside right noenhanced\nplot ",
	      pl->gp);
	for (k = 0; k < cols.n; k++) {
		char impl[128];

		snprintf(impl, sizeof(impl), "%.*s",
			 (int)strcspn(cols.v[k], " "), cols.v[k]);
		rp_strs_add(&impls, impl);
		/* one colour per impl: bulk solid, its single calls dashed */
		fprintf(pl->gp, "%s\"%s.dat\" using 1:%d with linespoints lc %d%s title columnhead(%d)",
			k ? ", " : "", name, k + 2,
			rp_strs_find(&impls, impl) + 1,
			strstr(cols.v[k], " single calls") ? " dt 2" : " lw 2",
			k + 2);
	}
	fputc('\n', pl->gp);
out:
	rp_strs_free(&cols);
	rp_strs_free(&sizes);
	rp_strs_free(&impls);
}

/* Runs gnuplot on plots.gp in OUTDIR; its output goes to gnuplot.log. */
static int run_gnuplot(const char *gnuplot, const char *outdir)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		FILE *log;

		if (chdir(outdir))
			_exit(126);
		log = freopen("gnuplot.log", "w", stdout);
		if (log)
			dup2(fileno(log), 2);
		execl(gnuplot, gnuplot, "plots.gp", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int cmd_plot(int argc, char **argv, const char *outdir)
{
	struct rp_set **sets = rp_alloc(argc * sizeof(*sets));
	struct plots pl = { .outdir = outdir };
	const char *gnuplot = getenv("AK_GNUPLOT");
	int i, k, n = 0, status, rc;

	for (i = 0; i < argc; i++) {
		struct rp_set *s = rp_set_load(argv[i]);

		if (s->usable)
			sets[n++] = s;
		else
			rp_set_free(s);
	}
	status = rp_exit_status(n);
	if (!n)
		goto out;
	if (!make_dir(outdir)) {
		rp_problem("%s: cannot create the folder: %s", outdir,
			   strerror(errno));
		status = RP_EXIT_NOTHING;
		goto out;
	}
	pl.gp = open_out(&pl, "plots.gp");
	if (!pl.gp) {
		status = RP_EXIT_NOTHING;
		goto out;
	}
	fputs("# atomkit-report plot: run as `gnuplot plots.gp` in this folder\n"
	      "set terminal svg size 1100,650 dynamic noenhanced font \"sans,11\" background \"white\"\n",
	      pl.gp);
	plot_prims(&pl, sets, n);
	for (i = 0; i < n; i++) {
		const char *tag = set_tag(&pl, sets[i]);
		struct rp_strs places = { 0 };

		for (k = 0; k < sets[i]->nr_bench; k++)
			if (rp_is(&sets[i]->bench[k], "suite", "contention") &&
			    *rp_f(&sets[i]->bench[k], "placement"))
				rp_strs_add(&places,
					    rp_f(&sets[i]->bench[k], "placement"));
		for (k = 0; k < places.n; k++) {
			plot_contention(&pl, sets[i], tag, places.v[k], false);
			plot_contention(&pl, sets[i], tag, places.v[k], true);
		}
		rp_strs_free(&places);
		plot_bulk(&pl, sets[i], tag);
		rp_macro_plot(&pl, sets[i], tag);
	}
	if (!close_out(&pl, pl.gp, "plots.gp") || pl.failed) {
		status = RP_EXIT_NOTHING;
		goto out;
	}
	if (!pl.svg.n) {
		rp_note("plot: nothing to plot in these sets (no uncontended, contention, bulk or whole-program results)");
		goto out;
	}

	if (!gnuplot)
		gnuplot = AK_GNUPLOT;
	if (!*gnuplot || access(gnuplot, X_OK)) {
		rp_note("gnuplot not installed: no plots (tables are unaffected); the script and data are in %s",
			outdir);
		goto out;
	}
	rc = run_gnuplot(gnuplot, outdir);
	for (i = 0, k = 0; i < pl.svg.n; i++) {
		char *path = rp_asprintf("%s/%s", outdir, pl.svg.v[i]);
		struct stat st;

		/* gnuplot may exit 0 and still not have written one */
		if (!stat(path, &st) && st.st_size > 0) {
			if (i == k)
				puts("# Plots\n");
			fputs("![", stdout);
			md_text(pl.title.v[i]);
			printf("](%s)\n\n", pl.svg.v[i]);
		} else {
			k++;
		}
		free(path);
	}
	if (rc || k)
		rp_note("gnuplot failed (exit status %d, %d of %d SVGs missing; its output is in %s/gnuplot.log): %s (tables are unaffected)",
			rc, k, pl.svg.n, outdir,
			k == pl.svg.n ? "no plots" : "some plots missing");
out:
	rp_strs_free(&pl.svg);
	rp_strs_free(&pl.title);
	rp_strs_free(&pl.tags);
	for (i = 0; i < n; i++)
		rp_set_free(sets[i]);
	free(sets);
	return status;
}
