/* SPDX-License-Identifier: GPL-2.0 */
/*
 * riscv64: the text of okp_stepscale (stepscale.c). okp_steps_fn(x) = x * 3^OKP_STEPS (mod
 * 2^64): OKP_STEPS `mul a0, a0, a1` (4 bytes: no compressed form) from okp_steps_first to
 * okp_steps_end, one probe on each. mul is not simulated (arch/riscv/insn_plan.cpp): every
 * probe single-steps its copy from an out-of-line slot. No relaxation, no ISA switch (see
 * stress_text_riscv.S).
 */
#include <linux/linkage.h>

#define OKP_STEPS 10000

	.option norelax
	.text
	.balign 4
SYM_FUNC_START(okp_steps_fn)
	li	a1, 3
	.balign 4
SYM_INNER_LABEL(okp_steps_first, SYM_L_GLOBAL)
	.rept OKP_STEPS
	mul	a0, a0, a1
	.endr
SYM_INNER_LABEL(okp_steps_end, SYM_L_GLOBAL)
	ret
SYM_FUNC_END(okp_steps_fn)
