/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64: the text of okp_stepscale (stepscale.c): OKP_STEPS_FNS functions okp_steps_fn_<i>,
 * listed in okp_steps_fns[], each x * 3^OKP_STEPS_PER_FN (mod 2^64) in OKP_STEPS_PER_FN
 * `imul $3, %rdi, %rdi` (4 bytes each, after the ENDBR an IBT kernel puts first), one probe
 * on each. imul is neither emulated nor simulated (arch/x86/insn_plan.cpp): every probe runs
 * its copy from an out-of-line slot, boosted or stepped. Small functions, not one long one:
 * checking that an address is an instruction boundary decodes its function from the start.
 * The table holds function starts (objtool's IBT check wants no address inside a function).
 */
#include <linux/linkage.h>
#include <asm/linkage.h>

#include "stepscale_layout.h"

	.text
.macro okp_steps_fn okpidx
SYM_FUNC_START(okp_steps_fn_\okpidx)
	.rept	OKP_STEPS_PER_FN
	imul	$3, %rdi, %rdi
	.endr
	mov	%rdi, %rax
	RET
SYM_FUNC_END(okp_steps_fn_\okpidx)
.endm

#include "stepscale_text.h"
