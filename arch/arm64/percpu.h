/* SPDX-License-Identifier: MIT */
/* rseq critical sections for arm64: not written yet; the fallbacks serve. */
