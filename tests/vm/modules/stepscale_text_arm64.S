/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64: the text of okp_stepscale (stepscale.c): OKP_STEPS_FNS functions okp_steps_fn_<i>,
 * listed in okp_steps_fns[], each x * 3^OKP_STEPS_PER_FN (mod 2^64) in OKP_STEPS_PER_FN
 * `add x0, x0, x0, lsl #1` (after the BTI a BTI kernel puts first), one probe on each. An add
 * with a shifted register is not simulated (arch/arm64/insn_plan.cpp): every probe runs its
 * copy from an out-of-line slot.
 */
#include <linux/linkage.h>

#include "stepscale_layout.h"

	.text
.macro okp_steps_fn okpidx
SYM_FUNC_START(okp_steps_fn_\okpidx)
	.rept	OKP_STEPS_PER_FN
	add	x0, x0, x0, lsl #1
	.endr
	ret
SYM_FUNC_END(okp_steps_fn_\okpidx)
.endm

#include "stepscale_text.h"
