/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probe sites of okp_batch_qs (batch_qs.c), x86-64:
 *   okp_bqs_opt     returns x + 1; the probe goes on its `add` (+3 past an ENDBR), whose
 *                   5-byte region (add, mov) is two instructions, so making it a jump waits
 *                   for a tasks-RCU grace period (core/optimizer/jump_optimizer.cpp: must_wait)
 *   okp_bqs_fn_<i>  OKP_BQS_SITES functions `mov %rdi,%rax; RET`, listed in okp_bqs_fns[];
 *                   the probes go on the RET (a branch: with a post_handler never optimized,
 *                   so the batch itself gives the optimizer nothing to do)
 * The tables hold function starts (objtool's IBT check wants no address inside a function).
 */
#include <linux/linkage.h>

#define OKP_BQS_SITES 10240

	.text

SYM_FUNC_START(okp_bqs_opt)
	mov	%rdi, %rax
	addq	$1, %rax
	mov	%rax, %rdx
	RET
SYM_FUNC_END(okp_bqs_opt)

.macro okp_bqs_fn okpidx
SYM_FUNC_START(okp_bqs_fn_\okpidx)
	mov	%rdi, %rax
	RET
SYM_FUNC_END(okp_bqs_fn_\okpidx)
.endm

.macro okp_bqs_ref okpidx
	.quad	okp_bqs_fn_\okpidx
.endm

	.altmacro
	.set	okp_bqs_i, 0
	.rept	OKP_BQS_SITES
	okp_bqs_fn %okp_bqs_i
	.set	okp_bqs_i, okp_bqs_i + 1
	.endr

	.section .rodata, "a"
	.balign 8
SYM_DATA_START(okp_bqs_fns)
	.set	okp_bqs_i, 0
	.rept	OKP_BQS_SITES
	okp_bqs_ref %okp_bqs_i
	.set	okp_bqs_i, okp_bqs_i + 1
	.endr
SYM_DATA_END(okp_bqs_fns)
	.noaltmacro
