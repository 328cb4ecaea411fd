/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okp_detour_entry, okp_detour_entry_with_post and okp_detour_post_entry: where a riscv64
 * detour's calls land (arch/riscv/detour.h has the detour's layout). A detour whose copy
 * calls the post entry calls okp_detour_entry_with_post, every other one okp_detour_entry
 * (okp_seam_detour_entry), so that the common entry need not test for a post entry on every
 * hit, as on x86-64.
 *
 * On entry the detour's call has taken the entry's whole frame from the probed code's stack
 * (sp lowered by OKP_DETOUR_FRAME, the kernel has no red zone) and put the probed code's ra in
 * its pt_regs' ra; ra is the return address into the detour; every other register is as at
 * the probe, R (the dead register the jump went through) holding an address near the detour.
 * Each entry saves the rest of the struct pt_regs at sp (x1..x31 as at the probe, sp +
 * OKP_DETOUR_FRAME as sp; status as a trap from S-mode would show it: SPP set, SPIE = SIE at the
 * probe; badaddr, cause and orig_a0 zero; epc is written by the core before any handler
 * runs), and, on a kernel with frame pointers, a frame record naming the probe (an unwinder
 * in a handler goes on from there into the probed code; without frame pointers the kernel's
 * unwinder reads no record). Then:
 *  - okp_detour_entry counts this CPU's frame 0 itself and calls the core's common hit,
 *    okp_core_on_detour_idle(site, regs), with the site its detour names (below);
 *  - okp_detour_entry_with_post and okp_detour_post_entry call their C halves (detour.c);
 * and then either:
 *  - return into the detour: every register but ra and sp restored from the frame, whose ra
 *    the detour reloads and which it drops, SIE set from the frame's SPIE (a post
 *    step's begin_step cleared it: interrupts stay off through the copy's first instruction);
 *  - or, when the core says a handler sent execution elsewhere, restore all of the frame and
 *    sret to its epc (SPP = S, SPIE from the frame): the one way to go to an arbitrary address
 *    with no register changed.
 * The pre entries write 0 into R's pt_regs slot (the detour holds its place): what the
 * handlers see of a dead register, and what the copy starts with (docs/riscv64-detours.md).
 * The post entry leaves R as it is (the region may have written it and read it again).
 * .kprobes.text: the hit path, never probed (okprobes' text is blacklisted whole).
 */
#include <linux/linkage.h>

#include "detour_layout.h"

	.section .kprobes.text, "ax"

.macro okp_detour_save
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
	addi	t0, sp, OKP_DETOUR_FRAME	/* the probed code's sp */
	sd	t0, OKP_PT_X(2)(sp)
	sd	ra, OKP_DETOUR_BACK(sp)
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
#ifdef CONFIG_FRAME_POINTER
	sd	s0, OKP_DETOUR_RECORD(sp)
	addi	s0, sp, OKP_DETOUR_FRAME
#endif
.endm

/* A pre entry's frame record names the probe (ra: the return address into the detour). */
.macro okp_detour_pre_record
#ifdef CONFIG_FRAME_POINTER
	ld	t0, OKP_DETOUR_ADDR_FROM_RET(ra)
	sd	t0, (OKP_DETOUR_RECORD + 8)(sp)
#endif
.endm

/*
 * R's slot zeroed, from its place in the detour (ra: the return address into the detour). A
 * jal with no dead register gives 0: epc's place, which the core writes before any handler
 * runs, so no test for it.
 */
.macro okp_detour_zero_dead
	lbu	t1, OKP_DETOUR_DEAD_FROM_RET(ra)
	add	t1, t1, sp
	sd	zero, 0(t1)
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

/*
 * Back into the detour, sp at the frame, whose pt_regs' ra the detour's `ld ra, 8(sp)` reloads.
 * SIE from the frame's SPIE: set in the common case (interrupts were on at the probe), the
 * other way out of line.
 */
.macro okp_detour_return
	ld	t0, OKP_PT_STATUS(sp)
	andi	t0, t0, OKP_SR_SPIE
	beqz	t0, .Lsie_off_\@
	csrsi	sstatus, OKP_SR_SIE
.Lsie_done_\@:
	ld	ra, OKP_DETOUR_BACK(sp)
	okp_detour_restore_x3_x31
	ret
.Lsie_off_\@:
	csrci	sstatus, OKP_SR_SIE
	j	.Lsie_done_\@
.endm

/*
 * A handler sent execution elsewhere (regs->epc, t0 here): sret there, everything as in the
 * frame (the frame the detour's call took dropped). A post step goes on in the copy with the frame's SPIE cleared: the usual way back.
 */
.macro okp_detour_redirect
	ld	t0, OKP_PT_EPC(sp)
	ld	t1, OKP_DETOUR_BACK(sp)
	addi	t1, t1, OKP_DETOUR_COPY_FROM_RET
	beq	t0, t1, .Lback_\@
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
.Lback_\@:
	okp_detour_return
.endm

/*
 * preempt_disable_notrace() and preempt_enable_notrace() on the preempt count in
 * thread_info (tp is current, whose thread_info comes first; detour.c checks the offsets).
 * Where a count going back to 0 may reschedule (CONFIG_PREEMPTION), a due reschedule goes
 * through okp_detour_resched, which calls the kernel's own helper; a0 (the core's answer) is
 * kept in s2 across it (restored from the frame afterwards like every register).
 */
.macro okp_preempt_disable
#ifdef CONFIG_PREEMPT_COUNT
	lw	t0, OKP_TI_PREEMPT_COUNT(tp)
	addiw	t0, t0, 1
	sw	t0, OKP_TI_PREEMPT_COUNT(tp)
#endif
.endm

.macro okp_preempt_enable
#ifdef CONFIG_PREEMPT_COUNT
	lw	t0, OKP_TI_PREEMPT_COUNT(tp)
	addiw	t0, t0, -1
	sw	t0, OKP_TI_PREEMPT_COUNT(tp)
#ifdef CONFIG_PREEMPTION
	bnez	t0, .Lno_resched_\@
	ld	t0, OKP_TI_FLAGS(tp)
	andi	t0, t0, OKP_TIF_NEED_RESCHED_MASK
	beqz	t0, .Lno_resched_\@
	mv	s2, a0
	call	okp_detour_resched
	mv	a0, s2
.Lno_resched_\@:
#endif
#endif
.endm

/*
 * Every detour without a post entry: pre handlers, then the copy (or where a handler sent
 * execution). preempt_disable_notrace(), then this CPU's okp_cpu_state (from detour.c's table
 * by CPU number; s1 across the call: callee-saved, and restored from the frame like every
 * register). On an idle CPU (depth 0, the common hit) its depth goes 0 -> 1 around
 * okp_core_on_detour_idle, given the site word the detour names (untagged: no post entry), as
 * the core's open_first_frame and close_first_frame do, frame 0 left unfilled
 * (core/cpu_frames.h says why that is enough). A CPU with a frame open (a re-entry) goes to
 * okp_core_on_detour(copy, regs, cpu). detour.c checks that the depth is okp_cpu_state's
 * first field, 4 bytes.
 */
SYM_CODE_START(okp_detour_entry)
	okp_detour_save
	okp_detour_pre_record
	okp_detour_zero_dead
	okp_preempt_disable
	lw	t0, OKP_TI_CPU(tp)
	slli	t0, t0, 3
	lla	t1, okp_riscv_cpu_states
	add	t1, t1, t0
	ld	s1, 0(t1)
	lw	t0, 0(s1)			/* the depth */
	bnez	t0, .Lnot_idle
	li	t0, 1
	sw	t0, 0(s1)
	ld	a0, OKP_DETOUR_SITE_FROM_RET(ra)
	mv	a1, sp
	call	okp_core_on_detour_idle
	/* Nothing an interrupt may see (a kHandlers frame) was written: the count alone closes. */
	sw	zero, 0(s1)
.Lhandled:
	okp_preempt_enable
	bnez	a0, .Lredirected
	okp_detour_return
.Lnot_idle:
	addi	a0, ra, OKP_DETOUR_COPY_FROM_RET	/* the copy: names the probe */
	mv	a1, sp
	mv	a2, s1
	call	okp_core_on_detour
	j	.Lhandled
.Lredirected:
	okp_detour_redirect
SYM_CODE_END(okp_detour_entry)

/* A detour whose copy calls the post entry: the core's general detour hit (detour.c). */
SYM_CODE_START(okp_detour_entry_with_post)
	okp_detour_save
	okp_detour_pre_record
	okp_detour_zero_dead
	addi	a0, ra, OKP_DETOUR_COPY_FROM_RET	/* the copy: names the probe */
	mv	a1, sp
	call	okp_detour_hit
	bnez	a0, .Lwith_post_redirected
	okp_detour_return
.Lwith_post_redirected:
	okp_detour_redirect
SYM_CODE_END(okp_detour_entry_with_post)

SYM_CODE_START(okp_detour_post_entry)
	okp_detour_save
#ifdef CONFIG_FRAME_POINTER
	sd	ra, (OKP_DETOUR_RECORD + 8)(sp)
#endif
	addi	t0, ra, OKP_DETOUR_POST_RESUME
	sd	t0, OKP_DETOUR_BACK(sp)
	mv	a0, ra				/* the post call's return address: the data word */
	mv	a1, sp
	call	okp_detour_post_hit
	okp_detour_return
SYM_CODE_END(okp_detour_post_entry)
