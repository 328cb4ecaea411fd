/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okp_detour_entry and okp_detour_post_entry: where an arm64 detour's `bl` lands
 * (arch/arm64/detour.h has the detour's layout). On entry the detour has pushed the probed
 * code's x0 and x30 as a pair ([sp], [sp + 8]) and x30 is the return address into the
 * detour. Both save a struct pt_regs below the pair (x0-x30 as at the probe, sp the probed
 * code's, pstate = NZCV | DAIF | EL1h as at the probe; the C half adds PAN and the core pc),
 * call their C half (detour.c), and then:
 *  - return into the detour: every register but x0 and x30 restored from the frame, NZCV and
 *    DAIF too (a handler's change and a post step's masked DAIF take effect), x0 and x30
 *    written from the frame into the pair, which the detour's ldp pops;
 *  - or, when the pre entry's C half says a handler sent execution elsewhere, restore all of
 *    the frame and eret to its pc with its pstate: the one way to go to an arbitrary address
 *    with no register changed.
 * x19 keeps the detour's return address across the call (it is saved in the frame and
 * restored last).
 *
 * Reached by a bl from a detour, or by a blr x30 from one out of a bl's reach (near the
 * kernel's text): each starts with a BTI call landing pad (a hint where BTI is off).
 * .kprobes.text: the hit path, never probed (okprobes' text is blacklisted whole).
 */
#include <linux/linkage.h>

#include "detour_layout.h"

	.section .kprobes.text, "ax"

.macro okp_detour_save record_lr
	sub	sp, sp, #OKP_DETOUR_FRAME
	stp	x1, x2, [sp, #8]
	stp	x3, x4, [sp, #24]
	stp	x5, x6, [sp, #40]
	stp	x7, x8, [sp, #56]
	stp	x9, x10, [sp, #72]
	stp	x11, x12, [sp, #88]
	stp	x13, x14, [sp, #104]
	stp	x15, x16, [sp, #120]
	stp	x17, x18, [sp, #136]
	stp	x19, x20, [sp, #152]
	stp	x21, x22, [sp, #168]
	stp	x23, x24, [sp, #184]
	stp	x25, x26, [sp, #200]
	stp	x27, x28, [sp, #216]
	str	x29, [sp, #232]
	mrs	x1, nzcv
	mrs	x2, daif
	orr	x1, x1, x2
	add	x1, x1, #OKP_PSR_MODE_EL1H
	ldp	x2, x3, [sp, #OKP_DETOUR_FRAME]	/* the probed code's x0 and x30 */
	str	x2, [sp]
	str	x3, [sp, #OKP_PT_LR]
	add	x2, sp, #(OKP_DETOUR_FRAME + 16)	/* the probed code's sp */
	stp	x2, xzr, [sp, #OKP_PT_SP]	/* sp, pc (the core sets it) */
	str	x1, [sp, #OKP_PT_PSTATE]
	stp	xzr, xzr, [sp, #OKP_PT_TAIL]
	stp	xzr, xzr, [sp, #(OKP_PT_TAIL + 16)]
	stp	xzr, xzr, [sp, #(OKP_PT_TAIL + 32)]
	stp	xzr, xzr, [sp, #(OKP_PT_TAIL + 48)]
	stp	xzr, xzr, [sp, #(OKP_PT_TAIL + 64)]
	stp	xzr, xzr, [sp, #(OKP_PT_TAIL + 80)]
	/* A frame record: an unwinder in a handler goes on from here into the probed code. */
	stp	x29, \record_lr, [sp, #OKP_DETOUR_RECORD]
	add	x29, sp, #OKP_DETOUR_RECORD
	mov	x19, x30
.endm

/* x1-x29 from the frame (x0 and x30 are each way's own). */
.macro okp_detour_restore_x1_x29
	ldp	x1, x2, [sp, #8]
	ldp	x3, x4, [sp, #24]
	ldp	x5, x6, [sp, #40]
	ldp	x7, x8, [sp, #56]
	ldp	x9, x10, [sp, #72]
	ldp	x11, x12, [sp, #88]
	ldp	x13, x14, [sp, #104]
	ldp	x15, x16, [sp, #120]
	ldp	x17, x18, [sp, #136]
	ldp	x19, x20, [sp, #152]
	ldp	x21, x22, [sp, #168]
	ldp	x23, x24, [sp, #184]
	ldp	x25, x26, [sp, #200]
	ldp	x27, x28, [sp, #216]
	ldr	x29, [sp, #232]
.endm

/* Back into the detour (x19: where), with x0 and x30 left in the pair for its ldp. */
.macro okp_detour_return
	ldr	x1, [sp]
	ldr	x2, [sp, #OKP_PT_LR]
	stp	x1, x2, [sp, #OKP_DETOUR_FRAME]
	ldr	x1, [sp, #OKP_PT_PSTATE]
	msr	nzcv, x1
	msr	daif, x1
	mov	x30, x19
	okp_detour_restore_x1_x29
	add	sp, sp, #OKP_DETOUR_FRAME
	ret
.endm

SYM_CODE_START(okp_detour_entry)
	hint	#34			/* bti c */
	ldur	x0, [x30, #OKP_DETOUR_ADDR_FROM_RET]	/* the probe address, for the record */
	okp_detour_save x0
	add	x0, x19, #4		/* the copy: names the probe */
	mov	x1, sp
	bl	okp_detour_hit
	cbnz	w0, .Lredirected
.Lreturn:
	okp_detour_return
.Lredirected:
	/* A post step goes on in the copy with the frame's DAIF: the usual way back. */
	ldr	x1, [sp, #OKP_PT_PC]
	add	x2, x19, #4
	cmp	x1, x2
	b.eq	.Lreturn
	/* Anywhere else: eret there, everything as in the frame (the pair is dropped). */
	msr	daifset, #0xf
	msr	elr_el1, x1
	ldr	x1, [sp, #OKP_PT_PSTATE]
	msr	spsr_el1, x1
	ldr	x0, [sp]
	ldr	x30, [sp, #OKP_PT_LR]
	okp_detour_restore_x1_x29
	add	sp, sp, #(OKP_DETOUR_FRAME + 16)
	eret
	dsb	nsh			/* no speculation past the eret */
	isb
SYM_CODE_END(okp_detour_entry)

SYM_CODE_START(okp_detour_post_entry)
	hint	#34			/* bti c */
	okp_detour_save x30
	mov	x0, x19			/* the post call's return address */
	mov	x1, sp
	bl	okp_detour_post_hit
	okp_detour_return
SYM_CODE_END(okp_detour_post_entry)
