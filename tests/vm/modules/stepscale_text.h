/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the three stepscale_text*.S share (included by each, in .text, after it defined its
 * macro okp_steps_fn: one function okp_steps_fn_<i> of OKP_STEPS_PER_FN probed
 * instructions): OKP_STEPS_FNS such functions, then okp_steps_fns[], their starts, the
 * table stepscale.c probes from.
 */
.macro okp_steps_ref okpidx
	.quad	okp_steps_fn_\okpidx
.endm

	.altmacro
	.set	okp_steps_i, 0
	.rept	OKP_STEPS_FNS
	okp_steps_fn %okp_steps_i
	.set	okp_steps_i, okp_steps_i + 1
	.endr

	.section .rodata, "a"
	.balign 8
SYM_DATA_START(okp_steps_fns)
	.set	okp_steps_i, 0
	.rept	OKP_STEPS_FNS
	okp_steps_ref %okp_steps_i
	.set	okp_steps_i, okp_steps_i + 1
	.endr
SYM_DATA_END(okp_steps_fns)
	.noaltmacro
