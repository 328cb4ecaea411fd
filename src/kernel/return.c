// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of the return trampoline (arch/<arch>/return_stubs.S): the stub's common part
 * calls okp_return_trampoline_handler() with the saved pt_regs and the stub's index. The
 * handler runs with preemption off, as the kernel's rethook handlers do (not interrupts: on
 * an emulator re-enabling them ends the translated block, which cost a fifth of a return
 * probe's hit): it stays on this CPU, the per-CPU frames see a probe hit inside it (or in an
 * interrupt meanwhile) as a re-entry, and unregister's RCU grace period covers it.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/cpumask.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "okp_glue.h"

unsigned long okp_return_trampoline_handler(struct pt_regs *regs, unsigned long index);

unsigned long notrace okp_return_trampoline_handler(struct pt_regs *regs, unsigned long index)
{
	unsigned long ret;

	preempt_disable_notrace();
	ret = okp_core_on_return((struct okp_regs *)regs, index, this_cpu_ptr(&okp_cpu_state));
	preempt_enable_notrace();
	return ret;
}
NOKPROBE_SYMBOL(okp_return_trampoline_handler);

okp_addr_t okp_return_entry_point(void)
{
	return (okp_addr_t)okp_return_trampoline_handler;
}

/* notrace: the detour entry asks for it on a return probe's hit (core/hit.cpp). */
notrace void *okp_seam_current_task(void)
{
	return current;
}
NOKPROBE_SYMBOL(okp_seam_current_task);

unsigned int okp_seam_possible_cpus(void)
{
	return num_possible_cpus();
}

/*
 * A task that exits inside a return-probed function (or whose frame was unwound past)
 * never returns through its stub. When the task is freed, every instance it still holds is
 * dead: take them back. sched_process_free fires from the RCU callback that frees the task
 * (where the kernel flushes its own kretprobe instances), so the task can never run again.
 */
static struct tracepoint *okp_task_free_tp;

static void okp_on_task_free(void *data, struct task_struct *task)
{
	rcu_read_lock();	/* unregister's grace period covers the pools this walks */
	okp_core_on_task_free(task);
	rcu_read_unlock();
}
NOKPROBE_SYMBOL(okp_on_task_free);

static void okp_find_task_free_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_free"))
		okp_task_free_tp = tp;
}

void okp_return_init(void)
{
	int ret;

	okp_rethook_init();

	for_each_kernel_tracepoint(okp_find_task_free_tp, NULL);
	if (!okp_task_free_tp) {
		pr_warn("no sched_process_free tracepoint: return-probe instances of exited tasks are reclaimed only when their stack is reused\n");
		return;
	}
	ret = tracepoint_probe_register(okp_task_free_tp, (void *)okp_on_task_free, NULL);
	if (ret) {
		pr_warn("cannot hook sched_process_free (%d): return-probe instances of exited tasks are reclaimed only when their stack is reused\n",
			ret);
		okp_task_free_tp = NULL;
	}
}

void okp_return_exit(void)
{
	if (!okp_task_free_tp)
		return;
	tracepoint_probe_unregister(okp_task_free_tp, (void *)okp_on_task_free, NULL);
	tracepoint_synchronize_unregister();
	okp_task_free_tp = NULL;
}
