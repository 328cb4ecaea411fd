/* SPDX-License-Identifier: GPL-2.0 */
/*
 * riscv64: the text of okp_stepscale (stepscale.c): OKP_STEPS_FNS functions
 * okp_steps_fn_<i>(x, 3), listed in okp_steps_fns[], each x * 3^OKP_STEPS_PER_FN (mod 2^64) in
 * OKP_STEPS_PER_FN `mul a0, a0, a1` (4 bytes: no compressed form), one probe on each. mul is
 * not simulated (arch/riscv/insn_plan.cpp): every probe single-steps its copy from an
 * out-of-line slot. No relaxation, no ISA switch (see stress_text_riscv.S).
 */
#include <linux/linkage.h>

#include "stepscale_layout.h"

	.option norelax
	.text
.macro okp_steps_fn okpidx
	.balign 4
SYM_FUNC_START(okp_steps_fn_\okpidx)
	.rept	OKP_STEPS_PER_FN
	mul	a0, a0, a1
	.endr
	ret
SYM_FUNC_END(okp_steps_fn_\okpidx)
.endm

#include "stepscale_text.h"
