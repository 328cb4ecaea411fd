// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of the return trampoline (arch/x86/return_stubs.S): the stub's common part
 * calls okp_return_trampoline_handler() with the saved pt_regs and the stub's index. The
 * handler runs with interrupts off, like a breakpoint handler: the per-CPU frames see a probe
 * hit inside it as a re-entry, and unregister's RCU grace period covers it.
 */
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/sched.h>

#include "okp_glue.h"

unsigned long okp_return_trampoline_handler(struct pt_regs *regs, unsigned long index);

unsigned long notrace okp_return_trampoline_handler(struct pt_regs *regs, unsigned long index)
{
	unsigned long flags, ret;

	local_irq_save(flags);
	ret = okp_core_on_return((struct okp_regs *)regs, index, this_cpu_ptr(&okp_cpu_state));
	local_irq_restore(flags);
	return ret;
}
NOKPROBE_SYMBOL(okp_return_trampoline_handler);

void *okp_seam_current_task(void)
{
	return current;
}

unsigned int okp_seam_possible_cpus(void)
{
	return num_possible_cpus();
}
