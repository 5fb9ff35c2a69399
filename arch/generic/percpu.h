/* SPDX-License-Identifier: MIT */
/*
 * The per-CPU ops where there are no rseq critical sections: the generic
 * build, other hosts, or a compiler without asm goto outputs (GCC and
 * clang before 11, <atomkit/rseq-abi.h>).  The rseq modes are then
 * unavailable (ak_percpu_mode_available() says why), so no op ever takes
 * its rseq branch; the sections exist only so that callers compile, and
 * trap if reached.  The sections themselves are in arch/<arch>/percpu.h,
 * their contract in doc/primitives.md, "rseq critical sections".
 */
#ifndef ATOMKIT_ARCH_GENERIC_PERCPU_H
#define ATOMKIT_ARCH_GENERIC_PERCPU_H

#ifndef AK_HAVE_ARCH_RSEQ
# define AK_HAVE_ARCH_RSEQ	0
#endif

#if !AK_HAVE_ARCH_RSEQ

/* The parameters of a stub are its signature only. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define __AK_RSEQ_STUB_WIDTH(bits)					\
__ak_inline int ak_rseq_write##bits(struct ak_rseq_abi *rs,		\
				    const uint32_t *idp,		\
				    void *const *base,			\
				    const size_t *stride, uint##bits##_t v) \
{									\
	__builtin_trap();						\
}									\
__ak_inline int ak_rseq_add##bits(struct ak_rseq_abi *rs,		\
				  const uint32_t *idp, void *const *base, \
				  const size_t *stride, uint##bits##_t v,	\
				  uint##bits##_t *old)			\
{									\
	__builtin_trap();						\
}									\
__ak_inline int ak_rseq_cmpxchg##bits(struct ak_rseq_abi *rs,		\
				      const uint32_t *idp,		\
				      void *const *base,		\
				      const size_t *stride,		\
				      uint##bits##_t expect,		\
				      uint##bits##_t new_,		\
				      uint##bits##_t *seen)		\
{									\
	__builtin_trap();						\
}

__AK_RSEQ_STUB_WIDTH(32)
__AK_RSEQ_STUB_WIDTH(64)

__ak_inline int __ak_rseq_cmpxchg128(struct ak_rseq_abi *rs,
				     const uint32_t *idp, void *const *base,
				     const size_t *stride, ak_u128 expect,
				     ak_u128 new_, ak_u128 *seen)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_list_pop(struct ak_rseq_abi *rs, const uint32_t *idp,
				 void *const *base, const size_t *stride,
				 void **node)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_list_push(struct ak_rseq_abi *rs, const uint32_t *idp,
				  void *const *base, const size_t *stride,
				  void *node)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_list_push_owned(struct ak_rseq_abi *rs,
					const uint32_t *idp,
					void *const *base,
					const size_t *stride, uintptr_t owner,
					void *node)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_array_pop(struct ak_rseq_abi *rs, const uint32_t *idp,
				  void *const *base, const size_t *stride,
				  void **obj)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_array_push(struct ak_rseq_abi *rs,
				   const uint32_t *idp, void *const *base,
				   const size_t *stride, unsigned long limit,
				   void *obj)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_array_ptr_pop(struct ak_rseq_abi *rs,
				      const uint32_t *idp, void *const *base,
				      const size_t *stride, void **obj)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_array_ptr_push(struct ak_rseq_abi *rs,
				       const uint32_t *idp, void *const *base,
				       const size_t *stride,
				       unsigned long limit, void *obj)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_array_ptr_pop_n(struct ak_rseq_abi *rs,
					const uint32_t *idp, void *const *base,
					const size_t *stride, void **dst,
					unsigned long *n)
{
	__builtin_trap();
}

__ak_inline int ak_rseq_array_ptr_push_n(struct ak_rseq_abi *rs,
					 const uint32_t *idp,
					 void *const *base,
					 const size_t *stride,
					 unsigned long limit,
					 void *const *src, unsigned long *n)
{
	__builtin_trap();
}

#pragma GCC diagnostic pop

#endif /* !AK_HAVE_ARCH_RSEQ */

#endif /* ATOMKIT_ARCH_GENERIC_PERCPU_H */
