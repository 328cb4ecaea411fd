// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kprobes_compat_names": a module written against <linux/kprobes.h> alone, built
 * with -include okprobes/kprobes_compat.h (tests/compat/Kbuild) like the kernel's samples, that
 * uses every name the porting header maps which the samples and lib/test_kprobes.c do not, and
 * checks each does what the kernel's does.
 */
#include <kunit/test.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>

static noinline long kcompat_target(long a)
{
	barrier();
	return a * 3 + 1;
}

static noinline long kcompat_callee(long a)
{
	long r = a + (long)is_kretprobe_trampoline((unsigned long)__builtin_return_address(0));

	barrier();
	return r;
}

static noinline long kcompat_caller(long a)
{
	return kcompat_callee(a) + 10;	/* not a tail call */
}

static unsigned int kcompat_pre_calls;	/* READ_ONCE(), as kcompat_seen_rp below */

static int kcompat_pre(struct kprobe *p, struct pt_regs *regs)
{
	WRITE_ONCE(kcompat_pre_calls, kcompat_pre_calls + 1);
	return 0;
}
NOKPROBE_SYMBOL(kcompat_pre);

static nokprobe_inline bool kcompat_flag(struct kprobe *p, unsigned int flag)
{
	return p->flags & flag;
}

/* Flags and their helpers: KPROBE_FLAG_*, kprobe_ftrace/disabled/gone/optimized. */
static void kcompat_flags(struct kunit *test)
{
	struct kprobe kp = { .symbol_name = "kcompat_target", .pre_handler = kcompat_pre };
	kprobe_pre_handler_t pre = kcompat_pre;

	KUNIT_EXPECT_PTR_EQ(test, kp.pre_handler, pre);
	WRITE_ONCE(kcompat_pre_calls, 0);
	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	KUNIT_EXPECT_EQ(test, kcompat_target(2), 7L);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kcompat_pre_calls), 1U);
	/* A C function of a kernel built with -pg: its entry is served through ftrace. */
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&kp));
	KUNIT_EXPECT_TRUE(test, kcompat_flag(&kp, KPROBE_FLAG_FTRACE));
	KUNIT_EXPECT_TRUE(test, kcompat_flag(&kp, KPROBE_FLAG_ON_FUNC_ENTRY));
	KUNIT_EXPECT_FALSE(test, kprobe_optimized(&kp));
	KUNIT_EXPECT_FALSE(test, kprobe_gone(&kp));
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(&kp));

	KUNIT_EXPECT_EQ(test, disable_kprobe(&kp), 0);
	KUNIT_EXPECT_TRUE(test, kprobe_disabled(&kp));
	KUNIT_EXPECT_TRUE(test, kcompat_flag(&kp, KPROBE_FLAG_DISABLED));
	KUNIT_EXPECT_EQ(test, kcompat_target(2), 7L);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kcompat_pre_calls), 1U);
	KUNIT_EXPECT_EQ(test, enable_kprobe(&kp), 0);
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(&kp));
	KUNIT_EXPECT_EQ(test, kcompat_target(2), 7L);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kcompat_pre_calls), 2U);
	wait_for_kprobe_optimizer();
	unregister_kprobe(&kp);
}

/* A probe at an offset past the entry: no KPROBE_FLAG_ON_FUNC_ENTRY, not ftrace. */
static void kcompat_not_entry(struct kunit *test)
{
	struct kprobe kp = { .symbol_name = "kcompat_callee", .pre_handler = kcompat_pre };
	kprobe_opcode_t *entry;

	KUNIT_ASSERT_EQ(test, register_kprobe(&kp), 0);
	entry = kp.addr;
	unregister_kprobe(&kp);
	/* The first boundary after the entry probe's instruction: try the next bytes in turn. */
	kp.addr = NULL;
	for (kp.offset = (unsigned long)entry - (unsigned long)kcompat_callee + 1; kp.offset < 32;
	     kp.offset++) {
		kp.addr = NULL;
		if (register_kprobe(&kp) == 0)
			break;
	}
	KUNIT_ASSERT_LT(test, kp.offset, 32U);
	KUNIT_EXPECT_FALSE(test, kcompat_flag(&kp, KPROBE_FLAG_ON_FUNC_ENTRY));
	KUNIT_EXPECT_FALSE(test, kprobe_ftrace(&kp));
	unregister_kprobe(&kp);
}

