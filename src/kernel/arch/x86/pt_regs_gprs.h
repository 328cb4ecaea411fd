/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The general registers of a struct pt_regs, pushed and popped in its order (orig_ax's slot
 * above them is the caller's): the detour entry (detour_entry.S) and the return stubs' common
 * part (arch/x86/return_stubs.S) build the same frame.
 */
#ifndef OKP_X86_PT_REGS_GPRS_H
#define OKP_X86_PT_REGS_GPRS_H

/* di first (highest address), r15 last: the frame's bottom is pt_regs.r15. */
.macro OKP_PUSH_PT_REGS_GPRS
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%rax
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
.endm

.macro OKP_POP_PT_REGS_GPRS
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rax
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
.endm

#endif
