// SPDX-License-Identifier: MIT
/*
 * macro-gen: the inputs of the macro workloads that run Debian's programs,
 * generated from a seed, so that every run of every allocator reads the
 * same bytes and a set says exactly what was run (the size is in it):
 *
 *   macro-gen sql N     an SQL script for sqlite3: N/8 items and N sales
 *                       inserted one statement each, three indexes, joins,
 *                       grouping, an update, a delete, a table built from
 *                       a query, and the queries' results
 *   macro-gen words N   N words of text, 12 to a line, from a vocabulary
 *                       of 8192 whose frequencies fall off as 1/rank
 *   macro-gen git N     a git fast-import stream of N commits on
 *                       refs/heads/main, each editing 1 to 4 of 64 files
 *                       (lines replaced, inserted, deleted), fixed
 *                       author and dates, so the commit ids are fixed too
 *
 * Integers only: the same bytes on every arch and libc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: macro-gen sql|words|git N [SEED]\n";

static uint64_t state;

/* splitmix64: one stream, advanced by every draw */
static uint64_t next(void)
{
	uint64_t x = (state += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t below(uint64_t n)
{
	return next() % n;
}

static const char *const syl[16] = {
	"ka", "lo", "mi", "ne", "ru", "ta", "shi", "po",
	"ve", "zu", "an", "el", "or", "ix", "um", "qua",
};

/* Word number @w of the vocabulary: its base-16 digits as syllables. */
static char *word(uint64_t w, char *buf)
{
	char *p = buf;

	do {
		p = stpcpy(p, syl[w & 15]);
		w >>= 4;
	} while (w);
	return buf;
}

/* A word number with P(rank >= r) about 1/r: a class, then within it. */
static uint64_t zipf_word(void)
{
	uint64_t r = next();
	unsigned k = 0;

	while (k < 12 && !(r & (1ull << k)))
		k++;
	return ((1ull << k) + (r >> 20) % (1ull << k)) % 8192;
}

static void gen_words(uint64_t n)
{
	char buf[64];
	uint64_t i;

	for (i = 0; i < n; i++)
		printf("%s%c", word(zipf_word(), buf),
		       i % 12 == 11 || i + 1 == n ? '\n' : ' ');
}

/* Up to @max words of text, for a column or a message. */
static void text(uint64_t max)
{
	uint64_t i, n = below(max + 1);
	char buf[64];

	for (i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", word(zipf_word(), buf));
}

static void gen_sql(uint64_t n)
{
	uint64_t items = n / 8 > 10 ? n / 8 : 10, i;
	char buf[64];

	printf("CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
	       " grp INTEGER NOT NULL, price INTEGER NOT NULL, tags TEXT);\n"
	       "CREATE TABLE sale(id INTEGER PRIMARY KEY, item INTEGER NOT NULL,"
	       " qty INTEGER NOT NULL, day INTEGER NOT NULL, note TEXT);\n"
	       "BEGIN;\n");
	/* one draw per statement, in order: argument order is unspecified */
	for (i = 1; i <= items; i++) {
		uint64_t name = below(1 << 16), grp = below(50);
		uint64_t price = 100 + below(9900);

		printf("INSERT INTO item VALUES(%" PRIu64 ",'%s-%" PRIu64
		       "',%" PRIu64 ",%" PRIu64 ",'", i, word(name, buf), i,
		       grp, price);
		text(8);
		printf("');\n");
	}
	for (i = 1; i <= n; i++) {
		uint64_t it = 1 + below(items), qty = 1 + below(20);
		uint64_t day = below(365);

		printf("INSERT INTO sale VALUES(%" PRIu64 ",%" PRIu64
		       ",%" PRIu64 ",%" PRIu64 ",'", i, it, qty, day);
		text(20);
		printf("');\n");
	}
	printf("COMMIT;\n"
	       "CREATE INDEX sale_item ON sale(item);\n"
	       "CREATE INDEX sale_day ON sale(day, qty);\n"
	       "CREATE INDEX item_grp ON item(grp, price);\n"
	       "SELECT i.grp, count(*), sum(s.qty * i.price),"
	       " max(length(s.note)) FROM sale s JOIN item i ON i.id = s.item"
	       " GROUP BY i.grp ORDER BY i.grp;\n"
	       "SELECT day, count(DISTINCT item), sum(qty) FROM sale"
	       " WHERE day %% 7 = 3 GROUP BY day ORDER BY 3 DESC, 1 LIMIT 10;\n"
	       "SELECT i.name, sum(s.qty) AS q FROM item i JOIN sale s"
	       " ON s.item = i.id GROUP BY i.id ORDER BY q DESC, i.id"
	       " LIMIT 10;\n"
	       "SELECT a.grp, b.grp, count(*) FROM sale x"
	       " JOIN item a ON a.id = x.item JOIN sale y ON y.day = x.day"
	       " AND y.qty = x.qty AND y.id > x.id JOIN item b ON b.id = y.item"
	       " WHERE a.grp < 5 AND b.grp < 5 GROUP BY 1, 2 ORDER BY 1, 2;\n"
	       "UPDATE sale SET note = note || ' returned' WHERE qty %% 11 = 0;\n"
	       "DELETE FROM sale WHERE day %% 5 = 0;\n"
	       "CREATE TABLE summary AS SELECT item, group_concat(qty) AS qtys,"
	       " count(*) AS n FROM sale GROUP BY item;\n"
	       "SELECT count(*), sum(n), sum(length(qtys)) FROM summary;\n"
	       "SELECT count(*), sum(qty), sum(length(note)) FROM sale;\n");
}

#define FILES 64

struct file {
	uint64_t *line;		/* each line's token; its text comes from it */
	size_t n, cap;
};

static struct file files[FILES];

static void line_insert(struct file *f, size_t at, uint64_t tok)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 64;
		f->line = realloc(f->line, f->cap * sizeof(*f->line));
		if (!f->line) {
			fprintf(stderr, "macro-gen: out of memory\n");
			exit(1);
		}
	}
	memmove(f->line + at + 1, f->line + at, (f->n - at) * sizeof(*f->line));
	f->line[at] = tok;
	f->n++;
}

/* The file's text, into @buf (grown as needed); returns its length. */
static size_t file_text(const struct file *f, char **buf, size_t *cap)
{
	size_t len = 0, i;
	int l;

	for (i = 0; i < f->n; i++) {
		if (*cap - len < 128) {
			*cap = *cap * 2 + 4096;
			*buf = realloc(*buf, *cap);
			if (!*buf) {
				fprintf(stderr, "macro-gen: out of memory\n");
				exit(1);
			}
		}
		l = snprintf(*buf + len, *cap - len,
			     "\tv%04" PRIx64 " = f%08" PRIx64 "(v%04" PRIx64
			     ", %" PRIu64 ");\n", f->line[i] & 0xffff,
			     f->line[i] >> 32, (f->line[i] >> 16) & 0xffff,
			     f->line[i] % 1000);
		len += (size_t)l;
	}
	return len;
}

static void emit_file(unsigned k, char **buf, size_t *cap)
{
	size_t len = file_text(&files[k], buf, cap);

	printf("M 100644 inline src%u/file%02u.c\ndata %zu\n", k / 16, k, len);
	fwrite(*buf, 1, len, stdout);
	printf("\n");
}

static void gen_git(uint64_t n)
{
	char *buf = NULL, msg[256];
	size_t cap = 0, at;
	unsigned k, j, touch, e;
	uint64_t i;
	int len;

	for (k = 0; k < FILES; k++)
		for (j = 0; j < 40; j++)
			line_insert(&files[k], files[k].n, next());
	for (i = 0; i < n; i++) {
		len = snprintf(msg, sizeof(msg), "commit %" PRIu64 ": ", i);
		printf("commit refs/heads/main\n"
		       "committer Macro Bench <macro@example.invalid> %" PRIu64
		       " +0000\n", 1700000000 + i * 600);
		/* the message: a few words, counted before it is printed */
		for (j = 0, touch = 1 + (unsigned)below(4); j < touch; j++)
			len += snprintf(msg + len, sizeof(msg) - (size_t)len,
					"%sfile%02u", j ? ", " : "",
					(unsigned)((i * 7 + j * 13) % FILES));
		printf("data %d\n%s\n", len, msg);
		if (!i) {
			for (k = 0; k < FILES; k++)
				emit_file(k, &buf, &cap);
			continue;
		}
		for (j = 0; j < touch; j++) {
			struct file *f;

			k = (unsigned)((i * 7 + j * 13) % FILES);
			f = &files[k];
			for (e = 0; e < 3; e++) {
				at = below(f->n);
				f->line[at] = next();
				at = below(f->n + 1);
				line_insert(f, at, next());
			}
			if (f->n > 8) {
				at = below(f->n);
				memmove(f->line + at, f->line + at + 1,
					(f->n - at - 1) * sizeof(*f->line));
				f->n--;
			}
			emit_file(k, &buf, &cap);
		}
	}
	for (k = 0; k < FILES; k++)
		free(files[k].line);
	free(buf);
}

int main(int argc, char **argv)
{
	unsigned long long n, seed = 1;
	char *end;

	if (argc == 2 && (!strcmp(argv[1], "-h") ||
			  !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 3 || argc > 4) {
		fputs(usage, stderr);
		return 2;
	}
	errno = 0;
	n = strtoull(argv[2], &end, 10);
	if (argv[2][0] < '0' || argv[2][0] > '9' || *end || errno || !n ||
	    n > 1ull << 32) {
		fprintf(stderr, "macro-gen: N '%s': expected 1 to 2^32\n",
			argv[2]);
		return 2;
	}
	if (argc == 4) {
		seed = strtoull(argv[3], &end, 10);
		if (argv[3][0] < '0' || argv[3][0] > '9' || *end || errno) {
			fprintf(stderr, "macro-gen: SEED '%s': expected a"
				" number\n", argv[3]);
			return 2;
		}
	}
	state = seed;
	if (!strcmp(argv[1], "sql"))
		gen_sql(n);
	else if (!strcmp(argv[1], "words"))
		gen_words(n);
	else if (!strcmp(argv[1], "git"))
		gen_git(n);
	else {
		fprintf(stderr, "macro-gen: unknown input '%s'\n%s", argv[1],
			usage);
		return 2;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "macro-gen: writing: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
