// SPDX-License-Identifier: GPL-2.0
/*
 * The module that tests/vm/scripts/unload_race.sh unloads and reloads under probes
 * (okp_unload_race.ko probes it). Loaded, it starts one caller thread per online CPU, bound to
 * it, and two sleepers, all waiting for `go` (echo 1 > /sys/kernel/debug/okp_unload_target/go,
 * written once the prober has armed its probes). Then:
 *   callers   call okp_ut_fn() (notrace: an int3 probe) and okp_ut_other() (an ftrace entry)
 *             in a loop until the module exits, counting every call;
 *   sleeper   calls okp_ut_sleep(OKP_UT_RETURN) once: it sleeps inside until exit tells it,
 *             then returns (a return probe's frame that returns during the unload);
 *   exiter    calls okp_ut_sleep(OKP_UT_EXIT) once: told at exit, it exits inside (its
 *             return-probe instance can only be reclaimed).
 * Module exit stops them all, then prints the exact counts the probes must match:
 *   OKP-UNLOAD-TARGET fn_calls=N other_calls=N sleep_returns=N sleep_exits=N
 * The module_exit runs before the GOING notifier, so every call is made while the probes
 * are live, and none after.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

enum { OKP_UT_RETURN, OKP_UT_EXIT };

unsigned long okp_ut_fn(unsigned long x);
unsigned long okp_ut_other(unsigned long x);
unsigned long okp_ut_sleep(unsigned long mode);

static DECLARE_WAIT_QUEUE_HEAD(ut_wait);
static DECLARE_COMPLETION(ut_exited);
static bool ut_go, ut_stop;
static atomic_long_t fn_calls, other_calls, sleep_returns, sleep_exits;
static struct task_struct **callers, *sleeper, *exiter;
static unsigned int ncallers;
static struct dentry *dir;
static volatile unsigned long ut_sink;

noinline notrace unsigned long okp_ut_fn(unsigned long x)
{
	barrier();
	return x + 1;
}

noinline unsigned long okp_ut_other(unsigned long x)
{
	barrier();
	return x * 2;
}

/* Sleeps until the module exits; then returns, or exits the task inside (OKP_UT_EXIT). */
noinline unsigned long okp_ut_sleep(unsigned long mode)
{
	wait_event(ut_wait, READ_ONCE(ut_stop));
	if (mode == OKP_UT_EXIT) {
		atomic_long_inc(&sleep_exits);
		kthread_complete_and_exit(&ut_exited, 0);	/* never returns */
	}
	barrier();	/* not a tail call */
	return mode + 5;
}

static int caller_fn(void *data)
{
	unsigned long i = 0;

	wait_event(ut_wait, READ_ONCE(ut_go) || kthread_should_stop());
	while (!kthread_should_stop()) {
		ut_sink = okp_ut_fn(i);
		atomic_long_inc(&fn_calls);
		ut_sink = okp_ut_other(i);
		atomic_long_inc(&other_calls);
		if (!(++i & 0xff))
			cond_resched();
	}
	return 0;
}

static int sleeper_fn(void *data)
{
	wait_event(ut_wait, READ_ONCE(ut_go) || READ_ONCE(ut_stop));
	if (okp_ut_sleep(OKP_UT_RETURN) == OKP_UT_RETURN + 5)
		atomic_long_inc(&sleep_returns);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static int exiter_fn(void *data)
{
	wait_event(ut_wait, READ_ONCE(ut_go) || READ_ONCE(ut_stop));
	okp_ut_sleep(OKP_UT_EXIT);
	return 0;	/* not reached */
}

static int go_set(void *data, u64 v)
{
	WRITE_ONCE(ut_go, v != 0);
	wake_up_all(&ut_wait);
	return 0;
}

static int go_get(void *data, u64 *v)
{
	*v = ut_go;
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(go_fops, go_get, go_set, "%llu\n");

static int __init okp_unload_target_init(void)
{
	unsigned int cpu;

	callers = kcalloc(nr_cpu_ids, sizeof(*callers), GFP_KERNEL);
	if (!callers)
		return -ENOMEM;
	for_each_online_cpu(cpu) {
		struct task_struct *t = kthread_create(caller_fn, NULL, "okp_ut_call/%u", cpu);

		if (IS_ERR(t))
			continue;
		kthread_bind(t, cpu);
		callers[ncallers++] = t;
		wake_up_process(t);
	}
	sleeper = kthread_run(sleeper_fn, NULL, "okp_ut_sleep");
	exiter = kthread_run(exiter_fn, NULL, "okp_ut_exit");
	if (IS_ERR(sleeper) || IS_ERR(exiter)) {
		/* exit-like cleanup without a module_exit call */
		WRITE_ONCE(ut_stop, true);
		wake_up_all(&ut_wait);
		if (!IS_ERR(exiter))
			wait_for_completion(&ut_exited);
		if (!IS_ERR(sleeper))
			kthread_stop(sleeper);
		while (ncallers)
			kthread_stop(callers[--ncallers]);
		kfree(callers);
		return -ENOMEM;
	}
	dir = debugfs_create_dir("okp_unload_target", NULL);
	debugfs_create_file("go", 0600, dir, NULL, &go_fops);
	pr_info("OKP-UNLOAD-TARGET loaded callers=%u\n", ncallers);
	return 0;
}

static void __exit okp_unload_target_exit(void)
{
	unsigned int i;

	debugfs_remove(dir);
	WRITE_ONCE(ut_stop, true);
	wake_up_all(&ut_wait);
	wait_for_completion(&ut_exited);
	kthread_stop(sleeper);
	for (i = 0; i < ncallers; i++)
		kthread_stop(callers[i]);
	kfree(callers);
	pr_info("OKP-UNLOAD-TARGET fn_calls=%ld other_calls=%ld sleep_returns=%ld sleep_exits=%ld\n",
		atomic_long_read(&fn_calls), atomic_long_read(&other_calls),
		atomic_long_read(&sleep_returns), atomic_long_read(&sleep_exits));
}

module_init(okp_unload_target_init);
module_exit(okp_unload_target_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: a module unloaded while its text is probed and hit");
