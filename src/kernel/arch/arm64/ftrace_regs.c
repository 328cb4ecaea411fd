// SPDX-License-Identifier: GPL-2.0
/*
 * arm64's pt_regs -> ftrace_regs for function-entry probes on a kernel whose ftrace is
 * DYNAMIC_FTRACE_WITH_ARGS only (arm64 dropped WITH_REGS in 6.5; Debian's 6.12 is built so).
 * ftrace_caller saves x0-x8, the caller's fp, the function's return address (lr, still unsigned:
 * the call site is before paciasp), the entry sp and the pc after the call site, and restores
 * x0-x8, fp, lr and pc from them (sp it recomputes). In: src/kernel/ftrace.c. Out: exactly
 * those it restores, so a return probe's new x30 and an IPMODIFY probe's new pc take effect,
 * as with a full pt_regs.
 */
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>

#include "kernel/okp_glue.h"

#if defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS) && !defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS)

void notrace okp_arch_ftrace_regs_out(const struct pt_regs *regs, struct ftrace_regs *fregs)
{
	struct __arch_ftrace_regs *saved = arch_ftrace_regs(fregs);
	int i;

	for (i = 0; i < ARRAY_SIZE(saved->regs); i++)
		saved->regs[i] = regs->regs[i];
	saved->fp = regs->regs[29];
	saved->lr = regs->regs[30];
	saved->pc = regs->pc;
}
NOKPROBE_SYMBOL(okp_arch_ftrace_regs_out);

#endif
