// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_kretprobe": return probes end to end on this module's own functions
 * (C functions are ftrace sites on a kernel built with -pg: their entry goes through
 * ftrace; okp_t_riprel_load in probe_targets_x86.S has none: its entry is a breakpoint),
 * through okprobes' stubs, forced wherever the kernel's rethook could be used. The shared cases
 * (okp_kretprobe_kunit.h) run through rethook too, in okp_kretprobe_rethook_kunit.c.
 * Every test checks that the probed function's callers still get their real results, and
 * that no return stub stays in use once the probes are gone.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

#include <okprobes/okprobes.h>
#include "okp_kretprobe_kunit.h"
#include "okp_need_breakpoints.h"

long okp_t_helper(long a);	/* 3a + 7, probe_targets_x86.S */

/* The probed functions: noinline and with a result that depends on the argument. */
noinline long okp_rt_mul3(long a, long b)
{
	barrier();
	return a * 3 + b;
}

static noinline long okp_rt_recurse(long n)
{
	long r = 0;

	if (n > 0)
		r = okp_rt_recurse(n - 1);
	barrier();	/* after the call: no tail recursion turned into a loop */
	return r + n;
}

static DECLARE_COMPLETION(okp_rt_release);
static atomic_t okp_rt_sleepers;

/* Sleeps until the test releases it, then returns a + 1. */
static noinline long okp_rt_sleep(long a)
{
	atomic_inc(&okp_rt_sleepers);
	wait_for_completion(&okp_rt_release);
	return a + 1;
}

DECLARE_COMPLETION(okp_rt_exit_now);
DECLARE_COMPLETION(okp_rt_exited);

/* Enters, waits for the test, then exits inside: it never returns to its caller. */
noinline long okp_rt_exit_inside(long a)
{
	wait_for_completion(&okp_rt_exit_now);
	kthread_complete_and_exit(&okp_rt_exited, 0);
}

/* What the probed function itself sees as its return address, raw and mapped back. */
unsigned long okp_rt_raw_ret;
static unsigned long okp_rt_mapped_ret;
noinline long okp_rt_whoami(long a)
{
	okp_rt_raw_ret = (unsigned long)__builtin_return_address(0);
	okp_rt_mapped_ret = okp_kretprobe_find_ret_addr(NULL, okp_rt_raw_ret);
	return a;
}

noinline long okp_rt_call_site(long a)
{
	return okp_rt_whoami(a) + 1;	/* not a tail call: the return address is here */
}

/* --- Handlers: record pairs in order. --- */

struct okp_rt_log okp_rt;

struct okp_rt_data {
	long arg;
	unsigned long magic;
};
#define OKP_RT_MAGIC 0x6f6b7072UL

static int okp_rt_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct okp_rt_data *d = (struct okp_rt_data *)ri->data;

	d->arg = okp_arg(regs, 0);
	d->magic = OKP_RT_MAGIC;
	if (okp_rt.nentry < OKP_RT_LOG)
		okp_rt.entries[okp_rt.nentry] = d->arg;
	okp_rt.nentry++;
	return okp_rt.skip_entries;
}

static int okp_rt_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct okp_rt_data *d = (struct okp_rt_data *)ri->data;
	unsigned int i = okp_rt.nreturn++;

	if (d->magic != OKP_RT_MAGIC)
		okp_rt.data_mismatch = true;
	if (i < OKP_RT_LOG) {
		okp_rt.returns[i] = d->arg;
		okp_rt.retvals[i] = regs_return_value(regs);
		okp_rt.ret_ips[i] = instruction_pointer(regs);
		okp_rt.retaddrs[i] = okp_get_kretprobe_retaddr(ri);
	}
	d->magic = 0;
	return 0;
}

void okp_rt_setup(struct okp_kretprobe *rp, void *fn, int maxactive)
{
	memset(rp, 0, sizeof(*rp));
	memset(&okp_rt, 0, sizeof(okp_rt));
	rp->kp.addr = fn;
	rp->entry_handler = okp_rt_entry;
	rp->handler = okp_rt_return;
	rp->data_size = sizeof(struct okp_rt_data);
	rp->maxactive = maxactive;
}

void okp_rt_expect_stubs_free(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, okp_return_stubs_in_use(), 0UL);
}

/* --- Tests --- */

