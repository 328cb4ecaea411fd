/* SPDX-License-Identifier: GPL-2.0 */
/*
 * riscv64: okp_stress_fn(x) = x * 3 + 7: two probe points, the first steady, the second churned.
 * The steady site is a compressed instruction okprobes steps from a slot (c.ebreak armed,
 * the step ended by a second trap); the churned one right after it is a 4-byte instruction
 * okprobes simulates, at an address that is 2 but not 4 mod 4: arming it is the three-step
 * write (low parcel c.ebreak, high parcel, low parcel) that callers must never see half done,
 * and every step of the steady site ends exactly there. The forms are fixed by the mnemonics
 * (c.* explicitly; `add rd, rs1, rs2` with rd != rs1 has no compressed form), never by
 * `.option rvc/norvc`: an ISA switch makes the assembler emit a "$x<isa>" mapping symbol,
 * which 6.1's module kallsyms names the function by. No relaxation: labels stay on their
 * instructions.
 */
#include <linux/linkage.h>

	.option norelax
	.text
	.balign 4
SYM_FUNC_START(okp_stress_fn)
	c.mv	a1, a0			/* a1 = x */
	c.mv	a2, a0			/* a2 = x */
SYM_INNER_LABEL(okp_stress_steady, SYM_L_GLOBAL)
	c.slli	a1, 1			/* a1 = 2x: stepped from a slot (compressed) */
SYM_INNER_LABEL(okp_stress_churn, SYM_L_GLOBAL)
	add	a0, a1, a2		/* a0 = 3x: simulated; 4 bytes at 2 mod 4 */
	c.addi	a0, 7			/* a0 = 3x + 7 */
	c.jr	ra
SYM_FUNC_END(okp_stress_fn)
