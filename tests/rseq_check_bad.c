// SPDX-License-Identifier: MIT
/*
 * A deliberately wrong rseq section, for tests/test_rseq_check.sh: it
 * counts an event with a store of its own before its commit,
 *
 *   1:	c = base + *idp * stride
 *	c->events++		<- seen by all, not undone by an abort
 *	c->value++		the commit
 *   2:
 *
 * so a preemption between the two stores makes the retry count the event
 * twice.  atomkit-rseq-check must fail on it and name the instruction
 * (the events store): the stops after it leave c->events changed at the
 * abort, and the case's verdict (events == value) is wrong after the
 * retry.  Run alone it is right, as the bug needs an abort.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <atomkit/percpu.h>
#include <atomkit/rseq-check.h>

struct pair {
	uint64_t value, events;
};

#if AK_HAVE_ARCH_RSEQ
static __attribute__((noinline)) int
bad_inc(struct ak_rseq_abi *rs, const uint32_t *idp, void *const *base,
	const size_t *stride)
{
	uintptr_t c, t;

#if defined(__x86_64__)
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq %[st], %[c]\n\t"
		"addq %[b], %[c]\n\t"
		"addq $1, 8(%[c])\n\t"
		"mov (%[c]), %[t]\n\t"
		"add $1, %[t]\n\t"
		"mov %[t], (%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "m"(*base),
		  [st] "m"(*stride)
		: "memory", "cc"
		: abort);
#elif defined(__aarch64__)
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[t], [%[c], #8]\n\t"
		"add %[t], %[t], #1\n\t"
		"str %[t], [%[c], #8]\n\t"
		"ldr %[t], [%[c]]\n\t"
		"add %[t], %[t], #1\n\t"
		"str %[t], [%[c]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride)
		: "memory", "cc"
		: abort);
#elif defined(__powerpc64__)
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[t], 8(%[c])\n\t"
		"addi %[t], %[t], 1\n\t"
		"std %[t], 8(%[c])\n\t"
		"ld %[t], 0(%[c])\n\t"
		"addi %[t], %[t], 1\n\t"
		"std %[t], 0(%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [t] "=&b"(t)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride)
		: "memory", "cr0", "lr"
		: abort);
#else
# error "no wrong section for this arch"
#endif
	__AK_RSEQ_EDGE();
	return 0;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}
#endif

int main(void)
{
	enum ak_percpu_mode m = ak_percpu_mode();
	struct ak_rseq_check_case c = { .name = "bad/events_then_value" };
	struct pair *p, *mine;
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (!AK_HAVE_ARCH_RSEQ || !ak_percpu_mode_is_rseq(m)) {
		printf("rseq_check_bad: per-CPU mode %s is not an rseq mode:"
		       " nothing to check\n", ak_percpu_mode_name(m));
		return 77;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		perror("sched_setaffinity");
	p = ak_percpu_alloc(sizeof(*p), 16);
	if (!p) {
		perror("ak_percpu_alloc");
		return 1;
	}
	c.regions[0].p = p;
	c.regions[0].len = ak_percpu_stride(p) * ak_nr_cpus();
	while (ak_rseq_check_begin(&c)) {
#if AK_HAVE_ARCH_RSEQ
		struct ak_rseq_abi *rs = ak_rseq_thread();
		void *base = p;

		while (bad_inc(rs, ak_rseq_id_field(rs, m), &base,
			       __ak_percpu_stridep(p)) < 0)
			;
#endif
		mine = ak_this_cpu_ptr(p);
		ak_rseq_check_end(&c, mine->events == mine->value,
				  "value %llu, events %llu",
				  (unsigned long long)mine->value,
				  (unsigned long long)mine->events);
		/* the next run starts even, whatever this one did */
		mine->events = mine->value;
	}
	return ak_rseq_check_exit();
}