void okp_kretprobe_pairs_and_values(struct kunit *test)
{
	struct okp_kretprobe rp;
	long i;

	okp_rt_setup(&rp, okp_rt_mul3, 0);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kretprobe(&rp), 0, "%s", okp_kprobe_reason(&rp.kp));
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, okp_rt_mul3(i, 100), i * 3 + 100);
	KUNIT_EXPECT_EQ(test, okp_rt.nentry, 8U);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 8U);
	KUNIT_EXPECT_FALSE(test, okp_rt.data_mismatch);
	for (i = 0; i < 8; i++) {
		KUNIT_EXPECT_EQ(test, okp_rt.returns[i], i);
		KUNIT_EXPECT_EQ(test, okp_rt.retvals[i], i * 3 + 100);
		/* The handler's ip is the real return address: in this function, not a stub. */
		KUNIT_EXPECT_EQ(test, okp_kretprobe_find_ret_addr(NULL, okp_rt.ret_ips[i]),
				okp_rt.ret_ips[i]);
		KUNIT_EXPECT_FALSE(test, okp_is_kretprobe_trampoline(okp_rt.ret_ips[i]));
		/* get_kretprobe_retaddr()'s counterpart agrees with it. */
		KUNIT_EXPECT_EQ(test, okp_rt.retaddrs[i], okp_rt.ret_ips[i]);
	}
	/* maxactive <= 0: max(10, 2 * possible CPUs). */
	KUNIT_EXPECT_EQ(test, rp.maxactive, 0);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
	KUNIT_EXPECT_GE(test, rp.peak, 1U);
	okp_unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(2, 1), 7L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 8U);
	okp_rt_expect_stubs_free(test);
}

/* The entry of an asm function is a breakpoint (no ftrace site), not ftrace. */
void okp_kretprobe_breakpoint_entry(struct kunit *test)
{
	struct okp_kretprobe rp;

	okp_kunit_need_breakpoints(test);
	okp_rt_setup(&rp, okp_t_helper, 4);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kretprobe(&rp), 0, "%s", okp_kprobe_reason(&rp.kp));
	KUNIT_EXPECT_EQ(test, rp.kp.flags & OKP_KPROBE_FLAG_FTRACE, 0U);
	KUNIT_EXPECT_EQ(test, okp_t_helper(5), 22L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 1U);
	KUNIT_EXPECT_EQ(test, okp_rt.returns[0], 5L);
	KUNIT_EXPECT_EQ(test, okp_rt.retvals[0], 22L);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

void okp_kretprobe_recursion_lifo(struct kunit *test)
{
	struct okp_kretprobe rp;
	unsigned int i;

	okp_rt_setup(&rp, okp_rt_recurse, 8);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, okp_rt_recurse(5), 15L);
	KUNIT_EXPECT_EQ(test, okp_rt.nentry, 6U);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 6U);
	for (i = 0; i < 6 && okp_rt.nreturn == 6; i++) {
		KUNIT_EXPECT_EQ(test, okp_rt.entries[i], 5L - i);
		KUNIT_EXPECT_EQ(test, okp_rt.returns[i], (long)i);	/* innermost first */
		KUNIT_EXPECT_EQ(test, okp_rt.retvals[i], (long)(i * (i + 1) / 2));
	}
	KUNIT_EXPECT_EQ(test, rp.peak, 6U);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

/* maxactive 3, depth 5: the outer three frames get instances, two misses, then recovery. */
void okp_kretprobe_exhaustion(struct kunit *test)
{
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_recurse, 3);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, okp_rt_recurse(4), 10L);
	KUNIT_EXPECT_EQ(test, okp_rt.nentry, 3U);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 3U);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 2);
	KUNIT_EXPECT_EQ(test, rp.nmissed_by[OKP_RP_MISS_POOL_EMPTY], 2UL);
	KUNIT_EXPECT_EQ(test, rp.peak, 3U);
	/* The returns handled are those of the three outer frames, innermost of them first. */
	KUNIT_EXPECT_EQ(test, okp_rt.returns[0], 2L);
	KUNIT_EXPECT_EQ(test, okp_rt.returns[2], 4L);
	memset(&okp_rt, 0, sizeof(okp_rt));
	KUNIT_EXPECT_EQ(test, okp_rt_recurse(1), 1L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 2U);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 2);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

static int okp_rt_sleeper(void *arg)
{
	long a = (long)arg;

	if (okp_rt_sleep(a) != a + 1)
		pr_err("okprobes_kretprobe: sleeper %ld got a wrong result\n", a);
	return 0;
}

