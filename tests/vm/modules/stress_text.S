/* SPDX-License-Identifier: GPL-2.0 */
/* okp_stress_fn(x) = x * 3 + 7: two probe points, the first steady, the second churned. */
#include <linux/linkage.h>
#include <asm/linkage.h>
#include <linux/objtool.h>

SYM_FUNC_START(okp_stress_fn)
SYM_INNER_LABEL(okp_stress_steady, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR	/* probe addresses, never indirect branch targets */
	imul $3, %rdi, %rax	/* runs from a slot (flags): boosted or stepped as probes come and go */
SYM_INNER_LABEL(okp_stress_churn, SYM_L_GLOBAL)
	ANNOTATE_NOENDBR	/* probe addresses, never indirect branch targets */
	add $7, %rax
	RET
SYM_FUNC_END(okp_stress_fn)
