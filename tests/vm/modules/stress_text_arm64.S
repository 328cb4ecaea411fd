/* SPDX-License-Identifier: GPL-2.0 */
/* arm64: okp_stress_fn(x) = x * 3 + 7: two probe points, the first steady, the second churned. */
#include <linux/linkage.h>

SYM_FUNC_START(okp_stress_fn)
SYM_INNER_LABEL(okp_stress_steady, SYM_L_GLOBAL)
	add	x1, x0, x0, lsl #1	/* stepped from a slot (a shifted register) */
SYM_INNER_LABEL(okp_stress_churn, SYM_L_GLOBAL)
	add	x0, x1, #7		/* simulated in the trap */
	ret
SYM_FUNC_END(okp_stress_fn)
