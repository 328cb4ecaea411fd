// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_kretprobe_rethook": the return-probe cases of okp_kretprobe_kunit.c that
 * hold whatever carries a frame's return, through the kernel's route (its rethook,
 * src/kernel/rethook.c; on arm64 its kretprobe trampoline, src/kernel/kretprobe_route.c), then
 * that route's own: a task that exits inside, the trampoline a probed function sees, and
 * stack traces in return handlers that show the real callers. Every case skips, saying why,
 * where okprobes' return probes use its stubs.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>

#include <okprobes/okprobes.h>
#include "okp_kretprobe_kunit.h"

/*
 * Tasks exit inside the probed function: the kernel takes their nodes back when it frees the
 * tasks (rethook_flush_task(), or kprobe_flush_task() for kretprobe instances), without a return; okprobes counts them as reclaimed when the
 * kernel hands them out again. The pool is whole: N more entries, no miss.
 */
static void okp_kretprobe_rethook_task_exits_inside(struct kunit *test)
{
	enum { N = 3 };
	struct okp_kretprobe rp;
	int round, i;

	okp_rt_setup(&rp, okp_rt_exit_inside, N);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	for (round = 1; round <= 2; round++) {
		reinit_completion(&okp_rt_exit_now);
		reinit_completion(&okp_rt_exited);
		for (i = 0; i < N; i++)
			WARN_ON(IS_ERR(kthread_run(okp_rt_exiter, (void *)(long)i, "okp_rt_exit_%d", i)));
		for (i = 0; i < 500 && READ_ONCE(okp_rt.nentry) < round * N; i++)
			msleep(10);
		KUNIT_EXPECT_EQ(test, okp_rt.nentry, (unsigned int)(round * N));
		KUNIT_EXPECT_EQ(test, okp_return_stubs_in_use(), (unsigned long)N);
		complete_all(&okp_rt_exit_now);
		for (i = 0; i < N; i++)
			wait_for_completion(&okp_rt_exited);
		for (i = 0; i < 3; i++) {	/* the tasks are freed from RCU callbacks */
			rcu_barrier();
			msleep(10);
		}
	}
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 0U);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
	KUNIT_EXPECT_EQ(test, rp.nreclaimed, (unsigned long)N);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

/* A probed function sees the kernel's trampoline (rethook's or kretprobes') as its return
 * address. */
static void okp_kretprobe_rethook_trampoline(struct kunit *test)
{
	struct okp_kretprobe rp;
	unsigned long real;

	okp_rt_call_site(1);
	real = okp_rt_raw_ret;
	okp_rt_setup(&rp, okp_rt_whoami, 2);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, okp_rt_call_site(2), 3L);
	KUNIT_EXPECT_NE(test, okp_rt_raw_ret, real);
	KUNIT_EXPECT_TRUE(test, okp_is_kretprobe_trampoline(okp_rt_raw_ret));
	KUNIT_EXPECT_FALSE(test, okp_is_kretprobe_trampoline(real));
	KUNIT_EXPECT_EQ(test, okp_rt.retaddrs[0], real);
	okp_unregister_kretprobe(&rp);
}

/*
 * 6.1's lib/test_kprobes.c test_stacktrace_on_kretprobe and
 * test_stacktrace_on_nested_kretprobe, on okprobes: a stack trace taken in a return handler
 * shows the probed function's real return address (and, nested, its caller's next), not a
 * trampoline.
 */
static unsigned long okp_st_target_ret[2];	/* [0] internal target's, [1] target's */
static bool okp_st_nested;
static struct kunit *okp_st_test;

static noinline unsigned long okp_st_internal_target(void)
{
	if (!okp_st_target_ret[0])
		okp_st_target_ret[0] = (unsigned long)__builtin_return_address(0);
	return okp_st_target_ret[0];
}

static noinline unsigned long okp_st_target(void)
{
	if (!okp_st_target_ret[1])
		okp_st_target_ret[1] = (unsigned long)__builtin_return_address(0);
	if (okp_st_nested)
		okp_st_internal_target();
	return okp_st_target_ret[1];
}

static noinline unsigned long okp_st_driver(void)
{
	okp_st_target();
	/* keeps this function out of line */
	return (unsigned long)__builtin_return_address(0);
}

#define OKP_ST_DEPTH 16
static unsigned long okp_st_stack[OKP_ST_DEPTH];

