/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes on arm64 without a trap (src/core/return_probe.cpp; the x86-64 counterpart is
 * arch/x86/return_stubs.S).
 *
 * At a return-probed function's entry (its ftrace call site, or the BRK after its landing
 * pad) the core replaces x30 in the trap frame by the address of one of OKP_RET_STUBS stubs
 * here, each held by one frame at a time. Entry is before the function's paciasp, so the function
 * signs and later authenticates the stub's address like any return address, and its `ret`
 * lands here. The stub itself says which instance the returning frame belongs to: recursion,
 * nesting, interrupts and tasks sleeping inside the function need no lookup.
 *
 * A stub makes room for a struct pt_regs, saves x0/x1 there, puts its index in x0 and
 * branches to the common part, which saves the rest, calls
 * okp_return_trampoline_handler(regs, index) (src/kernel/return.c), restores x0-x29 (a handler
 * may change the return value in regs->regs[0]) and returns to the real return address with
 * x30 holding it, exactly as the function's own `ret` would have left it. x30 is the only
 * register the handoff uses, and `ret` (unlike br) needs no BTI landing pad at the target.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/ptrace.h>

#include "../common/return_stubs.h"

/* Four instructions: OKP_RET_STUB_SIZE exactly, so the block pads nothing. */
.macro okp_return_stub
	sub	sp, sp, #PT_REGS_SIZE
	stp	x0, x1, [sp, #S_X0]
	mov	x0, #okp_stub_index
	b	okp_return_common
.endm
	okp_return_stub_block 0

/* x0 = the stub's index; sp = the pt_regs, x0/x1 saved in it. */
okp_return_common:
	stp	x2, x3, [sp, #S_X0 + 16]
	stp	x4, x5, [sp, #S_X0 + 32]
	stp	x6, x7, [sp, #S_X0 + 48]
	stp	x8, x9, [sp, #S_X0 + 64]
	stp	x10, x11, [sp, #S_X0 + 80]
	stp	x12, x13, [sp, #S_X0 + 96]
	stp	x14, x15, [sp, #S_X0 + 112]
	stp	x16, x17, [sp, #S_X0 + 128]
	stp	x18, x19, [sp, #S_X0 + 144]
	stp	x20, x21, [sp, #S_X0 + 160]
	stp	x22, x23, [sp, #S_X0 + 176]
	stp	x24, x25, [sp, #S_X0 + 192]
	stp	x26, x27, [sp, #S_X0 + 208]
	stp	x28, x29, [sp, #S_X0 + 224]
	add	x2, sp, #PT_REGS_SIZE		/* sp: as the caller sees it after the return */
	stp	x30, x2, [sp, #S_LR]
	mrs	x2, nzcv
	mrs	x3, daif
	orr	x2, x2, x3
	mov	x4, #PSR_MODE_EL1h
	orr	x2, x2, x4
	stp	xzr, x2, [sp, #S_PC]		/* pc: the handler fills in the return address */
	stp	xzr, xzr, [sp, #S_PSTATE + 8]	/* orig_x0, syscallno and the rest: zero */
	stp	xzr, xzr, [sp, #S_PSTATE + 24]
	stp	xzr, xzr, [sp, #S_PSTATE + 40]
	stp	xzr, xzr, [sp, #S_PSTATE + 56]
	mov	x1, x0
	mov	x0, sp
	bl	okp_return_trampoline_handler
	mov	x30, x0				/* the real return address */
	ldp	x0, x1, [sp, #S_X0]
	ldp	x2, x3, [sp, #S_X0 + 16]
	ldp	x4, x5, [sp, #S_X0 + 32]
	ldp	x6, x7, [sp, #S_X0 + 48]
	ldp	x8, x9, [sp, #S_X0 + 64]
	ldp	x10, x11, [sp, #S_X0 + 80]
	ldp	x12, x13, [sp, #S_X0 + 96]
	ldp	x14, x15, [sp, #S_X0 + 112]
	ldp	x16, x17, [sp, #S_X0 + 128]
	ldp	x18, x19, [sp, #S_X0 + 144]
	ldp	x20, x21, [sp, #S_X0 + 160]
	ldp	x22, x23, [sp, #S_X0 + 176]
	ldp	x24, x25, [sp, #S_X0 + 192]
	ldp	x26, x27, [sp, #S_X0 + 208]
	ldp	x28, x29, [sp, #S_X0 + 224]
	add	sp, sp, #PT_REGS_SIZE
	ret
