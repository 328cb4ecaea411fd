// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of the return trampoline (arch/<arch>/return_stubs.S): the stub's common part
 * calls okp_return_trampoline_handler() with the saved pt_regs and the stub's index (x86-64's
 * does what it does itself). The
 * handler runs with preemption off, as the kernel's rethook handlers do (not interrupts: on
 * an emulator re-enabling them ends the translated block, which cost a fifth of a return
 * probe's hit): it stays on this CPU, the per-CPU frames see a probe hit inside it (or in an
 * interrupt meanwhile) as a re-entry, and unregister's RCU grace period covers it.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "okp_glue.h"

unsigned long okp_return_trampoline_handler(struct pt_regs *regs, unsigned long index);

/* The stubs' common part calls this on arm64 and riscv64; x86-64's does the same itself
 * (arch/x86/return_stubs.S), a call level less on every return. Either way it stays the root
 * the trap-path walk starts the return path from (blacklist.c): it reaches the core's. */

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

/*
 * Frames that return through a detached stub (their probe was unregistered while they were
 * inside the function) run okprobes' text when they return, however late: okprobes must not
 * unload before the last of them has. While any may, okprobes holds a reference on itself
 * (rmmod says "in use"); a worker drops it once none is left.
 *
 * Dropping it: a frame gives its stub back (the core's count falls) and then still runs the
 * stub's last instructions, where it may be preempted. So the worker reads the count, waits
 * for RCU and RCU-tasks (no task is left inside a stub that was given back before), and drops
 * the reference only if no stub was detached meanwhile (okp_stub_detach_gen) and the count is
 * still zero. It runs in okprobes' text after module_put(): okp_return_exit() waits for it.
 *
 * At unload itself (the events' teardown unregisters return probes while tasks may sleep in
 * them) no reference can be taken any more: okp_return_exit() waits for the frames instead.
 *
 * Locking: okp_stub_pin_mutex, taken inside the registry lock (okp_seam_return_stubs_detached()
 * runs under it); the worker takes nothing else while holding it.
 */
static DEFINE_MUTEX(okp_stub_pin_mutex);
static bool okp_stub_pinned;			/* okp_stub_pin_mutex */
static unsigned long okp_stub_detach_gen;	/* okp_stub_pin_mutex */
static void okp_stub_unpin(struct work_struct *work);
static DECLARE_DELAYED_WORK(okp_stub_unpin_work, okp_stub_unpin);

void okp_seam_return_stubs_detached(void)
{
	mutex_lock(&okp_stub_pin_mutex);
	okp_stub_detach_gen++;
	/* fails only while okprobes unloads: okp_return_exit() waits then */
	if (!okp_stub_pinned && try_module_get(THIS_MODULE)) {
		okp_stub_pinned = true;
		schedule_delayed_work(&okp_stub_unpin_work, HZ);
	}
	mutex_unlock(&okp_stub_pin_mutex);
}

static void okp_stub_unpin(struct work_struct *work)
{
	unsigned long gen;

	mutex_lock(&okp_stub_pin_mutex);
	gen = okp_stub_detach_gen;
	mutex_unlock(&okp_stub_pin_mutex);
	if (okp_core_detached_stubs_live())
		goto again;
	okp_seam_synchronize_rcu();
	okp_seam_synchronize_tasks();
	mutex_lock(&okp_stub_pin_mutex);
	if (gen != okp_stub_detach_gen || okp_core_detached_stubs_live()) {
		mutex_unlock(&okp_stub_pin_mutex);
		goto again;
	}
	okp_stub_pinned = false;
	mutex_unlock(&okp_stub_pin_mutex);
	module_put(THIS_MODULE);
	return;
again:
	schedule_delayed_work(&okp_stub_unpin_work, HZ);
}

/* At unload: every frame still due to return through a detached stub has. */
static void okp_wait_for_detached_stubs(void)
{
	bool waited = false;

	while (okp_core_detached_stubs_live()) {
		if (!waited)
			pr_warn("unloading waits for tasks still inside functions whose return probes were removed (their frames return through okprobes' stubs)\n");
		waited = true;
		msleep(100);
	}
	if (waited) {
		okp_seam_synchronize_rcu();
		okp_seam_synchronize_tasks();
		pr_info("every frame returned through okprobes' stubs: unloading\n");
	}
	/* its module_put() may be the one that let this unload begin */
	cancel_delayed_work_sync(&okp_stub_unpin_work);
}

void okp_return_exit(void)
{
	/* before the task-free tracepoint goes: a task freed inside such a function gives its
	 * stub back there */
	okp_wait_for_detached_stubs();
	if (!okp_task_free_tp)
		return;
	tracepoint_probe_unregister(okp_task_free_tp, (void *)okp_on_task_free, NULL);
	tracepoint_synchronize_unregister();
	okp_task_free_tp = NULL;
}
