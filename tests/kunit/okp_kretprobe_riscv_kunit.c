// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_kretprobe_riscv" (riscv64): return probes through okprobes' own stubs
 * (arch/riscv/return_stubs.S), entered at a breakpoint (the asm okp_rv_helper, no ftrace site)
 * and through ftrace (C functions): the return handler sees the return value in a0 and the
 * real return address, may change the value, the entry handler's data reaches it, recursion
 * gets one instance per frame, an exhausted pool counts its misses, and every probed call
 * returns where and what it would have without the probe.
 */
#include <kunit/test.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <okprobes/okprobes.h>
#include "okp_need_breakpoints.h"

long okp_rv_helper(long a, long b);	/* probe_targets_riscv.S: a + 7 */

static noinline long okp_rv_ret_rec(long n)
{
	long r = n > 0 ? n + okp_rv_ret_rec(n - 1) : 0;

	barrier();	/* not a tail call: every frame returns through its own ra */
	return r;
}

static noinline long okp_rv_ret_plain(long a)
{
	barrier();
	return a * 3 + 1;
}

static struct {
	unsigned long entries, returns;
	unsigned long last_a0, last_ret_addr;
	long data_seen;
	long set_a0;		/* non-zero: the return handler sets a0 to it */
} okp_rv_ret_obs;

static int okp_rv_ret_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	okp_rv_ret_obs.entries++;
	*(long *)ri->data = regs->a0;
	return 0;
}

static int okp_rv_ret_handler(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	okp_rv_ret_obs.returns++;
	okp_rv_ret_obs.last_a0 = regs->a0;
	okp_rv_ret_obs.last_ret_addr = ri->ret_addr;
	okp_rv_ret_obs.data_seen = *(long *)ri->data;
	if (okp_rv_ret_obs.set_a0)
		regs->a0 = okp_rv_ret_obs.set_a0;
	return 0;
}

static void okp_rv_ret_register(struct kunit *test, struct okp_kretprobe *rp, void *fn)
{
	int ret;

	rp->kp.addr = (okp_kprobe_opcode_t *)fn;
	rp->handler = okp_rv_ret_handler;
	rp->entry_handler = okp_rv_ret_entry;
	rp->data_size = sizeof(long);
	memset(&okp_rv_ret_obs, 0, sizeof(okp_rv_ret_obs));
	ret = okp_register_kretprobe(rp);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "%s", okp_kprobe_reason(&rp->kp));
}

/* Entered at a breakpoint on the asm helper's first instruction. */
static void okp_rv_ret_breakpoint_case(struct kunit *test)
{
	struct okp_kretprobe rp = {};

	okp_kunit_need_breakpoints(test);
	okp_rv_ret_register(test, &rp, okp_rv_helper);
	KUNIT_EXPECT_FALSE(test, rp.kp.flags & OKP_KPROBE_FLAG_FTRACE);
	KUNIT_EXPECT_EQ(test, okp_rv_helper(5, 0), 12L);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.entries, 1UL);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.returns, 1UL);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.last_a0, 12UL);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.data_seen, 5L);
	/* The real return address is in this function, right after the call. */
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.last_ret_addr >= (unsigned long)okp_rv_ret_breakpoint_case &&
			      okp_rv_ret_obs.last_ret_addr < (unsigned long)okp_rv_ret_breakpoint_case + 16384,
			true);
	okp_rv_ret_obs.set_a0 = 1234;
	KUNIT_EXPECT_EQ(test, okp_rv_helper(5, 0), 1234L);
	okp_rv_ret_obs.set_a0 = 0;
	okp_unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, okp_rv_helper(5, 0), 12L);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.returns, 2UL);
}

/* Entered through ftrace on a C function. */
static void okp_rv_ret_ftrace_case(struct kunit *test)
{
	struct okp_kretprobe rp = {};

	okp_rv_ret_register(test, &rp, okp_rv_ret_plain);
	KUNIT_EXPECT_TRUE(test, rp.kp.flags & OKP_KPROBE_FLAG_FTRACE);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_plain(4), 13L);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.returns, 1UL);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.last_a0, 13UL);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.data_seen, 4L);
	okp_rv_ret_obs.set_a0 = -7;
	KUNIT_EXPECT_EQ(test, okp_rv_ret_plain(4), -7L);
	okp_rv_ret_obs.set_a0 = 0;
	okp_unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_plain(4), 13L);
}

/* Recursion: one instance per live frame, each returning to its own caller. */
static void okp_rv_ret_recursion_case(struct kunit *test)
{
	struct okp_kretprobe rp = { .maxactive = 16 };

	okp_rv_ret_register(test, &rp, okp_rv_ret_rec);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_rec(10), 55L);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.entries, 11UL);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.returns, 11UL);
	/* The outermost frame returns last, with the whole sum, and its own argument in data. */
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.last_a0, 55UL);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.data_seen, 10L);
	KUNIT_EXPECT_EQ(test, rp.peak, 11U);
	okp_unregister_kretprobe(&rp);
}

/* An exhausted pool: the frames beyond maxactive run unprobed and are counted as missed. */
static void okp_rv_ret_pool_case(struct kunit *test)
{
	struct okp_kretprobe rp = { .maxactive = 3 };

	okp_rv_ret_register(test, &rp, okp_rv_ret_rec);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_rec(5), 15L);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_obs.returns, 3UL);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 3);
	okp_unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, okp_rv_ret_rec(5), 15L);
}

static struct kunit_case okp_rv_ret_cases[] = {
	KUNIT_CASE(okp_rv_ret_breakpoint_case),
	KUNIT_CASE(okp_rv_ret_ftrace_case),
	KUNIT_CASE(okp_rv_ret_recursion_case),
	KUNIT_CASE(okp_rv_ret_pool_case),
	{}
};

static struct kunit_suite okp_rv_ret_suite = {
	.name = "okprobes_kretprobe_riscv",
	.test_cases = okp_rv_ret_cases,
};

kunit_test_suites(&okp_rv_ret_suite);
