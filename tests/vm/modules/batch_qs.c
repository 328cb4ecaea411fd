// SPDX-License-Identifier: GPL-2.0
/*
 * A large okp_register_kprobes() batch must not hold the jump optimizer back (issue 15),
 * x86-64, driven by tests/vm/scripts/batch_qs.sh with debug.okprobes-optimization = 1.
 *
 * One probe is registered on an optimizable site whose jump needs a grace period
 * (okp_bqs_opt's `add`: a region of two instructions), which queues the optimizer's batch;
 * then `n` probes are registered in one okp_register_kprobes() call. The optimizer's work item
 * plans the early probe and waits in synchronize_rcu_tasks(), which ends only once every task
 * has passed a voluntary context switch, the registering one included (on a kernel without
 * CONFIG_TASKS_RCU, synchronize_rcu_expedited(), which on PREEMPT_NONE waits for the
 * registering CPU's next quiescent state just as long). A watcher kthread polls the early probe's
 * OKP_KPROBE_FLAG_OPTIMIZED every few milliseconds and records when it turns on: it must do so
 * before the batch returns (the loop gives a quiescent state between probes), not just after.
 * Every check runs at load and prints one line
 *   OKP-BATCH-QS: ok - DESCRIPTION      or      OKP-BATCH-QS: not ok - DESCRIPTION
 * which the script numbers as TAP, then OKP-BATCH-QS-END. The module holds no probe once
 * loaded.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/vmalloc.h>
#include <okprobes/okprobes.h>

#define OKP_BQS_SITES 10240	/* batch_qs_text.S */
extern const unsigned long okp_bqs_fns[OKP_BQS_SITES];
#define OKP_BQS_MOV_SIZE 3	/* mov %rdi,%rax: the instruction before each probed one */
unsigned long okp_bqs_opt(unsigned long x);
unsigned long okp_bqs_fn_0(unsigned long x);

static unsigned int n = 5000;
module_param(n, uint, 0444);
MODULE_PARM_DESC(n, "probes registered in the one okp_register_kprobes() call (<= 10240)");
static unsigned int min_loop_ms = 1000;
module_param(min_loop_ms, uint, 0444);
MODULE_PARM_DESC(min_loop_ms, "shortest batch that can tell a held-back optimizer from a free one");

#define report(ok, fmt, ...) \
	pr_info("OKP-BATCH-QS: %s - " fmt "\n", (ok) ? "ok" : "not ok", ##__VA_ARGS__)

static struct okp_kprobe early;
static unsigned long early_hits;
static struct okp_kprobe *batch;
static struct okp_kprobe **batch_ptrs;

/* Written by the watcher, read after kthread_stop(). */
static u64 optimized_at_ns;

/* fn's first instruction: past an ENDBR64 (or the 4-byte nop IBT seals it into). */
static void *first_insn(const void *fn)
{
	static const u8 endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 sealed[4] = { 0x0f, 0x1f, 0x40, 0xd6 };

	if (!memcmp(fn, endbr64, 4) || !memcmp(fn, sealed, 4))
		return (void *)fn + 4;
	return (void *)fn;
}

static int early_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	early_hits++;
	return 0;
}
OKP_NOKPROBE_SYMBOL(early_pre);

static int batch_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	return 0;
}
OKP_NOKPROBE_SYMBOL(batch_pre);

/* A post_handler on a branch (the RET) keeps every batch probe a breakpoint. */
static void batch_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}
OKP_NOKPROBE_SYMBOL(batch_post);

static int watcher_fn(void *unused)
{
	while (!kthread_should_stop()) {
		if (!optimized_at_ns && (READ_ONCE(early.flags) & OKP_KPROBE_FLAG_OPTIMIZED))
			optimized_at_ns = ktime_get_ns();
		usleep_range(2000, 3000);
	}
	return 0;
}

static u64 ms(u64 ns)
{
	return div_u64(ns, NSEC_PER_MSEC);
}

