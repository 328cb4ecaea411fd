// SPDX-License-Identifier: GPL-2.0
/*
 * Return-probe stress: caller threads run okp_rs_fn() (a return-probed function) hundreds of
 * thousands of times, sleeper threads call it and sleep inside it, exiter threads enter it
 * and exit inside it (it never returns to them), while the main thread registers and
 * unregisters two more return probes thousands of times: one on the same function (the
 * entry site becomes an aggregate, frames carry two stubs) and one on the function it calls
 * (nested return probes on one task). The steady probe stays registered throughout and must
 * see every call exactly once at entry and every completed call once at return, with the
 * real return value; the exited tasks' instances must come back without an unregister; and
 * once everything is unregistered no return stub may stay in use. Prints one OKP-RETSTRESS
 * line.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <okprobes/okprobes.h>

static uint callers = 3;
module_param(callers, uint, 0444);
static uint sleepers = 2;
module_param(sleepers, uint, 0444);
static uint exiters = 32;	/* tasks that exit inside the probed function */
module_param(exiters, uint, 0444);
static ulong calls = 200000;	/* at least, per caller */
module_param(calls, ulong, 0444);
static ulong min_cycles = 1000;	/* at least, of register/unregister of the churned probes */
module_param(min_cycles, ulong, 0444);
/* Calls between a caller's real sleeps (RCU-tasks waits for them: they pace the churn). */
static ulong sleep_every = 16384;
module_param(sleep_every, ulong, 0444);

enum okp_rs_mode { OKP_RS_RETURN, OKP_RS_SLEEP, OKP_RS_EXIT };

static DECLARE_COMPLETION(okp_rs_exited);

/* okp_rs_inner(x) = 3x; okp_rs_fn(x) = 3x + 7. Global, noinline and noclone: the probed
 * addresses are the ones every call goes through. */
unsigned long okp_rs_inner(unsigned long x);
unsigned long okp_rs_fn(unsigned long x, unsigned long mode);

noinline __noclone unsigned long okp_rs_inner(unsigned long x)
{
	barrier();
	return x * 3;
}

noinline __noclone unsigned long okp_rs_fn(unsigned long x, unsigned long mode)
{
	unsigned long r = okp_rs_inner(x);

	if (mode == OKP_RS_SLEEP)
		usleep_range(20, 60);
	else if (mode == OKP_RS_EXIT)
		kthread_complete_and_exit(&okp_rs_exited, 0);	/* never returns */
	barrier();	/* not a tail call */
	return r + 7;
}

/* Per-instance data: the argument, so the return handler can check the pairing. */
struct okp_rs_data {
	unsigned long x;
	unsigned long magic;
};
#define OKP_RS_MAGIC 0x72657473UL

static atomic_long_t wrong_results, wrong_pairs, steady_entries, steady_returns;
static atomic_long_t churn_returns, completed_calls;
static atomic_t running;
static DECLARE_COMPLETION(threads_done);
static bool stop;

/* Entry and return handlers run with preemption (or interrupts) off, PREEMPT_RT included. */
static atomic_long_t preemptible_handlers;

static void note_context(void)
{
	if (preemptible())
		atomic_long_inc(&preemptible_handlers);
}

static int record_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct okp_rs_data *d = (struct okp_rs_data *)ri->data;

	note_context();
	d->x = okp_arg(regs, 0);
	d->magic = OKP_RS_MAGIC;
	return 0;
}

static int steady_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_long_inc(&steady_entries);
	return record_entry(ri, regs);
}

/* The return value must be the function's own: 3x + 7 for okp_rs_fn, 3x for the inner. */
static void check_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs,
			 unsigned long add)
{
	struct okp_rs_data *d = (struct okp_rs_data *)ri->data;

	note_context();
	if (d->magic != OKP_RS_MAGIC || regs_return_value(regs) != d->x * 3 + add)
		atomic_long_inc(&wrong_pairs);
	d->magic = 0;
}

static int steady_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_long_inc(&steady_returns);
	check_return(ri, regs, 7);
	return 0;
}

static int outer_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_long_inc(&churn_returns);
	check_return(ri, regs, 7);
	return 0;
}

static int inner_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_long_inc(&churn_returns);
	check_return(ri, regs, 0);
	return 0;
}

