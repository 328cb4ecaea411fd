// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_kprobe" (x86-64): the probe API of <okprobes/okprobes.h> end to end,
 * on this module's own text: arguments at function entry (breakpoint and ftrace), aggregates,
 * enable/disable, batch registration, re-entry, every CPU at once, a pre_handler that skips
 * the instruction. Instruction classes: okp_insn_kunit.c; refusals: okp_refusal_kunit.c.
 * Probes still registered when a case ends (an assertion failed) are unregistered by .exit.
 */
#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"

/* --- C targets: function entries are ftrace call sites. --- */

/*
 * Called through volatile pointers, so each is a real out-of-line function taking its
 * arguments by the calling convention, whatever the optimiser knows about the callers.
 */
static noinline long okp_t_c_args(long a, long b, long c, long d, long e, long f, long g, long h)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

static noinline long okp_t_c_orig(long a)
{
	return a + 1;
}

static noinline long okp_t_c_alt(long a)
{
	return a * 100;
}

static long (*volatile okp_t_c_args_ptr)(long, long, long, long, long, long, long, long) =
	okp_t_c_args;
static long (*volatile okp_t_c_orig_ptr)(long) = okp_t_c_orig;

/* --- Arguments at function entry. --- */

static const long okp_t_argv[8] = { 0x11, -0x22, 0x33, 0x44, -0x55, 0x66, 0x77, -0x88 };

static long okp_t_args_expect(void)
{
	long r = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		r += (i + 1) * okp_t_argv[i];
	return r;
}

static void okp_t_check_args(struct kunit *test, const struct okp_t_probe *p)
{
	unsigned int i;

	KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 1U);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ_MSG(test, (long)p->obs.args[i], okp_t_argv[i], "okp_arg(regs, %u)", i);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_EQ_MSG(test, (long)p->obs.regs_args[i], okp_t_argv[i], "register arg %u", i);
}

/* Asm function: no __fentry__, so the probe after ENDBR64 is a breakpoint. */
static void okp_kprobe_args_breakpoint(struct kunit *test)
{
	long (*volatile fn)(long, long, long, long, long, long, long, long) = okp_t_args;
	const u8 *entry = okp_t_entry(okp_t_args);
	struct okp_t_probe *p = okp_t_new(test, 1, NULL, "okp_t_args", 0, true, true);
	long r;

	p->read_args = true;
	KUNIT_ASSERT_EQ(test, fn(okp_t_argv[0], okp_t_argv[1], okp_t_argv[2], okp_t_argv[3],
				 okp_t_argv[4], okp_t_argv[5], okp_t_argv[6], okp_t_argv[7]),
			okp_t_args_expect());
	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	/* Registered at sym+0: placed after the landing pad, which must stay. */
	KUNIT_EXPECT_PTR_EQ(test, (const u8 *)p->kp.addr, entry);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_FTRACE, 0U);
	KUNIT_EXPECT_FALSE(test, okp_kprobe_ftrace(&p->kp));
	/* The function's entry, as the kernel's kprobes mark it (KPROBE_FLAG_ON_FUNC_ENTRY). */
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_ON_FUNC_ENTRY,
			(unsigned int)OKP_KPROBE_FLAG_ON_FUNC_ENTRY);
	KUNIT_EXPECT_EQ(test, okp_t_byte(entry), (u8)OKP_T_INT3);
	r = fn(okp_t_argv[0], okp_t_argv[1], okp_t_argv[2], okp_t_argv[3], okp_t_argv[4],
	       okp_t_argv[5], okp_t_argv[6], okp_t_argv[7]);
	KUNIT_EXPECT_EQ(test, r, okp_t_args_expect());
	okp_t_check_args(test, p);
	KUNIT_EXPECT_EQ(test, p->obs.pre_ip, (unsigned long)entry + 1);
	/* movq %rdi, %rax (3 bytes) is stepped: post sees the next instruction. */
	KUNIT_EXPECT_EQ(test, p->obs.post_ip, (unsigned long)entry + 3);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	okp_t_unregister(p);
}

