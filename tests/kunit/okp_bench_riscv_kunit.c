// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_bench_riscv" (riscv64): what a hit costs, okprobes against the
 * kernel's own kprobes in the same boot, on the same instructions: a simulated branch (beq:
 * one trap for both) and a stepped store (c.sdsp: a trap, the slot, a second trap, for both).
 * okprobes' trap arrives through the die notifier chain after the kernel's kprobes and uprobes
 * handlers have looked (do_trap_break), the kernel's kprobes' first: the difference is what the
 * die-notifier entry costs. Also a return probe entered through ftrace, okprobes' stubs
 * against the kernel's kretprobes. The numbers are reported, not asserted (an emulator's timings);
 * asserted: every hit counted by both, and both probing one function at once (coexistence).
 */
#include <kunit/test.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/irqflags.h>
#include <okprobes/okprobes.h>
#include "okp_need_breakpoints.h"

struct okp_rv_at {
	long insn, post1, post2;
};
long okp_rv_c_frame(long a, long b);
long okp_rv_beq(long a, long b);
extern const struct okp_rv_at okp_rv_c_frame_sdsp_at, okp_rv_beq_at;

#define OKP_BENCH_CALLS 20000
#define OKP_BENCH_ROUNDS 3

static unsigned long okp_bench_hits;

static int okp_bench_okp_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	okp_bench_hits++;
	return 0;
}

/* ns per call of fn(i, i) over OKP_BENCH_CALLS calls, the fastest of OKP_BENCH_ROUNDS. */
static u64 okp_bench_time(long (*fn)(long, long))
{
	u64 best = U64_MAX;
	int r;
	long i;

	for (r = 0; r < OKP_BENCH_ROUNDS; r++) {
		ktime_t t0 = ktime_get();

		for (i = 0; i < OKP_BENCH_CALLS; i++)
			fn(i, i);
		best = min_t(u64, best, ktime_to_ns(ktime_get() - t0));
	}
	return div_u64(best, OKP_BENCH_CALLS);
}

#ifdef CONFIG_KPROBES
static int okp_bench_kernel_pre(struct kprobe *p, struct pt_regs *regs)
{
	okp_bench_hits++;
	return 0;
}
#endif

struct okp_bench_site {
	const char *what;
	long (*fn)(long, long);
	const struct okp_rv_at *at;
};

static void okp_bench_site(struct kunit *test, const struct okp_bench_site *s)
{
	void *addr = (void *)((unsigned long)s->fn + s->at->insn);
	struct okp_kprobe okp = { .addr = addr, .pre_handler = okp_bench_okp_pre };
	u64 base, with_okp, with_kernel = 0;

	base = okp_bench_time(s->fn);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kprobe(&okp), 0, "%s", okp_kprobe_reason(&okp));
	okp_bench_hits = 0;
	with_okp = okp_bench_time(s->fn);
	KUNIT_EXPECT_EQ(test, okp_bench_hits, (unsigned long)OKP_BENCH_CALLS * OKP_BENCH_ROUNDS);
	okp_unregister_kprobe(&okp);
#ifdef CONFIG_KPROBES
	{
		struct kprobe kp = { .addr = addr, .pre_handler = okp_bench_kernel_pre };

		KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
		okp_bench_hits = 0;
		with_kernel = okp_bench_time(s->fn);
		KUNIT_EXPECT_EQ(test, okp_bench_hits, (unsigned long)OKP_BENCH_CALLS * OKP_BENCH_ROUNDS);
		unregister_kprobe(&kp);
	}
#endif
	kunit_info(test, "%s: a call %llu ns unprobed; a hit costs %llu ns with okprobes, %llu ns "
		   "with the kernel's kprobes (okprobes/kernel %llu%%)\n", s->what, base,
		   with_okp - min(with_okp, base), with_kernel - min(with_kernel, base),
		   with_kernel > base ? div64_u64(100 * (with_okp - min(with_okp, base)),
						  with_kernel - base) : 0);
}

/* A return probe on a C function (entry through ftrace), okprobes' stubs against the kernel's
 * kretprobes (rethook). */
static noinline long okp_bench_c_fn(long a, long b)
{
	barrier();
	return a + b;
}

static int okp_bench_okp_ret(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	okp_bench_hits++;
	return 0;
}

#if defined(CONFIG_KRETPROBES) && defined(CONFIG_KPROBES_ON_FTRACE)
static int okp_bench_kernel_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	okp_bench_hits++;
	return 0;
}
#endif

