// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_stress_riscv" (riscv64): one caller thread per online CPU runs the asm
 * targets of probe_targets_riscv.S in a loop (a slot-stepped store, a simulated branch, a
 * simulated indirect call, a return-probed function) while a registrar registers, disables,
 * enables and unregisters probes on them, OKP_ST_CYCLES times. Every call must compute what it
 * computes unprobed. A probe that stays registered throughout, on a stepped instruction every
 * caller runs a known number of times, must count every one of those runs exactly, with no
 * miss (a CPU is never re-entered: handlers only count).
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <okprobes/okprobes.h>
#include "okp_need_breakpoints.h"

struct okp_rv_at {
	long insn, post1, post2;
};
long okp_rv_helper(long a, long b);
long okp_rv_c_frame(long a, long b);
long okp_rv_c_alu(long a, long b);
long okp_rv_beq(long a, long b);
long okp_rv_jalr(long a, long b);
long okp_t_helper(long a);
extern const struct okp_rv_at okp_rv_c_frame_sdsp_at, okp_rv_c_alu_at, okp_rv_beq_at,
	okp_rv_jalr_at;

#define OKP_ST_CYCLES 40	/* register/unregister cycles the callers run through */
#define OKP_ST_MAX_CALLERS 8

static atomic_long_t okp_st_steady_hits, okp_st_hits, okp_st_calls;
static atomic_t okp_st_errors, okp_st_running;
static bool okp_st_stop;
static DECLARE_COMPLETION(okp_st_done);

static int okp_st_steady_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&okp_st_steady_hits);
	return 0;
}

static int okp_st_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&okp_st_hits);
	return 0;
}

static void okp_st_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	atomic_long_inc(&okp_st_hits);
}

static int okp_st_ret(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	atomic_long_inc(&okp_st_hits);
	return 0;
}

static int okp_st_caller(void *data)
{
	long i;

	for (i = 0; !READ_ONCE(okp_st_stop); i++) {
		if (okp_rv_c_alu(i, 0) != ((i << 2) >> 1))
			atomic_inc(&okp_st_errors);
		if (okp_rv_c_frame(i, 3) != i + 3)
			atomic_inc(&okp_st_errors);
		if (okp_rv_beq(i, i & ~1L) != !(i & 1))
			atomic_inc(&okp_st_errors);
		if (okp_rv_jalr(i, (long)okp_rv_helper) != i + 8)
			atomic_inc(&okp_st_errors);
		if (okp_t_helper(i) != 3 * i + 7)
			atomic_inc(&okp_st_errors);
		if (!(i & 63))
			cond_resched();
	}
	atomic_long_add(i, &okp_st_calls);	/* each loop called okp_rv_c_alu once */
	if (atomic_dec_and_test(&okp_st_running))
		complete(&okp_st_done);
	return 0;
}

static void okp_st_addr(struct okp_kprobe *kp, long (*fn)(long, long), const struct okp_rv_at *at)
{
	memset(kp, 0, sizeof(*kp));
	kp->addr = (okp_kprobe_opcode_t *)((unsigned long)fn + at->insn);
	kp->pre_handler = okp_st_pre;
	kp->post_handler = okp_st_post;
}