/* C function: its entry is the ftrace call site, served through ftrace. */
static void okp_kprobe_args_ftrace(struct kunit *test)
{
	struct okp_t_probe *p = okp_t_new(test, 1, NULL, "okp_t_c_args", 0, true, true);
	long r;

	p->read_args = true;
	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_FTRACE, (unsigned int)OKP_KPROBE_FLAG_FTRACE);
	KUNIT_EXPECT_TRUE(test, okp_kprobe_ftrace(&p->kp));
	KUNIT_EXPECT_PTR_EQ(test, (const u8 *)p->kp.addr, okp_t_entry(okp_t_c_args));
	r = okp_t_c_args_ptr(okp_t_argv[0], okp_t_argv[1], okp_t_argv[2], okp_t_argv[3],
			     okp_t_argv[4], okp_t_argv[5], okp_t_argv[6], okp_t_argv[7]);
	KUNIT_EXPECT_EQ(test, r, okp_t_args_expect());
	okp_t_check_args(test, p);
	/* The kprobes convention: pre as after an int3, post as after the 5-byte call. */
	KUNIT_EXPECT_EQ(test, p->obs.pre_ip, (unsigned long)p->kp.addr + 1);
	KUNIT_EXPECT_EQ(test, p->obs.post_calls, 1U);
	KUNIT_EXPECT_EQ(test, p->obs.post_ip, (unsigned long)p->kp.addr + 5);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	okp_t_unregister(p);
	okp_t_c_args_ptr(1, 2, 3, 4, 5, 6, 7, 8);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
}

/* --- Aggregates: several probes at one address. --- */

static void okp_t_expect_order(struct kunit *test, const int *want, unsigned int n)
{
	unsigned int i;

	KUNIT_EXPECT_EQ(test, okp_t_norder, n);
	for (i = 0; i < n && i < okp_t_norder; i++)
		KUNIT_EXPECT_EQ_MSG(test, okp_t_order[i], want[i], "handler %u", i);
	okp_t_norder = 0;
}

/*
 * An ftrace site walks its post handlers only while one of its probes has one (the site's
 * ftrace_post): a probe with a post_handler added to a live site without one gets it run from
 * its first hit, and the walk stops again once it is gone.
 */
static void okp_kprobe_ftrace_aggregate_post(struct kunit *test)
{
	struct okp_t_probe *a = okp_t_new(test, 1, NULL, "okp_t_c_orig", 0, true, false);
	struct okp_t_probe *b = okp_t_new(test, 2, NULL, "okp_t_c_orig", 0, true, true);
	static const int pre_only[] = { 11 };
	static const int both[] = { 11, 21, 22 };

	KUNIT_ASSERT_EQ(test, okp_t_register(a), 0);
	KUNIT_EXPECT_EQ(test, a->kp.flags & OKP_KPROBE_FLAG_FTRACE, (unsigned int)OKP_KPROBE_FLAG_FTRACE);
	okp_t_norder = 0;
	KUNIT_EXPECT_EQ(test, okp_t_c_orig_ptr(3), 4L);
	okp_t_expect_order(test, pre_only, ARRAY_SIZE(pre_only));
	KUNIT_ASSERT_EQ(test, okp_t_register(b), 0);
	KUNIT_EXPECT_EQ(test, okp_t_c_orig_ptr(3), 4L);
	okp_t_expect_order(test, both, ARRAY_SIZE(both));
	KUNIT_EXPECT_EQ(test, b->obs.post_calls, 1U);
	KUNIT_EXPECT_EQ(test, b->obs.post_ip, (unsigned long)b->kp.addr + 5);
	okp_t_unregister(b);
	KUNIT_EXPECT_EQ(test, okp_t_c_orig_ptr(3), 4L);
	okp_t_expect_order(test, pre_only, ARRAY_SIZE(pre_only));
	KUNIT_EXPECT_EQ(test, a->kp.nhit, 3UL);
	okp_t_unregister(a);
}

