// SPDX-License-Identifier: GPL-2.0
/*
 * Suite "okprobes_optimize": each instruction class a region may hold (optimize_targets_x86.S),
 * optimized: the function computes the same result, the pre_handler sees the registers, stack
 * and flags of the probe address, and unregistering gives the text back. And a branch into the
 * region, which keeps the probe a breakpoint.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/version.h>
/* 6.12 moved the unaligned accessors from <asm/unaligned.h> to <linux/unaligned.h>. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"
#include "okp_optimize_kunit.h"

static void okp_ot_check_store(struct kunit *test, const struct okp_ot_case *c, long a, long b,
			       const struct okp_ot_probe *p)
{
	KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(okp_ot_store), a + 1, "f(%ld, %ld)", a, b);
}

/* The relocated call pushes the original return address: the helper returns past the region. */
static void okp_ot_check_call(struct kunit *test, const struct okp_ot_case *c, long a, long b,
			      const struct okp_ot_probe *p)
{
	KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(okp_ot_ret_addr),
			    (unsigned long)okp_ot_at(c->fn, c->site->end),
			    "f(%ld, %ld): the helper returned to %pS", a, b,
			    (void *)READ_ONCE(okp_ot_ret_addr));
}

/* The handler sees the flags of cmp b, a (a - b), computed before the probe. */
static void okp_ot_check_flags(struct kunit *test, const struct okp_ot_case *c, long a, long b,
			       const struct okp_ot_probe *p)
{
	unsigned long f;

	if (!p)
		return;
	f = p->flags;
	KUNIT_EXPECT_EQ_MSG(test, !!(f & OKP_T_ZF), a == b, "f(%ld, %ld): flags %#lx", a, b, f);
	KUNIT_EXPECT_EQ_MSG(test, !!(f & OKP_T_CF), (unsigned long)a < (unsigned long)b,
			    "f(%ld, %ld): flags %#lx", a, b, f);
	KUNIT_EXPECT_EQ_MSG(test, !(f & OKP_T_SF) != !(f & OKP_T_OF), a < b,
			    "f(%ld, %ld): flags %#lx", a, b, f);
}

