/* SPDX-License-Identifier: MIT */
/*
 * Generic side of the per-CPU ops: the C half of every rseq critical
 * section, written once for all arches.
 *
 * The ak_arch_rseq_* functions all follow one convention: they run on the
 * slot of CPU (or mm_cid) `cpu`, check *field (rs->cpu_id or rs->mm_cid)
 * against it inside the section, and return 0 when the commit happened,
 * 1 when a compare failed (nothing stored), -1 when the kernel aborted the
 * section (nothing stored; the caller recomputes the slot and retries).
 *
 *   ak_arch_rseq_add{32,64}(rs, field, cpu, p, v, &old)
 *   ak_arch_rseq_cmpxchg{32,64}(rs, field, cpu, p, expect, new, &seen)
 *   ak_arch_rseq_cmpxchg128(rs, field, cpu, p, expect, new, &seen)
 *   ak_arch_rseq_list_pop(rs, field, cpu, &head, &node)
 *   ak_arch_rseq_list_push(rs, field, cpu, &head, node)
 *   ak_arch_rseq_array_push(rs, field, cpu, &count, slots, limit, obj)
 *   ak_arch_rseq_array_pop(rs, field, cpu, &count, slots, &obj)
 *   ak_arch_rseq_array_ptr_push(rs, field, cpu, &ptr, limit, obj)
 *   ak_arch_rseq_array_ptr_pop(rs, field, cpu, &ptr, &obj)
 *   ak_arch_rseq_array_ptr_push_n(rs, field, cpu, &ptr, limit, src, &n)
 *   ak_arch_rseq_array_ptr_pop_n(rs, field, cpu, &ptr, dst, &n)
 *
 * An arch with rseq critical sections (arch/<arch>/percpu.h) defines
 * AK_HAVE_ARCH_RSEQ, AK_RSEQ_SIG and the asm, which this header wraps in
 * the functions:
 *
 *   __AK_ARCH_RSEQ_ENTER	emit the descriptor (__AK_RSEQ_DESCRIPTOR,
 *				<atomkit/rseq-abi.h>), publish it in
 *				rs->rseq_cs, check the id
 *   __AK_ARCH_RSEQ_EXIT	2: rc = 0; signature; 4: rc = -1; 5: rc = 1
 *   __AK_ARCH_RSEQ_OUT, _IN	the operands every section takes: [rc] and
 *				the scratch [cs] out, [rs] [field] [cpu] in
 *   __AK_ARCH_RSEQ_CLOBBER	the clobbers every section has
 *   __AK_ARCH_RSEQ_B		the constraint of a register used as an
 *				address ("r"; "b" on ppc64, where r0 as a
 *				base reads as zero)
 *   __AK_ARCH_RSEQ_ADD(bits), __AK_ARCH_RSEQ_CMPXCHG(bits),
 *   __AK_ARCH_RSEQ_LIST_POP, __AK_ARCH_RSEQ_LIST_PUSH,
 *   __AK_ARCH_RSEQ_ARRAY_PUSH, __AK_ARCH_RSEQ_ARRAY_POP,
 *   __AK_ARCH_RSEQ_ARRAY_PTR_PUSH, __AK_ARCH_RSEQ_ARRAY_PTR_POP,
 *   __AK_ARCH_RSEQ_ARRAY_PTR_PUSH_N, __AK_ARCH_RSEQ_ARRAY_PTR_POP_N
 *				each op's body between ENTER and EXIT: its
 *				loads and compares (a mismatch branches to
 *				5f), the injection point, the commit
 *   __AK_ARCH_RSEQ_CMPXCHG128	a statement running the whole 128-bit
 *				section (its operands are pinned differently
 *				on each arch) that sets rc and *seen
 *
 * The bodies name the operands the functions below give them ([p], [v],
 * [o], ...: see each function); labels 1-6 belong to ENTER and EXIT
 * (and 7 to ppc64's ENTER).
 *
 * Without rseq sections (the generic build, other hosts) the rseq modes
 * are unavailable and the fallbacks serve every op.
 */
