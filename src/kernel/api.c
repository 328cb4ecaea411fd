// SPDX-License-Identifier: GPL-2.0
/* The exported C API of include/okprobes/okprobes.h; the work is the core's. */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

#include <okprobes/okprobes.h>
#include "okp_glue.h"

int okp_register_kprobe(struct okp_kprobe *p)
{
	might_sleep();
	return okp_core_register_kprobe(p);
}
EXPORT_SYMBOL_GPL(okp_register_kprobe);

void okp_unregister_kprobe(struct okp_kprobe *p)
{
	might_sleep();
	okp_core_unregister_kprobe(p);
}
EXPORT_SYMBOL_GPL(okp_unregister_kprobe);

int okp_register_kprobes(struct okp_kprobe **kps, int num)
{
	int i, ret;

	if (num <= 0 || !kps)
		return -EINVAL;
	for (i = 0; i < num; i++) {
		ret = okp_register_kprobe(kps[i]);
		if (ret) {
			pr_err("batch registration stopped at entry %d (%d): unregistering the %d before it\n",
			       i, ret, i);
			okp_core_unregister_kprobes(kps, i);
			return ret;
		}
		/*
		 * Between two probes no lock is held and each registered one is whole: a quiescent
		 * state for tasks-RCU (and, without preemption, for RCU). Otherwise the optimizer's
		 * grace-period wait (synchronize_rcu_tasks(), synchronize_rcu_expedited()) lasts
		 * until a batch of thousands returns, holding every jump back for all of it
		 * (tests/vm/scripts/batch_qs.sh checks it does not). cond_resched() alone is no tasks-RCU quiescent
		 * state: a preemption is not a voluntary context switch.
		 */
		cond_resched_tasks_rcu_qs();
		okp_registry_let_waiters_in();
	}
	return 0;
}
EXPORT_SYMBOL_GPL(okp_register_kprobes);

void okp_unregister_kprobes(struct okp_kprobe **kps, int num)
{
	if (num <= 0 || !kps)
		return;
	okp_core_unregister_kprobes(kps, num);	/* one grace period for the batch */
}
EXPORT_SYMBOL_GPL(okp_unregister_kprobes);

int okp_disable_kprobe(struct okp_kprobe *kp)
{
	return okp_core_set_kprobe_disabled(kp, 1);
}
EXPORT_SYMBOL_GPL(okp_disable_kprobe);

int okp_enable_kprobe(struct okp_kprobe *kp)
{
	return okp_core_set_kprobe_disabled(kp, 0);
}
EXPORT_SYMBOL_GPL(okp_enable_kprobe);

const char *okp_kprobe_reason(const struct okp_kprobe *p)
{
	return p ? p->okp_reason : "NULL probe";
}
EXPORT_SYMBOL_GPL(okp_kprobe_reason);

void okp_wait_for_optimizer(void)
{
	might_sleep();
#ifdef OKP_JUMP_PROBES
	okp_seam_flush_optimizer();	/* without jump probes there is no optimizer to wait for */
#endif
}
EXPORT_SYMBOL_GPL(okp_wait_for_optimizer);

int okp_register_kretprobe(struct okp_kretprobe *rp)
{
	might_sleep();
	return okp_core_register_kretprobe(rp);
}
EXPORT_SYMBOL_GPL(okp_register_kretprobe);

void okp_unregister_kretprobe(struct okp_kretprobe *rp)
{
	might_sleep();
	okp_core_unregister_kretprobe(rp);
}
EXPORT_SYMBOL_GPL(okp_unregister_kretprobe);

int okp_register_kretprobes(struct okp_kretprobe **rps, int num)
{
	int i, ret;

	if (num <= 0 || !rps)
		return -EINVAL;
	for (i = 0; i < num; i++) {
		ret = okp_register_kretprobe(rps[i]);
		if (ret) {
			pr_err("batch return-probe registration stopped at entry %d (%d): unregistering the %d before it\n",
			       i, ret, i);
			okp_core_unregister_kretprobes(rps, i); /* one grace period */
			return ret;
		}
		cond_resched_tasks_rcu_qs();	/* as okp_register_kprobes() */
		okp_registry_let_waiters_in();
	}
	return 0;
}
EXPORT_SYMBOL_GPL(okp_register_kretprobes);

/* One RCU grace period for the whole batch, as okp_unregister_kprobes. */
void okp_unregister_kretprobes(struct okp_kretprobe **rps, int num)
{
	if (num <= 0 || !rps)
		return;
	okp_core_unregister_kretprobes(rps, num);
}
EXPORT_SYMBOL_GPL(okp_unregister_kretprobes);

int okp_disable_kretprobe(struct okp_kretprobe *rp)
{
	return okp_core_set_kretprobe_disabled(rp, 1);
}
EXPORT_SYMBOL_GPL(okp_disable_kretprobe);

int okp_enable_kretprobe(struct okp_kretprobe *rp)
{
	return okp_core_set_kretprobe_disabled(rp, 0);
}
EXPORT_SYMBOL_GPL(okp_enable_kretprobe);

struct okp_kretprobe *okp_get_kretprobe(struct okp_kretprobe_instance *ri)
{
	return ri ? ri->rp : NULL;
}
EXPORT_SYMBOL_GPL(okp_get_kretprobe);
NOKPROBE_SYMBOL(okp_get_kretprobe);

unsigned long okp_kretprobe_find_ret_addr(void *task, unsigned long addr)
{
	return okp_core_kretprobe_find_ret_addr(task ? task : current, addr);
}
EXPORT_SYMBOL_GPL(okp_kretprobe_find_ret_addr);

bool okp_is_kretprobe_trampoline(unsigned long addr)
{
	return okp_core_is_return_stub(addr) || (addr && addr == okp_rethook_trampoline());
}
EXPORT_SYMBOL_GPL(okp_is_kretprobe_trampoline);
NOKPROBE_SYMBOL(okp_is_kretprobe_trampoline);

/* okprobes addition: NULL when return probes registered now go through the kernel's rethook,
 * else why they use okprobes' stubs. */
const char *okp_return_stubs_reason(void)
{
	return okp_seam_rethook_unusable();
}
EXPORT_SYMBOL_GPL(okp_return_stubs_reason);

const char *okp_return_route(void)
{
	return okp_seam_rethook_unusable() ? "stubs" : okp_seam_kernel_return_route();
}
EXPORT_SYMBOL_GPL(okp_return_route);

/* okprobes addition for tests, as the sysctl debug.okprobes-return-stubs: return probes
 * registered after on=1 use okprobes' stubs. Answers the previous setting. */
int okp_test_force_return_stubs(int on)
{
	return xchg(&okp_force_return_stubs, on);
}
EXPORT_SYMBOL_GPL(okp_test_force_return_stubs);

/* okprobes addition for tests: return stubs in use now, over all probes. */
unsigned long okp_return_stubs_in_use(void)
{
	unsigned long n;

	rcu_read_lock();	/* the registered pools, see okp_core_return_stubs_in_use() */
	n = okp_core_return_stubs_in_use();
	rcu_read_unlock();
	return n;
}
EXPORT_SYMBOL_GPL(okp_return_stubs_in_use);
