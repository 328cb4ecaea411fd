/* SPDX-License-Identifier: GPL-2.0 */
/*
 * riscv64: okp_target_fn(x) = (x + 1) * 2, in instructions a probe can sit on by label. No
 * `.option rvc/norvc` (its "$x<isa>" mapping symbol would name the function in 6.1's module
 * kallsyms): the forms are the assembler's, compressed where the kernel builds with C.
 */
#include <linux/linkage.h>

	.option norelax
	.text
	.balign 4
SYM_FUNC_START(okp_target_fn)
SYM_INNER_LABEL(okp_target_body, SYM_L_GLOBAL)
	addi	a0, a0, 1		/* simulated in the trap */
SYM_INNER_LABEL(okp_target_second, SYM_L_GLOBAL)
	slli	a0, a0, 1		/* stepped from a slot */
	ret
SYM_FUNC_END(okp_target_fn)

/* okp_target_opt(x) = (x + 1) * 2 + 3, with no inner symbol. */
SYM_FUNC_START(okp_target_opt)
	addi	a0, a0, 1
	slli	a0, a0, 1
	addi	a0, a0, 3
	ret
SYM_FUNC_END(okp_target_opt)