#ifndef ATOMKIT_ARCH_GENERIC_PERCPU_H
#define ATOMKIT_ARCH_GENERIC_PERCPU_H

#ifndef AK_HAVE_ARCH_RSEQ
# define AK_HAVE_ARCH_RSEQ	0
#endif

#if AK_HAVE_ARCH_RSEQ

#define __AK_RSEQ_WIDTH(bits)						\
/* *p += v; *old = the value before.  [o] old, [t] sum; [p], [v]. */	\
__ak_inline int								\
ak_arch_rseq_add##bits(struct ak_rseq_abi *rs, const uint32_t *field,	\
		       uint32_t cpu, uint##bits##_t *p, uint##bits##_t v,	\
		       uint##bits##_t *old)				\
{									\
	uint##bits##_t o, t;						\
	uint64_t cs;							\
	int rc;								\
									\
	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER			\
		__AK_ARCH_RSEQ_ADD(bits)				\
		__AK_ARCH_RSEQ_EXIT					\
		: __AK_ARCH_RSEQ_OUT, [o] "=&r"(o), [t] "=&r"(t)	\
		: __AK_ARCH_RSEQ_IN, [p] __AK_ARCH_RSEQ_B (p), [v] "r"(v) \
		: __AK_ARCH_RSEQ_CLOBBER);				\
	*old = o;							\
	return rc;							\
}									\
/*									\
 * if (*p == expect) *p = new_; *seen = the value found.		\
 * [s] seen; [p], [e] expect, [n] new_.					\
 */									\
__ak_inline int								\
ak_arch_rseq_cmpxchg##bits(struct ak_rseq_abi *rs, const uint32_t *field, \
			   uint32_t cpu, uint##bits##_t *p,		\
			   uint##bits##_t expect, uint##bits##_t new_,	\
			   uint##bits##_t *seen)			\
{									\
	uint##bits##_t s;						\
	uint64_t cs;							\
	int rc;								\
									\
	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER			\
		__AK_ARCH_RSEQ_CMPXCHG(bits)				\
		__AK_ARCH_RSEQ_EXIT					\
		: __AK_ARCH_RSEQ_OUT, [s] "=&r"(s)			\
		: __AK_ARCH_RSEQ_IN, [p] __AK_ARCH_RSEQ_B (p),		\
		  [e] "r"(expect), [n] "r"(new_)			\
		: __AK_ARCH_RSEQ_CLOBBER);				\
	*seen = s;							\
	return rc;							\
}

__AK_RSEQ_WIDTH(32)
__AK_RSEQ_WIDTH(64)

/*
 * if (*p == expect) *p = new_ (16-byte aligned); *seen = the value found.
 * The arch's statement runs the whole section, as its operands are
 * pinned differently on each arch; cs is its scratch.
 */
__ak_inline int ak_arch_rseq_cmpxchg128(struct ak_rseq_abi *rs,
					const uint32_t *field, uint32_t cpu,
					ak_u128 *p, ak_u128 expect,
					ak_u128 new_, ak_u128 *seen)
{
	uint64_t cs;
	int rc;

	AK_BUG_ON(!AK_IS_ALIGNED16(p));
	__AK_ARCH_RSEQ_CMPXCHG128;
	return rc;
}

/*
 * Freelist pop: node = *head; if (!node) fail; *head = node->next.
 * [n] node, [x] next; [h] head.
 */
__ak_inline int ak_arch_rseq_list_pop(struct ak_rseq_abi *rs,
				      const uint32_t *field, uint32_t cpu,
				      void **head, void **node)
{
	void *n, *next;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER
		__AK_ARCH_RSEQ_LIST_POP
		__AK_ARCH_RSEQ_EXIT
		: __AK_ARCH_RSEQ_OUT, [n] "=&" __AK_ARCH_RSEQ_B (n),
		  [x] "=&r"(next)
		: __AK_ARCH_RSEQ_IN, [h] __AK_ARCH_RSEQ_B (head)
		: __AK_ARCH_RSEQ_CLOBBER);
	*node = n;
	return rc;
}