/* Starts n kthreads that enter okp_rt_sleep(i * step) and waits until all sleep inside. */
static void okp_rt_start_sleepers(struct task_struct **t, int n, long step)
{
	int i;

	for (i = 0; i < n; i++) {
		t[i] = kthread_run(okp_rt_sleeper, (void *)(i * step), "okp_rt_%d", i);
		if (WARN_ON(IS_ERR(t[i])))
			t[i] = NULL;
		else
			get_task_struct(t[i]);
	}
	for (i = 0; i < 500 && atomic_read(&okp_rt_sleepers) < n; i++)
		msleep(10);
}

/* Lets every sleeper return and reaps the threads. */
static void okp_rt_release_sleepers(struct task_struct **t, int n)
{
	int i;

	complete_all(&okp_rt_release);
	for (i = 0; i < n; i++) {
		if (!t[i])
			continue;
		kthread_stop(t[i]);
		put_task_struct(t[i]);
	}
}

/* Tasks sleep inside the probed function; each return pairs with its own entry. */
void okp_kretprobe_sleepers(struct kunit *test)
{
	enum { N = 6 };
	struct task_struct *t[N];
	struct okp_kretprobe rp;
	long sum = 0, want = 0;
	int i;

	okp_rt_setup(&rp, okp_rt_sleep, N);
	reinit_completion(&okp_rt_release);
	atomic_set(&okp_rt_sleepers, 0);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	okp_rt_start_sleepers(t, N, 10);
	KUNIT_EXPECT_EQ(test, atomic_read(&okp_rt_sleepers), N);
	KUNIT_EXPECT_EQ(test, rp.peak, (unsigned int)N);
	okp_rt_release_sleepers(t, N);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, (unsigned int)N);
	KUNIT_EXPECT_FALSE(test, okp_rt.data_mismatch);
	for (i = 0; i < N; i++) {
		sum += okp_rt.retvals[i] - okp_rt.returns[i];	/* each return is its entry's + 1 */
		want += 1;
	}
	KUNIT_EXPECT_EQ(test, sum, want);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

/* Unregistered while tasks sleep inside: their frames return safely, without the handler. */
void okp_kretprobe_unregister_while_inside(struct kunit *test)
{
	enum { N = 3 };
	struct task_struct *t[N];
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_sleep, N);
	reinit_completion(&okp_rt_release);
	atomic_set(&okp_rt_sleepers, 0);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	okp_rt_start_sleepers(t, N, 1);
	KUNIT_EXPECT_EQ(test, okp_return_stubs_in_use(), (unsigned long)N);
	okp_unregister_kretprobe(&rp);
	okp_rt_release_sleepers(t, N);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 0U);
	okp_rt_expect_stubs_free(test);
}

int okp_rt_exiter(void *arg)
{
	okp_rt_exit_inside((long)arg);
	return 0;	/* not reached */
}

/* Starts n kthreads that enter okp_rt_exit_inside() and waits until all are inside. */
static void okp_rt_start_exiters(int n)
{
	int i;

	reinit_completion(&okp_rt_exit_now);
	reinit_completion(&okp_rt_exited);
	for (i = 0; i < n; i++)
		WARN_ON(IS_ERR(kthread_run(okp_rt_exiter, (void *)(long)i, "okp_rt_exit_%d", i)));
	for (i = 0; i < 500 && okp_return_stubs_in_use() < n; i++)
		msleep(10);
}

/*
 * Lets the exiters exit and returns once they are freed (a task is freed an RCU grace
 * period after it is reaped) or after 5 s, with the stubs still in use.
 */
static unsigned long okp_rt_finish_exiters(int n)
{
	int i;

	complete_all(&okp_rt_exit_now);
	for (i = 0; i < n; i++)
		wait_for_completion(&okp_rt_exited);
	for (i = 0; i < 500 && okp_return_stubs_in_use(); i++) {
		rcu_barrier();
		msleep(10);
	}
	return okp_return_stubs_in_use();
}

