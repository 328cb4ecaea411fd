// SPDX-License-Identifier: GPL-2.0
/* okp_arg() on x86-64: the SysV calling convention at the probed function's entry. */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>

#include <okprobes/okprobes.h>

unsigned long okp_arg(struct pt_regs *regs, unsigned int n)
{
	switch (n) {
	case 0: return regs->di;
	case 1: return regs->si;
	case 2: return regs->dx;
	case 3: return regs->cx;
	case 4: return regs->r8;
	case 5: return regs->r9;
	default: {
		/* At entry, sp points at the return address; stack arguments follow it. */
		unsigned long v = 0;

		if (copy_from_kernel_nofault(&v, (unsigned long *)regs->sp + 1 + (n - 6), sizeof(v)))
			return 0;
		return v;
	}
	}
}
EXPORT_SYMBOL_GPL(okp_arg);
NOKPROBE_SYMBOL(okp_arg);