static struct okp_kretprobe steady = {
	.entry_handler = steady_entry,
	.handler = steady_return,
	.data_size = sizeof(struct okp_rs_data),
	.maxactive = 128,	/* callers + sleepers + exiters, never empty: misses would be bugs */
};

static void call_loop(unsigned long mode, unsigned long min_calls)
{
	unsigned long i;

	for (i = 0; i < min_calls || !READ_ONCE(stop); i++) {
		if (okp_rs_fn(i, mode) != i * 3 + 7)
			atomic_long_inc(&wrong_results);
		if ((i & 63) == 0)
			cond_resched();
		if (mode == OKP_RS_RETURN && i % (sleep_every ?: 1) == 0)
			usleep_range(10, 20);	/* a real sleep now and then (RCU-tasks) */
	}
	atomic_long_add(i, &completed_calls);
	if (atomic_dec_and_test(&running))
		complete(&threads_done);
}

static int caller(void *arg)
{
	call_loop(OKP_RS_RETURN, calls);
	return 0;
}

static int sleeper(void *arg)
{
	call_loop(OKP_RS_SLEEP, 1);
	return 0;
}

static int exiter(void *arg)
{
	okp_rs_fn((unsigned long)arg, OKP_RS_EXIT);
	return 0;	/* not reached */
}

/* Where the churn's time goes (printed): registering, unregistering, the slowest cycle. */
static u64 register_ns, unregister_ns, slowest_cycle_ns;

static void note_cycle(u64 reg_ns, u64 unreg_ns)
{
	register_ns += reg_ns;
	unregister_ns += unreg_ns;
	slowest_cycle_ns = max(slowest_cycle_ns, reg_ns + unreg_ns);
}

/* One register/unregister cycle of the two churned probes (small pools: misses are fine). */
static int churn_once(unsigned long n)
{
	struct okp_kretprobe outer = {
		.kp.addr = (void *)okp_rs_fn, .entry_handler = record_entry,
		.handler = outer_return, .data_size = sizeof(struct okp_rs_data), .maxactive = 8,
	};
	struct okp_kretprobe inner = {
		.kp.addr = (void *)okp_rs_inner, .entry_handler = record_entry,
		.handler = inner_return, .data_size = sizeof(struct okp_rs_data), .maxactive = 4,
	};
	int ret;
	u64 t0 = ktime_get_ns(), t1, t2;

	ret = okp_register_kretprobe(&outer);
	if (ret)
		return ret;
	ret = okp_register_kretprobe(&inner);
	if (ret) {
		okp_unregister_kretprobe(&outer);
		return ret;
	}
	t1 = ktime_get_ns();
	if (n & 1)
		udelay(50);	/* let some frames take the churned stubs */
	t2 = ktime_get_ns();
	if (n & 2) {	/* unregister in the other order: outer frames keep a detached stub */
		okp_unregister_kretprobe(&outer);
		okp_unregister_kretprobe(&inner);
	} else {
		okp_unregister_kretprobe(&inner);
		okp_unregister_kretprobe(&outer);
	}
	note_cycle(t1 - t0, ktime_get_ns() - t2);
	return 0;
}

/*
 * Exited tasks are freed after an RCU grace period: wait for their instances to come back.
 * Through the kernel (its rethook, or its kretprobe trampoline) an exited task's instance goes
 * back to the pool with the task but stays counted in use until the kernel hands it out again
 * (see the pass condition): `settled` of them stay counted however long one waits, so only
 * more than that is waited for (waiting for them took every round of the loop, for nothing:
 * docs/testing.md).
 */
static unsigned long wait_stubs_back(unsigned long settled)
{
	unsigned long in_use;
	int i;

	rcu_barrier();	/* the exited tasks already reaped give their instances back */
	in_use = okp_return_stubs_in_use();
	for (i = 0; i < 200 && in_use > settled; i++) {
		rcu_barrier();
		msleep(10);
		in_use = okp_return_stubs_in_use();
	}
	return in_use;
}

