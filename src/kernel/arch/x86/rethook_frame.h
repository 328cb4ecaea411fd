/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes on the kernel's rethook (src/kernel/rethook.c), x86-64's part: where a frame's
 * return address is at an entry probe's pt_regs, and how it is diverted. At a function's entry
 * (okprobes' breakpoint, ftrace or jump entry) regs->sp points at the return address, as the
 * kernel's arch_rethook_prepare() expects from a kprobe: the address goes into the node, the
 * kernel's trampoline into the stack slot (okp_arch_rethook_divert), and the node onto
 * current's list (src/kernel/rethook.c), which the trampoline and the unwinders read.
 */
#ifndef OKP_RETHOOK_FRAME_H
#define OKP_RETHOOK_FRAME_H

/* Return probes through the kernel's kretprobe trampoline (kretprobe_route.c): not here. */
#define OKP_KRETPROBE_ROUTE 0
#define OKP_ARCH_RETHOOK_FRAME 1

#ifdef CONFIG_RETHOOK
#include <linux/ptrace.h>

/* The entry's return address, and the stack slot that holds it (which identifies the frame). */
static __always_inline unsigned long okp_arch_rethook_return_address(struct pt_regs *regs)
{
	return *(unsigned long *)regs->sp;
}

static __always_inline unsigned long okp_arch_rethook_frame(struct pt_regs *regs)
{
	return regs->sp;
}

/* The frame's return goes to trampoline: its stack slot (frame) now holds it. */
static __always_inline void okp_arch_rethook_divert(struct pt_regs *regs, unsigned long frame,
						    unsigned long trampoline)
{
	*(unsigned long *)frame = trampoline;
}
#endif

#endif /* OKP_RETHOOK_FRAME_H */
