/* SPDX-License-Identifier: MIT */
/* rseq critical sections for ppc64: not written yet; the fallbacks serve. */
