// SPDX-License-Identifier: MIT
/*
 * atomkit-rseq-check: the rseq abort injector (doc/testing.md, "The rseq
 * abort injector").  It runs a target program under ptrace, finds every
 * rseq critical section in it and in its libraries (the descriptors that
 * the sections list in __rseq_cs_ptr_array), and makes the program stop
 * once at each instruction of each section that the target's cases
 * enter.  A stop is a context switch, so the kernel must abort the
 * section when the program resumes; the tracer single-steps that resume
 * and sees where it lands.  It checks that the abort happened, that the
 * memory the case names is as it was (an aborted section has no visible
 * effect), that the retry committed exactly once (the case's own
 * verdict), and that a stop just after the commit does not abort.
 *
 * The target's side of the protocol is <atomkit/rseq-check.h>: its
 * markers trap with the case in the first argument register.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomkit/config.h>
#include <atomkit/rseq-check.h>

#if defined(AK_ARCH_X86_64)
# include <atomkit/arch/x86_64/rseq-check.h>
#elif defined(AK_ARCH_ARM64)
# include <atomkit/arch/arm64/rseq-check.h>
#elif defined(AK_ARCH_PPC64)
# include <atomkit/arch/ppc64/rseq-check.h>
#endif
#include <atomkit/arch/generic/rseq-check.h>

#ifndef NT_PRSTATUS
# define NT_PRSTATUS	1
#endif
#ifndef TRAP_TRACE
# define TRAP_TRACE	2
#endif

/* what a target says when it cannot run here (no rseq): a skip */
#define EXIT_SKIP	77

static const char usage_text[] =
"NAME\n"
"    atomkit-rseq-check - abort every instruction of every rseq section\n"
"\n"
"SYNOPSIS\n"
"    atomkit-rseq-check [--mode MODE] [--tap] [--require-all] [--list]\n"
"                       [--quiet] [--preempt] [--] PROGRAM [ARG]...\n"
"\n"
"DESCRIPTION\n"
"    Runs PROGRAM under ptrace.  PROGRAM is a target: its cases are\n"
"    loops around ak_rseq_check_begin() and ak_rseq_check_end()\n"
"    (<atomkit/rseq-check.h>).  The tracer finds every rseq critical\n"
"    section of the program and its libraries from the descriptors\n"
"    listed in their __rseq_cs_ptr_array (or __rseq_cs) sections.  For\n"
"    each case it first runs the case once with a breakpoint after each\n"
"    section's commit, to learn which sections the case enters; then\n"
"    once per instruction in [start_ip, post_commit_ip) of each, with a\n"
"    breakpoint there.  The stop is a context switch: on resume the\n"
"    kernel must abort the section, which the tracer checks by\n"
"    single-stepping the resume and finding the program at abort_ip.\n"
"    It then checks that the case's regions hold what they held when\n"
"    the run began (an aborted section has no visible effect), and the\n"
"    case's verdict (the retry committed exactly once).  One more run\n"
"    stops at post_commit_ip, where the resume must not abort.\n"
"\n"
"    It prints a table per run: section, instructions, stops, aborts,\n"
"    wrong results; then each failure, naming the instruction.\n"
"\n"
"OPTIONS\n"
"    --mode MODE     run PROGRAM with AK_PERCPU_MODE=MODE (rseq or\n"
"                    rseq-mm_cid)\n"
"    --tap           print the results as TAP, a line per section\n"
"    --require-all   fail if a section of the program is not entered by\n"
"                    any case (default: list how many were not)\n"
"    --list          also list every section found, entered or not\n"
"    --quiet         print the failures and the summary line only\n"
"    --trace         print every stop to stderr: the pc, the signal's\n"
"                    code, what the tracer made of it\n"
"    --preempt       before each job's stop, abort the job's section once\n"
"                    where the run first enters it, as a real preemption\n"
"                    would (the run then goes on as the case's abort\n"
"                    path takes it): checks the tracer's own bookkeeping\n"
"    -h, --help      this text\n"
"\n"
"EXIT STATUS\n"
"    0 every stop before a commit aborted, no stop after one did, every\n"
"    instruction was stopped at and every result was right; 1 a check\n"
"    failed, or the target failed; 2 bad usage; 77 the target cannot\n"
"    run here (it exited 77, e.g. no rseq), or ptrace is not permitted.\n"
"\n"
"LIMITS\n"
"    A breakpoint stop is a preemption on the same CPU, not a migration:\n"
"    the section restarts on the CPU it ran on.  Instructions a case\n"
"    does not execute (a branch it never takes) are reported as never\n"
"    stopped at.  The target must be single-threaded while its cases\n"
"    run.\n";

#if !AK_HAVE_ARCH_RSEQ_CHECK
/* A build without rseq sections (--enable-generic-only, another arch). */
int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") ||
			 !strcmp(argv[1], "--help"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	fprintf(stderr, "atomkit-rseq-check: this build (%s) has no rseq"
		" sections to check\n", AK_ARCH_NAME);
	return EXIT_SKIP;
}
#else

