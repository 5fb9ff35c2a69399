// SPDX-License-Identifier: MIT
/*
 * tests/rseq_check_target.c's per-CPU cases again, with the per-CPU mode
 * fixed to rseq_mm_cid at build time; run by its main() in a run of that mode.
 */
#define AK_PERCPU_MODE		rseq_mm_cid
#define FIXED_CASES		rc_fixed_rseq_mm_cid
#define CASE_PREFIX		"percpu-fixed/"
#include "rseq_check_target.c"
