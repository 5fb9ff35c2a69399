// SPDX-License-Identifier: MIT
/*
 * tests/rseq_check_target.c's per-CPU cases again, with the per-CPU mode
 * fixed to rseq at build time; run by its main() in a run of that mode.
 */
#define AK_PERCPU_MODE		rseq
#define FIXED_CASES		rc_fixed_rseq
#define CASE_PREFIX		"percpu-fixed/"
#include "rseq_check_target.c"