/* Tasks exit inside the probed function: their instances come back without an unregister. */
static void okp_kretprobe_task_exits_inside(struct kunit *test)
{
	enum { N = 3 };
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_exit_inside, N);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	okp_rt_start_exiters(N);
	KUNIT_EXPECT_EQ(test, okp_rt_finish_exiters(N), 0UL);
	KUNIT_EXPECT_EQ(test, okp_rt.nentry, (unsigned int)N);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 0U);
	KUNIT_EXPECT_EQ(test, rp.nreclaimed, (unsigned long)N);
	/* The pool is whole again: N more entries take N instances, no miss. */
	okp_rt_start_exiters(N);
	KUNIT_EXPECT_EQ(test, okp_rt_finish_exiters(N), 0UL);
	KUNIT_EXPECT_EQ(test, rp.nmissed, 0);
	KUNIT_EXPECT_EQ(test, rp.nreclaimed, 2UL * N);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

/* The probe is unregistered while tasks wait inside, then they exit: the detached stubs
 * come back to okprobes too. */
static void okp_kretprobe_detached_then_exit(struct kunit *test)
{
	enum { N = 2 };
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_exit_inside, N);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	okp_rt_start_exiters(N);
	KUNIT_EXPECT_EQ(test, okp_return_stubs_in_use(), (unsigned long)N);
	okp_unregister_kretprobe(&rp);
	KUNIT_EXPECT_EQ(test, okp_return_stubs_in_use(), (unsigned long)N);	/* still inside */
	KUNIT_EXPECT_EQ(test, okp_rt_finish_exiters(N), 0UL);
	okp_rt_expect_stubs_free(test);
}

void okp_kretprobe_entry_handler_skips(struct kunit *test)
{
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_mul3, 2);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	okp_rt.skip_entries = true;
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(1, 1), 4L);
	KUNIT_EXPECT_EQ(test, okp_rt.nentry, 1U);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 0U);
	KUNIT_EXPECT_EQ(test, okp_return_stubs_in_use(), 0UL);
	okp_rt.skip_entries = false;
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(1, 2), 5L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 1U);
	okp_unregister_kretprobe(&rp);
}

void okp_kretprobe_enable_disable(struct kunit *test)
{
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_mul3, 2);
	rp.kp.flags = OKP_KPROBE_FLAG_DISABLED;
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(1, 0), 3L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 0U);
	KUNIT_EXPECT_EQ(test, okp_enable_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(2, 0), 6L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 1U);
	KUNIT_EXPECT_EQ(test, okp_disable_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(3, 0), 9L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 1U);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

/* A stack trace inside the probed function shows a stub; find_ret_addr maps it back. */
static void okp_kretprobe_stack_trace_mapping(struct kunit *test)
{
	struct okp_kretprobe rp;
	unsigned long real;

	okp_rt_call_site(1);
	real = okp_rt_raw_ret;
	KUNIT_EXPECT_EQ(test, okp_rt_mapped_ret, real);
	okp_rt_setup(&rp, okp_rt_whoami, 2);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, okp_rt_call_site(2), 3L);
	KUNIT_EXPECT_NE(test, okp_rt_raw_ret, real);
	KUNIT_EXPECT_EQ(test, okp_rt_mapped_ret, real);
	/* is_kretprobe_trampoline()'s counterpart: the stub is one, the real address is not. */
	KUNIT_EXPECT_TRUE(test, okp_is_kretprobe_trampoline(okp_rt_raw_ret));
	KUNIT_EXPECT_FALSE(test, okp_is_kretprobe_trampoline(real));
	KUNIT_EXPECT_FALSE(test, okp_is_kretprobe_trampoline(okp_rt_raw_ret + 1));
	okp_unregister_kretprobe(&rp);
}

/* data_size up to KRETPROBE_MAX_DATA_SIZE works; one byte more is -E2BIG, as in kprobes. */
void okp_kretprobe_data_size_limit(struct kunit *test)
{
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_mul3, 2);
	rp.data_size = OKP_KRETPROBE_MAX_DATA_SIZE + 1;
	KUNIT_EXPECT_EQ(test, okp_register_kretprobe(&rp), -E2BIG);
	KUNIT_EXPECT_TRUE_MSG(test, strstr(okp_kprobe_reason(&rp.kp), "KRETPROBE_MAX_DATA_SIZE"),
			      "reason: '%s'", okp_kprobe_reason(&rp.kp));
	KUNIT_EXPECT_PTR_EQ(test, rp.okp_pool, NULL);

	okp_rt_setup(&rp, okp_rt_mul3, 2);
	rp.data_size = OKP_KRETPROBE_MAX_DATA_SIZE;
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kretprobe(&rp), 0, "%s", okp_kprobe_reason(&rp.kp));
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(2, 1), 7L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 1U);
	KUNIT_EXPECT_FALSE(test, okp_rt.data_mismatch);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

