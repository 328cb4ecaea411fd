/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The background probe sites of the scale benchmark (okp_bench_scale.c): OKP_BENCH_SCALE
 * functions okp_bench_sfn_<i>, each `mov %rdi,%rax; RET`, listed in okp_bench_scale_fns[].
 * Never called while timed. okprobes' background probes go on the RET (a branch: with a
 * post_handler, okprobes never optimizes them, so only the hot probe becomes a jump when
 * okprobes-optimization is 1); the kernel's on the mov. Assembly, so no site is an ftrace
 * call and both frameworks see the same instructions.
 */
#include <linux/linkage.h>

#define OKP_BENCH_SCALE 10240

	.text

.macro okp_bench_sfn okpidx
SYM_FUNC_START(okp_bench_sfn_\okpidx)
	mov	%rdi, %rax
	RET
SYM_FUNC_END(okp_bench_sfn_\okpidx)
.endm

.macro okp_bench_sfn_ref okpidx
	.quad	okp_bench_sfn_\okpidx
.endm

	.altmacro
	.set	okp_bench_si, 0
	.rept	OKP_BENCH_SCALE
	okp_bench_sfn %okp_bench_si
	.set	okp_bench_si, okp_bench_si + 1
	.endr

	.section .rodata, "a"
	.balign 8
SYM_DATA_START(okp_bench_scale_fns)
	.set	okp_bench_si, 0
	.rept	OKP_BENCH_SCALE
	okp_bench_sfn_ref %okp_bench_si
	.set	okp_bench_si, okp_bench_si + 1
	.endr
SYM_DATA_END(okp_bench_scale_fns)
	.noaltmacro
