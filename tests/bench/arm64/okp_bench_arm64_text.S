/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probed text of the arm64 benchmark (okp_bench_arm64.c), in assembly so that both
 * frameworks see exactly the same instructions (no ftrace site). Each probe goes on the
 * instruction at the function's okp_b64_<state>_insn label:
 *   simulated  `b 1f`: both frameworks simulate it in the trap;
 *   boosted,   `lsl x1, x0, #1`: both run it from a slot; with a pre_handler only ("boosted")
 *   stepped    okprobes' slot ends in a branch back, the kernel's in its step BRK; with a
 *              post_handler too ("stepped") both end it with a BRK of their own;
 *   add-imm    `add x0, x0, #1`: okprobes simulates it, the kernel steps it;
 *   return     the function's entry, for a return probe of each.
 * Every function returns x + 1 (boosted, stepped: 2x + 1). okp_b64_dense, for the
 * registration timings, is OKP_B64_DENSE `add x0, x0, #1`, a probe on each: it returns
 * x + OKP_B64_DENSE.
 */
#include <linux/linkage.h>

	.text
SYM_FUNC_START(okp_b64_sim)
SYM_INNER_LABEL(okp_b64_sim_insn, SYM_L_GLOBAL)
	b	1f
	brk	#0x3e8			/* never reached */
1:	add	x0, x0, #1
	ret
SYM_FUNC_END(okp_b64_sim)

SYM_FUNC_START(okp_b64_step)
SYM_INNER_LABEL(okp_b64_step_insn, SYM_L_GLOBAL)
	lsl	x1, x0, #1
	add	x0, x1, #1
	ret
SYM_FUNC_END(okp_b64_step)

SYM_FUNC_START(okp_b64_addimm)
SYM_INNER_LABEL(okp_b64_addimm_insn, SYM_L_GLOBAL)
	add	x0, x0, #1
	ret
SYM_FUNC_END(okp_b64_addimm)

SYM_FUNC_START(okp_b64_ret)
	add	x0, x0, #1
	ret
SYM_FUNC_END(okp_b64_ret)

/* OKP_B64_DENSE in okp_bench_arm64.c */
SYM_FUNC_START(okp_b64_dense)
	.rept	64
	add	x0, x0, #1
	.endr
	ret
SYM_FUNC_END(okp_b64_dense)