/*
 * Freelist push: node->next = *head; *head = node.  Never fails.
 * [t] the old head; [h] head, [n] node.
 */
__ak_inline int ak_arch_rseq_list_push(struct ak_rseq_abi *rs,
				       const uint32_t *field, uint32_t cpu,
				       void **head, void *node)
{
	void *t;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER
		__AK_ARCH_RSEQ_LIST_PUSH
		__AK_ARCH_RSEQ_EXIT
		: __AK_ARCH_RSEQ_OUT, [t] "=&r"(t)
		: __AK_ARCH_RSEQ_IN, [h] __AK_ARCH_RSEQ_B (head),
		  [n] __AK_ARCH_RSEQ_B (node)
		: __AK_ARCH_RSEQ_CLOBBER);
	return rc;
}

/*
 * Array push: if (*count >= limit) fail; slots[*count] = obj; ++*count.
 * [t] the count; [c] count, [s] slots, [l] limit, [o] obj.
 */
__ak_inline int ak_arch_rseq_array_push(struct ak_rseq_abi *rs,
					const uint32_t *field, uint32_t cpu,
					unsigned long *count, void **slots,
					unsigned long limit, void *obj)
{
	unsigned long t;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER
		__AK_ARCH_RSEQ_ARRAY_PUSH
		__AK_ARCH_RSEQ_EXIT
		: __AK_ARCH_RSEQ_OUT, [t] "=&" __AK_ARCH_RSEQ_B (t)
		: __AK_ARCH_RSEQ_IN, [c] __AK_ARCH_RSEQ_B (count),
		  [s] __AK_ARCH_RSEQ_B (slots), [l] "r"(limit), [o] "r"(obj)
		: __AK_ARCH_RSEQ_CLOBBER);
	return rc;
}

/*
 * Array pop: if (!*count) fail; *obj = slots[*count - 1]; --*count.
 * [t] the count, [o] obj; [c] count, [s] slots.
 */
__ak_inline int ak_arch_rseq_array_pop(struct ak_rseq_abi *rs,
				       const uint32_t *field, uint32_t cpu,
				       unsigned long *count, void **slots,
				       void **obj)
{
	unsigned long t;
	void *o;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER
		__AK_ARCH_RSEQ_ARRAY_POP
		__AK_ARCH_RSEQ_EXIT
		: __AK_ARCH_RSEQ_OUT, [t] "=&" __AK_ARCH_RSEQ_B (t),
		  [o] "=&r"(o)
		: __AK_ARCH_RSEQ_IN, [c] __AK_ARCH_RSEQ_B (count),
		  [s] __AK_ARCH_RSEQ_B (slots)
		: __AK_ARCH_RSEQ_CLOBBER);
	*obj = o;
	return rc;
}

/*
 * The array_ptr ops: the same on the array the slot's pointer *ptr points
 * to, { count at +0, slots at +8 }, failing when *ptr is NULL.  The
 * pointer is read inside the section, so a thread of this CPU that takes
 * the array out of the slot (this_cpu_xchg) either ran before the
 * section began or aborts it; the array is not per-CPU memory, but while
 * the slot points to it only this CPU's sections touch it.
 * Push: [a] the array, [t] the count; [p] ptr, [l] limit, [o] obj.
 */
__ak_inline int ak_arch_rseq_array_ptr_push(struct ak_rseq_abi *rs,
					    const uint32_t *field, uint32_t cpu,
					    void **ptr, unsigned long limit,
					    void *obj)
{
	unsigned long t;
	void *a;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER
		__AK_ARCH_RSEQ_ARRAY_PTR_PUSH
		__AK_ARCH_RSEQ_EXIT
		: __AK_ARCH_RSEQ_OUT, [a] "=&" __AK_ARCH_RSEQ_B (a),
		  [t] "=&" __AK_ARCH_RSEQ_B (t)
		: __AK_ARCH_RSEQ_IN, [p] __AK_ARCH_RSEQ_B (ptr),
		  [l] "r"(limit), [o] "r"(obj)
		: __AK_ARCH_RSEQ_CLOBBER);
	return rc;
}

