/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okp_detour_entry and okp_detour_post_entry: where a riscv64 detour's call lands
 * (arch/riscv/detour.h has the detour's layout). On entry the detour has pushed the probed
 * code's ra at 8(sp) (sp lowered by 16, the kernel has no red zone) and ra is the return
 * address into the detour; every other register is as at the probe, R (the dead register the
 * jump went through) holding an address near the detour. Both save a struct pt_regs below
 * (x1..x31 as at the probe: ra from 8(sp), sp + 16 as sp; status as a trap from S-mode
 * would show it: SPP set, SPIE = SIE at the probe), then a frame record naming the probe (an
 * unwinder in a handler goes on from there into the probed code), call their C half
 * (detour.c), and then:
 *  - return into the detour: every register but ra restored from the frame, ra's frame value
 *    written to 8(sp) for the detour's `ld ra, 8(sp)`, SIE set from the frame's SPIE (a post
 *    step's begin_step cleared it: interrupts stay off through the copy's first instruction);
 *  - or, when the pre entry's C half says a handler sent execution elsewhere, restore all of
 *    the frame and sret to its epc (SPP = S, SPIE from the frame): the one way to go to an
 *    arbitrary address with no register changed.
 * The pre entry writes 0 into R's pt_regs slot (R's number is in the detour): what the
 * handlers see of a dead register, and what the copy starts with (docs/riscv64-detours.md).
 * The post entry leaves R as it is (the region may have written it and read it again).
 * .kprobes.text: the hit path, never probed (okprobes' text is blacklisted whole).
 */
#include <linux/linkage.h>

#include "detour_layout.h"

	.section .kprobes.text, "ax"

.macro okp_detour_save
	addi	sp, sp, -OKP_DETOUR_FRAME
	sd	x3, OKP_PT_X(3)(sp)
	sd	x4, OKP_PT_X(4)(sp)
	sd	x5, OKP_PT_X(5)(sp)
	sd	x6, OKP_PT_X(6)(sp)
	sd	x7, OKP_PT_X(7)(sp)
	sd	x8, OKP_PT_X(8)(sp)
	sd	x9, OKP_PT_X(9)(sp)
	sd	x10, OKP_PT_X(10)(sp)
	sd	x11, OKP_PT_X(11)(sp)
	sd	x12, OKP_PT_X(12)(sp)
	sd	x13, OKP_PT_X(13)(sp)
	sd	x14, OKP_PT_X(14)(sp)
	sd	x15, OKP_PT_X(15)(sp)
	sd	x16, OKP_PT_X(16)(sp)
	sd	x17, OKP_PT_X(17)(sp)
	sd	x18, OKP_PT_X(18)(sp)
	sd	x19, OKP_PT_X(19)(sp)
	sd	x20, OKP_PT_X(20)(sp)
	sd	x21, OKP_PT_X(21)(sp)
	sd	x22, OKP_PT_X(22)(sp)
	sd	x23, OKP_PT_X(23)(sp)
	sd	x24, OKP_PT_X(24)(sp)
	sd	x25, OKP_PT_X(25)(sp)
	sd	x26, OKP_PT_X(26)(sp)
	sd	x27, OKP_PT_X(27)(sp)
	sd	x28, OKP_PT_X(28)(sp)
	sd	x29, OKP_PT_X(29)(sp)
	sd	x30, OKP_PT_X(30)(sp)
	sd	x31, OKP_PT_X(31)(sp)
	ld	t0, (OKP_DETOUR_FRAME + 8)(sp)	/* the probed code's ra */
	sd	t0, OKP_PT_X(1)(sp)
	addi	t0, sp, (OKP_DETOUR_FRAME + 16)	/* the probed code's sp */
	sd	t0, OKP_PT_X(2)(sp)
	sd	ra, OKP_DETOUR_BACK(sp)
	sd	zero, OKP_PT_EPC(sp)		/* the core sets it */
	csrr	t0, sstatus
	andi	t1, t0, OKP_SR_SIE
	slli	t1, t1, 4			/* SIE -> SPIE */
	andi	t0, t0, ~(OKP_SR_SIE | OKP_SR_SPIE | OKP_SR_SPP)
	ori	t0, t0, OKP_SR_SPP
	or	t0, t0, t1
	sd	t0, OKP_PT_STATUS(sp)
	sd	zero, (OKP_PT_TAIL)(sp)
	sd	zero, (OKP_PT_TAIL + 8)(sp)
	sd	zero, (OKP_PT_TAIL + 16)(sp)
	sd	s0, OKP_DETOUR_RECORD(sp)
	addi	s0, sp, OKP_DETOUR_FRAME
.endm

/* x3..x31 from the frame (ra and sp are each way's own). */
.macro okp_detour_restore_x3_x31
	ld	x3, OKP_PT_X(3)(sp)
	ld	x4, OKP_PT_X(4)(sp)
	ld	x5, OKP_PT_X(5)(sp)
	ld	x6, OKP_PT_X(6)(sp)
	ld	x7, OKP_PT_X(7)(sp)
	ld	x8, OKP_PT_X(8)(sp)
	ld	x9, OKP_PT_X(9)(sp)
	ld	x10, OKP_PT_X(10)(sp)
	ld	x11, OKP_PT_X(11)(sp)
	ld	x12, OKP_PT_X(12)(sp)
	ld	x13, OKP_PT_X(13)(sp)
	ld	x14, OKP_PT_X(14)(sp)
	ld	x15, OKP_PT_X(15)(sp)
	ld	x16, OKP_PT_X(16)(sp)
	ld	x17, OKP_PT_X(17)(sp)
	ld	x18, OKP_PT_X(18)(sp)
	ld	x19, OKP_PT_X(19)(sp)
	ld	x20, OKP_PT_X(20)(sp)
	ld	x21, OKP_PT_X(21)(sp)
	ld	x22, OKP_PT_X(22)(sp)
	ld	x23, OKP_PT_X(23)(sp)
	ld	x24, OKP_PT_X(24)(sp)
	ld	x25, OKP_PT_X(25)(sp)
	ld	x26, OKP_PT_X(26)(sp)
	ld	x27, OKP_PT_X(27)(sp)
	ld	x28, OKP_PT_X(28)(sp)
	ld	x29, OKP_PT_X(29)(sp)
	ld	x30, OKP_PT_X(30)(sp)
	ld	x31, OKP_PT_X(31)(sp)
.endm

/* Back into the detour, ra's frame value left at 8(sp) for its `ld ra, 8(sp)`. */
.macro okp_detour_return
	ld	t0, OKP_PT_X(1)(sp)
	sd	t0, (OKP_DETOUR_FRAME + 8)(sp)
	ld	t0, OKP_PT_STATUS(sp)
	andi	t0, t0, OKP_SR_SPIE
	beqz	t0, 2f
	csrsi	sstatus, OKP_SR_SIE
	j	3f
2:	csrci	sstatus, OKP_SR_SIE
3:	ld	ra, OKP_DETOUR_BACK(sp)
	okp_detour_restore_x3_x31
	addi	sp, sp, OKP_DETOUR_FRAME
	ret
.endm

SYM_CODE_START(okp_detour_entry)
	okp_detour_save
	ld	t0, OKP_DETOUR_ADDR_FROM_RET(ra)	/* the probe address, for the record */
	sd	t0, (OKP_DETOUR_RECORD + 8)(sp)
	lbu	t1, OKP_DETOUR_DEAD_FROM_RET(ra)	/* R: handlers see 0 there */
	beqz	t1, 1f
	slli	t1, t1, 3
	add	t1, t1, sp
	sd	zero, 0(t1)
1:	addi	a0, ra, OKP_DETOUR_COPY_FROM_RET	/* the copy: names the probe */
	mv	a1, sp
	call	okp_detour_hit
	bnez	a0, .Lredirected
.Lreturn:
	okp_detour_return
.Lredirected:
	/* A post step goes on in the copy with the frame's SPIE cleared: the usual way back. */
	ld	t0, OKP_PT_EPC(sp)
	ld	t1, OKP_DETOUR_BACK(sp)
	addi	t1, t1, OKP_DETOUR_COPY_FROM_RET
	beq	t0, t1, .Lreturn
	/* Anywhere else: sret there, everything as in the frame (the detour's push dropped). */
	csrci	sstatus, OKP_SR_SIE
	csrw	sepc, t0
	ld	t0, OKP_PT_STATUS(sp)
	li	t2, (OKP_SR_SPIE | OKP_SR_SPP)
	and	t0, t0, t2
	csrc	sstatus, t2
	csrs	sstatus, t0
	ld	ra, OKP_PT_X(1)(sp)
	okp_detour_restore_x3_x31
	ld	sp, OKP_PT_X(2)(sp)
	sret
SYM_CODE_END(okp_detour_entry)

SYM_CODE_START(okp_detour_post_entry)
	okp_detour_save
	sd	ra, (OKP_DETOUR_RECORD + 8)(sp)
	addi	t0, ra, OKP_DETOUR_POST_RESUME
	sd	t0, OKP_DETOUR_BACK(sp)
	mv	a0, ra				/* the post call's return address: the data word */
	mv	a1, sp
	call	okp_detour_post_hit
	okp_detour_return
SYM_CODE_END(okp_detour_post_entry)
