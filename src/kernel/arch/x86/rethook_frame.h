/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes on the kernel's rethook (src/kernel/rethook.c), x86-64's part: where a frame's
 * return address is at an entry probe's pt_regs, and how it is diverted. At a function's entry
 * (okprobes' breakpoint, ftrace or jump entry) regs->sp points at the return address, as the
 * kernel's arch_rethook_prepare() expects from a kprobe: the address goes into the node, the
 * kernel's trampoline into the stack slot, and the node onto current's list, which the
 * trampoline and the unwinders read (current's own, so no lock).
 */
#ifndef OKP_RETHOOK_FRAME_H
#define OKP_RETHOOK_FRAME_H

#define OKP_ARCH_RETHOOK_FRAME 1

#ifdef CONFIG_RETHOOK
#include <linux/llist.h>
#include <linux/ptrace.h>
#include <linux/rethook.h>
#include <linux/sched.h>

/* The entry's return address, and the stack slot that holds it (which identifies the frame). */
static __always_inline unsigned long okp_arch_rethook_return_address(struct pt_regs *regs)
{
	return *(unsigned long *)regs->sp;
}

static __always_inline unsigned long okp_arch_rethook_frame(struct pt_regs *regs)
{
	return regs->sp;
}

static __always_inline void okp_arch_rethook_prepare(struct rethook_node *node,
						     struct pt_regs *regs,
						     unsigned long trampoline)
{
	unsigned long *slot = (unsigned long *)regs->sp;

	node->ret_addr = *slot;
	node->frame = regs->sp;
	*slot = trampoline;
	__llist_add(&node->llist, &current->rethooks);
}
#endif

#endif /* OKP_RETHOOK_FRAME_H */
