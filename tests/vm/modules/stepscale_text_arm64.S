/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64: the text of okp_stepscale (stepscale.c). okp_steps_fn(x) = x * 3^OKP_STEPS (mod
 * 2^64): OKP_STEPS `add x0, x0, x0, lsl #1` from okp_steps_first to okp_steps_end, one probe
 * on each. An add with a shifted register is not simulated (arch/arm64/insn_plan.cpp): every
 * probe single-steps its copy from an out-of-line slot.
 */
#include <linux/linkage.h>

#define OKP_STEPS 10000

	.text
SYM_FUNC_START(okp_steps_fn)
SYM_INNER_LABEL(okp_steps_first, SYM_L_GLOBAL)
	.rept OKP_STEPS
	add	x0, x0, x0, lsl #1
	.endr
SYM_INNER_LABEL(okp_steps_end, SYM_L_GLOBAL)
	ret
SYM_FUNC_END(okp_steps_fn)
