/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The out-of-line execution slots: executable, read-only after load like the rest of
 * okprobes' text, written only through the kernel's text patching. Filled with zero words,
 * `udf #0` (permanently undefined), so a stray jump into an unused slot faults instead of
 * running garbage, and does not look like a breakpoint (BRK) okprobes might own.
 */

	/* .kprobes.text: a kernel kprobe in a slot would be overwritten when okprobes fills it. */
	.section .kprobes.text, "ax"
	.balign 4096
	.globl okp_slot_area_start
okp_slot_area_start:
	.fill 128 * 1024 / 4, 4, 0x00000000
	.globl okp_slot_area_end
okp_slot_area_end:
	.word 0x00000000	/* one udf #0, so the end label sits on an instruction */
