/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64: the text of okp_stepscale (stepscale.c). okp_steps_fn(x) = x * 3^OKP_STEPS (mod
 * 2^64): OKP_STEPS `imul $3, %rax, %rax` (4 bytes each) from okp_steps_first to okp_steps_end,
 * one probe on each. imul is neither emulated nor simulated (arch/x86/insn_plan.cpp): every
 * probe runs its copy from an out-of-line slot, boosted or stepped.
 */
#include <linux/linkage.h>
#include <asm/linkage.h>
#include <linux/objtool.h>

#define OKP_STEPS 10000

	.text
SYM_FUNC_START(okp_steps_fn)
	mov	%rdi, %rax
SYM_INNER_LABEL(okp_steps_first, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR	/* probe addresses, never indirect branch targets */
	.rept OKP_STEPS
	imul	$3, %rax, %rax
	.endr
SYM_INNER_LABEL(okp_steps_end, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR
	RET
SYM_FUNC_END(okp_steps_fn)