static bool opt_tap, opt_require_all, opt_list, opt_quiet, opt_trace;
static bool opt_preempt;
static pid_t child;

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "atomkit-rseq-check: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (child > 0)
		kill(child, SIGKILL);
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		die("out of memory");
	p = realloc(p, n && size ? n * size : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

/* ---- the tracee's memory and registers ---- */

static void peek(uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;

	while (len) {
		uint64_t base = addr & ~(uint64_t)(sizeof(long) - 1);
		size_t off = addr - base, n = sizeof(long) - off;
		long w;

		if (n > len)
			n = len;
		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, child, (void *)(uintptr_t)base, 0);
		if (errno)
			die("cannot read the target's memory at %#llx: %s",
			    (unsigned long long)base, strerror(errno));
		memcpy(out, (uint8_t *)&w + off, n);
		out += n;
		addr += n;
		len -= n;
	}
}

static void poke(uint64_t addr, const void *buf, size_t len)
{
	const uint8_t *in = buf;

	while (len) {
		uint64_t base = addr & ~(uint64_t)(sizeof(long) - 1);
		size_t off = addr - base, n = sizeof(long) - off;
		long w;

		if (n > len)
			n = len;
		if (off || n < sizeof(long))
			peek(base, &w, sizeof(w));
		memcpy((uint8_t *)&w + off, in, n);
		if (ptrace(PTRACE_POKEDATA, child, (void *)(uintptr_t)base,
			   (void *)w))
			die("cannot write the target's memory at %#llx: %s",
			    (unsigned long long)base, strerror(errno));
		in += n;
		addr += n;
		len -= n;
	}
}

static uint64_t peek_u64(uint64_t addr)
{
	uint64_t v;

	peek(addr, &v, sizeof(v));
	return v;
}

/*
 * A string of the target's, up to 255 bytes, into buf: a word at a time,
 * each read within its aligned word, so never past the string's page.
 */
static const char *peek_str(uint64_t addr, char *buf, size_t len)
{
	size_t i = 0, n;

	if (!addr)
		return "(unnamed)";
	while (i + 1 < len) {
		n = sizeof(long) - ((addr + i) & (sizeof(long) - 1));
		if (n > len - 1 - i)
			n = len - 1 - i;
		peek(addr + i, buf + i, n);
		if (memchr(buf + i, 0, n))
			return buf;
		i += n;
	}
	buf[i] = 0;
	return buf;
}

struct regs {
	unsigned long r[128];
	size_t len;		/* the kernel's regset, in bytes */
};

static void get_regs(struct regs *g)
{
	struct iovec iov = { g->r, sizeof(g->r) };

	if (ptrace(PTRACE_GETREGSET, child, (void *)NT_PRSTATUS, &iov))
		die("PTRACE_GETREGSET: %s", strerror(errno));
	g->len = iov.iov_len;
}

static void set_regs(struct regs *g)
{
	struct iovec iov = { g->r, g->len };

	if (ptrace(PTRACE_SETREGSET, child, (void *)NT_PRSTATUS, &iov))
		die("PTRACE_SETREGSET: %s", strerror(errno));
}

/*
 * Back onto the breakpoint at, to run what it covered: only where the
 * trap leaves the pc after it (int3); BRK and tw leave it there.
 */
static void pc_back_to(uint64_t at)
{
	struct regs g;

	if (!AK_RC_TRAP_PC_AFTER)
		return;
	get_regs(&g);
	g.r[AK_RC_REG_PC] = at;
	set_regs(&g);
}

/* ---- the sections: descriptors found in the mapped objects ---- */

struct sym {
	uint64_t addr, size;
	const char *name;	/* in its object's string table */
	const char *object;	/* the object's base name */
};

static struct sym *syms;
static size_t nsyms;

struct section {
	uint64_t desc, start, post, abort_ip;
	uint64_t *insn;		/* the instructions in [start, post) */
	uint8_t *text;		/* their bytes, before any breakpoint */
	size_t ninsn;
	bool undecodable;	/* a byte sequence ak_rc_insn_len refused */
	char where[160];	/* object: function+offset of start */
	const char *cas;	/* the first case that entered it */
	bool planned;
	size_t effect_from;	/* 1 + first stop whose abort showed */
	unsigned long stops, aborts, wrong;
};

static struct section *secs;
static size_t nsecs;
static bool scanned;

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct sym *sym_at(uint64_t addr)
{
	size_t lo = 0, hi = nsyms;

	while (lo < hi) {		/* the last symbol at or below addr */
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr >= syms[lo - 1].addr + syms[lo - 1].size &&
	    syms[lo - 1].size)
		return NULL;
	return &syms[lo - 1];
}

static void describe_addr(uint64_t addr, char *buf, size_t len)
{
	const struct sym *s = sym_at(addr);

	if (s)
		snprintf(buf, len, "%s:%s+%#llx", s->object, s->name,
			 (unsigned long long)(addr - s->addr));
	else
		snprintf(buf, len, "%#llx", (unsigned long long)addr);
}

static void add_section(uint64_t desc)
{
	struct { uint32_t version, flags; uint64_t start, off, abort_ip; } d;
	struct section *s;
	uint8_t *text;
	uint64_t a;
	size_t i;

	for (i = 0; i < nsecs; i++)
		if (secs[i].desc == desc)
			return;
	peek(desc, &d, sizeof(d));
	if (d.version != 0 || !d.off || d.off > 65536 ||
	    (d.abort_ip >= d.start && d.abort_ip < d.start + d.off))
		die("the rseq descriptor at %#llx is malformed (version %u,"
		    " start %#llx, post-commit offset %#llx, abort %#llx)",
		    (unsigned long long)desc, d.version,
		    (unsigned long long)d.start, (unsigned long long)d.off,
		    (unsigned long long)d.abort_ip);
	secs = xrealloc(secs, nsecs + 1, sizeof(*secs));
	s = &secs[nsecs++];
	memset(s, 0, sizeof(*s));
	s->desc = desc;
	s->start = d.start;
	s->post = d.start + d.off;
	s->abort_ip = d.abort_ip;
	text = xcalloc(d.off, 1);
	peek(d.start, text, d.off);
	s->insn = xcalloc(d.off, sizeof(*s->insn));
	for (a = s->start; a < s->post;) {
		size_t n = ak_rc_insn_len(text + (a - s->start), s->post - a);

		if (!n) {
			s->undecodable = true;
			break;
		}
		s->insn[s->ninsn++] = a;
		a += n;
	}
	s->text = text;
}