static void okp_kprobe_aggregate_order(struct kunit *test)
{
	const u8 *insn = okp_t_riprel_load_insn;
	u8 orig = okp_t_byte(insn);
	struct okp_t_probe *p[3];
	static const int all[] = { 11, 21, 31, 12, 22, 32 };
	static const int no_middle[] = { 11, 31, 12, 32 };
	static const int readded[] = { 11, 31, 21, 12, 32, 22 };
	static const int last_two[] = { 31, 21, 32, 22 };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		p[i] = okp_t_new(test, i + 1, insn, NULL, 0, true, true);
		KUNIT_ASSERT_EQ(test, okp_t_register(p[i]), 0);
	}
	okp_t_norder = 0;
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(1, 0), 1 + OKP_T_DATA);
	okp_t_expect_order(test, all, ARRAY_SIZE(all));
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(2, 0), 2 + OKP_T_DATA);
	okp_t_expect_order(test, all, ARRAY_SIZE(all));
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, p[i]->kp.nhit, 2UL);
		KUNIT_EXPECT_EQ(test, p[i]->obs.pre_calls, 2U);
		KUNIT_EXPECT_EQ(test, p[i]->obs.post_calls, 2U);
		KUNIT_EXPECT_EQ(test, p[i]->obs.post_ip, (unsigned long)okp_t_riprel_load_next);
	}

	/* Remove the middle one: the others keep counting, in order. */
	okp_t_unregister(p[1]);
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), (u8)OKP_T_INT3);
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(3, 0), 3 + OKP_T_DATA);
	okp_t_expect_order(test, no_middle, ARRAY_SIZE(no_middle));
	KUNIT_EXPECT_EQ(test, p[0]->kp.nhit, 3UL);
	KUNIT_EXPECT_EQ(test, p[1]->kp.nhit, 2UL);
	KUNIT_EXPECT_EQ(test, p[2]->kp.nhit, 3UL);

	/* Registered again, it comes last and counts from zero. */
	KUNIT_ASSERT_EQ(test, okp_t_register(p[1]), 0);
	KUNIT_EXPECT_EQ(test, p[1]->kp.nhit, 0UL);
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(4, 0), 4 + OKP_T_DATA);
	okp_t_expect_order(test, readded, ARRAY_SIZE(readded));
	KUNIT_EXPECT_EQ(test, p[0]->kp.nhit, 4UL);
	KUNIT_EXPECT_EQ(test, p[1]->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p[2]->kp.nhit, 4UL);

	/* Remove the first one (the head of the list). */
	okp_t_unregister(p[0]);
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(5, 0), 5 + OKP_T_DATA);
	okp_t_expect_order(test, last_two, ARRAY_SIZE(last_two));
	KUNIT_EXPECT_EQ(test, p[0]->kp.nhit, 4UL);
	KUNIT_EXPECT_EQ(test, p[1]->kp.nhit, 2UL);
	KUNIT_EXPECT_EQ(test, p[2]->kp.nhit, 5UL);

	okp_t_unregister(p[2]);
	okp_t_unregister(p[1]);
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), orig);
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(6, 0), 6 + OKP_T_DATA);
	KUNIT_EXPECT_EQ(test, okp_t_norder, 0U);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, p[i]->kp.nmissed, 0UL);
}

/* An aggregate of a probe without post_handler and one with: the site is stepped. */
static void okp_kprobe_aggregate_mixed(struct kunit *test)
{
	struct okp_t_probe *a = okp_t_new(test, 1, okp_t_push_rsp_insn, NULL, 0, true, false);
	struct okp_t_probe *b = okp_t_new(test, 2, okp_t_push_rsp_insn, NULL, 0, false, true);
	static const int order[] = { 11, 22 };

	KUNIT_ASSERT_EQ(test, okp_t_register(a), 0);
	KUNIT_EXPECT_STREQ_MSG(test, okp_t_breakpoint_reason(okp_kprobe_reason(&a->kp)), "",
			       "reason: '%s'", okp_kprobe_reason(&a->kp));
	KUNIT_ASSERT_EQ(test, okp_t_register(b), 0);
	okp_t_norder = 0;
	KUNIT_EXPECT_EQ(test, okp_t_push_rsp(4, 0), 18L);
	okp_t_expect_order(test, order, ARRAY_SIZE(order));
	KUNIT_EXPECT_EQ(test, a->kp.nhit, 1UL);
	/* A probe without pre_handler counts its hits too. */
	KUNIT_EXPECT_EQ(test, b->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, b->obs.post_ip, (unsigned long)okp_t_push_rsp_next);
	/* Without the post_handler, the site is boosted again. */
	okp_t_unregister(b);
	KUNIT_EXPECT_EQ(test, okp_t_push_rsp(5, 0), 20L);
	okp_t_expect_order(test, order, 1);
	KUNIT_EXPECT_EQ(test, a->kp.nhit, 2UL);
	okp_t_unregister(a);
}

/* --- Enable and disable. --- */

