/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 probe targets for the KUnit suite "okprobes_arm64" (okp_arm64_kunit.c).
 *
 * Each function holds one instruction of a class okprobes handles in its own way (simulated
 * in the trap, stepped from a slot, refused) at a global label okp_a64_<name>_insn, and
 * computes a result the test knows, so a probe that runs the instruction wrongly changes the
 * result. okp_a64_<name>_next labels where a post_handler must see pc when that is not the
 * next instruction (a branch's target). Every C prototype is long f(long a, long b).
 */
#include <linux/linkage.h>

#define OKP_LABEL(name) SYM_INNER_LABEL(name, SYM_L_GLOBAL)

	.data
	.balign 8
SYM_DATA(okp_a64_data, .quad 0x1234)
SYM_DATA(okp_a64_store_var, .quad 0)
SYM_DATA(okp_a64_excl_var, .quad 0)

	.text

/* helper(a) = 3a + 7: the target of bl and blr. */
SYM_FUNC_START(okp_a64_helper)
	add	x0, x0, x0, lsl #1
	add	x0, x0, #7
	ret
SYM_FUNC_END(okp_a64_helper)

/* --- Simulated in the trap --------------------------------------------------------------- */

/* a + 1 */
SYM_FUNC_START(okp_a64_b)
OKP_LABEL(okp_a64_b_insn)
	b	1f
	add	x0, x0, #100
1:
OKP_LABEL(okp_a64_b_next)
	add	x0, x0, #1
	ret
SYM_FUNC_END(okp_a64_b)

/* 3a + 7 + b */
SYM_FUNC_START(okp_a64_bl)
	stp	x29, x30, [sp, #-32]!
	mov	x29, sp
	str	x1, [sp, #16]
OKP_LABEL(okp_a64_bl_insn)
	bl	okp_a64_helper
	ldr	x1, [sp, #16]
	add	x0, x0, x1
	ldp	x29, x30, [sp], #32
	ret
SYM_FUNC_END(okp_a64_bl)

/* a < b (signed) ? 2 : 1 */
SYM_FUNC_START(okp_a64_bcond)
	cmp	x0, x1
OKP_LABEL(okp_a64_bcond_insn)
	b.lt	1f
	mov	x0, #1
	ret
1:	mov	x0, #2
	ret
SYM_FUNC_END(okp_a64_bcond)

/* a > b (unsigned) ? 2 : 1 */
SYM_FUNC_START(okp_a64_bhi)
	cmp	x0, x1
OKP_LABEL(okp_a64_bhi_insn)
	b.hi	1f
	mov	x0, #1
	ret
1:	mov	x0, #2
	ret
SYM_FUNC_END(okp_a64_bhi)

/* a == 0 ? 9 : 5 */
SYM_FUNC_START(okp_a64_cbz)
OKP_LABEL(okp_a64_cbz_insn)
	cbz	x0, 1f
	mov	x0, #5
	ret
1:	mov	x0, #9
	ret
SYM_FUNC_END(okp_a64_cbz)

/* (u32)a != 0 ? 9 : 5 */
SYM_FUNC_START(okp_a64_cbnzw)
OKP_LABEL(okp_a64_cbnzw_insn)
	cbnz	w0, 1f
	mov	x0, #5
	ret
1:	mov	x0, #9
	ret
SYM_FUNC_END(okp_a64_cbnzw)

/* bit 33 of a clear ? 9 : 5 */
SYM_FUNC_START(okp_a64_tbz)
OKP_LABEL(okp_a64_tbz_insn)
	tbz	x0, #33, 1f
	mov	x0, #5
	ret
1:	mov	x0, #9
	ret
SYM_FUNC_END(okp_a64_tbz)

/* bit 3 of a set ? 9 : 5 */
SYM_FUNC_START(okp_a64_tbnz)
OKP_LABEL(okp_a64_tbnz_insn)
	tbnz	w0, #3, 1f
	mov	x0, #5
	ret
1:	mov	x0, #9
	ret
SYM_FUNC_END(okp_a64_tbnz)

/* a + 0x1234 (adr to a literal in the text) */
SYM_FUNC_START(okp_a64_adr)
OKP_LABEL(okp_a64_adr_insn)
	adr	x2, 2f
	ldr	x2, [x2]
	add	x0, x0, x2
	ret
	.balign 8
2:	.quad	0x1234
SYM_FUNC_END(okp_a64_adr)

/* a + 0x1234 (okp_a64_data through adrp) */
SYM_FUNC_START(okp_a64_adrp)
OKP_LABEL(okp_a64_adrp_insn)
	adrp	x2, okp_a64_data
	add	x2, x2, :lo12:okp_a64_data
	ldr	x2, [x2]
	add	x0, x0, x2
	ret
SYM_FUNC_END(okp_a64_adrp)

/* a + 0x123456789 */
SYM_FUNC_START(okp_a64_ldr_lit)
OKP_LABEL(okp_a64_ldr_lit_insn)
	ldr	x2, 2f
	add	x0, x0, x2
	ret
	.balign 8
2:	.quad	0x123456789
SYM_FUNC_END(okp_a64_ldr_lit)

/* a + 5 (ldr w zero-extends the low word of 0xffffffff00000005) */
SYM_FUNC_START(okp_a64_ldr_lit_w)
	mov	x2, #-1
OKP_LABEL(okp_a64_ldr_lit_w_insn)
	ldr	w2, 2f
	add	x0, x0, x2
	ret
	.balign 8
2:	.quad	0xffffffff00000005
SYM_FUNC_END(okp_a64_ldr_lit_w)

/* a - 16 (ldrsw sign-extends) */
SYM_FUNC_START(okp_a64_ldrsw_lit)
OKP_LABEL(okp_a64_ldrsw_lit_insn)
	ldrsw	x2, 2f
	add	x0, x0, x2
	ret
	.balign 4
2:	.word	-16
SYM_FUNC_END(okp_a64_ldrsw_lit)

/* a + 1 (prfm literal is a hint) */
SYM_FUNC_START(okp_a64_prfm_lit)
OKP_LABEL(okp_a64_prfm_lit_insn)
	prfm	pldl1keep, 2f
	add	x0, x0, #1
	ret
	.balign 8
2:	.quad	0
SYM_FUNC_END(okp_a64_prfm_lit)

/* a + 1 */
SYM_FUNC_START(okp_a64_br)
	adr	x2, 1f
OKP_LABEL(okp_a64_br_insn)
	br	x2
	add	x0, x0, #100
1:
OKP_LABEL(okp_a64_br_next)
	add	x0, x0, #1
	ret
SYM_FUNC_END(okp_a64_br)

/* 3a + 7 */
SYM_FUNC_START(okp_a64_blr)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	adr	x2, okp_a64_helper
OKP_LABEL(okp_a64_blr_insn)
	blr	x2
	ldp	x29, x30, [sp], #16
	ret
SYM_FUNC_END(okp_a64_blr)

/* a + 2 */
SYM_FUNC_START(okp_a64_ret)
	add	x0, x0, #2
OKP_LABEL(okp_a64_ret_insn)
	ret
SYM_FUNC_END(okp_a64_ret)

/* a + 1 */
SYM_FUNC_START(okp_a64_nop)
OKP_LABEL(okp_a64_nop_insn)
	nop
	add	x0, x0, #1
	ret
SYM_FUNC_END(okp_a64_nop)

/* a + b */
SYM_FUNC_START(okp_a64_mov)
OKP_LABEL(okp_a64_mov_insn)
	mov	x2, x1
	add	x0, x0, x2
	ret
SYM_FUNC_END(okp_a64_mov)

/* (u32)a (mov w zero-extends) */
SYM_FUNC_START(okp_a64_movw)
OKP_LABEL(okp_a64_movw_insn)
	mov	w0, w0
	ret
SYM_FUNC_END(okp_a64_movw)

/* a + 0x5003 */
SYM_FUNC_START(okp_a64_addimm)
OKP_LABEL(okp_a64_addimm_insn)
	add	x0, x0, #5, lsl #12
	add	x0, x0, #3
	ret
SYM_FUNC_END(okp_a64_addimm)

/* a (mov x3, sp reads sp: x3 - sp is 0) */
SYM_FUNC_START(okp_a64_movsp)
OKP_LABEL(okp_a64_movsp_insn)
	mov	x3, sp
	mov	x4, sp
	sub	x3, x3, x4
	add	x0, x0, x3
	ret
SYM_FUNC_END(okp_a64_movsp)

/*
 * The DAIF moves, called with interrupts enabled: returns the I bit (0x80), read after
 * masking and after unmasking, xor'ed; DAIF comes back as it was.
 */
SYM_FUNC_START(okp_a64_daif)
	mrs	x3, daif
OKP_LABEL(okp_a64_daifset_insn)
	msr	daifset, #2
OKP_LABEL(okp_a64_mrs_daif_insn)
	mrs	x1, daif
OKP_LABEL(okp_a64_daifclr_insn)
	msr	daifclr, #2
	mrs	x2, daif
	eor	x0, x1, x2
OKP_LABEL(okp_a64_msr_daif_insn)
	msr	daif, x3
	ret
SYM_FUNC_END(okp_a64_daif)

/* --- Stepped out of line ------------------------------------------------------------------ */

/* a + 4b */
SYM_FUNC_START(okp_a64_alu)
OKP_LABEL(okp_a64_alu_insn)
	add	x0, x0, x1, lsl #2
	ret
SYM_FUNC_END(okp_a64_alu)

/* a < b (signed): the flags the stepped subs sets reach cset */
SYM_FUNC_START(okp_a64_flags)
OKP_LABEL(okp_a64_flags_insn)
	subs	x2, x0, x1
	cset	x0, lt
	ret
SYM_FUNC_END(okp_a64_flags)

/* a + 0x1234 (a load through a register) */
SYM_FUNC_START(okp_a64_load)
	adrp	x2, okp_a64_data
	add	x2, x2, :lo12:okp_a64_data
OKP_LABEL(okp_a64_load_insn)
	ldr	x2, [x2]
	add	x0, x0, x2
	ret
SYM_FUNC_END(okp_a64_load)

/* a + 1, and okp_a64_store_var = a */
SYM_FUNC_START(okp_a64_store)
	adrp	x2, okp_a64_store_var
	add	x2, x2, :lo12:okp_a64_store_var
OKP_LABEL(okp_a64_store_insn)
	str	x0, [x2]
	add	x0, x0, #1
	ret
SYM_FUNC_END(okp_a64_store)

/* 3a + 7 + b: the frame push (pre-index writeback to sp) and pop are stepped */
SYM_FUNC_START(okp_a64_stp)
OKP_LABEL(okp_a64_stp_insn)
	stp	x29, x30, [sp, #-32]!
	mov	x29, sp
	str	x1, [sp, #16]
	bl	okp_a64_helper
	ldr	x1, [sp, #16]
	add	x0, x0, x1
OKP_LABEL(okp_a64_ldp_insn)
	ldp	x29, x30, [sp], #32
	ret
SYM_FUNC_END(okp_a64_stp)

/*
 * 3a + 7 + 1 with x30 signed (paciasp) around a call and authenticated (autiasp) before the
 * return: a probe on either, or on the ret, must leave the signature intact.
 */
SYM_FUNC_START(okp_a64_pac)
OKP_LABEL(okp_a64_paciasp_insn)
	hint	#25			/* paciasp */
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	bl	okp_a64_helper
	add	x0, x0, #1
	ldp	x29, x30, [sp], #16
OKP_LABEL(okp_a64_autiasp_insn)
	hint	#29			/* autiasp */
OKP_LABEL(okp_a64_pac_ret_insn)
	ret
SYM_FUNC_END(okp_a64_pac)

/* --- Exclusives: no global label inside, the test probes at offsets ---------------------- */

/* okp_a64_excl_var += a (ll/sc); returns the new value */
SYM_FUNC_START(okp_a64_excl)
	/* +0: bti c (SYM_FUNC_START) */
	adrp	x1, okp_a64_excl_var			/* +4 */
	add	x1, x1, :lo12:okp_a64_excl_var		/* +8 */
1:	ldxr	x2, [x1]				/* +12: refused */
	add	x2, x2, x0				/* +16: refused (inside) */
	stxr	w3, x2, [x1]				/* +20: refused */
	cbnz	w3, 1b					/* +24 */
	mov	x0, x2					/* +28 */
	ret						/* +32 */
SYM_FUNC_END(okp_a64_excl)

/* --- Refused instructions: never called --------------------------------------------------- */
SYM_FUNC_START(okp_a64_refused)
	/* +0: bti c (SYM_FUNC_START) */
	nop				/* +4 */
	svc	#0			/* +8 */
	hvc	#0			/* +12 */
	brk	#0x123			/* +16 */
	eret				/* +20 */
	.inst	0xd65f0bff		/* +24: retaa */
	msr	spsr_el1, x0		/* +28 */
	mrs	x0, elr_el1		/* +32 */
	.inst	0x00000000		/* +36: udf #0 */
	ret				/* +40 */
SYM_FUNC_END(okp_a64_refused)

/*
 * The two asm targets the arch-neutral return-probe suite (okp_kretprobe_kunit.c) names, with
 * the results its x86-64 originals have: helper(a) = 3a + 7 (a breakpoint entry: no ftrace
 * site), and riprel_load(a) = a + 0x1234 (named only, in a refusal).
 */
SYM_FUNC_START(okp_t_helper)
	add	x0, x0, x0, lsl #1
	add	x0, x0, #7
	ret
SYM_FUNC_END(okp_t_helper)

SYM_FUNC_START(okp_t_riprel_load)
	adrp	x2, okp_a64_data
	add	x2, x2, :lo12:okp_a64_data
	ldr	x2, [x2]
	add	x0, x0, x2
	ret
SYM_FUNC_END(okp_t_riprel_load)

/* a + 1, or a + 101 if the add #100 runs: a pre_handler redirect skips it. */
SYM_FUNC_START(okp_a64_skip)
OKP_LABEL(okp_a64_skip_insn)
	add	x0, x0, #100
OKP_LABEL(okp_a64_skip_next)
	add	x0, x0, #1
	ret
SYM_FUNC_END(okp_a64_skip)
