// SPDX-License-Identifier: GPL-2.0
/* okp_arg() on riscv64: the kernel's own reading of the calling convention at entry. */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>

#include <okprobes/okprobes.h>

unsigned long okp_arg(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_argument(regs, n);
}
EXPORT_SYMBOL_GPL(okp_arg);
NOKPROBE_SYMBOL(okp_arg);