void okp_kretprobe_batch(struct kunit *test)
{
	static struct okp_kretprobe a, bad;
	struct okp_kretprobe *rps[] = { &a, &bad };

	okp_rt_setup(&bad, okp_rt_mul3, 2);
	okp_rt_setup(&a, okp_rt_recurse, 2);
	bad.kp.addr = NULL;
	bad.kp.symbol_name = "okp_rt_no_such_function";
	KUNIT_EXPECT_LT(test, okp_register_kretprobes(rps, 2), 0);
	KUNIT_EXPECT_PTR_EQ(test, a.okp_pool, NULL);	/* rolled back */
	KUNIT_EXPECT_EQ(test, okp_rt_recurse(1), 1L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 0U);
	okp_rt_expect_stubs_free(test);

	okp_rt_setup(&bad, okp_rt_mul3, 2);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobes(rps, 2), 0);
	KUNIT_EXPECT_EQ(test, okp_rt_recurse(0) + okp_rt_mul3(1, 0), 3L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 2U);
	okp_unregister_kretprobes(rps, 2);
	okp_rt_expect_stubs_free(test);
}

struct okp_rt_refusal {
	const char *name;
	int err;
	const char *reason;
	const char *symbol;
	unsigned int offset;
	int maxactive;
	bool null_probe;
};

static const struct okp_rt_refusal okp_rt_refusals[] = {
	{ "NULL return probe", -EINVAL, "NULL", .null_probe = true },
	/* okp_t_helper: endbr64 (4), lea (5), then the return at +9. */
	{ "not a function entry", -EINVAL, "function's entry", .symbol = "okp_t_helper",
	  .offset = 9 },
	{ "never returns (do_exit)", -EINVAL, "never returns", .symbol = "do_exit" },
	{ "never returns (kthread_complete_and_exit)", -EINVAL, "never returns",
	  .symbol = "kthread_complete_and_exit" },
	{ "context switch (__switch_to)", -EINVAL, "next task", .symbol = "__switch_to" },
	{ "blacklisted (notify_die)", -EINVAL, "blacklisted", .symbol = "notify_die" },
	{ "unknown symbol", -ENOENT, "no text symbol", .symbol = "okp_rt_no_such_function" },
	{ "maxactive too large", -E2BIG, "maxactive over", .symbol = "okp_t_riprel_load",
	  .maxactive = 100000 },
};

static void okp_rt_refusal_desc(const struct okp_rt_refusal *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}
KUNIT_ARRAY_PARAM(okp_rt_refusal, okp_rt_refusals, okp_rt_refusal_desc);

static void okp_kretprobe_refusal(struct kunit *test)
{
	const struct okp_rt_refusal *r = test->param_value;
	struct okp_kretprobe rp;
	int ret;

	okp_rt_setup(&rp, NULL, r->maxactive);
	rp.kp.symbol_name = r->symbol;
	rp.kp.offset = r->offset;
	ret = okp_register_kretprobe(r->null_probe ? NULL : &rp);
	KUNIT_EXPECT_EQ(test, ret, r->err);
	if (!r->null_probe)
		KUNIT_EXPECT_TRUE_MSG(test, strstr(okp_kprobe_reason(&rp.kp), r->reason) != NULL,
				      "reason: '%s'", okp_kprobe_reason(&rp.kp));
	if (!ret)
		okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

void okp_kretprobe_already_registered(struct kunit *test)
{
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_mul3, 2);
	KUNIT_ASSERT_EQ(test, okp_register_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, okp_register_kretprobe(&rp), -EEXIST);
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(1, 1), 4L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 1U);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}


/* maxactive is bounded by no global count: through rethook the kernel allocates the nodes,
 * through okprobes' stubs the pool holds instances and a frame takes a stub at entry. */
void okp_kretprobe_large_maxactive(struct kunit *test)
{
	struct okp_kretprobe rp;

	okp_rt_setup(&rp, okp_rt_mul3, 5000);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kretprobe(&rp), 0, "%s", okp_kprobe_reason(&rp.kp));
	KUNIT_EXPECT_EQ(test, okp_rt_mul3(4, 1), 13L);
	KUNIT_EXPECT_EQ(test, okp_rt.nreturn, 1U);
	okp_unregister_kretprobe(&rp);
	okp_rt_expect_stubs_free(test);
}

