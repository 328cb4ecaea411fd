/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The out-of-line execution slots: executable, read-only after load like the rest of
 * okprobes' text, written only through the kernel's text patching. Filled with zero
 * halfwords (0x0000 is defined to be an illegal instruction, compressed or not), so a stray
 * jump into an unused slot faults instead of running garbage, and does not look like a
 * breakpoint (ebreak) okprobes might own.
 */

	/* .kprobes.text: a kernel kprobe in a slot would be overwritten when okprobes fills it. */
	.section .kprobes.text, "ax"
	.balign 4096
	.globl okp_slot_area_start
okp_slot_area_start:
	.fill 128 * 1024 / 2, 2, 0x0000
	.globl okp_slot_area_end
okp_slot_area_end:
	.2byte 0x0000	/* one illegal instruction, so the end label sits on an instruction */