static void okp_kprobe_disable_single(struct kunit *test)
{
	const u8 *insn = okp_t_riprel_load_insn;
	u8 orig = okp_t_byte(insn);
	struct okp_t_probe *p = okp_t_new(test, 1, insn, NULL, 0, true, false);

	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	okp_t_riprel_load(1, 0);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);

	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&p->kp), 0);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_DISABLED,
			(unsigned int)OKP_KPROBE_FLAG_DISABLED);
	KUNIT_EXPECT_TRUE(test, okp_kprobe_disabled(&p->kp));
	KUNIT_EXPECT_FALSE(test, okp_kprobe_gone(&p->kp));
	/* Alone and disabled: the breakpoint is gone, nothing is counted. */
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), orig);
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(2, 0), 2 + OKP_T_DATA);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 1U);

	KUNIT_EXPECT_EQ(test, okp_enable_kprobe(&p->kp), 0);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_DISABLED, 0U);
	KUNIT_EXPECT_FALSE(test, okp_kprobe_disabled(&p->kp));
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), (u8)OKP_T_INT3);
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(3, 0), 3 + OKP_T_DATA);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 2UL);
	KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 2U);
	okp_t_unregister(p);

	/* Not registered: refused. */
	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&p->kp), -EINVAL);
	KUNIT_EXPECT_EQ(test, okp_enable_kprobe(&p->kp), -EINVAL);
	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(NULL), -EINVAL);

	/* Registered disabled: not armed until enabled. */
	p->kp.flags = OKP_KPROBE_FLAG_DISABLED;
	okp_t_reset(p);
	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), orig);
	okp_t_riprel_load(4, 0);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 0UL);
	KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 0U);
	KUNIT_EXPECT_EQ(test, okp_enable_kprobe(&p->kp), 0);
	okp_t_riprel_load(5, 0);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 1U);
	okp_t_unregister(p);
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), orig);
}

static void okp_kprobe_disable_aggregate(struct kunit *test)
{
	const u8 *insn = okp_t_call_insn;
	u8 orig = okp_t_byte(insn);
	struct okp_t_probe *a = okp_t_new(test, 1, insn, NULL, 0, true, true);
	struct okp_t_probe *b = okp_t_new(test, 2, insn, NULL, 0, true, true);
	static const int only_a[] = { 11, 12 };
	static const int only_b[] = { 21, 22 };

	KUNIT_ASSERT_EQ(test, okp_t_register(a), 0);
	KUNIT_ASSERT_EQ(test, okp_t_register(b), 0);
	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&b->kp), 0);
	okp_t_norder = 0;
	KUNIT_EXPECT_EQ(test, okp_t_call(1, 0), 15L);
	okp_t_expect_order(test, only_a, ARRAY_SIZE(only_a));
	KUNIT_EXPECT_EQ(test, okp_t_call(2, 0), 18L);
	okp_t_expect_order(test, only_a, ARRAY_SIZE(only_a));
	KUNIT_EXPECT_EQ(test, a->kp.nhit, 2UL);
	KUNIT_EXPECT_EQ(test, b->kp.nhit, 0UL);
	KUNIT_EXPECT_EQ(test, b->kp.nmissed, 2UL);
	KUNIT_EXPECT_EQ(test, b->kp.nmissed_by[OKP_MISS_DISABLED], 2UL);
	KUNIT_EXPECT_EQ(test, a->kp.nmissed, 0UL);

	/* Both disabled: disarmed, so not even a miss is counted. */
	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&a->kp), 0);
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), orig);
	KUNIT_EXPECT_EQ(test, okp_t_call(3, 0), 21L);
	KUNIT_EXPECT_EQ(test, okp_t_norder, 0U);
	KUNIT_EXPECT_EQ(test, a->kp.nmissed, 0UL);
	KUNIT_EXPECT_EQ(test, b->kp.nmissed, 2UL);

	/* b enabled alone. */
	KUNIT_EXPECT_EQ(test, okp_enable_kprobe(&b->kp), 0);
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), (u8)OKP_T_INT3);
	KUNIT_EXPECT_EQ(test, okp_t_call(4, 0), 24L);
	okp_t_expect_order(test, only_b, ARRAY_SIZE(only_b));
	KUNIT_EXPECT_EQ(test, a->kp.nhit, 2UL);
	KUNIT_EXPECT_EQ(test, a->kp.nmissed_by[OKP_MISS_DISABLED], 1UL);
	KUNIT_EXPECT_EQ(test, b->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, b->kp.nmissed_by[OKP_MISS_DISABLED], 2UL);
	KUNIT_EXPECT_EQ(test, b->kp.nmissed_by[OKP_MISS_REENTRY], 0UL);

	okp_t_unregister(a);
	okp_t_unregister(b);
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), orig);
}

/* --- Batch registration. --- */

