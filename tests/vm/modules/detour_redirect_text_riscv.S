/* SPDX-License-Identifier: GPL-2.0 */
/*
 * riscv64: the probed code of okp_detour_redirect (detour_redirect_riscv.c).
 * okp_dredir_fn(x) = ((x + 1) << 4) + 3; the probe is one instruction in, at +2 (after the
 * c.addi), where its jump's region is `slli a1, a0, 4; addi a0, a1, 3` (8 bytes; t0 dead).
 * Both are 4-byte forms (rd != rs1: no compressed encoding), so the region is exactly the two
 * whatever the assembler compresses elsewhere. A handler that redirects sends the pc to
 * okp_dredir_away (x + 1 + 1000, returning to okp_dredir_fn's caller) or to okp_dredir_fn's
 * ret (+10: x + 1, the region skipped). No `.option rvc/norvc` (its mapping symbol would name
 * the function in 6.1's module kallsyms).
 */
#include <linux/linkage.h>

	.option norelax
	.text
	.balign 4
SYM_FUNC_START(okp_dredir_fn)
	addi	a0, a0, 1
	slli	a1, a0, 4		/* the probe, +2 */
	addi	a0, a1, 3
	ret				/* +10: the redirect that skips the region lands here */
SYM_FUNC_END(okp_dredir_fn)

SYM_FUNC_START(okp_dredir_away)
	addi	a0, a0, 1000
	ret
SYM_FUNC_END(okp_dredir_away)
