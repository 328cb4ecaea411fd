// SPDX-License-Identifier: GPL-2.0
/*
 * riscv64's pt_regs -> ftrace_regs for function-entry probes on a kernel whose ftrace is
 * DYNAMIC_FTRACE_WITH_ARGS only (riscv traded WITH_REGS for it after 6.1, which never
 * builds this). 6.12's ftrace_caller saves epc (t0: the site + 8, where the function resumes),
 * ra (the function's return address: the auipc/jalr t0 call leaves it alone), the entry sp, s0,
 * t1 (0: the direct-call target) and a0-a7, and restores epc, ra, s0, t1 and a0-a7 (sp is
 * its own). In: src/kernel/ftrace.c. Out: epc, ra, s0 and a0-a7, so a return probe's new ra
 * and an IPMODIFY probe's new epc take effect, as with a full pt_regs. Not t1: a nonzero t1
 * makes ftrace_caller jump there (a direct call), which no probe handler means by writing a
 * caller-saved temporary.
 */
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/string.h>

#include "kernel/okp_glue.h"

#if defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS) && !defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS)

void notrace okp_arch_ftrace_regs_out(const struct pt_regs *regs, struct ftrace_regs *fregs)
{
	struct __arch_ftrace_regs *saved = arch_ftrace_regs(fregs);

	/* pt_regs' a0..a7 are consecutive, as ftrace_partial_regs() itself relies on. */
	memcpy(saved->args, &regs->a0, sizeof(saved->args));
	saved->epc = regs->epc;
	saved->ra = regs->ra;
	saved->s0 = regs->s0;
}
NOKPROBE_SYMBOL(okp_arch_ftrace_regs_out);

#endif
