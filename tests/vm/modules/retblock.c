// SPDX-License-Identifier: GPL-2.0
/*
 * One return probe on a function in which thousands of tasks block at once (issue 29): at
 * load, the probe is registered with maxactive >= tasks and `tasks` kthreads enter
 * okp_rblk_wait() and block there on a wait queue, each with its own live instance; the module
 * checks that all are inside, each seen once at entry and none yet at return, and returns with
 * them still blocked, so that the script can read the probe's line in debugfs list (in_use,
 * peak). Writing 1 to the parameter `release` wakes them all: every return handler must run
 * exactly once, with its own task's value, no instance missed, all back in the pool; then the
 * probe is unregistered and no return stub may stay in use.
 *
 * Driven by tests/vm/scripts/scale.sh. Each check prints
 *   OKP-RETBLOCK: ok - DESCRIPTION      or      OKP-RETBLOCK: not ok - DESCRIPTION
 * which the script numbers as TAP; OKP-RETBLOCK-BLOCKED once the tasks are inside, and
 * OKP-RETBLOCK-END once released and checked.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <okprobes/okprobes.h>

#include "scale_common.h"

static unsigned int tasks = 2000;
module_param(tasks, uint, 0444);
static int maxactive = 2048;
module_param(maxactive, int, 0444);

#define report(ok, fmt, ...) \
	pr_info("OKP-RETBLOCK: %s - " fmt "\n", (ok) ? "ok" : "not ok", ##__VA_ARGS__)

static DECLARE_WAIT_QUEUE_HEAD(okp_rblk_queue);
static bool released;
static atomic_t inside;
static unsigned int started;
/* Each task exits through it: none runs module text once all have been counted. */
static DECLARE_COMPLETION(task_exited);

/* okp_rblk_wait(x) = 5x + 1, once the tasks are released. */
unsigned long okp_rblk_wait(unsigned long x);
noinline __noclone unsigned long okp_rblk_wait(unsigned long x)
{
	atomic_inc(&inside);
	wait_event_idle(okp_rblk_queue, READ_ONCE(released));	/* idle: no hung-task warning */
	barrier();
	return x * 5 + 1;
}

static atomic_long_t entries, returns, wrong_results, wrong_pairs;
static atomic_t *returned_per_task;	/* each task's return handler runs: counted here */

static int okp_rblk_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	*(unsigned long *)ri->data = okp_arg(regs, 0);
	atomic_long_inc(&entries);
	return 0;
}

static int okp_rblk_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned long x = *(unsigned long *)ri->data;

	atomic_long_inc(&returns);
	if (x >= tasks || regs_return_value(regs) != x * 5 + 1)
		atomic_long_inc(&wrong_pairs);
	else
		atomic_inc(&returned_per_task[x]);
	return 0;
}

static struct okp_kretprobe probe = {
	.entry_handler = okp_rblk_entry,
	.handler = okp_rblk_return,
	.data_size = sizeof(unsigned long),
};
static bool registered;
static unsigned long stubs_before;
static u64 start_ns;

static int okp_rblk_task(void *arg)
{
	unsigned long x = (unsigned long)arg;

	if (okp_rblk_wait(x) != x * 5 + 1)
		atomic_long_inc(&wrong_results);
	kthread_complete_and_exit(&task_exited, 0);
}

/* The tasks leave the probed function: every instance returns, then the probe goes. */
static void okp_rblk_release(void)
{
	unsigned long in_use, in_use_after;
	unsigned long deadline = jiffies + 120 * HZ;
	unsigned int i, once = 0, exited = 0;
	u64 t;

	t = ktime_get_ns();
	WRITE_ONCE(released, true);
	wake_up_all(&okp_rblk_queue);
	for (; exited < started; exited++)
		if (!wait_for_completion_timeout(&task_exited, max_t(long, deadline - jiffies, 1)))
			break;
	pr_info("OKP-RETBLOCK-TIMES: %u tasks returned in %llu ms\n", exited,
		(ktime_get_ns() - t) / 1000000);
	report(exited == tasks, "released, all %u tasks return from the probed function (%u did)",
	       tasks, exited);
	for (i = 0; i < tasks; i++)
		once += atomic_read(&returned_per_task[i]) == 1;
	report(atomic_long_read(&returns) == tasks && once == tasks,
	       "every task's return handler ran exactly once, after release (%ld returns, %u tasks once)",
	       atomic_long_read(&returns), once);
	report(!atomic_long_read(&wrong_pairs) && !atomic_long_read(&wrong_results),
	       "each return handler saw its own task's argument and return value, each task its result (%ld, %ld wrong)",
	       atomic_long_read(&wrong_pairs), atomic_long_read(&wrong_results));
	report(!okp_scale_misses_of(&probe), "no instance missed, for any cause (nmissed %d, entry %lu, %lu in all)",
	       probe.nmissed, probe.kp.nmissed, okp_scale_misses_of(&probe));
	in_use = okp_scale_wait_stubs_in_use(stubs_before);
	report(in_use == stubs_before, "every instance is back (%lu in use, %lu before)", in_use, stubs_before);
	okp_unregister_kretprobe(&probe);
	registered = false;
	in_use_after = okp_scale_wait_stubs_in_use(0);
	report(in_use_after == 0, "after unregister no return stub is in use (%lu)", in_use_after);
	pr_info("OKP-RETBLOCK-END: tasks=%u peak=%u ms=%llu\n", tasks, probe.peak,
		(ktime_get_ns() - start_ns) / 1000000);
}