static void okp_kprobe_batch(struct kunit *test)
{
	struct okp_t_probe *p1 = okp_t_new(test, 1, okp_t_riprel_load_insn, NULL, 0, true, false);
	struct okp_t_probe *p2 = okp_t_new(test, 2, okp_t_jmp8_insn, NULL, 0, true, false);
	struct okp_t_probe *bad = okp_t_new(test, 3, NULL, "okp_t_no_such_function", 0, true, false);
	struct okp_t_probe *p4 = okp_t_new(test, 4, okp_t_call_insn, NULL, 0, true, false);
	struct okp_kprobe *kps[] = { &p1->kp, &p2->kp, &bad->kp, &p4->kp };
	struct okp_kprobe *good[] = { &p1->kp, &p2->kp, &p4->kp };
	u8 orig1 = okp_t_byte(okp_t_riprel_load_insn), orig2 = okp_t_byte(okp_t_jmp8_insn);
	unsigned int i;

	KUNIT_EXPECT_EQ(test, okp_register_kprobes(kps, ARRAY_SIZE(kps)), -ENOENT);
	KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(okp_kprobe_reason(&bad->kp), "okp_t_no_such_function"),
			      "reason: '%s'", okp_kprobe_reason(&bad->kp));
	/* The two before it were unregistered: text back, no hits, not registered. */
	KUNIT_EXPECT_EQ(test, okp_t_byte(okp_t_riprel_load_insn), orig1);
	KUNIT_EXPECT_EQ(test, okp_t_byte(okp_t_jmp8_insn), orig2);
	okp_t_riprel_load(1, 0);
	okp_t_jmp8(1, 0);
	okp_t_call(1, 0);
	KUNIT_EXPECT_EQ(test, p1->kp.nhit + p2->kp.nhit + p4->kp.nhit, 0UL);
	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&p2->kp), -EINVAL);
	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&p4->kp), -EINVAL);
	/* A second registration of the first entry is a first one, not -EEXIST. */
	KUNIT_EXPECT_EQ(test, okp_t_register(p1), 0);
	okp_t_riprel_load(1, 0);
	KUNIT_EXPECT_EQ(test, p1->kp.nhit, 1UL);
	okp_t_unregister(p1);

	/* All good: all registered, all hit, all unregistered. */
	KUNIT_ASSERT_EQ(test, okp_register_kprobes(good, ARRAY_SIZE(good)), 0);
	for (i = 0; i < ARRAY_SIZE(good); i++)
		okp_t_track(good[i], true);
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(2, 0), 2 + OKP_T_DATA);
	KUNIT_EXPECT_EQ(test, okp_t_jmp8(2, 0), 3L);
	KUNIT_EXPECT_EQ(test, okp_t_call(2, 0), 18L);
	KUNIT_EXPECT_EQ(test, p1->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p2->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p4->kp.nhit, 1UL);
	okp_unregister_kprobes(good, ARRAY_SIZE(good));
	for (i = 0; i < ARRAY_SIZE(good); i++)
		okp_t_track(good[i], false);
	KUNIT_EXPECT_EQ(test, okp_t_byte(okp_t_riprel_load_insn), orig1);
	KUNIT_EXPECT_EQ(test, okp_t_byte(okp_t_jmp8_insn), orig2);

	KUNIT_EXPECT_EQ(test, okp_register_kprobes(NULL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, okp_register_kprobes(good, 0), -EINVAL);

	/*
	 * A batch unregister (one grace period for all) that also names a probe that was
	 * never registered, a NULL and one probe twice: the registered ones go, nothing else
	 * is touched, the site of the repeated one is released once.
	 */
	{
		struct okp_kprobe *mixed[] = { &p1->kp, &bad->kp, NULL, &p2->kp, &p1->kp };

		KUNIT_ASSERT_EQ(test, okp_t_register(p1), 0);
		KUNIT_ASSERT_EQ(test, okp_t_register(p2), 0);
		okp_t_track(&p1->kp, false);
		okp_t_track(&p2->kp, false);
		okp_unregister_kprobes(mixed, ARRAY_SIZE(mixed));
		KUNIT_EXPECT_EQ(test, okp_t_byte(okp_t_riprel_load_insn), orig1);
		KUNIT_EXPECT_EQ(test, okp_t_byte(okp_t_jmp8_insn), orig2);
		okp_t_riprel_load(1, 0);
		okp_t_jmp8(1, 0);
		KUNIT_EXPECT_EQ(test, p1->kp.nhit + p2->kp.nhit, 0UL);
		/* Both addresses take a probe again: nothing of them was left behind. */
		KUNIT_EXPECT_EQ(test, okp_t_register(p1), 0);
		KUNIT_EXPECT_EQ(test, okp_t_register(p2), 0);
		okp_t_unregister(p1);
		okp_t_unregister(p2);
	}
}

/* --- Re-entry: a probe hit while a handler runs on this CPU. --- */

struct okp_t_reentry_case {
	const char *name;
	const u8 *insn;		/* the inner probe */
	long (*fn)(long a, long b);	/* the inner one, called from the outer handler */
	bool inner_post;
	bool from_post;		/* call it from the outer post_handler rather than pre */
	long a, expect;
};