/* The file's sections, or NULL. */
static Elf64_Shdr *read_shdrs(FILE *f, const Elf64_Ehdr *eh)
{
	Elf64_Shdr *sh;

	if (!eh->e_shnum || eh->e_shentsize != sizeof(Elf64_Shdr))
		return NULL;
	sh = xcalloc(eh->e_shnum, sizeof(*sh));
	if (fseek(f, (long)eh->e_shoff, SEEK_SET) ||
	    fread(sh, sizeof(*sh), eh->e_shnum, f) != eh->e_shnum) {
		free(sh);
		return NULL;
	}
	return sh;
}

static char *read_blob(FILE *f, uint64_t off, uint64_t size)
{
	char *b = xcalloc(size + 1, 1);

	if (fseek(f, (long)off, SEEK_SET) || fread(b, 1, size, f) != size) {
		free(b);
		return NULL;
	}
	return b;
}

/*
 * Functions of the object (symtab, else dynsym), at their run-time
 * address.  In the ELFv1 ABI (big-endian ppc64) a function's symbol is
 * its descriptor in .opd, whose first word, relocated in the program's
 * memory, is the code's address.
 */
static void add_syms(FILE *f, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
		     const char *names, uint64_t bias, const char *object)
{
	int want, i, opd = -1;

	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_name < sh[eh->e_shstrndx].sh_size &&
		    !strcmp(names + sh[i].sh_name, ".opd"))
			opd = i;

	for (want = SHT_SYMTAB; ; want = SHT_DYNSYM) {
		for (i = 0; i < eh->e_shnum; i++) {
			Elf64_Sym *st;
			char *str;
			size_t n, j;

			if (sh[i].sh_type != (unsigned)want ||
			    sh[i].sh_link >= eh->e_shnum)
				continue;
			st = (Elf64_Sym *)read_blob(f, sh[i].sh_offset,
						    sh[i].sh_size);
			str = read_blob(f, sh[sh[i].sh_link].sh_offset,
					sh[sh[i].sh_link].sh_size);
			if (!st || !str) {
				free(st);
				free(str);
				continue;
			}
			n = sh[i].sh_size / sizeof(*st);
			syms = xrealloc(syms, nsyms + n, sizeof(*syms));
			for (j = 0; j < n; j++) {
				if (ELF64_ST_TYPE(st[j].st_info) != STT_FUNC ||
				    !st[j].st_value ||
				    st[j].st_shndx == SHN_UNDEF ||
				    st[j].st_name >= sh[sh[i].sh_link].sh_size)
					continue;
				syms[nsyms++] = (struct sym){
					st[j].st_shndx == opd ?
					peek_u64(st[j].st_value + bias) :
					st[j].st_value + bias, st[j].st_size,
					str + st[j].st_name, object };
			}
			free(st);	/* names point into str: kept */
			return;
		}
		if (want == SHT_DYNSYM)
			return;
	}
}

/* One mapped object: its descriptors and its functions. */
static void scan_object(const char *path, uint64_t map_start)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Shdr *sh;
	char *names;
	uint64_t bias = 0, lowest = UINT64_MAX;
	FILE *f = fopen(path, "rb");
	int i;

	if (!f)
		return;
	if (fread(&eh, sizeof(eh), 1, f) != 1 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		fclose(f);
		return;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize),
			  SEEK_SET) || fread(&ph, sizeof(ph), 1, f) != 1)
			break;
		if (ph.p_type == PT_LOAD && ph.p_vaddr < lowest)
			lowest = ph.p_vaddr &
				~(uint64_t)(ph.p_align ? ph.p_align - 1 : 0);
	}
	if (eh.e_type == ET_DYN && lowest != UINT64_MAX)
		bias = map_start - lowest;
	sh = read_shdrs(f, &eh);
	names = sh && eh.e_shstrndx < eh.e_shnum ?
		read_blob(f, sh[eh.e_shstrndx].sh_offset,
			  sh[eh.e_shstrndx].sh_size) : NULL;
	if (!names) {
		free(sh);
		fclose(f);
		return;
	}
	add_syms(f, &eh, sh, names, bias, xstrdup(base_name(path)));
	for (i = 0; i < eh.e_shnum; i++) {
		const char *n = names + sh[i].sh_name;
		uint64_t a;

		if (sh[i].sh_name >= sh[eh.e_shstrndx].sh_size)
			continue;
		if (!strcmp(n, "__rseq_cs_ptr_array")) {
			for (a = 0; a + 8 <= sh[i].sh_size; a += 8)
				add_section(peek_u64(sh[i].sh_addr + bias + a));
		} else if (!strcmp(n, "__rseq_cs")) {
			for (a = 0; a + 32 <= sh[i].sh_size; a += 32)
				add_section(sh[i].sh_addr + bias + a);
		}
	}
	free(names);
	free(sh);
	fclose(f);
}