/*
 * Scale (issue 29): 50 return probes with maxactive 128 on one function, 6400 instances in all:
 * through rethook each probe's nodes are its own; through the stubs registration reserves
 * none, and the 5050 frames suspended at once take one each. A recursion 101 deep gives every
 * probe 101 exact entry/return pairs.
 */
static atomic_t okp_rt_scale_entries, okp_rt_scale_returns, okp_rt_scale_mispaired;

static int okp_rt_scale_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	*(long *)ri->data = okp_arg(regs, 0);
	atomic_inc(&okp_rt_scale_entries);
	return 0;
}

static int okp_rt_scale_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	long n = *(long *)ri->data;

	if (regs_return_value(regs) != n * (n + 1) / 2)
		atomic_inc(&okp_rt_scale_mispaired);
	atomic_inc(&okp_rt_scale_returns);
	return 0;
}

void okp_kretprobe_scale(struct kunit *test)
{
	enum { PROBES = 50, MAXACTIVE = 128, DEPTH = 100 };
	static struct okp_kretprobe rps[PROBES];
	struct okp_kretprobe **list;
	int i;

	list = kunit_kcalloc(test, PROBES, sizeof(*list), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, list);
	for (i = 0; i < PROBES; i++) {
		memset(&rps[i], 0, sizeof(rps[i]));
		rps[i].kp.addr = (void *)okp_rt_recurse;
		rps[i].entry_handler = okp_rt_scale_entry;
		rps[i].handler = okp_rt_scale_return;
		rps[i].data_size = sizeof(long);
		rps[i].maxactive = MAXACTIVE;
		list[i] = &rps[i];
	}
	atomic_set(&okp_rt_scale_entries, 0);
	atomic_set(&okp_rt_scale_returns, 0);
	atomic_set(&okp_rt_scale_mispaired, 0);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kretprobes(list, PROBES), 0, "%s",
			    okp_kprobe_reason(&rps[0].kp));
	KUNIT_EXPECT_EQ(test, okp_rt_recurse(DEPTH), (long)(DEPTH * (DEPTH + 1) / 2));
	KUNIT_EXPECT_EQ(test, atomic_read(&okp_rt_scale_entries), PROBES * (DEPTH + 1));
	KUNIT_EXPECT_EQ(test, atomic_read(&okp_rt_scale_returns), PROBES * (DEPTH + 1));
	KUNIT_EXPECT_EQ(test, atomic_read(&okp_rt_scale_mispaired), 0);
	for (i = 0; i < PROBES; i++) {
		KUNIT_EXPECT_EQ(test, rps[i].nmissed, 0);
		KUNIT_EXPECT_EQ(test, rps[i].peak, (unsigned int)(DEPTH + 1));
	}
	okp_unregister_kretprobes(list, PROBES);
	okp_rt_expect_stubs_free(test);
}


/* The shared cases (okp_kretprobe_kunit.h), then the stubs' own. */
static struct kunit_case okp_kretprobe_cases[] = {
	OKP_KRETPROBE_COMMON_CASES,
	KUNIT_CASE(okp_kretprobe_task_exits_inside),
	KUNIT_CASE(okp_kretprobe_detached_then_exit),
	KUNIT_CASE(okp_kretprobe_stack_trace_mapping),
	KUNIT_CASE_PARAM(okp_kretprobe_refusal, okp_rt_refusal_gen_params),
	{}
};

/* This suite tests okprobes' own return stubs, wherever the kernel's rethook could be used. */
static int okp_rt_stubs_forced_was;

static int okp_kretprobe_suite_init(struct kunit_suite *suite)
{
	okp_rt_stubs_forced_was = okp_test_force_return_stubs(1);
	return 0;
}

static void okp_kretprobe_suite_exit(struct kunit_suite *suite)
{
	okp_test_force_return_stubs(okp_rt_stubs_forced_was);
}

static struct kunit_suite okp_kretprobe_suite = {
	.name = "okprobes_kretprobe",
	.suite_init = okp_kretprobe_suite_init,
	.suite_exit = okp_kretprobe_suite_exit,
	.test_cases = okp_kretprobe_cases,
};
kunit_test_suites(&okp_kretprobe_suite);
