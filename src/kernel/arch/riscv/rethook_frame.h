/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes on the kernel's rethook (src/kernel/rethook.c), riscv64's part, where the kernel
 * has one (6.12: HAVE_RETHOOK; the 6.1 test kernels have none and keep okprobes' stubs). At a
 * function's entry (okprobes' ebreak, ftrace or detour entry) ra holds the return address and
 * s0 the caller's frame pointer, which the callee restores before it returns: the kernel's
 * arch_rethook_prepare() keys the frame by s0, and its trampoline looks the node up by the s0
 * it returns with. The address goes into the node and the kernel's trampoline into ra, which
 * every okprobes entry writes back from pt_regs (the detour from its frame, see
 * detour_entry.S).
 *
 * What it gains over the stubs: no global cap (a probe's instances are its own rethook's nodes),
 * and the frames are on the task's rethook list as the kernel's own return probes' are. What
 * it does not: riscv64's unwinder recovers only the function graph tracer's return addresses,
 * not rethook's, so a stack trace through such a frame stops at the kernel's trampoline, as it
 * does through the kernel's own kretprobes there.
 */
#ifndef OKP_RETHOOK_FRAME_H
#define OKP_RETHOOK_FRAME_H

/* Return probes through the kernel's kretprobe trampoline (kretprobe_route.c): not here. */
#define OKP_KRETPROBE_ROUTE 0
/*
 * riscv's ftrace saves s0 into ftrace_regs only under HAVE_FUNCTION_GRAPH_FP_TEST (frame
 * pointers and the graph tracer; mcount-dyn.S): without it a function entry's pt_regs has no
 * s0, the key the kernel's trampoline finds the node by, so it would find none (rethook's
 * WARN) and return to the wrong address. Such a kernel keeps okprobes' stubs.
 */
#if defined(CONFIG_RETHOOK) && \
	(!defined(CONFIG_FRAME_POINTER) || !defined(CONFIG_FUNCTION_GRAPH_TRACER))
#define OKP_ARCH_RETHOOK_FRAME 0
#define OKP_ARCH_RETHOOK_WHY_NOT \
	"riscv64 without frame pointers: ftrace saves no s0, the key of the kernel's rethook frames"
#else
#define OKP_ARCH_RETHOOK_FRAME 1
#endif

#ifdef CONFIG_RETHOOK
#include <linux/ptrace.h>

static __always_inline unsigned long okp_arch_rethook_return_address(struct pt_regs *regs)
{
	return regs->ra;
}

static __always_inline unsigned long okp_arch_rethook_frame(struct pt_regs *regs)
{
	return regs->s0;
}

/* The frame returns to trampoline: the entry writes ra back from pt_regs. */
static __always_inline void okp_arch_rethook_divert(struct pt_regs *regs, unsigned long frame,
						    unsigned long trampoline)
{
	regs->ra = trampoline;
}
#endif

#endif /* OKP_RETHOOK_FRAME_H */