/* Every object mapped from a file, once: its offset-0 mapping's start. */
static void scan_sections(void)
{
	char path[64], line[4096], seen[64][512];
	size_t nseen = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
	f = fopen(path, "r");
	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int pos = 0;
		char *file;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start,
			   &end, perms, &off, &pos) < 4 || !pos)
			continue;
		file = line + pos;
		file[strcspn(file, "\n")] = 0;
		if (file[0] != '/' || off != 0)
			continue;
		for (i = 0; i < nseen; i++)
			if (!strcmp(seen[i], file))
				break;
		if (i < nseen || nseen == 64)
			continue;
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", file);
		scan_object(file, start);
	}
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
	for (i = 0; i < nsecs; i++)
		describe_addr(secs[i].start, secs[i].where,
			      sizeof(secs[i].where));
	scanned = true;
}

/* ---- breakpoints ---- */

static const uint8_t trap_insn[AK_RC_TRAP_LEN] = AK_RC_TRAP_BYTES;
#define TRAP_LEN	AK_RC_TRAP_LEN

struct bp {
	uint64_t addr;
	uint8_t orig[TRAP_LEN];
};

static struct bp *bps;
static size_t nbps;

static struct bp *bp_find(uint64_t addr)
{
	size_t i;

	for (i = 0; i < nbps; i++)
		if (bps[i].addr == addr)
			return &bps[i];
	return NULL;
}

static void bp_arm(uint64_t addr)
{
	struct bp *b;

	if (bp_find(addr))
		return;
	bps = xrealloc(bps, nbps + 1, sizeof(*bps));
	b = &bps[nbps++];
	b->addr = addr;
	peek(addr, b->orig, TRAP_LEN);
	poke(addr, trap_insn, TRAP_LEN);
}

static void bp_disarm(uint64_t addr)
{
	struct bp *b = bp_find(addr);

	if (!b)
		return;
	poke(addr, b->orig, TRAP_LEN);
	*b = bps[--nbps];
}

/* ---- cases, runs and verdicts ---- */

struct job {
	struct section *s;
	size_t k;		/* instruction k; k == ninsn: post_commit_ip */
};

struct kase {
	char *name;
	bool discovered;
	struct job *jobs;
	size_t njobs, next;
	struct section **in;	/* the sections it enters */
	size_t nin;
};

static struct kase *cases;
static size_t ncases;

static void plan(struct section *s);

/* What the current run is doing. */
static enum { IDLE, DISCOVER, JOB } phase;
static struct kase *cur;
static struct job job;
static uint64_t job_addr;
static bool job_hit, job_aborted;
/*
 * A real preemption aborted a section of the case before the stop: the
 * run may have gone on through the library's out-of-line sections, whose
 * commits do not move the regions' baseline.
 */
static bool job_preempted;
/* --preempt: the section start at which this run is still to be aborted */
static uint64_t preempt_at;
/* the job's reruns */
static unsigned int job_tries;
#define JOB_TRIES	8
static char job_effect[256];
static uint64_t case_addr;
static struct ak_rseq_check_region regions[AK_RSEQ_CHECK_REGIONS];
static uint8_t *snap[AK_RSEQ_CHECK_REGIONS];

/*
 * The traced thread's rseq area: at a stop at a section's post_commit_ip,
 * its rseq_cs field says whether the program came through that section
 * (it points to the section's descriptor until the kernel clears it on a
 * resume) or only through code that jumps there after another commit.
 */
#ifndef PTRACE_GET_RSEQ_CONFIGURATION
# define PTRACE_GET_RSEQ_CONFIGURATION	0x420f
#endif
struct rseq_config {
	uint64_t rseq_abi_pointer;
	uint32_t rseq_abi_size, signature, flags, pad;
};

static uint64_t rseq_cs_now(void)
{
	/* the one traced thread's area: asked for until it is registered */
	static uint64_t area;
	struct rseq_config rc;

	if (!area) {
		memset(&rc, 0, sizeof(rc));
		if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, child,
			   (void *)sizeof(rc), &rc) < 0)
			die("PTRACE_GET_RSEQ_CONFIGURATION: %s (Linux 5.13 or"
			    " later is needed)", strerror(errno));
		area = rc.rseq_abi_pointer;
		if (!area)
			return 0;
	}
	return peek_u64(area + 8);
}

/* A pending step: over a breakpoint to re-arm, or a job's stop's resume. */
static enum { NO_STEP, STEP_OVER, STEP_JOB, STEP_PREEMPT } step;
static uint64_t step_rearm;

static unsigned long failures, random_aborts, disc_aborts;
static unsigned int disc_tries;
static char **fails;
static size_t nfails;

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fails = xrealloc(fails, nfails + 1, sizeof(*fails));
	fails[nfails++] = xstrdup(buf);
	failures++;
}

/* "instruction 3 of 9 at obj:fn+0x1c (48 8b 07)" */
static void name_insn(const struct section *s, size_t k, char *buf,
		      size_t len)
{
	char where[160], bytes[64] = "";
	const uint8_t *b;
	uint64_t a, end;
	size_t i, n;

	if (k >= s->ninsn) {
		describe_addr(s->post, where, sizeof(where));
		snprintf(buf, len, "post_commit_ip at %s", where);
		return;
	}
	a = s->insn[k];
	end = k + 1 < s->ninsn ? s->insn[k + 1] : s->post;
	n = end - a < 16 ? end - a : 16;
	b = s->text + (a - s->start);
	for (i = 0; i < n; i++)
		snprintf(bytes + (i ? 3 * i - 1 : 0),
			 sizeof(bytes) - (i ? 3 * i - 1 : 0), "%s%02x",
			 i ? " " : "", b[i]);
	describe_addr(a, where, sizeof(where));
	snprintf(buf, len, "instruction %zu of %zu at %s (%s)", k + 1,
		 s->ninsn, where, bytes);
}