/* Pop: [a] the array, [t] the count, [o] obj; [p] ptr. */
__ak_inline int ak_arch_rseq_array_ptr_pop(struct ak_rseq_abi *rs,
					   const uint32_t *field, uint32_t cpu,
					   void **ptr, void **obj)
{
	unsigned long t;
	void *a, *o;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER
		__AK_ARCH_RSEQ_ARRAY_PTR_POP
		__AK_ARCH_RSEQ_EXIT
		: __AK_ARCH_RSEQ_OUT, [a] "=&" __AK_ARCH_RSEQ_B (a),
		  [t] "=&" __AK_ARCH_RSEQ_B (t), [o] "=&r"(o)
		: __AK_ARCH_RSEQ_IN, [p] __AK_ARCH_RSEQ_B (ptr)
		: __AK_ARCH_RSEQ_CLOBBER);
	*obj = o;
	return rc;
}

/*
 * The array_ptr ops for many objects at once (bulk): *n is how many are
 * wanted, and on a commit how many were moved (at least one; 1 is
 * returned when there were none, or no room).  Pop moves the newest
 * min(*n, count) to dst in their order in the array; push appends
 * min(*n, limit - count) of src.  [a] array, [t] count, [k] *n, [x] [i]
 * [r] scratch; [p] ptr, [d] dst or [s] src, [l] limit.  [i], the copy's
 * index, is stepped with an add-immediate, so it takes the address
 * constraint: on ppc64 "addi rX, r0, 8" reads r0 as zero, and an index
 * given r0 stuck at 8 and looped until the kernel aborted the section,
 * again on every retry (found by the system rig, doc/testing.md).
 */
__ak_inline int ak_arch_rseq_array_ptr_pop_n(struct ak_rseq_abi *rs,
					     const uint32_t *field,
					     uint32_t cpu, void **ptr,
					     void **dst, unsigned long *n)
{
	unsigned long t, k = *n, i;
	void *a, *x, *r;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER
		__AK_ARCH_RSEQ_ARRAY_PTR_POP_N
		__AK_ARCH_RSEQ_EXIT
		: __AK_ARCH_RSEQ_OUT, [a] "=&" __AK_ARCH_RSEQ_B (a),
		  [t] "=&" __AK_ARCH_RSEQ_B (t), [k] "+&r"(k),
		  [x] "=&" __AK_ARCH_RSEQ_B (x),
		  [i] "=&" __AK_ARCH_RSEQ_B (i), [r] "=&r"(r)
		: __AK_ARCH_RSEQ_IN, [p] __AK_ARCH_RSEQ_B (ptr),
		  [d] __AK_ARCH_RSEQ_B (dst)
		: __AK_ARCH_RSEQ_CLOBBER);
	if (!rc)
		*n = k;
	return rc;
}

__ak_inline int ak_arch_rseq_array_ptr_push_n(struct ak_rseq_abi *rs,
					      const uint32_t *field,
					      uint32_t cpu, void **ptr,
					      unsigned long limit,
					      void *const *src,
					      unsigned long *n)
{
	unsigned long t, k = *n, i;
	void *a, *x, *r;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER
		__AK_ARCH_RSEQ_ARRAY_PTR_PUSH_N
		__AK_ARCH_RSEQ_EXIT
		: __AK_ARCH_RSEQ_OUT, [a] "=&" __AK_ARCH_RSEQ_B (a),
		  [t] "=&" __AK_ARCH_RSEQ_B (t), [k] "+&r"(k),
		  [x] "=&" __AK_ARCH_RSEQ_B (x),
		  [i] "=&" __AK_ARCH_RSEQ_B (i), [r] "=&r"(r)
		: __AK_ARCH_RSEQ_IN, [p] __AK_ARCH_RSEQ_B (ptr),
		  [l] "r"(limit), [s] __AK_ARCH_RSEQ_B (src)
		: __AK_ARCH_RSEQ_CLOBBER);
	if (!rc)
		*n = k;
	return rc;
}

