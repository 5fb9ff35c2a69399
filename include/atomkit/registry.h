/* SPDX-License-Identifier: MIT */
/*
 * The registry of every compiled variant of every primitive: arch,
 * primitive, width, name, ordering, instruction, whether it is safe
 * across CPUs, and whether this machine can run it.  Benchmarks and tests
 * iterate over it; `atomkit-variants` prints it.
 */
#ifndef ATOMKIT_REGISTRY_H
#define ATOMKIT_REGISTRY_H

#include <stddef.h>
#include <atomkit/cmpxchg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ak_prim {
	ak_prim_cmpxchg,	/* T f(T *p, T old, T new): previous value */
	ak_prim_try_cmpxchg,	/* bool f(T *p, T *old, T new) */
	ak_prim_xchg,		/* T f(T *p, T v): previous value */
	ak_prim_fetch_add,	/* T f(T *p, T v): previous value */
	ak_prim_nr
};

struct ak_variant {
	const char *arch;	/* "x86_64", "arm64", "ppc64", "generic" */
	const char *prim;	/* "cmpxchg", "try_cmpxchg", "xchg", ... */
	enum ak_prim kind;
	unsigned int width;	/* 32, 64 or 128 */
	const char *name;	/* unique within arch+prim+width: "lock" */
	const char *order;	/* full, seq_cst, acq_rel, acquire, release,
				 * relaxed or local (doc/primitives.md) */
	const char *insn;	/* what it executes, for tables */
	bool smp_safe;		/* atomic against other CPUs */
	bool (*usable)(void);	/* can this machine run it? */
	union {
		uint32_t (*cmpxchg32)(uint32_t *, uint32_t, uint32_t);
		uint64_t (*cmpxchg64)(uint64_t *, uint64_t, uint64_t);
		ak_u128 (*cmpxchg128)(ak_u128 *, ak_u128, ak_u128);
		bool (*try_cmpxchg32)(uint32_t *, uint32_t *, uint32_t);
		bool (*try_cmpxchg64)(uint64_t *, uint64_t *, uint64_t);
		bool (*try_cmpxchg128)(ak_u128 *, ak_u128 *, ak_u128);
		uint32_t (*xchg32)(uint32_t *, uint32_t);
		uint64_t (*xchg64)(uint64_t *, uint64_t);
		uint32_t (*fetch_add32)(uint32_t *, uint32_t);
		uint64_t (*fetch_add64)(uint64_t *, uint64_t);
	} fn;
};

/* All compiled variants, arch-specific ones first. */
const struct ak_variant *ak_variants(size_t *count);

/* By full name "arch/prim<width>/name", e.g. "x86_64/cmpxchg64/lock". */
const struct ak_variant *ak_variant_find(const char *fullname);

/* "x86_64/cmpxchg64/lock" into buf; returns buf. */
char *ak_variant_fullname(const struct ak_variant *v, char *buf,
			  size_t size);

#ifdef __cplusplus
}
#endif

#endif /* ATOMKIT_REGISTRY_H */