static void okp_stress_case(struct kunit *test)
{
	struct okp_kprobe steady = {
		.addr = (okp_kprobe_opcode_t *)((unsigned long)okp_rv_c_alu + okp_rv_c_alu_at.insn),
		.pre_handler = okp_st_steady_pre,
	};
	struct okp_kprobe kps[3], *batch[3] = { &kps[0], &kps[1], &kps[2] };
	struct okp_kretprobe rp;
	unsigned int callers = min_t(unsigned int, num_online_cpus(), OKP_ST_MAX_CALLERS);
	unsigned int cpu, n = 0, cycles = 0;
	ktime_t t_reg = 0, t_unreg = 0, t0, t_all = ktime_get();

	okp_kunit_need_breakpoints(test);
	atomic_long_set(&okp_st_steady_hits, 0);
	atomic_long_set(&okp_st_hits, 0);
	atomic_long_set(&okp_st_calls, 0);
	atomic_set(&okp_st_errors, 0);
	WRITE_ONCE(okp_st_stop, false);
	reinit_completion(&okp_st_done);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kprobe(&steady), 0, "%s", okp_kprobe_reason(&steady));

	/*
	 * From here on a failed step ends the loop rather than the case (no KUNIT_ASSERT): the
	 * callers must be stopped and steady, on this stack, unregistered before the case
	 * returns, or they keep hitting a probe whose frame is gone.
	 */
	atomic_set(&okp_st_running, callers);
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		if (n == callers)
			break;
		t = kthread_create(okp_st_caller, NULL, "okp_st/%u", cpu);
		KUNIT_EXPECT_FALSE(test, IS_ERR(t));
		if (IS_ERR(t))
			break;
		kthread_bind(t, cpu);
		wake_up_process(t);
		n++;
	}
	/* Callers never started count as finished. */
	if (n < callers && atomic_sub_and_test(callers - n, &okp_st_running))
		complete(&okp_st_done);

	while (n == callers && cycles < OKP_ST_CYCLES) {
		int ret;

		okp_st_addr(&kps[0], okp_rv_c_frame, &okp_rv_c_frame_sdsp_at);
		okp_st_addr(&kps[1], okp_rv_beq, &okp_rv_beq_at);
		okp_st_addr(&kps[2], okp_rv_jalr, &okp_rv_jalr_at);
		t0 = ktime_get();
		ret = okp_register_kprobes(batch, 3);
		KUNIT_EXPECT_EQ(test, ret, 0);
		if (ret)
			break;
		memset(&rp, 0, sizeof(rp));
		rp.kp.addr = (okp_kprobe_opcode_t *)okp_t_helper;
		rp.handler = okp_st_ret;
		rp.maxactive = 32;
		ret = okp_register_kretprobe(&rp);
		KUNIT_EXPECT_EQ_MSG(test, ret, 0, "%s", okp_kprobe_reason(&rp.kp));
		if (ret) {
			okp_unregister_kprobes(batch, 3);
			break;
		}
		t_reg += ktime_get() - t0;
		usleep_range(1000, 2000);
		KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&kps[1]), 0);
		usleep_range(500, 1000);
		KUNIT_EXPECT_EQ(test, okp_enable_kprobe(&kps[1]), 0);
		usleep_range(500, 1000);
		t0 = ktime_get();
		okp_unregister_kretprobe(&rp);
		okp_unregister_kprobes(batch, 3);
		t_unreg += ktime_get() - t0;
		cycles++;
	}
	WRITE_ONCE(okp_st_stop, true);
	wait_for_completion(&okp_st_done);

	kunit_info(test, "%u callers, %ld calls x 5 targets in %lld ms, %u register/unregister "
		   "cycles (registering %lld ms, unregistering %lld ms in all), %ld changing-probe "
		   "hits, %ld steady hits\n", callers, atomic_long_read(&okp_st_calls),
		   ktime_to_ms(ktime_get() - t_all), cycles, ktime_to_ms(t_reg), ktime_to_ms(t_unreg),
		   atomic_long_read(&okp_st_hits), atomic_long_read(&okp_st_steady_hits));
	KUNIT_EXPECT_EQ(test, atomic_read(&okp_st_errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&okp_st_steady_hits), atomic_long_read(&okp_st_calls));
	KUNIT_EXPECT_EQ(test, steady.nmissed, 0UL);
	KUNIT_EXPECT_GT(test, cycles, 0U);
	okp_unregister_kprobe(&steady);
}

static struct kunit_case okp_stress_cases[] = {
	KUNIT_CASE(okp_stress_case),
	{}
};

static struct kunit_suite okp_stress_suite = {
	.name = "okprobes_stress_riscv",
	.test_cases = okp_stress_cases,
};

kunit_test_suites(&okp_stress_suite);