static const struct okp_t_reentry_case okp_t_reentry_cases[] = {
	{ "boosted", okp_t_riprel_load_insn, okp_t_riprel_load, false, false, 5, 5 + OKP_T_DATA },
	{ "stepped (post_handler)", okp_t_riprel_load_insn, okp_t_riprel_load, true, false, 5,
	  5 + OKP_T_DATA },
	{ "not boostable (rdtsc)", okp_t_rdtsc_insn, okp_t_rdtsc, true, false, 5, 6 },
	{ "emulated (call rel32)", okp_t_call_insn, okp_t_call, true, false, 5, 27 },
	{ "from a post_handler", okp_t_riprel_load_insn, okp_t_riprel_load, true, true, 5,
	  5 + OKP_T_DATA },
};

static void okp_t_reentry_desc(const struct okp_t_reentry_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(okp_t_reentry, okp_t_reentry_cases, okp_t_reentry_desc);

static void okp_kprobe_reentry(struct kunit *test)
{
	const struct okp_t_reentry_case *c = test->param_value;
	struct okp_t_probe *outer = okp_t_new(test, 1, okp_t_skip_insn, NULL, 0, true, c->from_post);
	struct okp_t_probe *inner = okp_t_new(test, 2, c->insn, NULL, 0, true, c->inner_post);

	if (c->from_post)
		outer->post_call = c->fn;
	else
		outer->pre_call = c->fn;
	outer->call_arg = c->a;
	KUNIT_ASSERT_EQ(test, okp_t_register(outer), 0);
	KUNIT_ASSERT_EQ(test, okp_t_register(inner), 0);

	okp_t_norder = 0;
	KUNIT_EXPECT_EQ(test, okp_t_skip(1, 0), 1002L);
	KUNIT_EXPECT_EQ(test, outer->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, outer->kp.nmissed, 0UL);
	/* The inner instruction ran (right result), its handlers did not. */
	KUNIT_EXPECT_EQ(test, outer->obs.hook_result, c->expect);
	KUNIT_EXPECT_EQ(test, inner->kp.nhit, 0UL);
	KUNIT_EXPECT_EQ(test, inner->kp.nmissed, 1UL);
	KUNIT_EXPECT_EQ(test, inner->kp.nmissed_by[OKP_MISS_REENTRY], 1UL);
	KUNIT_EXPECT_EQ(test, inner->kp.nmissed_by[OKP_MISS_DISABLED], 0UL);
	KUNIT_EXPECT_EQ(test, inner->obs.pre_calls, 0U);
	KUNIT_EXPECT_EQ(test, inner->obs.post_calls, 0U);
	KUNIT_EXPECT_EQ(test, okp_t_norder, c->from_post ? 2U : 1U);

	/* Called directly, the inner probe hits normally. */
	KUNIT_EXPECT_EQ(test, c->fn(c->a, 0), c->expect);
	KUNIT_EXPECT_EQ(test, inner->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, inner->kp.nmissed, 1UL);
	KUNIT_EXPECT_EQ(test, inner->obs.pre_calls, 1U);
	KUNIT_EXPECT_EQ(test, inner->obs.post_calls, c->inner_post ? 1U : 0U);

	okp_t_unregister(inner);
	okp_t_unregister(outer);
}

/* --- Every CPU hitting boosted, stepped and emulated probes at once, interrupts off. --- */

#define OKP_T_CPU_CALLS 500

static void okp_t_on_cpu(void *arg)
{
	atomic_t *bad = arg;
	long i;

	for (i = 0; i < OKP_T_CPU_CALLS; i++) {
		if (okp_t_riprel_load(i, 0) != i + OKP_T_DATA)
			atomic_inc(bad);
		if (okp_t_push_rsp(i, 0) != 2 * i + 10)
			atomic_inc(bad);
		if (okp_t_jcc8(i, 0) != i + 1)
			atomic_inc(bad);
	}
}

static void okp_kprobe_all_cpus(struct kunit *test)
{
	static const u8 *const insns[] = { okp_t_riprel_load_insn, okp_t_push_rsp_insn,
					   okp_t_jcc8_insn };
	struct okp_t_probe *p[ARRAY_SIZE(insns)];
	unsigned int i, cpu, ncpus;
	atomic_t bad = ATOMIC_INIT(0);

	for (i = 0; i < ARRAY_SIZE(insns); i++) {
		/* The first boosted (no post_handler), the second stepped, the third emulated. */
		p[i] = okp_t_new(test, i + 1, insns[i], NULL, 0, true, i > 0);
		p[i]->cpu_pre = kunit_kcalloc(test, nr_cpu_ids, sizeof(unsigned int), GFP_KERNEL);
		p[i]->cpu_post = kunit_kcalloc(test, nr_cpu_ids, sizeof(unsigned int), GFP_KERNEL);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p[i]->cpu_pre);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p[i]->cpu_post);
		KUNIT_ASSERT_EQ(test, okp_t_register(p[i]), 0);
	}
	cpus_read_lock();
	ncpus = num_online_cpus();
	on_each_cpu(okp_t_on_cpu, &bad, 1);
	cpus_read_unlock();
	kunit_info(test, "%u CPUs, %u calls each\n", ncpus, OKP_T_CPU_CALLS);
	KUNIT_EXPECT_EQ(test, atomic_read(&bad), 0);
	for (i = 0; i < ARRAY_SIZE(insns); i++) {
		KUNIT_EXPECT_EQ(test, p[i]->kp.nhit, (unsigned long)ncpus * OKP_T_CPU_CALLS);
		KUNIT_EXPECT_EQ(test, p[i]->kp.nmissed, 0UL);
		for_each_online_cpu(cpu) {
			KUNIT_EXPECT_EQ_MSG(test, p[i]->cpu_pre[cpu], OKP_T_CPU_CALLS, "cpu %u", cpu);
			KUNIT_EXPECT_EQ_MSG(test, p[i]->cpu_post[cpu], i > 0 ? OKP_T_CPU_CALLS : 0,
					    "cpu %u", cpu);
		}
		okp_t_unregister(p[i]);
	}
}