static void okp_bench_return_case(struct kunit *test)
{
	struct okp_kretprobe okp = { .handler = okp_bench_okp_ret, .maxactive = 8 };
	u64 base, with_okp, with_kernel = 0;

	okp.kp.addr = (okp_kprobe_opcode_t *)okp_bench_c_fn;
	base = okp_bench_time(okp_bench_c_fn);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kretprobe(&okp), 0, "%s", okp_kprobe_reason(&okp.kp));
	KUNIT_EXPECT_TRUE(test, okp.kp.flags & OKP_KPROBE_FLAG_FTRACE);
	okp_bench_hits = 0;
	with_okp = okp_bench_time(okp_bench_c_fn);
	KUNIT_EXPECT_EQ(test, okp_bench_hits, (unsigned long)OKP_BENCH_CALLS * OKP_BENCH_ROUNDS);
	okp_unregister_kretprobe(&okp);
	/*
	 * The kernel's kprobes refuse an ftrace site (-EINVAL) unless built with KPROBES_ON_FTRACE,
	 * which riscv lost with DYNAMIC_FTRACE_WITH_REGS (6.12): there is nothing to compare with.
	 */
#if defined(CONFIG_KRETPROBES) && defined(CONFIG_KPROBES_ON_FTRACE)
	{
		struct kretprobe rp = { .handler = okp_bench_kernel_ret, .maxactive = 8 };

		rp.kp.addr = (kprobe_opcode_t *)okp_bench_c_fn;
		KUNIT_ASSERT_EQ(test, register_kretprobe(&rp), 0);
		okp_bench_hits = 0;
		with_kernel = okp_bench_time(okp_bench_c_fn);
		KUNIT_EXPECT_EQ(test, okp_bench_hits, (unsigned long)OKP_BENCH_CALLS * OKP_BENCH_ROUNDS);
		unregister_kretprobe(&rp);
	}
#else
	kunit_info(test, "the kernel's kretprobes cannot take a function entry with an ftrace site "
		   "here (no CONFIG_KPROBES_ON_FTRACE): okprobes measured alone\n");
#endif
	kunit_info(test, "return probe via ftrace: a call %llu ns unprobed; a probed call costs %llu "
		   "ns more with okprobes, %llu ns with the kernel's kretprobes (okprobes/kernel "
		   "%llu%%)\n", base, with_okp - min(with_okp, base),
		   with_kernel - min(with_kernel, base),
		   with_kernel > base ? div64_u64(100 * (with_okp - min(with_okp, base)),
						  with_kernel - base) : 0);
}

static void okp_bench_case(struct kunit *test)
{
	static const struct okp_bench_site sites[] = {
		{ "beq (simulated by both)", okp_rv_beq, &okp_rv_beq_at },
		{ "c.sdsp (stepped by both)", okp_rv_c_frame, &okp_rv_c_frame_sdsp_at },
	};
	int i;

	okp_kunit_need_breakpoints(test);
	for (i = 0; i < ARRAY_SIZE(sites); i++)
		okp_bench_site(test, &sites[i]);
}

#ifdef CONFIG_KPROBES
/* The kernel's kprobe and okprobes' in one function at once: each counts its own hits. */
static unsigned long okp_bench_kernel_hits;

static int okp_bench_kernel_count(struct kprobe *p, struct pt_regs *regs)
{
	okp_bench_kernel_hits++;
	return 0;
}

static void okp_coexistence_case(struct kunit *test)
{
	long b;
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)((unsigned long)okp_rv_beq + okp_rv_beq_at.insn),
		.pre_handler = okp_bench_kernel_count,
	};
	struct okp_kprobe okp = {
		.addr = (okp_kprobe_opcode_t *)((unsigned long)okp_rv_beq + okp_rv_beq_at.post2),
		.pre_handler = okp_bench_okp_pre,
	};
	struct okp_kprobe same = { .addr = (okp_kprobe_opcode_t *)kp.addr,
				   .pre_handler = okp_bench_okp_pre };

	okp_kunit_need_breakpoints(test);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kprobe(&okp), 0, "%s", okp_kprobe_reason(&okp));
	/* The kernel's breakpoint is not okprobes' to take. */
	KUNIT_EXPECT_NE(test, okp_register_kprobe(&same), 0);
	okp_bench_hits = okp_bench_kernel_hits = 0;
	for (b = 0; b < 1000; b++)
		KUNIT_EXPECT_EQ(test, okp_rv_beq(0, b & 1), (long)!(b & 1));
	KUNIT_EXPECT_EQ(test, okp_bench_kernel_hits, 1000UL);
	KUNIT_EXPECT_EQ(test, okp_bench_hits, 500UL);	/* the not-taken path only */
	okp_unregister_kprobe(&okp);
	unregister_kprobe(&kp);
}
#endif

static struct kunit_case okp_bench_cases[] = {
	KUNIT_CASE(okp_bench_case),
	KUNIT_CASE(okp_bench_return_case),
#ifdef CONFIG_KPROBES
	KUNIT_CASE(okp_coexistence_case),
#endif
	{}
};

static struct kunit_suite okp_bench_suite = {
	.name = "okprobes_bench_riscv",
	.test_cases = okp_bench_cases,
};

kunit_test_suites(&okp_bench_suite);