static int okp_st_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kunit *test = okp_st_test;
	unsigned int i, n;

	KUNIT_EXPECT_FALSE(test, preemptible());
	KUNIT_EXPECT_EQ(test, regs_return_value(regs), okp_st_target_ret[1]);
	n = stack_trace_save(okp_st_stack, OKP_ST_DEPTH, 0);
	KUNIT_EXPECT_NE(test, n, 0U);
	for (i = 0; i < n; i++)
		if (okp_st_stack[i] == okp_st_target_ret[1])
			break;
	KUNIT_EXPECT_NE_MSG(test, i, n, "the target's return address %pS is not in the trace",
			    (void *)okp_st_target_ret[1]);
	return 0;
}

static int okp_st_internal_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kunit *test = okp_st_test;
	unsigned int i, n;

	KUNIT_EXPECT_FALSE(test, preemptible());
	KUNIT_EXPECT_EQ(test, regs_return_value(regs), okp_st_target_ret[0]);
	n = stack_trace_save(okp_st_stack, OKP_ST_DEPTH, 0);
	KUNIT_EXPECT_NE(test, n, 0U);
	/* The internal target's return address, and next the target's (its frame is hooked too). */
	for (i = 0; i + 1 < n; i++) {
		if (okp_st_stack[i] == okp_st_target_ret[0]) {
			KUNIT_EXPECT_EQ_MSG(test, okp_st_stack[i + 1], okp_st_target_ret[1],
					    "after %pS: %pS, not %pS", (void *)okp_st_stack[i],
					    (void *)okp_st_stack[i + 1], (void *)okp_st_target_ret[1]);
			break;
		}
	}
	KUNIT_EXPECT_NE_MSG(test, i + 1, n, "the internal target's return address %pS is not in the trace",
			    (void *)okp_st_target_ret[0]);
	return 0;
}

static void okp_st_setup(struct kunit *test, struct okp_kretprobe *rp, void *fn,
			 okp_kretprobe_handler_t handler)
{
	memset(rp, 0, sizeof(*rp));
	rp->kp.addr = fn;
	rp->handler = handler;
	okp_st_test = test;
}

static void okp_kretprobe_rethook_stacktrace(struct kunit *test)
{
	unsigned long myretaddr = (unsigned long)__builtin_return_address(0);
	struct okp_kretprobe rp;

	okp_st_nested = false;
	/* Records the target's return address, and shows the driver is not inlined. */
	KUNIT_ASSERT_NE(test, myretaddr, okp_st_driver());
	okp_st_setup(test, &rp, okp_st_target, okp_st_return);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kretprobe(&rp), 0, "%s", okp_kprobe_reason(&rp.kp));
	KUNIT_ASSERT_NE(test, myretaddr, okp_st_driver());
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
	okp_unregister_kretprobe(&rp);
}

static void okp_kretprobe_rethook_stacktrace_nested(struct kunit *test)
{
	unsigned long myretaddr = (unsigned long)__builtin_return_address(0);
	static struct okp_kretprobe outer, inner;
	struct okp_kretprobe *rps[] = { &outer, &inner };

	okp_st_nested = true;
	KUNIT_ASSERT_NE(test, myretaddr, okp_st_driver());	/* records [0] too */
	okp_st_setup(test, &outer, okp_st_target, okp_st_return);
	okp_st_setup(test, &inner, okp_st_internal_target, okp_st_internal_return);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobes(rps, 2), 0);
	KUNIT_ASSERT_NE(test, myretaddr, okp_st_driver());
	okp_unregister_kretprobes(rps, 2);
	okp_st_nested = false;
}

/* Each case skips where return probes use okprobes' stubs (no kernel route), saying why. */
static int okp_kretprobe_rethook_init(struct kunit *test)
{
	const char *why = okp_return_stubs_reason();

	if (why)
		kunit_skip(test, "return probes use okprobes' stubs: %s", why);
	return 0;
}

/* The shared cases, then rethook's own. */
static struct kunit_case okp_kretprobe_rethook_cases[] = {
	OKP_KRETPROBE_COMMON_CASES,
	KUNIT_CASE(okp_kretprobe_rethook_task_exits_inside),
	KUNIT_CASE(okp_kretprobe_rethook_trampoline),
	KUNIT_CASE(okp_kretprobe_rethook_stacktrace),
	KUNIT_CASE(okp_kretprobe_rethook_stacktrace_nested),
	{}
};

static struct kunit_suite okp_kretprobe_rethook_suite = {
	.name = "okprobes_kretprobe_rethook",
	.init = okp_kretprobe_rethook_init,
	.test_cases = okp_kretprobe_rethook_cases,
};
kunit_test_suites(&okp_kretprobe_rethook_suite);