/* --- A pre_handler that changes regs->ip and returns 1 skips the instruction. --- */

static void okp_kprobe_pre_handler_skips(struct kunit *test)
{
	struct okp_t_probe *skip = okp_t_new(test, 1, okp_t_skip_insn, NULL, 0, true, true);
	struct okp_t_probe *other = okp_t_new(test, 2, okp_t_skip_insn, NULL, 0, true, true);
	static const int skip_only[] = { 11 };
	static const int other_first[] = { 21, 11 };

	KUNIT_ASSERT_EQ(test, okp_t_skip(4, 0), 1005L);
	skip->redirect = (unsigned long)okp_t_skip_next;
	KUNIT_ASSERT_EQ(test, okp_t_register(skip), 0);
	KUNIT_EXPECT_EQ(test, okp_t_skip(4, 0), 5L);
	KUNIT_EXPECT_EQ(test, skip->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, skip->obs.pre_calls, 1U);
	/* The instruction did not run: no post_handler either. */
	KUNIT_EXPECT_EQ(test, skip->obs.post_calls, 0U);

	/* In an aggregate, the handlers after the redirecting one do not run. */
	KUNIT_ASSERT_EQ(test, okp_t_register(other), 0);
	okp_t_norder = 0;
	KUNIT_EXPECT_EQ(test, okp_t_skip(6, 0), 7L);
	okp_t_expect_order(test, skip_only, ARRAY_SIZE(skip_only));
	KUNIT_EXPECT_EQ(test, skip->kp.nhit, 2UL);
	KUNIT_EXPECT_EQ(test, other->kp.nhit, 0UL);
	KUNIT_EXPECT_EQ(test, other->obs.pre_calls, 0U);
	KUNIT_EXPECT_EQ(test, other->obs.post_calls, 0U);

	/* The ones before it do. */
	okp_t_unregister(skip);
	KUNIT_ASSERT_EQ(test, okp_t_register(skip), 0);
	KUNIT_EXPECT_EQ(test, okp_t_skip(6, 0), 7L);
	okp_t_expect_order(test, other_first, ARRAY_SIZE(other_first));
	KUNIT_EXPECT_EQ(test, other->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, skip->kp.nhit, 1UL);
	okp_t_unregister(skip);
	okp_t_unregister(other);
	KUNIT_EXPECT_EQ(test, okp_t_skip(4, 0), 1005L);
}

/*
 * On an ftrace site a redirect (non-zero return) is obeyed with or without
 * OKP_KPROBE_FLAG_IPMODIFY, as the kernel's kprobes obey it; the flag only takes ftrace's
 * exclusive IPMODIFY right, which an aggregate must agree on.
 */
