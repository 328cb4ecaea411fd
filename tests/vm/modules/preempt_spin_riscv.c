// SPDX-License-Identifier: GPL-2.0
/*
 * riscv64, a kernel that preempts kernel code: jump switches while tasks are preempted inside
 * the region (issue 28, docs/riscv64-detours.md "A preemptible kernel: the task look").
 * Kernel threads (one per CPU but one) call okp_pspin_fn(x) = x + 4
 * (preempt_spin_text_riscv.S) in a loop, checking each result, never sleeping: every stop
 * preempts them somewhere in that loop, often at +4, strictly inside the region of a jump at
 * okp_pspin_fn+0 (+2 and +4 are). Meanwhile the probe there is registered (the original to
 * the jump, a stopped switch) and unregistered (back) `cycles` times. Resumed at +4 of a new
 * pair, a thread would run the pair's jalr with t0 holding whatever the original left there;
 * stopped between the auipc and the jalr at a switch back, it would run the original from +4
 * on: a wrong result or an oops. The task look must keep every switch off those instants
 * (debugfs okprobes/switch_look counts the stops that found a task inside).
 * Logs "OKP-PSPIN: PASS ..." or "OKP-PSPIN: FAIL ...". A registration the look kept out for
 * all its tries (-EBUSY, the reason said) is counted, not a failure, as long as one succeeds.
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <okprobes/okprobes.h>

unsigned long okp_pspin_fn(unsigned long x);

static unsigned int cycles = 4;
module_param(cycles, uint, 0444);

#define PSPIN_MAX_THREADS 8

static struct task_struct *spinners[PSPIN_MAX_THREADS];
static atomic_long_t calls, wrong;
static unsigned long hits;

static int pspin_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	hits++;
	return 0;
}
OKP_NOKPROBE_SYMBOL(pspin_pre);

static int pspin_thread(void *arg)
{
	unsigned long x = (unsigned long)arg << 32, n = 0;

	while (!kthread_should_stop()) {
		if (okp_pspin_fn(x) != x + 4)
			atomic_long_inc(&wrong);
		x++;
		/* Counted in batches: the loop stays in okp_pspin_fn's neighbourhood. */
		if (++n == 4096) {
			atomic_long_add(n, &calls);
			n = 0;
		}
	}
	atomic_long_add(n, &calls);
	return 0;
}

static int __init okp_pspin_init(void)
{
	unsigned int threads = min(num_online_cpus() > 1 ? num_online_cpus() - 1 : 1,
				   (unsigned int)PSPIN_MAX_THREADS);
	unsigned int i, done = 0, busy = 0, not_jump = 0, failed = 0;

	for (i = 0; i < threads; i++) {
		spinners[i] = kthread_run(pspin_thread, (void *)(unsigned long)(i + 1),
					  "okp_pspin/%u", i);
		if (IS_ERR(spinners[i])) {
			spinners[i] = NULL;
			failed++;
		}
	}
	msleep(100);	/* every thread in its loop */
	for (i = 0; i < cycles; i++) {
		struct okp_kprobe kp = { .addr = (void *)okp_pspin_fn, .pre_handler = pspin_pre };
		int ret = okp_register_kprobe(&kp);

		if (ret == -EBUSY) {
			pr_info("OKP-PSPIN: cycle %u: the look kept the jump out: %s\n", i,
				okp_kprobe_reason(&kp));
			busy++;
			continue;
		}
		if (ret) {
			pr_err("OKP-PSPIN: FAIL cannot register at %pS: %d %s\n", kp.addr, ret,
			       okp_kprobe_reason(&kp));
			failed++;
			break;
		}
		okp_wait_for_optimizer();
		if (!okp_kprobe_optimized(&kp)) {
			pr_err("OKP-PSPIN: FAIL %pS is not a jump: %s\n", kp.addr,
			       okp_kprobe_reason(&kp));
			not_jump++;
		}
		msleep(20);	/* hits through the detour */
		okp_unregister_kprobe(&kp);
		done++;
	}
	msleep(20);
	for (i = 0; i < threads; i++)
		if (spinners[i])
			kthread_stop(spinners[i]);
	if (failed || not_jump || !done || atomic_long_read(&wrong) || !hits)
		pr_info("OKP-PSPIN: FAIL cycles=%u done=%u busy=%u not_jump=%u failed=%u calls=%ld wrong=%ld hits=%lu\n",
			cycles, done, busy, not_jump, failed, atomic_long_read(&calls),
			atomic_long_read(&wrong), hits);
	else
		pr_info("OKP-PSPIN: PASS cycles=%u done=%u busy=%u threads=%u calls=%ld wrong=0 hits=%lu\n",
			cycles, done, busy, threads, atomic_long_read(&calls), hits);
	return 0;
}

static void __exit okp_pspin_exit(void)
{
}

module_init(okp_pspin_init);
module_exit(okp_pspin_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: riscv64 jump switches while tasks are preempted inside the region");
