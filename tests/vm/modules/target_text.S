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

/*
 * okp_target_opt(x) = (x + 1) * 2 + 3, with no inner symbol: a probe at its entry (after
 * ENDBR64) sees the whole function, and jump optimization covers lea + add with its jump.
 */
SYM_FUNC_START(okp_target_opt)
	lea 1(%rdi), %rax
	add %rax, %rax
	add $3, %rax
	RET
SYM_FUNC_END(okp_target_opt)