static DEFINE_MUTEX(release_lock);

static int okp_rblk_set_release(const char *val, const struct kernel_param *kp)
{
	int ret = okp_scale_trigger(val);

	if (ret)
		return ret;
	mutex_lock(&release_lock);
	if (registered)
		okp_rblk_release();
	mutex_unlock(&release_lock);
	return 0;
}

static const struct kernel_param_ops okp_rblk_release_ops = {
	.set = okp_rblk_set_release,
};
module_param_cb(release, &okp_rblk_release_ops, NULL, 0200);
MODULE_PARM_DESC(release, "1: wake the blocked tasks and check their returns");

static int __init okp_retblock_init(void)
{
	const char *mechanism = okp_return_route();
	unsigned int i, waited;
	struct task_struct *task;
	int ret;

	if (maxactive < (int)tasks) {
		pr_err("OKP-RETBLOCK-ERROR: maxactive %d < tasks %u: misses would be expected\n", maxactive, tasks);
		return -EINVAL;
	}
	returned_per_task = kcalloc(tasks, sizeof(*returned_per_task), GFP_KERNEL);
	if (!returned_per_task)
		return -ENOMEM;
	stubs_before = okp_return_stubs_in_use();
	probe.kp.addr = (void *)okp_rblk_wait;
	probe.maxactive = maxactive;
	ret = okp_register_kretprobe(&probe);
	report(!ret, "a return probe with maxactive %d registers (%s): %d %s", maxactive, mechanism,
	       ret, ret ? okp_kprobe_reason(&probe.kp) : "");
	if (ret) {
		kfree(returned_per_task);
		return ret;
	}
	registered = true;

	start_ns = ktime_get_ns();
	for (i = 0; i < tasks; i++) {
		task = kthread_run(okp_rblk_task, (void *)(unsigned long)i, "okp-rblock/%u", i);
		if (IS_ERR(task)) {
			pr_err("OKP-RETBLOCK-ERROR: cannot start task %u: %ld\n", i, PTR_ERR(task));
			break;
		}
		started++;
	}
	for (waited = 0; atomic_read(&inside) < started && waited < 60000; waited += 10)
		msleep(10);
	pr_info("OKP-RETBLOCK-TIMES: %u tasks inside in %llu ms\n", atomic_read(&inside),
		(ktime_get_ns() - start_ns) / 1000000);
	report(started == tasks && atomic_read(&inside) == tasks,
	       "%u tasks block inside the probed function at once (%u started, %d inside)", tasks,
	       started, atomic_read(&inside));
	report(atomic_long_read(&entries) == tasks && atomic_long_read(&returns) == 0,
	       "each was seen once at entry, none yet at return (%ld entries, %ld returns)",
	       atomic_long_read(&entries), atomic_long_read(&returns));
	report(probe.peak >= tasks && okp_return_stubs_in_use() >= stubs_before + tasks,
	       "as many instances are live (peak %u, %lu in use)", probe.peak, okp_return_stubs_in_use());
	report(!okp_scale_misses_of(&probe), "no instance missed so far (%lu)", okp_scale_misses_of(&probe));
	pr_info("OKP-RETBLOCK-BLOCKED: %d tasks, return=%s\n", atomic_read(&inside), mechanism);
	return 0;
}

static void __exit okp_retblock_exit(void)
{
	mutex_lock(&release_lock);
	if (registered)
		okp_rblk_release();	/* never left blocked tasks behind */
	mutex_unlock(&release_lock);
	kfree(returned_per_task);
}

module_init(okp_retblock_init);
module_exit(okp_retblock_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: one return probe on a function 2000 tasks block in");