static void read_case_regions(void)
{
	size_t off = offsetof(struct ak_rseq_check_case, regions);
	int i;

	peek(case_addr + off, regions, sizeof(regions));
	for (i = 0; i < AK_RSEQ_CHECK_REGIONS; i++) {
		free(snap[i]);
		snap[i] = NULL;
		if (!regions[i].p || !regions[i].len)
			continue;
		if (regions[i].len > (64u << 20))
			die("case %s: region %d is %zu bytes: too large",
			    cur->name, i, regions[i].len);
		snap[i] = xcalloc(regions[i].len, 1);
		peek((uintptr_t)regions[i].p, snap[i], regions[i].len);
	}
}

/* At an abort: the first byte of a region that differs from the run's start. */
static void compare_regions(void)
{
	uint8_t *now;
	size_t j;
	int i;

	for (i = 0; i < AK_RSEQ_CHECK_REGIONS && !job_effect[0]; i++) {
		if (!snap[i])
			continue;
		now = xcalloc(regions[i].len, 1);
		peek((uintptr_t)regions[i].p, now, regions[i].len);
		for (j = 0; j < regions[i].len; j++) {
			if (now[j] != snap[i][j]) {
				snprintf(job_effect, sizeof(job_effect),
					 "region %d byte %zu was %#04x before"
					 " the run and %#04x at the abort", i,
					 j, snap[i][j], now[j]);
				break;
			}
		}
		free(now);
	}
}

static struct kase *case_named(const char *name)
{
	size_t i;

	for (i = 0; i < ncases; i++)
		if (!strcmp(cases[i].name, name))
			return &cases[i];
	cases = xrealloc(cases, ncases + 1, sizeof(*cases));
	memset(&cases[ncases], 0, sizeof(*cases));
	cases[ncases].name = xstrdup(name);
	return &cases[ncases++];
}

static void write_again(uint32_t again)
{
	poke(case_addr + offsetof(struct ak_rseq_check_case, again), &again,
	     sizeof(again));
}

static void begin(void)
{
	char name[256];
	size_t i;

	if (phase != IDLE)
		die("a case began inside a run of case %s",
		    cur ? cur->name : "?");
	cur = case_named(peek_str(peek_u64(case_addr +
				offsetof(struct ak_rseq_check_case, name)),
				  name, sizeof(name)));
	if (!cur->discovered) {
		/*
		 * Where does the case go?  A stop after each commit says; a
		 * stop at each abort_ip says whether a real preemption sent
		 * it somewhere else this time.
		 */
		for (i = 0; i < nsecs; i++) {
			bp_arm(secs[i].post);
			bp_arm(secs[i].abort_ip);
		}
		phase = DISCOVER;
		disc_aborts = 0;
		cur->nin = 0;
		write_again(1);
		return;
	}
	if (cur->next == cur->njobs) {
		write_again(0);
		return;
	}
	job = cur->jobs[cur->next++];
	job_addr = job.k < job.s->ninsn ? job.s->insn[job.k] : job.s->post;
	job_hit = job_aborted = job_preempted = false;
	job_effect[0] = 0;
	read_case_regions();
	/*
	 * A commit of any section of the case moves the regions' baseline:
	 * what an abort must leave is what the last commit left.  An abort
	 * of any of them before the stop is a real preemption's.
	 */
	for (i = 0; i < cur->nin; i++) {
		bp_arm(cur->in[i]->post);
		bp_arm(cur->in[i]->abort_ip);
	}
	bp_arm(job_addr);
	preempt_at = 0;
	if (opt_preempt && !job_tries && job.k > 0 &&
	    !bp_find(job.s->insn[0])) {
		preempt_at = job.s->insn[0];
		bp_arm(preempt_at);
	}
	phase = JOB;
	write_again(1 + job_tries);	/* the case's variant, plus one */
}

