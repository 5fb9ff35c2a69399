// SPDX-License-Identifier: MIT
/*
 * tests/test_percpu.c again, with the per-CPU mode fixed to rseq at build
 * time: every op is that mode's one inline path.  Its suite runs as a
 * group of its own, from the main() of the build it is linked into.
 */
#define AK_PERCPU_MODE		rseq
#define PERCPU_FIXED_RUN	percpu_fixed_rseq
#include "test_percpu.c"
