// SPDX-License-Identifier: MIT
/*
 * tests/rseq_check_target.c's per-CPU cases again, run by its main()
 * with the thread's op area word as a thread's first op finds it
 * (AK_RSEQ_OP_NONE): the ops' one test fails, and each runs the copy of
 * its section in its out-of-line path (NAME_slow), in the run's mode.
 * A separate translation unit, so that no load of that word made before
 * main() sets it is reused here.
 */
#define FIXED_CASES		rc_slow
#define CASE_PREFIX		"percpu-slow/"
#include "rseq_check_target.c"