static void end(void)
{
	size_t off = offsetof(struct ak_rseq_check_case, ok), i, k;
	struct ak_rseq_check_case c;
	char what[512];
	bool wrong = false;

	peek(case_addr + off, &c.ok,
	     sizeof(c) - off);	/* ok, runs, why */
	c.why[sizeof(c.why) - 1] = 0;
	if (phase == DISCOVER) {
		for (i = 0; i < nsecs; i++) {
			bp_disarm(secs[i].post);
			bp_disarm(secs[i].abort_ip);
		}
		phase = IDLE;
		/*
		 * An abort sends an inline fastpath to the library's: the
		 * sections of such a run are not the case's.  Look again.
		 */
		if (disc_aborts && ++disc_tries < JOB_TRIES)
			return;
		disc_tries = 0;
		cur->discovered = true;
		if (!c.ok)
			fail("%s: wrong without any stop: %s", cur->name,
			     c.why);
		if (!cur->nin)
			fail("%s: the case entered no rseq section (not an"
			     " rseq mode?)", cur->name);
		for (i = 0; i < cur->nin; i++)
			plan(cur->in[i]);
		return;
	}
	if (phase != JOB)
		die("case %s ended outside a run", cur ? cur->name : "?");
	for (i = 0; i < cur->nin; i++) {
		bp_disarm(cur->in[i]->post);
		bp_disarm(cur->in[i]->abort_ip);
	}
	bp_disarm(job_addr);
	if (preempt_at)
		bp_disarm(preempt_at);
	/*
	 * Not stopped at: a real preemption aborted the section before the
	 * stop and the operation went on elsewhere (an inline fastpath falls
	 * back to the library's), or this run's input took a branch around
	 * the instruction.  An effect seen at the stop's abort after a real
	 * one may be a commit of the library's copy the baseline missed.
	 * Run the job again, as the case's next variant.
	 */
	if ((!job_hit || (job_preempted && job_effect[0])) && c.ok &&
	    ++job_tries < JOB_TRIES) {
		cur->next--;
		phase = IDLE;
		return;
	}
	job_tries = 0;
	name_insn(job.s, job.k, what, sizeof(what));
	if (!job_hit) {
		fail("%s: %s: never stopped at", cur->name, what);
		wrong = true;
	} else {
		job.s->stops++;
	}
	if (job_hit && job.k < job.s->ninsn) {
		if (job_aborted) {
			job.s->aborts++;
		} else {
			fail("%s: %s: the stop did not abort the section",
			     cur->name, what);
			wrong = true;
		}
	}
	if (job.k == job.s->ninsn && job_aborted) {
		fail("%s: %s: the stop after the commit aborted the section",
		     cur->name, what);
		wrong = true;
	}
	if (job_effect[0]) {
		char culprit[512] = "";

		k = job.k;
		if (k > 0 && k <= job.s->ninsn) {
			name_insn(job.s, k - 1, culprit, sizeof(culprit));
		}
		fail("%s: %s: the aborted section left a visible effect:"
		     " %s%s%s", cur->name, what, job_effect,
		     culprit[0] ? "; written by or before " : "", culprit);
		if (!job.s->effect_from || k + 1 < job.s->effect_from)
			job.s->effect_from = k + 1;
		wrong = true;
	}
	if (!c.ok) {
		fail("%s: %s: wrong result after the retry: %s", cur->name,
		     what, c.why);
		wrong = true;
	}
	if (wrong)
		job.s->wrong++;
	phase = IDLE;
}

/* The discovery run found section s entered by the current case. */
static void entered(struct section *s)
{
	size_t k;

	for (k = 0; k < cur->nin; k++)
		if (cur->in[k] == s)
			return;
	cur->in = xrealloc(cur->in, cur->nin + 1, sizeof(*cur->in));
	cur->in[cur->nin++] = s;
}

/* Its runs: one per instruction, one at post_commit_ip; once a program. */
static void plan(struct section *s)
{
	size_t k;

	if (s->planned)
		return;
	s->planned = true;
	s->cas = cur->name;
	if (s->undecodable) {
		char where[160];

		describe_addr(s->start, where, sizeof(where));
		fail("%s: section at %s: an instruction this arch's decoder"
		     " does not know: not checked", cur->name, where);
		s->wrong++;
		return;
	}
	cur->jobs = xrealloc(cur->jobs, cur->njobs + s->ninsn + 1,
			     sizeof(*cur->jobs));
	for (k = 0; k <= s->ninsn; k++)
		cur->jobs[cur->njobs++] = (struct job){ s, k };
}

/* ---- the stops ---- */

static void resume(int req, int sig)
{
	if (ptrace(req, child, 0, (void *)(long)sig))
		die("ptrace(%s): %s", req == PTRACE_CONT ? "CONT" :
		    "SINGLESTEP", strerror(errno));
}

/* Leave breakpoint addr (the pc is on it) and re-arm it after one step. */
static void step_over(uint64_t addr)
{
	bp_disarm(addr);
	pc_back_to(addr);
	step = STEP_OVER;
	step_rearm = addr;
	resume(PTRACE_SINGLESTEP, 0);
}

/* A marker: the case's address in arg0, the event in arg1. */
static void marker(struct regs *g, uint64_t trap_at)
{
	uint32_t magic;

	case_addr = g->r[AK_RC_REG_ARG0];
	peek(case_addr, &magic, sizeof(magic));
	if (magic != AK_RSEQ_CHECK_MAGIC)
		die("a trap at %#llx that is neither a breakpoint of ours nor"
		    " a marker of <atomkit/rseq-check.h>",
		    (unsigned long long)trap_at);
	if (!AK_RC_TRAP_PC_AFTER) {
		g->r[AK_RC_REG_PC] = trap_at + TRAP_LEN;
		set_regs(g);
	}
	if (!scanned)
		scan_sections();
	switch (g->r[AK_RC_REG_ARG1]) {
	case AK_RSEQ_CHECK_BEGIN:
		begin();
		break;
	case AK_RSEQ_CHECK_END:
		end();
		break;
	default:
		die("a marker with an unknown event %lu",
		    (unsigned long)g->r[AK_RC_REG_ARG1]);
	}
	resume(PTRACE_CONT, 0);
}