#define OKP_OT_CASE(name_, target, ...)							\
	{ .name = name_, .fn = okp_ot_##target, .site = &okp_ot_##target##_site,	\
	  .expect = okp_ot_expect_##target, ##__VA_ARGS__ }

const struct okp_ot_case okp_ot_cases[OKP_OT_NCASES] = {
	OKP_OT_CASE("lea; add rip-relative", riprel_load),
	OKP_OT_CASE("lea; mov to rip-relative", riprel_store, .check = okp_ot_check_store,
		    .shared = true),
	OKP_OT_CASE("jl rel8 out of the region; sub", jcc),
	OKP_OT_CASE("lea; jmp rel8 out of the region", jmp8),
	OKP_OT_CASE("add; call as the last instruction", call, .check = okp_ot_check_call),
	OKP_OT_CASE("push; push; pop; pop; lea", push_pop),
	OKP_OT_CASE("cmp before; mov; setl; cmovg after", flags, .check = okp_ot_check_flags),
	OKP_OT_CASE("mov; shl", alu),
	OKP_OT_CASE("add imm32", skip),
};

void okp_ot_case_desc(const struct okp_ot_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

void okprobes_optimize_class(struct kunit *test)
{
	const struct okp_ot_case *c = test->param_value;
	const u8 *addr = okp_ot_at(c->fn, c->site->probe);
	const unsigned int len = c->site->end - c->site->probe;
	const unsigned int n = ARRAY_SIZE(okp_ot_inputs);
	u8 orig[OKP_OT_REGION_MAX];
	struct okp_ot_probe *p;
	unsigned long jmp_target;
	unsigned int i;

	/* The targets themselves: a region of at least the jump, off the function's entry. */
	KUNIT_ASSERT_GE(test, len, (unsigned int)OKP_OT_JMP_SIZE);
	KUNIT_ASSERT_LE(test, len, (unsigned int)sizeof(orig));
	KUNIT_ASSERT_TRUE(test, addr > okp_t_entry(c->fn));
	memcpy(orig, addr, len);
	KUNIT_ASSERT_NE(test, orig[0], (u8)OKP_T_INT3);
	for (i = 0; i < n; i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		KUNIT_EXPECT_EQ_MSG(test, c->fn(a, b), c->expect(a, b), "unprobed f(%ld, %ld)",
				    a, b);
		if (c->check)
			c->check(test, c, a, b, NULL);
	}

	p = okp_ot_new(test, 1, addr, false);
	KUNIT_ASSERT_EQ(test, okp_ot_register(p), 0);
	okp_wait_for_optimizer();
	OKP_OT_ASSERT_OPTIMIZED(test, p);
	/* The site is a jmp rel32 to a detour outside the region. */
	KUNIT_EXPECT_EQ(test, okp_t_byte(addr), (u8)OKP_OT_JMP32);
	jmp_target = (unsigned long)addr + OKP_OT_JMP_SIZE + get_unaligned((const s32 *)(addr + 1));
	KUNIT_EXPECT_TRUE_MSG(test, jmp_target < (unsigned long)addr ||
			      jmp_target >= (unsigned long)addr + len,
			      "the jump goes to %pS, inside the region", (void *)jmp_target);

	for (i = 0; i < n; i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		okp_ot_clear(p);
		KUNIT_EXPECT_EQ_MSG(test, c->fn(a, b), c->expect(a, b), "optimized f(%ld, %ld)",
				    a, b);
		okp_ot_expect_regs(test, p, a, b);
		if (c->check)
			c->check(test, c, a, b, p);
	}
	KUNIT_EXPECT_EQ(test, p->kp.nhit, (unsigned long)n);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);

	/* Unregistered: the region's bytes are back, the function still right, nothing counts. */
	okp_ot_unregister(p);
	KUNIT_EXPECT_EQ(test, memcmp(addr, orig, len), 0);
	for (i = 0; i < n; i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		KUNIT_EXPECT_EQ_MSG(test, c->fn(a, b), c->expect(a, b), "unregistered f(%ld, %ld)",
				    a, b);
	}
	KUNIT_EXPECT_EQ(test, p->kp.nhit, (unsigned long)n);
}

/* --- Branches into the region: the probe stays a breakpoint, and works as one. --- */

static void okp_ot_run_into_region(struct kunit *test, okp_ot_fn fn, const struct okp_ot_site *site)
{
	const u8 *addr = okp_ot_at(fn, site->probe);
	const unsigned int len = site->end - site->probe;
	unsigned int i, hits = 0;
	struct okp_ot_probe *p;
	u8 orig[OKP_OT_REGION_MAX];

	KUNIT_ASSERT_LE(test, len, (unsigned int)sizeof(orig));
	memcpy(orig, addr, len);
	p = okp_ot_new(test, 1, addr, false);
	KUNIT_ASSERT_EQ(test, okp_ot_register(p), 0);
	okp_wait_for_optimizer();
	/* Asserted before any call with b == 0, which would land inside the jmp rel32. */
	KUNIT_ASSERT_FALSE_MSG(test, okp_ot_optimized(p),
			       "%pS optimized although a jz lands inside its region", addr);
	KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(okp_kprobe_reason(&p->kp), "not optimized"),
			      "reason: '%s'", okp_kprobe_reason(&p->kp));
	kunit_info(test, "reason: '%s'\n", okp_kprobe_reason(&p->kp));
	KUNIT_EXPECT_EQ(test, okp_t_byte(addr), (u8)OKP_T_INT3);

	for (i = 0; i < ARRAY_SIZE(okp_ot_inputs); i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		okp_ot_clear(p);
		KUNIT_EXPECT_EQ_MSG(test, fn(a, b), okp_ot_expect_into_region(a, b), "f(%ld, %ld)",
				    a, b);
		/* b == 0 jumps past the probe. */
		KUNIT_EXPECT_EQ_MSG(test, p->hits, b ? 1U : 0U, "f(%ld, %ld)", a, b);
		if (b) {
			hits++;
			KUNIT_EXPECT_EQ_MSG(test, p->ip, (unsigned long)addr + 1, "f(%ld, %ld)",
					    a, b);
			KUNIT_EXPECT_EQ_MSG(test, (long)p->di, a, "f(%ld, %ld)", a, b);
			KUNIT_EXPECT_EQ_MSG(test, (long)p->si, b, "f(%ld, %ld)", a, b);
			KUNIT_EXPECT_EQ_MSG(test, p->sp, READ_ONCE(okp_ot_sp), "f(%ld, %ld)", a, b);
		}
	}
	KUNIT_EXPECT_EQ(test, p->kp.nhit, (unsigned long)hits);
	okp_ot_unregister(p);
	KUNIT_EXPECT_EQ(test, memcmp(addr, orig, len), 0);
}

void okprobes_optimize_branch_into_region(struct kunit *test)
{
	okp_ot_run_into_region(test, okp_ot_into_region, &okp_ot_into_region_site);
}

/*
 * The same branch, with a global label between it and the probe: kallsyms starts a symbol
 * at the probe, so a check of "the function" taken from kallsyms alone misses the jz.
 */
void okprobes_optimize_branch_into_region_past_label(struct kunit *test)
{
	okp_ot_run_into_region(test, okp_ot_into_region_past_label,
			       &okp_ot_into_region_past_label_site);
}

