/* SPDX-License-Identifier: GPL-2.0 */
/*
 * riscv64: the probed code of okp_preempt_spin (preempt_spin_riscv.c).
 * okp_pspin_fn(x) = x + 4 (0 for x = 0). Its jump's region from +0 is `c.mv; c.beqz; addi`
 * (8 bytes, t0 dead), with two boundaries strictly inside (+2, +4). The c.beqz, whose target
 * lies past the region, also ends QEMU's translation block there, and TCG takes an interrupt
 * only where a block starts: so under TCG a task spinning on this function is preempted at +4,
 * strictly inside the region, where it would not be in straight-line code. No
 * `.option rvc/norvc` (its mapping symbol would name the function in 6.1's module kallsyms).
 */
#include <linux/linkage.h>

	.option norelax
	.text
	.balign 4
SYM_FUNC_START(okp_pspin_fn)
	mv	a1, a0			/* the probe, +0 (c.mv): the region +0..+8 */
	beqz	a0, 1f			/* +2 (c.beqz): a way out past the region */
	addi	a1, a0, 2		/* +4: strictly inside, a translation block's start */
	addi	a0, a1, 2		/* +8: the region's end */
	ret
1:	li	a0, 0
	ret
SYM_FUNC_END(okp_pspin_fn)
