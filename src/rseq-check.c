// SPDX-License-Identifier: MIT
/*
 * The target side of atomkit-rseq-check (<atomkit/rseq-check.h>): the
 * marker traps, and a run of each case once where no tracer is attached.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int traced = -1;
static unsigned long failures;

bool ak_rseq_check_traced(void)
{
	char line[128];
	FILE *f;

	if (traced >= 0)
		return traced;
	traced = 0;
	f = fopen("/proc/self/status", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "TracerPid:", 10)) {
			traced = strtol(line + 10, NULL, 10) != 0;
			break;
		}
	}
	fclose(f);
	/* a tracer we cannot trap to is no tracer of ours */
	if (!AK_HAVE_ARCH_RSEQ_CHECK)
		traced = 0;
	return traced;
}

bool ak_rseq_check_begin(struct ak_rseq_check_case *c)
{
	c->magic = AK_RSEQ_CHECK_MAGIC;
	if (!ak_rseq_check_traced())
		return c->runs == 0;
	c->again = 0;
	__ak_rseq_check_trap(c, AK_RSEQ_CHECK_BEGIN);
	return __atomic_load_n(&c->again, __ATOMIC_RELAXED);
}

void ak_rseq_check_end(struct ak_rseq_check_case *c, bool ok,
		       const char *fmt, ...)
{
	va_list ap;

	c->ok = ok;
	c->why[0] = 0;
	if (!ok) {
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
		failures++;
	}
	c->runs++;
	if (ak_rseq_check_traced())
		__ak_rseq_check_trap(c, AK_RSEQ_CHECK_END);
	else if (!ok)
		fprintf(stderr, "%s: wrong: %s\n", c->name, c->why);
}

int ak_rseq_check_exit(void)
{
	return failures ? 1 : 0;
}