/*
 * --- A bounded jump table: the region check resolves its entries. ---
 * One probe whose region only entry 0 lands on (its first byte) is optimized, and the switch
 * computes the same for every value; one whose region entry 3 lands inside is refused, with
 * the entry named, and works as a breakpoint.
 */
void okprobes_optimize_jump_table(struct kunit *test)
{
	static const long bs[] = { 0, 5, -100 };
	const u8 *good = okp_ot_at(okp_ot_jump_table, okp_ot_jump_table_site.probe);
	const u8 *into = okp_ot_at(okp_ot_jump_table, okp_ot_jump_table_into_site.probe);
	const unsigned int good_len = okp_ot_jump_table_site.end - okp_ot_jump_table_site.probe;
	const unsigned int into_len =
		okp_ot_jump_table_into_site.end - okp_ot_jump_table_into_site.probe;
	u8 good_orig[OKP_OT_REGION_MAX], into_orig[OKP_OT_REGION_MAX];
	unsigned long good_hits = 0, into_hits = 0;
	struct okp_ot_probe *p, *q;
	unsigned int i;
	long a;

	KUNIT_ASSERT_GE(test, good_len, (unsigned int)OKP_OT_JMP_SIZE);
	KUNIT_ASSERT_GE(test, into_len, (unsigned int)OKP_OT_JMP_SIZE);
	KUNIT_ASSERT_LE(test, good_len, (unsigned int)sizeof(good_orig));
	KUNIT_ASSERT_LE(test, into_len, (unsigned int)sizeof(into_orig));
	memcpy(good_orig, good, good_len);
	memcpy(into_orig, into, into_len);
	for (a = -3; a <= 10; a++)
		for (i = 0; i < ARRAY_SIZE(bs); i++)
			KUNIT_EXPECT_EQ_MSG(test, okp_ot_jump_table(a, bs[i]),
					    okp_ot_expect_jump_table(a, bs[i]),
					    "unprobed f(%ld, %ld)", a, bs[i]);

	p = okp_ot_new(test, 1, good, false);
	q = okp_ot_new(test, 2, into, false);
	KUNIT_ASSERT_EQ(test, okp_ot_register(p), 0);
	KUNIT_ASSERT_EQ(test, okp_ot_register(q), 0);
	okp_wait_for_optimizer();
	OKP_OT_ASSERT_OPTIMIZED(test, p);
	KUNIT_EXPECT_EQ(test, okp_t_byte(good), (u8)OKP_OT_JMP32);
	/* Asserted before any call with a & 7 == 3, which would land inside the jmp rel32. */
	KUNIT_ASSERT_FALSE_MSG(test, okp_ot_optimized(q),
			       "%pS optimized although jump-table entry 3 lands inside its region",
			       into);
	KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(okp_kprobe_reason(&q->kp), "jump table at +0x") &&
			      okp_t_has(okp_kprobe_reason(&q->kp), "entry 3 targets") &&
			      okp_t_has(okp_kprobe_reason(&q->kp), "inside the region"),
			      "reason: '%s'", okp_kprobe_reason(&q->kp));
	kunit_info(test, "reason: '%s'\n", okp_kprobe_reason(&q->kp));
	KUNIT_EXPECT_EQ(test, okp_t_byte(into), (u8)OKP_T_INT3);

	for (a = -3; a <= 10; a++)
		for (i = 0; i < ARRAY_SIZE(bs); i++) {
			long b = bs[i];

			okp_ot_clear(p);
			okp_ot_clear(q);
			KUNIT_EXPECT_EQ_MSG(test, okp_ot_jump_table(a, b),
					    okp_ot_expect_jump_table(a, b), "probed f(%ld, %ld)",
					    a, b);
			KUNIT_EXPECT_EQ_MSG(test, p->hits, (a & 7) == 0 ? 1U : 0U, "f(%ld, %ld)", a, b);
			KUNIT_EXPECT_EQ_MSG(test, q->hits, (a & 7) == 2 ? 1U : 0U, "f(%ld, %ld)", a, b);
			if ((a & 7) == 0) {
				good_hits++;
				okp_ot_expect_regs(test, p, a, b);
			}
			if ((a & 7) == 2)
				into_hits++;
		}
	KUNIT_EXPECT_EQ(test, p->kp.nhit, good_hits);
	KUNIT_EXPECT_EQ(test, q->kp.nhit, into_hits);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);

	okp_ot_unregister(p);
	okp_ot_unregister(q);
	KUNIT_EXPECT_EQ(test, memcmp(good, good_orig, good_len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(into, into_orig, into_len), 0);
	for (a = -3; a <= 10; a++)
		KUNIT_EXPECT_EQ_MSG(test, okp_ot_jump_table(a, 1), okp_ot_expect_jump_table(a, 1),
				    "unregistered f(%ld, 1)", a);
}