/*
 * The _at forms run on the copy base + id * stride of the id the section
 * reads, for callers that keep base and stride at hand (the slab cache;
 * passed by address, so that an arch may read them inside):
 *
 *   ak_arch_rseq_list_pop_at(rs, start, field, &base, &stride, &node)
 *   ak_arch_rseq_list_push_at(rs, start, field, &base, &stride, node)
 *	the list head at +0 of each copy
 *   ak_arch_rseq_array_pop_at(rs, start, field, &base, &stride, &obj)
 *   ak_arch_rseq_array_push_at(rs, start, field, &base, &stride, limit,
 *				obj)
 *	count at +0, slots at +16 (struct ak_percpu_array)
 *   ak_arch_rseq_array_ptr_pop_at(rs, start, field, &base, &stride, &obj)
 *   ak_arch_rseq_array_ptr_push_at(rs, start, field, &base, &stride,
 *				    limit, obj)
 *   ak_arch_rseq_array_ptr_pop_n_at(rs, start, field, &base, &stride,
 *				     dst, &n)
 *   ak_arch_rseq_array_ptr_push_n_at(rs, start, field, &base, &stride,
 *				      limit, src, &n)
 *	the array pointer at +0 of each copy
 *
 * start is the id to compute from before the section (rs->cpu_id_start
 * or rs->mm_cid), field the one the section checks, as above; 0, 1, -1 as
 * above.  An arch whose section can read the id itself and find the copy
 * from it (one load and no check fewer) defines AK_HAVE_ARCH_RSEQ_AT and
 * its own; here they are the ops above on the copy of *start.
 */
#ifndef AK_HAVE_ARCH_RSEQ_AT
# define AK_HAVE_ARCH_RSEQ_AT	0

__ak_inline char *__ak_rseq_copy_at(const uint32_t *start, uint32_t *cpu,
				    void *const *base, const size_t *stride)
{
	*cpu = __atomic_load_n(start, __ATOMIC_RELAXED);
	return (char *)*base + (size_t)*cpu * *stride;
}

__ak_inline int ak_arch_rseq_list_pop_at(struct ak_rseq_abi *rs,
					 const uint32_t *start,
					 const uint32_t *field, void *const *base,
					 const size_t *stride, void **node)
{
	uint32_t cpu;
	char *c = __ak_rseq_copy_at(start, &cpu, base, stride);

	return ak_arch_rseq_list_pop(rs, field, cpu, (void **)c, node);
}

__ak_inline int ak_arch_rseq_list_push_at(struct ak_rseq_abi *rs,
					  const uint32_t *start,
					  const uint32_t *field, void *const *base,
					  const size_t *stride, void *node)
{
	uint32_t cpu;
	char *c = __ak_rseq_copy_at(start, &cpu, base, stride);

	return ak_arch_rseq_list_push(rs, field, cpu, (void **)c, node);
}

__ak_inline int ak_arch_rseq_array_pop_at(struct ak_rseq_abi *rs,
					  const uint32_t *start,
					  const uint32_t *field, void *const *base,
					  const size_t *stride, void **obj)
{
	uint32_t cpu;
	char *c = __ak_rseq_copy_at(start, &cpu, base, stride);

	return ak_arch_rseq_array_pop(rs, field, cpu, (unsigned long *)c,
				      (void **)(c + 16), obj);
}

__ak_inline int ak_arch_rseq_array_push_at(struct ak_rseq_abi *rs,
					   const uint32_t *start,
					   const uint32_t *field, void *const *base,
					   const size_t *stride, unsigned long limit,
					   void *obj)
{
	uint32_t cpu;
	char *c = __ak_rseq_copy_at(start, &cpu, base, stride);

	return ak_arch_rseq_array_push(rs, field, cpu, (unsigned long *)c,
				       (void **)(c + 16), limit, obj);
}

