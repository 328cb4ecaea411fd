/* SPDX-License-Identifier: GPL-2.0 */
/* arm64: okp_target_fn(x) = (x + 1) * 2, in instructions a probe can sit on by label. */
#include <linux/linkage.h>

SYM_FUNC_START(okp_target_fn)
SYM_INNER_LABEL(okp_target_body, SYM_L_GLOBAL)
	add	x0, x0, #1		/* simulated in the trap */
SYM_INNER_LABEL(okp_target_second, SYM_L_GLOBAL)
	add	x0, x0, x0		/* stepped from a slot */
	ret
SYM_FUNC_END(okp_target_fn)

/* okp_target_opt(x) = (x + 1) * 2 + 3, with no inner symbol. */
SYM_FUNC_START(okp_target_opt)
	add	x0, x0, #1
	add	x0, x0, x0
	add	x0, x0, #3
	ret
SYM_FUNC_END(okp_target_opt)
