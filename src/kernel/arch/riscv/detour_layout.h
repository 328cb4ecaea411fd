/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What detour_entry.S and detour.c agree on: the frame the entries build (a struct pt_regs,
 * checked in detour.c: epc, then x1..x31 in order, then status), and the detour's words the
 * entries read (arch/riscv/detour.h has the detour's layout).
 */
#ifndef OKP_RISCV_DETOUR_LAYOUT_H
#define OKP_RISCV_DETOUR_LAYOUT_H

#define OKP_PT_EPC 0
#define OKP_PT_X(n) ((n) * 8)		/* x1..x31 */
#define OKP_PT_STATUS (32 * 8)
#define OKP_PT_TAIL (33 * 8)		/* badaddr, cause, orig_a0: zeroed */
#define OKP_PT_SIZE (36 * 8)
#define OKP_DETOUR_BACK OKP_PT_SIZE	/* where the entry returns to */
#define OKP_DETOUR_RECORD (OKP_PT_SIZE + 16)	/* a frame record: s0, then the probe address */
/* The whole frame, which the detour's call takes (arch/riscv/detour.h: kDetourEntryFrame, its
 * ra in the pt_regs' ra); the entries add nothing to it. */
#define OKP_DETOUR_FRAME (OKP_PT_SIZE + 32)
/* From the pre entry's return address (buffer + 40): the probe address, the core's site
 * word, R's place in a pt_regs (checked against arch/riscv/detour.h in jump_probe_arch.cpp). */
#define OKP_DETOUR_ADDR_FROM_RET (-40)
#define OKP_DETOUR_SITE_FROM_RET (-32)
#define OKP_DETOUR_DEAD_FROM_RET (-24)
/* The site word's tag: the copy calls the post entry (such a detour calls the other entry). */
#define OKP_DETOUR_HAS_POST 1
/* The copy, from the pre entry's return address. */
#define OKP_DETOUR_COPY_FROM_RET 8
/* The post entry returns after the data word its return address points at. */
#define OKP_DETOUR_POST_RESUME 8
/* struct thread_info (the start of the task_struct tp points at): its flags, preempt count and
 * CPU number (checked in detour.c). */
#define OKP_TI_FLAGS 0
#define OKP_TI_PREEMPT_COUNT 8
#define OKP_TI_CPU 32
#define OKP_TIF_NEED_RESCHED_MASK 0x8
/* sstatus: SIE, SPIE, SPP. */
#define OKP_SR_SIE 0x2
#define OKP_SR_SPIE 0x20
#define OKP_SR_SPP 0x100

#endif /* OKP_RISCV_DETOUR_LAYOUT_H */