static void okp_kprobe_ftrace_ipmodify(struct kunit *test)
{
	struct okp_t_probe *p = okp_t_new(test, 1, NULL, "okp_t_c_orig", 0, true, true);
	struct okp_t_probe *q = okp_t_new(test, 2, NULL, "okp_t_c_orig", 0, true, false);

	KUNIT_ASSERT_EQ(test, okp_t_c_orig_ptr(3), 4L);
	p->redirect = (unsigned long)okp_t_c_alt;
	p->kp.flags = OKP_KPROBE_FLAG_IPMODIFY;
	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_FTRACE, (unsigned int)OKP_KPROBE_FLAG_FTRACE);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_ON_FUNC_ENTRY,
			(unsigned int)OKP_KPROBE_FLAG_ON_FUNC_ENTRY);
	KUNIT_EXPECT_EQ(test, okp_t_c_orig_ptr(3), 300L);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	KUNIT_EXPECT_EQ(test, p->obs.post_calls, 0U);

	/* An aggregate must agree on IPMODIFY. */
	KUNIT_EXPECT_EQ(test, okp_t_register(q), -EBUSY);
	KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(okp_kprobe_reason(&q->kp), "IPMODIFY"),
			      "reason: '%s'", okp_kprobe_reason(&q->kp));
	okp_t_unregister(p);
	KUNIT_EXPECT_EQ(test, okp_t_c_orig_ptr(3), 4L);

	/* Without IPMODIFY (a module ported from kprobes): the redirect is obeyed all the same. */
	p->kp.flags = 0;
	p->kp.addr = NULL;
	okp_t_reset(p);
	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	KUNIT_EXPECT_EQ(test, okp_t_c_orig_ptr(3), 300L);
	KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 1U);
	KUNIT_EXPECT_EQ(test, p->obs.post_calls, 0U);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	okp_t_unregister(p);
	KUNIT_EXPECT_EQ(test, okp_t_c_orig_ptr(3), 4L);
}

/* A probe placed after an armed one in the same function: the decode sees through ours. */
static void okp_kprobe_after_armed_probe(struct kunit *test)
{
	const u8 *entry = okp_t_entry(okp_t_args);
	struct okp_t_probe *first = okp_t_new(test, 1, NULL, "okp_t_args", 0, true, false);
	/* movq %rdi, %rax is 3 bytes; the lea after it is the second probe. */
	struct okp_t_probe *second = okp_t_new(test, 2, NULL, "okp_t_args",
					       entry + 3 - (const u8 *)okp_t_args, true, true);
	struct okp_t_probe *mid = okp_t_new(test, 3, NULL, "okp_t_args",
					    entry + 4 - (const u8 *)okp_t_args, true, false);
	long r;

	KUNIT_ASSERT_EQ(test, okp_t_register(first), 0);
	KUNIT_ASSERT_EQ(test, okp_t_byte(entry), (u8)OKP_T_INT3);
	KUNIT_ASSERT_EQ(test, okp_t_register(second), 0);
	KUNIT_EXPECT_PTR_EQ(test, (const u8 *)second->kp.addr, entry + 3);
	KUNIT_EXPECT_EQ(test, second->kp.flags & OKP_KPROBE_FLAG_ON_FUNC_ENTRY, 0U);
	/* And a mid-instruction address behind it is still found out. */
	KUNIT_EXPECT_EQ(test, okp_t_register(mid), -EILSEQ);
	r = okp_t_args(okp_t_argv[0], okp_t_argv[1], okp_t_argv[2], okp_t_argv[3], okp_t_argv[4],
		       okp_t_argv[5], okp_t_argv[6], okp_t_argv[7]);
	KUNIT_EXPECT_EQ(test, r, okp_t_args_expect());
	KUNIT_EXPECT_EQ(test, first->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, second->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, second->obs.post_ip, (unsigned long)entry + 7);
	okp_t_unregister(first);
	okp_t_unregister(second);
}

static struct kunit_case okp_kprobe_cases[] = {
	KUNIT_CASE(okp_kprobe_args_breakpoint),
	KUNIT_CASE(okp_kprobe_args_ftrace),
	KUNIT_CASE(okp_kprobe_ftrace_aggregate_post),
	KUNIT_CASE(okp_kprobe_aggregate_order),
	KUNIT_CASE(okp_kprobe_aggregate_mixed),
	KUNIT_CASE(okp_kprobe_disable_single),
	KUNIT_CASE(okp_kprobe_disable_aggregate),
	KUNIT_CASE(okp_kprobe_batch),
	KUNIT_CASE_PARAM(okp_kprobe_reentry, okp_t_reentry_gen_params),
	KUNIT_CASE(okp_kprobe_all_cpus),
	KUNIT_CASE(okp_kprobe_pre_handler_skips),
	KUNIT_CASE(okp_kprobe_ftrace_ipmodify),
	KUNIT_CASE(okp_kprobe_after_armed_probe),
	{}
};

static struct kunit_suite okp_kprobe_suite = {
	.name = "okprobes_kprobe",
	.init = okp_t_suite_init,
	.exit = okp_t_suite_exit,
	.test_cases = okp_kprobe_cases,
};
kunit_test_suites(&okp_kprobe_suite);
