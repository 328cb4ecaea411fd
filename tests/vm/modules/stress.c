// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: caller threads run okp_stress_fn() millions of times while a registrar thread
 * registers and unregisters probes thousands of times, at the steady probe's own address
 * (aggregates, with and without post_handler: the site flips between boosted and stepped)
 * and at the next instruction. The steady probe stays registered throughout and must count
 * every call exactly; every call must compute its real result. Prints one OKP-STRESS line.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <okprobes/okprobes.h>

unsigned long okp_stress_fn(unsigned long x);
unsigned long okp_stress_entry_fn(unsigned long x);
extern const char okp_stress_steady[], okp_stress_churn[];

static uint callers = 3;
module_param(callers, uint, 0444);
static ulong calls = 1000000;	/* at least, per caller */
module_param(calls, ulong, 0444);
static ulong min_cycles = 2000;	/* at least, of register/unregister */
module_param(min_cycles, ulong, 0444);
static uint churn = 3;	/* bit 0: churn at the steady site, bit 1: at the next insn */
module_param(churn, uint, 0444);
/* Calls between a caller's real sleeps: each unregister waits for RCU-tasks, which waits for
 * every caller's voluntary switch, so this paces the churn where calls are slow (riscv64 TCG). */
static ulong sleep_every = 16384;
module_param(sleep_every, ulong, 0444);

/*
 * entry=1: the steady and churned probes sit on the entry of a C function, served by ftrace,
 * for kernels where okprobes serves no breakpoint probes (riscv64 without KGDB); churn there is
 * at the steady site only (bit 1 is ignored: the next instruction takes a breakpoint).
 */
static bool entry;
module_param(entry, bool, 0444);

noinline __noclone unsigned long okp_stress_entry_fn(unsigned long x)
{
	barrier();
	return x * 3 + 7;
}

/* Where the steady/churned probes go: the asm labels, or okp_stress_entry_fn with entry=1. */
static void *steady_site, *churn_site;

static atomic_t running;
static atomic_long_t wrong_results;
static atomic_long_t churn_hits;
static DECLARE_COMPLETION(callers_done);
static unsigned long cycles;
static atomic_long_t total_calls;
static bool stop;
/* Handlers run with preemption (or interrupts) off, as the kernel's kprobes' do, on every
 * path (trap, ftrace, detour) and every preemption model, PREEMPT_RT included. */
static atomic_long_t preemptible_handlers;

static void note_context(void)
{
	if (preemptible())
		atomic_long_inc(&preemptible_handlers);
}

static int count_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	note_context();
	return 0;
}

static int churn_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	note_context();
	atomic_long_inc(&churn_hits);
	return 0;
}

static void churn_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	note_context();
}

static struct okp_kprobe steady = { .pre_handler = count_pre };

static int caller(void *arg)
{
	unsigned long i;

	for (i = 0; i < calls || !READ_ONCE(stop); i++) {
		if ((entry ? okp_stress_entry_fn(i) : okp_stress_fn(i)) != i * 3 + 7)
			atomic_long_inc(&wrong_results);
		if ((i & 63) == 0)
			cond_resched();
		/* A real sleep now and then: RCU-tasks waits for voluntary switches. */
		if (i % (sleep_every ?: 1) == 0)
			usleep_range(10, 20);
	}
	atomic_long_add(i, &total_calls);
	if (atomic_dec_and_test(&running))
		complete(&callers_done);
	return 0;
}

static int churn_once(unsigned long n)
{
	struct okp_kprobe a = { .addr = steady_site, .pre_handler = churn_pre };
	struct okp_kprobe b = { .addr = churn_site, .pre_handler = churn_pre };
	int ret;

	if (n & 1)
		a.post_handler = churn_post; /* the steady site stops boosting while a is there */
	if (churn & 1) {
		ret = okp_register_kprobe(&a);
		if (ret)
			return ret;
	}
	if (churn & 2) {
		ret = okp_register_kprobe(&b);
		if (ret) {
			if (churn & 1)
				okp_unregister_kprobe(&a);
			return ret;
		}
	}
	if ((n & 2) && (churn & 1))
		okp_disable_kprobe(&a);
	if (churn & 1)
		okp_unregister_kprobe(&a);
	if (churn & 2)
		okp_unregister_kprobe(&b);
	return 0;
}

static int __init okp_stress_init(void)
{
	unsigned int i;
	int ret, err = 0;
	unsigned long total;
	bool pass;
	u64 start, elapsed;

	steady_site = entry ? (void *)okp_stress_entry_fn : (void *)okp_stress_steady;
	churn_site = (void *)okp_stress_churn;
	if (entry)
		churn &= 1;
	steady.addr = steady_site;
	ret = okp_register_kprobe(&steady);
	if (ret) {
		pr_err("OKP-STRESS: FAIL cannot register the steady probe: %d %s\n", ret,
		       okp_kprobe_reason(&steady));
		return ret;
	}
	atomic_set(&running, callers);
	for (i = 0; i < callers; i++)
		kthread_run(caller, NULL, "okp-caller/%u", i);
	start = ktime_get_ns();
	while (churn && cycles < min_cycles) {
		ret = churn_once(cycles);
		cond_resched();
		if (ret && !err) {
			err = ret;
			pr_err("OKP-STRESS: churn registration failed at cycle %lu: %d\n", cycles, ret);
		}
		cycles++;
	}
	WRITE_ONCE(stop, true);
	wait_for_completion(&callers_done);
	total = atomic_long_read(&total_calls);
	elapsed = ktime_get_ns() - start;
	okp_unregister_kprobe(&steady);
	pass = !err && steady.nhit == total && steady.nmissed == 0 &&
	       atomic_long_read(&wrong_results) == 0 && total >= callers * calls &&
	       atomic_long_read(&preemptible_handlers) == 0;
	pr_info("OKP-STRESS: %s calls=%lu steady_hits=%lu steady_missed=%lu wrong_results=%ld churn_cycles=%lu churn_hits=%ld ms=%llu preemptible_handlers=%ld\n",
		pass ? "PASS" : "FAIL", total, steady.nhit, steady.nmissed,
		atomic_long_read(&wrong_results), cycles, atomic_long_read(&churn_hits), elapsed / 1000000,
		atomic_long_read(&preemptible_handlers));
	return 0;
}

static void __exit okp_stress_exit(void)
{
}

module_init(okp_stress_init);
module_exit(okp_stress_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: breakpoint-churn stress");