struct kcompat_data {
	long arg;
};

/* Written by the return handler, which okprobes calls: read and reset with READ_ONCE() and
 * WRITE_ONCE(), or the compiler, seeing no write in the probed function, keeps the reset value. */
static struct kretprobe *kcompat_seen_rp;
static unsigned long kcompat_seen_retaddr, kcompat_seen_ip;

static int kcompat_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	((struct kcompat_data *)ri->data)->arg = 1;
	return 0;
}

static int kcompat_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	WRITE_ONCE(kcompat_seen_rp, get_kretprobe(ri));
	WRITE_ONCE(kcompat_seen_retaddr, get_kretprobe_retaddr(ri));
	WRITE_ONCE(kcompat_seen_ip, instruction_pointer(regs));
	return 0;
}

/* get_kretprobe, get_kretprobe_retaddr, is_kretprobe_trampoline, enable/disable_kretprobe. */
static void kcompat_kretprobe(struct kunit *test)
{
	kretprobe_handler_t on_return = kcompat_return;
	struct kretprobe rp = { .kp.symbol_name = "kcompat_callee", .entry_handler = kcompat_entry,
				.handler = on_return, .data_size = sizeof(struct kcompat_data) };

	/* Unprobed, the return address is the caller's own. */
	KUNIT_EXPECT_EQ(test, kcompat_caller(1), 11L);
	KUNIT_ASSERT_EQ(test, register_kretprobe(&rp), 0);
	/* Probed, the callee's return address is the trampoline (counted as 1 in its result). */
	WRITE_ONCE(kcompat_seen_rp, NULL);
	KUNIT_EXPECT_EQ(test, kcompat_caller(1), 12L);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(kcompat_seen_rp), &rp);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kcompat_seen_retaddr), READ_ONCE(kcompat_seen_ip));
	KUNIT_EXPECT_FALSE(test, is_kretprobe_trampoline(READ_ONCE(kcompat_seen_retaddr)));

	KUNIT_EXPECT_EQ(test, disable_kretprobe(&rp), 0);
	WRITE_ONCE(kcompat_seen_rp, NULL);
	KUNIT_EXPECT_EQ(test, kcompat_caller(1), 11L);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(kcompat_seen_rp), NULL);
	KUNIT_EXPECT_EQ(test, enable_kretprobe(&rp), 0);
	KUNIT_EXPECT_EQ(test, kcompat_caller(1), 12L);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(kcompat_seen_rp), &rp);
	unregister_kretprobe(&rp);
}

/* data_size up to KRETPROBE_MAX_DATA_SIZE; above it -E2BIG, as the kernel returns. */
static void kcompat_data_size(struct kunit *test)
{
	struct kretprobe rp = { .kp.symbol_name = "kcompat_target", .handler = kcompat_return,
				.data_size = KRETPROBE_MAX_DATA_SIZE + 1 };

	KUNIT_EXPECT_EQ(test, KRETPROBE_MAX_DATA_SIZE, 4096);
	KUNIT_EXPECT_EQ(test, register_kretprobe(&rp), -E2BIG);
	rp.kp.addr = NULL;
	rp.data_size = KRETPROBE_MAX_DATA_SIZE;
	KUNIT_ASSERT_EQ(test, register_kretprobe(&rp), 0);
	WRITE_ONCE(kcompat_seen_rp, NULL);
	KUNIT_EXPECT_EQ(test, kcompat_target(1), 4L);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(kcompat_seen_rp), &rp);
	unregister_kretprobe(&rp);
}

static struct kunit_case kcompat_cases[] = {
	KUNIT_CASE(kcompat_flags),
	KUNIT_CASE(kcompat_not_entry),
	KUNIT_CASE(kcompat_kretprobe),
	KUNIT_CASE(kcompat_data_size),
	{}
};

static struct kunit_suite kcompat_suite = {
	.name = "kprobes_compat_names",
	.test_cases = kcompat_cases,
};
kunit_test_suites(&kcompat_suite);

MODULE_LICENSE("GPL");