__ak_inline int ak_arch_rseq_array_ptr_pop_at(struct ak_rseq_abi *rs,
					      const uint32_t *start,
					      const uint32_t *field,
					      void *const *base,
					      const size_t *stride, void **obj)
{
	uint32_t cpu;
	char *c = __ak_rseq_copy_at(start, &cpu, base, stride);

	return ak_arch_rseq_array_ptr_pop(rs, field, cpu, (void **)c, obj);
}

__ak_inline int ak_arch_rseq_array_ptr_push_at(struct ak_rseq_abi *rs,
					       const uint32_t *start,
					       const uint32_t *field,
					       void *const *base,
					       const size_t *stride,
					       unsigned long limit, void *obj)
{
	uint32_t cpu;
	char *c = __ak_rseq_copy_at(start, &cpu, base, stride);

	return ak_arch_rseq_array_ptr_push(rs, field, cpu, (void **)c, limit,
					   obj);
}

__ak_inline int ak_arch_rseq_array_ptr_pop_n_at(struct ak_rseq_abi *rs,
						const uint32_t *start,
						const uint32_t *field,
						void *const *base,
						const size_t *stride,
						void **dst, unsigned long *n)
{
	uint32_t cpu;
	char *c = __ak_rseq_copy_at(start, &cpu, base, stride);

	return ak_arch_rseq_array_ptr_pop_n(rs, field, cpu, (void **)c, dst,
					    n);
}

__ak_inline int ak_arch_rseq_array_ptr_push_n_at(struct ak_rseq_abi *rs,
						 const uint32_t *start,
						 const uint32_t *field,
						 void *const *base,
						 const size_t *stride,
						 unsigned long limit,
						 void *const *src,
						 unsigned long *n)
{
	uint32_t cpu;
	char *c = __ak_rseq_copy_at(start, &cpu, base, stride);

	return ak_arch_rseq_array_ptr_push_n(rs, field, cpu, (void **)c,
					     limit, src, n);
}
#endif /* !AK_HAVE_ARCH_RSEQ_AT */

#else /* !AK_HAVE_ARCH_RSEQ */

/* Never called: the rseq modes are unavailable, so their branch is dead. */
__ak_inline int __ak_no_rseq(void)
{
	__builtin_trap();
}
# define ak_arch_rseq_add32(...)	__ak_no_rseq()
# define ak_arch_rseq_add64(...)	__ak_no_rseq()
# define ak_arch_rseq_cmpxchg32(...)	__ak_no_rseq()
# define ak_arch_rseq_cmpxchg64(...)	__ak_no_rseq()
# define ak_arch_rseq_cmpxchg128(...)	__ak_no_rseq()
# define ak_arch_rseq_list_pop(...)	__ak_no_rseq()
# define ak_arch_rseq_list_push(...)	__ak_no_rseq()
# define ak_arch_rseq_array_push(...)	__ak_no_rseq()
# define ak_arch_rseq_array_pop(...)	__ak_no_rseq()
# define ak_arch_rseq_list_pop_at(...)	__ak_no_rseq()
# define ak_arch_rseq_list_push_at(...)	__ak_no_rseq()
# define ak_arch_rseq_array_push_at(...) __ak_no_rseq()
# define ak_arch_rseq_array_pop_at(...)	__ak_no_rseq()
# define ak_arch_rseq_array_ptr_push(...) __ak_no_rseq()
# define ak_arch_rseq_array_ptr_pop(...) __ak_no_rseq()
# define ak_arch_rseq_array_ptr_push_n(...) __ak_no_rseq()
# define ak_arch_rseq_array_ptr_pop_n(...) __ak_no_rseq()
# define ak_arch_rseq_array_ptr_push_n_at(...) __ak_no_rseq()
# define ak_arch_rseq_array_ptr_pop_n_at(...) __ak_no_rseq()
# define ak_arch_rseq_array_ptr_push_at(...) __ak_no_rseq()
# define ak_arch_rseq_array_ptr_pop_at(...) __ak_no_rseq()
# define AK_HAVE_ARCH_RSEQ_AT		0

#endif /* AK_HAVE_ARCH_RSEQ */

#endif /* ATOMKIT_ARCH_GENERIC_PERCPU_H */