static int __init okp_retstress_init(void)
{
	unsigned long cycles = 0, total, exits = 0, in_use_before, in_use_after, reclaimed;
	long entries, returns;
	unsigned int i;
	int ret, err = 0;
	bool pass, rethook, exits_accounted;
	u64 start, churn_end, settle_ns;

	steady.kp.addr = (void *)okp_rs_fn;
	ret = okp_register_kretprobe(&steady);
	if (ret) {
		pr_err("OKP-RETSTRESS: FAIL cannot register the steady return probe: %d %s\n", ret,
		       okp_kprobe_reason(&steady.kp));
		return ret;
	}
	start = ktime_get_ns();
	atomic_set(&running, callers + sleepers);
	for (i = 0; i < callers; i++)
		kthread_run(caller, NULL, "okp-rcaller/%u", i);
	for (i = 0; i < sleepers; i++)
		kthread_run(sleeper, NULL, "okp-rsleeper/%u", i);
	while (cycles < min_cycles) {
		/* Spread the exiters over the churn. */
		if (exits < exiters && cycles % (min_cycles / exiters + 1) == 0 &&
		    !IS_ERR(kthread_run(exiter, (void *)cycles, "okp-rexiter/%lu", exits)))
			exits++;
		ret = churn_once(cycles);
		if (ret && !err) {
			err = ret;
			pr_err("OKP-RETSTRESS: churn registration failed at cycle %lu: %d\n", cycles, ret);
		}
		cond_resched();
		cycles++;
	}
	WRITE_ONCE(stop, true);
	churn_end = ktime_get_ns();
	wait_for_completion(&threads_done);
	for (i = 0; i < exits; i++)
		wait_for_completion(&okp_rs_exited);

	/* Nothing runs okp_rs_fn now: only exited frames can still hold instances. */
	rethook = !okp_return_stubs_reason();
	settle_ns = ktime_get_ns();
	in_use_before = wait_stubs_back(rethook ? exits - min(exits, steady.nreclaimed) : 0);
	settle_ns = ktime_get_ns() - settle_ns;
	reclaimed = steady.nreclaimed;
	okp_unregister_kretprobe(&steady);
	in_use_after = okp_return_stubs_in_use();
	total = atomic_long_read(&completed_calls);
	entries = atomic_long_read(&steady_entries);
	returns = atomic_long_read(&steady_returns);
	/*
	 * Through the kernel (its rethook, or its kretprobe trampoline: okp_return_stubs_reason()
	 * NULL) an exited task's node goes back to the pool with the task, and okprobes counts it
	 * reclaimed (and no longer in use) only when the kernel hands it out again: every exit is
	 * one or the other.
	 */
	exits_accounted = rethook ? reclaimed + in_use_before == exits
				  : reclaimed == exits && in_use_before == 0;
	pass = !err && entries == total + exits && returns == total && exits_accounted &&
	       steady.nmissed == 0 && steady.nmissed_by[OKP_RP_MISS_REENTRY] == 0 &&
	       steady.kp.nmissed == 0 && in_use_after == 0 &&
	       atomic_long_read(&wrong_results) == 0 && atomic_long_read(&wrong_pairs) == 0 &&
	       total >= callers * calls && atomic_long_read(&preemptible_handlers) == 0;
	pr_info("OKP-RETSTRESS: %s return=%s calls=%lu exits=%lu steady_entries=%ld steady_returns=%ld reclaimed=%lu peak=%u missed=%d/%lu/%lu wrong_results=%ld wrong_pairs=%ld churn_cycles=%lu churn_returns=%ld stubs_in_use_before=%lu after=%lu ms=%llu churn_ms=%llu register_ms=%llu unregister_ms=%llu slowest_cycle_ms=%llu settle_ms=%llu preemptible_handlers=%ld\n",
		pass ? "PASS" : "FAIL", okp_return_route(), total, exits, entries, returns, reclaimed, steady.peak,
		steady.nmissed, steady.nmissed_by[OKP_RP_MISS_REENTRY], steady.kp.nmissed,
		atomic_long_read(&wrong_results), atomic_long_read(&wrong_pairs), cycles,
		atomic_long_read(&churn_returns), in_use_before, in_use_after,
		(ktime_get_ns() - start) / 1000000, (churn_end - start) / 1000000,
		register_ns / 1000000, unregister_ns / 1000000, slowest_cycle_ns / 1000000,
		settle_ns / 1000000, atomic_long_read(&preemptible_handlers));
	return 0;
}

static void __exit okp_retstress_exit(void)
{
}

module_init(okp_retstress_init);
module_exit(okp_retstress_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: return-probe stress");
