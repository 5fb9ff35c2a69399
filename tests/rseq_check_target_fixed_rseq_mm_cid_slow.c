// SPDX-License-Identifier: MIT
/*
 * tests/rseq_check_target.c's per-CPU cases with the per-CPU mode fixed
 * to rseq-mm_cid at build time, run with the thread's op area word
 * unset, as rseq_check_target_slow.c runs them: each op runs the copy
 * of its section in this build's own out-of-line path (its NAME_slow,
 * with the mode a constant).  A translation unit of its own, as that one is.
 */
#define AK_PERCPU_MODE		rseq_mm_cid
#define FIXED_CASES		rc_fixed_rseq_mm_cid_slow
#define CASE_PREFIX		"percpu-fixed-slow/"
#include "rseq_check_target.c"
