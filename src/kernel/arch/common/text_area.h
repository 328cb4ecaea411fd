/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run of okprobes' own text written only at run time, through the kernel's text patching
 * (the slot area, x86-64's IBT stubs): executable and read-only after load like the rest of
 * okprobes' text, in .kprobes.text so that no kernel kprobe sits where okprobes writes.
 * [start, end) holds bytes / unit units of fill, a filler that faults or traps if a stray jump
 * runs it; one more unit follows, so the end label sits on an instruction. The arch may define
 * OKP_TEXT_AREA_LABEL_NOTE, an annotation for each label (e.g. for objtool), before including.
 */
#ifndef OKP_TEXT_AREA_H
#define OKP_TEXT_AREA_H

#ifndef OKP_TEXT_AREA_LABEL_NOTE
#define OKP_TEXT_AREA_LABEL_NOTE
#endif

.macro okp_text_area start:req, end:req, align:req, bytes:req, unit:req, fill:req
	.section .kprobes.text, "ax"
	.balign \align
	.globl \start
\start:
	OKP_TEXT_AREA_LABEL_NOTE
	.fill \bytes / \unit, \unit, \fill
	.globl \end
\end:
	OKP_TEXT_AREA_LABEL_NOTE
	.fill 1, \unit, \fill
.endm

#endif /* OKP_TEXT_AREA_H */