static void run(void)
{
	struct task_struct *watcher;
	u64 t_early, t0, t1, t2;
	unsigned int i, gone = 0;
	bool held_back;
	int ret;

	memset(&early, 0, sizeof(early));
	early.addr = first_insn(okp_bqs_opt) + OKP_BQS_MOV_SIZE;
	early.pre_handler = early_pre;
	t_early = ktime_get_ns();
	ret = okp_register_kprobe(&early);
	report(!ret, "the early probe at %pS registers: %d (%s)", early.addr, ret,
	       okp_kprobe_reason(&early));
	if (ret)
		return;
	watcher = kthread_run(watcher_fn, NULL, "okp_bqs_watch");
	if (IS_ERR(watcher)) {
		report(false, "the watcher kthread starts: %ld", PTR_ERR(watcher));
		okp_unregister_kprobe(&early);
		return;
	}

	/* The early probe's optimizer batch is queued (20 ms delay): the big batch starts now. */
	t0 = ktime_get_ns();
	ret = okp_register_kprobes(batch_ptrs, n);
	t1 = ktime_get_ns();
	report(!ret, "okp_register_kprobes of %u probes in one call: %d (%s), %llu ms", n, ret,
	       okp_kprobe_reason(batch_ptrs[0]), ms(t1 - t0));

	okp_wait_for_optimizer();
	msleep(10);	/* the watcher's next poll */
	kthread_stop(watcher);
	report(early.flags & OKP_KPROBE_FLAG_OPTIMIZED,
	       "the early probe is a jump after okp_wait_for_optimizer() (%s)",
	       okp_kprobe_reason(&early));
	report(t1 - t0 >= (u64)min_loop_ms * NSEC_PER_MSEC,
	       "the batch lasted %llu ms, at least %u ms: long enough to tell whether it holds the optimizer back",
	       ms(t1 - t0), min_loop_ms);
	held_back = !optimized_at_ns || optimized_at_ns >= t1;
	pr_info("OKP-BATCH-QS-TIMES n=%u batch_ms=%llu early_optimized_after_ms=%lld batch_end_after_ms=%llu\n",
		n, ms(t1 - t0), optimized_at_ns ? (long long)ms(optimized_at_ns - t_early) : -1LL,
		ms(t1 - t_early));
	report(!held_back,
	       "the optimizer's batch (a grace-period wait) completed while the registration loop still ran: jump at %lld ms, loop end at %llu ms",
	       optimized_at_ns ? (long long)ms(optimized_at_ns - t_early) : -1LL, ms(t1 - t_early));

	if (!ret) {
		unsigned long r = okp_bqs_opt(41);

		report(r == 42 && early_hits == 1 && early.nhit == 1,
		       "the early jump runs its handler: okp_bqs_opt(41) = %lu, handler %lu, nhit %lu",
		       r, early_hits, early.nhit);
		r = okp_bqs_fn_0(7);
		report(r == 7 && batch[0].nhit == 1 && !(batch[0].flags & OKP_KPROBE_FLAG_OPTIMIZED),
		       "batch probe 0 is a live breakpoint: okp_bqs_fn_0(7) = %lu, nhit %lu, flags %#x",
		       r, batch[0].nhit, batch[0].flags);
		for (i = 0; i < n; i++)
			gone += !!(batch[i].flags & OKP_KPROBE_FLAG_GONE);
		report(!gone, "no batch probe is GONE (%u)", gone);
		t2 = ktime_get_ns();
		okp_unregister_kprobes(batch_ptrs, n);
		report(true, "okp_unregister_kprobes of %u probes in one call: %llu ms", n,
		       ms(ktime_get_ns() - t2));
	}
	okp_unregister_kprobe(&early);
}

static int __init batch_qs_init(void)
{
	unsigned int i;

	if (!n || n > OKP_BQS_SITES) {
		pr_err("okp_batch_qs: n=%u (1..%d)\n", n, OKP_BQS_SITES);
		return -EINVAL;
	}
	batch = vzalloc(array_size(n, sizeof(*batch)));
	batch_ptrs = vzalloc(array_size(n, sizeof(*batch_ptrs)));
	if (!batch || !batch_ptrs) {
		vfree(batch);
		vfree(batch_ptrs);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		batch[i].addr = first_insn((void *)okp_bqs_fns[i]) + OKP_BQS_MOV_SIZE;
		batch[i].pre_handler = batch_pre;
		batch[i].post_handler = batch_post;
		batch_ptrs[i] = &batch[i];
	}
	run();
	vfree(batch_ptrs);
	vfree(batch);
	pr_info("OKP-BATCH-QS-END\n");
	return 0;
}

static void __exit batch_qs_exit(void)
{
}

module_init(batch_qs_init);
module_exit(batch_qs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes: a large registration batch does not hold the jump optimizer back");