static void on_sigtrap(void)
{
	siginfo_t si;
	struct regs g;
	uint64_t pc, at;
	uint8_t insn[TRAP_LEN];
	size_t i;
	bool brk;

	if (ptrace(PTRACE_GETSIGINFO, child, 0, &si))
		die("PTRACE_GETSIGINFO: %s", strerror(errno));
	get_regs(&g);
	pc = g.r[AK_RC_REG_PC];
	at = AK_RC_TRAP_PC_AFTER ? pc - TRAP_LEN : pc;
	/* a trap instruction executed (not a step's end) at a breakpoint */
	brk = si.si_code != TRAP_TRACE && bp_find(at);
	if (opt_trace)
		fprintf(stderr, "stop: pc %#llx si_code %d%s%s, phase %d,"
			" job %#llx, abort %#llx\n", (unsigned long long)pc,
			si.si_code, brk ? ", a breakpoint" : "",
			step == STEP_JOB ? ", after the job's step" :
			step == STEP_OVER ? ", after a step over" : "", phase,
			(unsigned long long)(phase == JOB ? job_addr : 0),
			(unsigned long long)(phase == JOB ?
					     job.s->abort_ip : 0));

	if (step == STEP_OVER) {
		step = NO_STEP;
		bp_arm(step_rearm);
		if (!brk) {
			resume(PTRACE_CONT, 0);
			return;
		}
		/* the stepped instruction led straight onto another one */
	} else if (step == STEP_JOB) {
		step = NO_STEP;
		/*
		 * Where did the resume of the job's stop go?  At abort_ip
		 * (its breakpoint trapped, or the step ended before it) the
		 * kernel aborted the section.
		 */
		if ((brk && at == job.s->abort_ip) || pc == job.s->abort_ip) {
			job_aborted = true;
			compare_regions();
			bp_disarm(job.s->abort_ip);
			if (brk)
				pc_back_to(at);
			resume(PTRACE_CONT, 0);
			return;
		}
		if (!brk) {
			resume(PTRACE_CONT, 0);
			return;
		}
	} else if (step == STEP_PREEMPT) {
		step = NO_STEP;
		/*
		 * As a job's stop, but the run goes on: the trap at abort_ip
		 * (now, or on the resume) counts the abort as a real one's.
		 */
		if (!(brk && at == job.s->abort_ip) && pc != job.s->abort_ip) {
			char what[512];

			name_insn(job.s, 0, what, sizeof(what));
			fail("%s: %s: the preemption before the stop did not"
			     " abort the section", cur->name, what);
		}
		preempt_at = 0;
		if (!brk) {
			resume(PTRACE_CONT, 0);
			return;
		}
	}
	if (brk) {
		if (phase == JOB && at == preempt_at && !job_hit) {
			/* --preempt: a context switch here, once */
			bp_disarm(at);
			pc_back_to(at);
			step = STEP_PREEMPT;
			resume(PTRACE_SINGLESTEP, 0);
			return;
		}
		if (phase == JOB && at == job_addr && !job_hit) {
			/* the stop: resume it by one step, and see */
			job_hit = true;
			bp_disarm(at);
			pc_back_to(at);
			step = STEP_JOB;
			resume(PTRACE_SINGLESTEP, 0);
			return;
		}
		if (phase == JOB) {
			bool aborted = false;

			for (i = 0; i < cur->nin; i++) {
				/* a commit of that section, not a jump to its end */
				if (cur->in[i]->post == at &&
				    rseq_cs_now() == cur->in[i]->desc)
					read_case_regions();
				aborted |= cur->in[i]->abort_ip == at;
			}
			if (aborted) {
				random_aborts++;	/* a real preemption */
				job_preempted |= !job_hit;
			}
		}
		if (phase == DISCOVER) {
			for (i = 0; i < nsecs; i++) {
				if (secs[i].post == at &&
				    rseq_cs_now() == secs[i].desc)
					entered(&secs[i]);
				if (secs[i].abort_ip == at)
					disc_aborts++;
			}
		}
		step_over(at);
		return;
	}
	peek(at, insn, TRAP_LEN);
	if (!memcmp(insn, trap_insn, TRAP_LEN)) {
		marker(&g, at);
		return;
	}
	/* not ours: the program's own SIGTRAP */
	resume(PTRACE_CONT, SIGTRAP);
}

/* ---- the report ---- */

