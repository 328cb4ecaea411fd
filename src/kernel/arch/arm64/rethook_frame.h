/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes through the kernel: arm64's part.
 *
 * No rethook here (src/kernel/rethook.c): through 6.12 arm64 does not select HAVE_RETHOOK.
 * But its unwinder recovers the kernel's own kretprobe frames (arch/arm64/kernel/stacktrace.c:
 * at __kretprobe_trampoline it asks kretprobe_find_ret_addr(), which walks the task's
 * kretprobe_instances), so where the kernel has CONFIG_KRETPROBES okprobes' return probes go
 * through that trampoline instead of okprobes' stubs (src/kernel/kretprobe_route.c): the entry
 * does what the kernel's arch_prepare_kretprobe() does, with the entry probe's pt_regs.
 *
 * At a function's entry (its ftrace call site, whose pt_regs hold the caller's x29 and the
 * function's x30 and put x30 back on the way out, or the BRK after its landing pad) x30 is the
 * return address, not yet signed by the function's paciasp, and x29 the caller's frame
 * pointer, which the function keeps and which the trampoline and the unwinder match the
 * instance by (kretprobe_instance.fp).
 */
#ifndef OKP_RETHOOK_FRAME_H
#define OKP_RETHOOK_FRAME_H

#define OKP_ARCH_RETHOOK_FRAME 0
#define OKP_ARCH_RETHOOK_WHY_NOT "the kernel has no rethook on arm64"
/* kretprobe_route.c serves where the kernel's kretprobes keep their own instances (no rethook
 * under them: CONFIG_KRETPROBE_ON_RETHOOK, which arm64 never sets through 6.12). */
#define OKP_KRETPROBE_ROUTE (IS_ENABLED(CONFIG_KRETPROBES) && !IS_ENABLED(CONFIG_KRETPROBE_ON_RETHOOK))
#define OKP_KRETPROBE_WHY_NOT "the kernel has no kretprobes (CONFIG_KRETPROBES is off)"

#include <linux/kconfig.h>
#include <linux/ptrace.h>

/* The entry's return address; okprobes' name of the frame (the entry stack pointer, as for the
 * stubs: nested live frames of one task have lower ones); the frame pointer the kernel's
 * trampoline and unwinder match the instance by. */
static __always_inline unsigned long okp_arch_kretprobe_return_address(const struct pt_regs *regs)
{
	return regs->regs[30];
}

static __always_inline unsigned long okp_arch_kretprobe_frame(const struct pt_regs *regs)
{
	return regs->sp;
}

static __always_inline unsigned long okp_arch_kretprobe_fp(const struct pt_regs *regs)
{
	return regs->regs[29];
}

/* The function returns to trampoline. */
static __always_inline void okp_arch_kretprobe_divert(struct pt_regs *regs, unsigned long trampoline)
{
	regs->regs[30] = trampoline;
}

#endif /* OKP_RETHOOK_FRAME_H */
