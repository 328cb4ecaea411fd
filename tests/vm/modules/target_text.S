/* SPDX-License-Identifier: GPL-2.0 */
/* okp_target_fn(x) = (x + 1) * 2, in instructions a probe can sit on by label. */
#include <linux/linkage.h>
#include <asm/linkage.h>
#include <linux/objtool.h>

SYM_FUNC_START(okp_target_fn)
SYM_INNER_LABEL(okp_target_body, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR	/* probe addresses, never indirect branch targets */
	lea 1(%rdi), %rax
SYM_INNER_LABEL(okp_target_second, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR	/* probe addresses, never indirect branch targets */
	add %rax, %rax
	RET
SYM_FUNC_END(okp_target_fn)
