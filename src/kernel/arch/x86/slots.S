/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The out-of-line execution slots: executable, read-only after load like the rest of
 * okprobes' text, written only through the kernel's text patching. Filled with int3 so a
 * stray jump into an unused slot traps instead of running garbage. Nothing ever calls or
 * jumps here indirectly (the trap path sets ip), hence no ENDBR.
 */
#include <linux/objtool.h>

	/* .kprobes.text: a kernel kprobe in a slot would be overwritten when okprobes fills it. */
	.section .kprobes.text, "ax"
	.balign 4096
	.globl okp_slot_area_start
okp_slot_area_start:
	ANNOTATE_NOENDBR
	/* 16,384 cells of 32 bytes: a breakpoint site takes 1-2, a jump-optimized one 4 more. */
	.fill 512 * 1024, 1, 0xcc
	.globl okp_slot_area_end
okp_slot_area_end:
	ANNOTATE_NOENDBR
	.byte 0xcc	/* one trapping byte, so the end label sits on an instruction */
