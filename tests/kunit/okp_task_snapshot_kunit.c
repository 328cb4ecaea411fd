// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_task_snapshot" (x86-64): the look at every task's stack that lets the
 * jump optimizer write a jump over several instructions without a tasks-RCU grace period
 * (src/kernel/arch/x86/task_snapshot.c). A kthread sleeps at a known return address; a span
 * around that address must be refused, naming the kthread and the place, and a span that
 * starts there (nothing strictly inside) must be proven. The first half is the one that
 * matters: a look that missed a stopped task would let a jump be written over it.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/string.h>

/* As src/seam/okp_seam.h declares it (the client sees only okprobes' public headers). */
struct okp_text_span {
	unsigned long start;
	unsigned long length;
};
int okp_test_tasks_snapshot(struct okp_text_span *spans, unsigned long n, char *why,
			    size_t why_len);

static DECLARE_COMPLETION(okp_ts_asleep);
static DECLARE_COMPLETION(okp_ts_release);
static unsigned long okp_ts_return;	/* where okp_ts_wait() returns to in okp_ts_sleeper() */
static int okp_ts_after;

static noinline void okp_ts_wait(void)
{
	WRITE_ONCE(okp_ts_return, (unsigned long)__builtin_return_address(0));
	complete(&okp_ts_asleep);
	wait_for_completion(&okp_ts_release);
}

/* Not a tail call: the return address lies inside this function, before the add. */
static noinline int okp_ts_sleeper(void *unused)
{
	okp_ts_wait();
	WRITE_ONCE(okp_ts_after, READ_ONCE(okp_ts_after) + 1);
	while (!kthread_should_stop())
		msleep(1);
	return 0;
}

static void okprobes_task_snapshot_finds_a_sleeping_task(struct kunit *test)
{
	struct okp_text_span span;
	struct task_struct *t;
	char why[160] = "", want[64];
	int i, ret;

	reinit_completion(&okp_ts_asleep);
	reinit_completion(&okp_ts_release);
	t = kthread_run(okp_ts_sleeper, NULL, "okp_ts_sleeper");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&okp_ts_asleep);
	/* Off its CPU, its state saved: what stop_machine() makes of every other task. */
	for (i = 0; i < 5000 && (READ_ONCE(t->__state) != TASK_UNINTERRUPTIBLE || READ_ONCE(t->on_cpu)); i++)
		msleep(1);
	KUNIT_ASSERT_EQ(test, READ_ONCE(t->__state), (unsigned int)TASK_UNINTERRUPTIBLE);

	span.start = okp_ts_return - 1;	/* the return address strictly inside */
	span.length = 2;
	ret = okp_test_tasks_snapshot(&span, 1, why, sizeof(why));
	if (ret == -EOPNOTSUPP) {
		complete(&okp_ts_release);
		kthread_stop(t);
		kunit_skip(test, "this kernel has no reliable unwinder (stack_trace_save_tsk_reliable)");
	}
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "a task sleeping inside the span was not seen");
	snprintf(want, sizeof(want), "task %d (okp_ts_sleeper)", task_pid_nr(t));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(why, want), "reason: %s", why);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(why, "okp_ts_sleeper+0x"), "reason: %s", why);

	span.start = okp_ts_return;	/* resuming at a span's first byte is safe */
	span.length = 1;
	why[0] = '\0';
	ret = okp_test_tasks_snapshot(&span, 1, why, sizeof(why));
	KUNIT_EXPECT_EQ_MSG(test, ret, 1, "not proven: %s", why);

	complete(&okp_ts_release);
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, READ_ONCE(okp_ts_after), 1);
	okp_ts_after = 0;
}

static struct kunit_case okp_task_snapshot_cases[] = {
	KUNIT_CASE(okprobes_task_snapshot_finds_a_sleeping_task),
	{}
};

static struct kunit_suite okp_task_snapshot_suite = {
	.name = "okprobes_task_snapshot",
	.test_cases = okp_task_snapshot_cases,
};
kunit_test_suites(&okp_task_snapshot_suite);