static void report(const char *prog, const char *mode, int status)
{
	struct utsname u;
	size_t i, entered = 0, n = 0;
	unsigned long insns = 0, stops = 0, aborts = 0, wrong = 0;

	if (uname(&u))
		strcpy(u.release, "?");
	for (i = 0; i < nsecs; i++) {
		if (!secs[i].planned)
			continue;
		entered++;
		insns += secs[i].ninsn;
		stops += secs[i].stops;
		aborts += secs[i].aborts;
		wrong += secs[i].wrong;
	}
	if (opt_tap) {
		printf("# atomkit-rseq-check: %s, Linux %s, mode %s: %s\n",
		       AK_RC_ARCH, u.release, mode, prog);
	} else if (!opt_quiet) {
		printf("atomkit-rseq-check: %s, Linux %s, mode %s: %s\n\n",
		       AK_RC_ARCH, u.release, mode, prog);
		printf("%-26s %-40s %5s %5s %6s %5s\n", "case", "section",
		       "insns", "stops", "aborts", "wrong");
	}
	for (i = 0; i < nsecs; i++) {
		const struct section *s = &secs[i];

		if (!s->planned && !opt_list)
			continue;
		if (opt_tap) {
			if (!s->planned) {
				printf("# not entered: %s\n", s->where);
				continue;
			}
			printf("%s %zu - %s %s: %zu instructions, %lu stops,"
			       " %lu aborts, %lu wrong\n",
			       s->wrong || s->stops != s->ninsn + 1 ||
			       s->aborts != s->ninsn ? "not ok" : "ok", ++n,
			       s->cas, s->where, s->ninsn, s->stops,
			       s->aborts, s->wrong);
		} else if (!opt_quiet) {
			printf("%-26s %-40s %5zu %5lu %6lu %5lu\n",
			       s->planned ? s->cas : "(not entered)", s->where,
			       s->ninsn, s->stops, s->aborts, s->wrong);
		}
	}
	for (i = 0; i < nfails; i++)
		printf("%s%s\n", opt_tap ? "# FAILED: " : "FAILED: ",
		       fails[i]);
	/* the culprit: the last instruction before the first such stop */
	for (i = 0; i < nsecs; i++) {
		char what[512];

		if (secs[i].effect_from < 2)
			continue;
		name_insn(&secs[i], secs[i].effect_from - 2, what,
			  sizeof(what));
		printf("%sFAILED: %s: %s stores before the commit: an abort"
		       " after it leaves the store visible\n",
		       opt_tap ? "# " : "", secs[i].cas, what);
	}
	if (opt_tap) {
		printf("%s %zu - every section of %s entered (%zu of %zu)\n",
		       entered == nsecs ? "ok" : opt_require_all ? "not ok" :
		       "ok", ++n, prog, entered, nsecs);
		if (entered != nsecs && !opt_require_all)
			printf("# %zu section(s) of the program are on paths"
			       " no case takes (--list names them)\n",
			       nsecs - entered);
		printf("%s %zu - the target exited 0\n",
		       status == 0 ? "ok" : "not ok", ++n);
		printf("1..%zu\n", n);
	}
	printf("%s%zu section(s) found, %zu entered: %lu instructions,"
	       " %lu stops, %lu aborts, %lu wrong; %lu other aborts;"
	       " %lu failure(s)\n", opt_tap ? "# " : opt_quiet ? "" : "\n",
	       nsecs, entered, insns, stops, aborts, wrong, random_aborts,
	       failures);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "tap", no_argument, NULL, 't' },
		{ "require-all", no_argument, NULL, 'r' },
		{ "list", no_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "trace", no_argument, NULL, 'T' },
		{ "preempt", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *mode = getenv("AK_PERCPU_MODE");
	int c, status, rc = 0;
	size_t i;

	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "rseq") &&
			    strcmp(optarg, "rseq-mm_cid")) {
				fprintf(stderr, "atomkit-rseq-check: --mode %s:"
					" the sections run in rseq and"
					" rseq-mm_cid only\n", optarg);
				return 2;
			}
			mode = optarg;
			break;
		case 't': opt_tap = true; break;
		case 'r': opt_require_all = true; break;
		case 'l': opt_list = true; break;
		case 'q': opt_quiet = true; break;
		case 'T': opt_trace = true; break;
		case 'P': opt_preempt = true; break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'atomkit-rseq-check --help'.\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "atomkit-rseq-check: no program to run\n"
			"Try 'atomkit-rseq-check --help'.\n");
		return 2;
	}
	if (mode && setenv("AK_PERCPU_MODE", mode, 1))
		die("setenv: %s", strerror(errno));
	fflush(stdout);
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (!child) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0)) {
			fprintf(stderr, "atomkit-rseq-check: ptrace is not"
				" permitted here: %s\n", strerror(errno));
			_exit(EXIT_SKIP);
		}
		execvp(argv[optind], &argv[optind]);
		fprintf(stderr, "atomkit-rseq-check: %s: %s\n", argv[optind],
			strerror(errno));
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		die("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(status)) {
		child = 0;
		return WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP ?
			EXIT_SKIP : 1;
	}
	if (ptrace(PTRACE_SETOPTIONS, child, 0, (void *)PTRACE_O_EXITKILL))
		die("PTRACE_SETOPTIONS: %s", strerror(errno));
	resume(PTRACE_CONT, 0);
	for (;;) {
		if (waitpid(child, &status, __WALL) != child) {
			if (errno == EINTR)
				continue;
			die("waitpid: %s", strerror(errno));
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) == SIGTRAP)
			on_sigtrap();
		else
			resume(PTRACE_CONT, WSTOPSIG(status));
	}
	child = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP &&
	    !ncases) {
		printf("%satomkit-rseq-check: %s cannot run here (exit %d):"
		       " skipped\n", opt_tap ? "1..0 # SKIP " : "",
		       argv[optind], EXIT_SKIP);
		return EXIT_SKIP;
	}
	if (phase != IDLE)
		fail("the target ended inside a run of case %s",
		     cur ? cur->name : "?");
	if (WIFSIGNALED(status)) {
		fail("the target was killed by signal %d (%s)",
		     WTERMSIG(status), strsignal(WTERMSIG(status)));
		rc = 1;
	} else if (WEXITSTATUS(status)) {
		fail("the target exited %d", WEXITSTATUS(status));
		rc = WEXITSTATUS(status);
	}
	if (!ncases)
		fail("the target ran no case of <atomkit/rseq-check.h>");
	for (i = 0; i < nsecs && opt_require_all; i++)
		if (!secs[i].planned)
			fail("section at %s: no case entered it",
			     secs[i].where);
	report(argv[optind], mode ? mode : "default", rc);
	return failures ? 1 : 0;
}
#endif /* AK_HAVE_ARCH_RSEQ_CHECK */
