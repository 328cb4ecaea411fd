// SPDX-License-Identifier: GPL-2.0
/*
 * Suite "okprobes_optimize": handlers on optimized probes. A post_handler runs from the detour
 * (alone, or joining an optimized site); a pre_handler may redirect; two probes share one
 * optimized address; an optimized probe is disabled and enabled.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"
#include "okp_optimize_kunit.h"

/*
 * --- A post_handler runs from the detour: after the copy's first instruction, with the
 * registers it left and ip at the original next instruction. ---
 */

void okprobes_optimize_post_handler(struct kunit *test)
{
	/* okp_ot_alu's region: mov %rdi,%rax (3 bytes); shl $4,%rax. */
	const u8 *addr = okp_ot_at(okp_ot_alu, okp_ot_alu_site.probe);
	struct okp_ot_probe *p = okp_ot_new(test, 1, addr, true);
	unsigned int i;

	KUNIT_ASSERT_EQ(test, okp_ot_register(p), 0);
	okp_wait_for_optimizer();
	OKP_OT_ASSERT_OPTIMIZED(test, p);
	KUNIT_EXPECT_EQ(test, okp_t_byte(addr), (u8)0xe9);
	for (i = 0; i < ARRAY_SIZE(okp_ot_inputs); i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		okp_ot_clear(p);
		KUNIT_EXPECT_EQ_MSG(test, okp_ot_alu(a, b), okp_ot_expect_alu(a, b), "f(%ld, %ld)",
				    a, b);
		okp_ot_expect_regs(test, p, a, b);
		KUNIT_EXPECT_EQ_MSG(test, p->post_hits, 1U, "f(%ld, %ld)", a, b);
		KUNIT_EXPECT_EQ_MSG(test, p->post_ip, (unsigned long)addr + 3, "f(%ld, %ld)", a, b);
		KUNIT_EXPECT_EQ_MSG(test, (long)p->post_ax, a, "f(%ld, %ld): mov %%rdi,%%rax ran", a, b);
		KUNIT_EXPECT_EQ_MSG(test, p->post_flags & OKP_T_IF, OKP_T_IF, "f(%ld, %ld)", a, b);
	}
	okp_ot_unregister(p);
}

/*
 * A probe with a post_handler joining an optimized site: the site's detour is planned anew
 * with the post entry (the post_handler runs on every call, even meanwhile), and again without
 * it once the post_handler leaves.
 */
void okprobes_optimize_post_handler_joins(struct kunit *test)
{
	const u8 *addr = okp_ot_at(okp_ot_riprel_load, okp_ot_riprel_load_site.probe);
	struct okp_ot_probe *opt = okp_ot_new(test, 1, addr, false);
	struct okp_ot_probe *post = okp_ot_new(test, 2, addr, true);
	const unsigned int n = ARRAY_SIZE(okp_ot_inputs);
	unsigned int i;

	KUNIT_ASSERT_EQ(test, okp_ot_register(opt), 0);
	okp_wait_for_optimizer();
	OKP_OT_ASSERT_OPTIMIZED(test, opt);

	KUNIT_ASSERT_EQ(test, okp_ot_register(post), 0);
	/* Before the optimizer ran again: the breakpoint serves the post_handler. */
	KUNIT_EXPECT_EQ(test, okp_ot_riprel_load(1, 2), okp_ot_expect_riprel_load(1, 2));
	KUNIT_EXPECT_EQ(test, post->post_hits, 1U);
	okp_wait_for_optimizer();
	OKP_OT_EXPECT_OPTIMIZED(test, opt);
	OKP_OT_EXPECT_OPTIMIZED(test, post);
	okp_ot_clear(opt);
	okp_ot_clear(post);
	for (i = 0; i < n; i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		KUNIT_EXPECT_EQ_MSG(test, okp_ot_riprel_load(a, b), okp_ot_expect_riprel_load(a, b),
				    "f(%ld, %ld)", a, b);
	}
	KUNIT_EXPECT_EQ(test, opt->hits, n);
	KUNIT_EXPECT_EQ(test, post->hits, n);
	KUNIT_EXPECT_EQ(test, post->post_hits, n);

	okp_ot_unregister(post);
	okp_wait_for_optimizer();
	OKP_OT_EXPECT_OPTIMIZED(test, opt);
	okp_ot_clear(opt);
	KUNIT_EXPECT_EQ(test, okp_ot_riprel_load(1, 2), okp_ot_expect_riprel_load(1, 2));
	okp_ot_expect_regs(test, opt, 1, 2);
	okp_ot_unregister(opt);
}

/* --- A pre_handler that changes regs->ip and returns 1: the region is skipped. --- */

void okprobes_optimize_redirect(struct kunit *test)
{
	const u8 *addr = okp_ot_at(okp_ot_skip, okp_ot_skip_site.probe);
	const unsigned long skip_to = (unsigned long)okp_ot_at(okp_ot_skip, okp_ot_skip_to_off);
	struct okp_ot_probe *p = okp_ot_new(test, 1, addr, false);
	unsigned int i;

	p->redirect = skip_to;
	KUNIT_ASSERT_EQ(test, okp_ot_register(p), 0);
	okp_wait_for_optimizer();
	OKP_OT_ASSERT_OPTIMIZED(test, p);
	for (i = 0; i < ARRAY_SIZE(okp_ot_inputs); i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		okp_ot_clear(p);
		/* add $1000 (the region) and add b after it skipped; r11 still checked. */
		KUNIT_EXPECT_EQ_MSG(test, okp_ot_skip(a, b), a + 1, "f(%ld, %ld)", a, b);
		okp_ot_expect_regs(test, p, a, b);
	}

	/* The same detour, the handler no longer redirecting: the region runs again. */
	WRITE_ONCE(p->redirect, 0);
	KUNIT_EXPECT_EQ(test, okp_ot_skip(4, 5), okp_ot_expect_skip(4, 5));
	KUNIT_EXPECT_EQ(test, p->kp.nhit, (unsigned long)ARRAY_SIZE(okp_ot_inputs) + 1);
	okp_ot_unregister(p);
	KUNIT_EXPECT_EQ(test, okp_ot_skip(4, 5), okp_ot_expect_skip(4, 5));
}

/* --- Two probes at one optimized address. --- */

void okprobes_optimize_aggregate(struct kunit *test)
{
	const u8 *addr = okp_ot_at(okp_ot_alu, okp_ot_alu_site.probe);
	struct okp_ot_probe *first = okp_ot_new(test, 1, addr, false);
	struct okp_ot_probe *second = okp_ot_new(test, 2, addr, false);
	const unsigned int n = ARRAY_SIZE(okp_ot_inputs);
	unsigned int i;

	KUNIT_ASSERT_EQ(test, okp_ot_register(first), 0);
	okp_wait_for_optimizer();
	OKP_OT_ASSERT_OPTIMIZED(test, first);

	/* Joining an optimized site: counted at once, before the optimizer runs again. */
	KUNIT_ASSERT_EQ(test, okp_ot_register(second), 0);
	KUNIT_EXPECT_EQ(test, okp_ot_alu(1, 2), okp_ot_expect_alu(1, 2));
	KUNIT_EXPECT_EQ(test, first->hits, 1U);
	KUNIT_EXPECT_EQ(test, second->hits, 1U);

	okp_wait_for_optimizer();
	OKP_OT_ASSERT_OPTIMIZED(test, first);
	OKP_OT_ASSERT_OPTIMIZED(test, second);
	for (i = 0; i < n; i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		okp_ot_clear(first);
		okp_ot_clear(second);
		okp_ot_norder = 0;
		KUNIT_EXPECT_EQ_MSG(test, okp_ot_alu(a, b), okp_ot_expect_alu(a, b), "f(%ld, %ld)",
				    a, b);
		okp_ot_expect_regs(test, first, a, b);
		okp_ot_expect_regs(test, second, a, b);
		/* In registration order. */
		KUNIT_EXPECT_EQ(test, okp_ot_norder, 2U);
		KUNIT_EXPECT_EQ(test, okp_ot_order[0], 11);
		KUNIT_EXPECT_EQ(test, okp_ot_order[1], 21);
	}
	KUNIT_EXPECT_EQ(test, first->kp.nhit, (unsigned long)n + 1);
	KUNIT_EXPECT_EQ(test, second->kp.nhit, (unsigned long)n + 1);

	/* The first leaves: the second stays optimized and alone counts. */
	okp_ot_unregister(first);
	okp_wait_for_optimizer();
	OKP_OT_EXPECT_OPTIMIZED(test, second);
	okp_ot_clear(second);
	KUNIT_EXPECT_EQ(test, okp_ot_alu(3, 4), okp_ot_expect_alu(3, 4));
	okp_ot_expect_regs(test, second, 3, 4);
	KUNIT_EXPECT_EQ(test, first->kp.nhit, (unsigned long)n + 1);
	okp_ot_unregister(second);
}

/* --- Disable and enable an optimized probe. --- */

void okprobes_optimize_disable_enable(struct kunit *test)
{
	const u8 *addr = okp_ot_at(okp_ot_alu, okp_ot_alu_site.probe);
	struct okp_ot_probe *p = okp_ot_new(test, 1, addr, false);
	unsigned int i;

	KUNIT_ASSERT_EQ(test, okp_ot_register(p), 0);
	okp_wait_for_optimizer();
	OKP_OT_ASSERT_OPTIMIZED(test, p);
	KUNIT_EXPECT_EQ(test, okp_ot_alu(1, 2), okp_ot_expect_alu(1, 2));
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);

	/* Disabled: nothing counts, whatever the site is now. */
	KUNIT_ASSERT_EQ(test, okp_disable_kprobe(&p->kp), 0);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_DISABLED,
			(unsigned int)OKP_KPROBE_FLAG_DISABLED);
	for (i = 0; i < ARRAY_SIZE(okp_ot_inputs); i++) {
		long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

		KUNIT_EXPECT_EQ_MSG(test, okp_ot_alu(a, b), okp_ot_expect_alu(a, b),
				    "disabled f(%ld, %ld)", a, b);
	}
	okp_wait_for_optimizer();
	KUNIT_EXPECT_EQ(test, okp_ot_alu(1, 2), okp_ot_expect_alu(1, 2));
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p->hits, 1U);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);

	/* Enabled: counted at once, and optimized again once the optimizer ran. */
	KUNIT_ASSERT_EQ(test, okp_enable_kprobe(&p->kp), 0);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_DISABLED, 0U);
	KUNIT_EXPECT_EQ(test, okp_ot_alu(3, 4), okp_ot_expect_alu(3, 4));
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 2UL);
	okp_wait_for_optimizer();
	OKP_OT_EXPECT_OPTIMIZED(test, p);
	okp_ot_clear(p);
	KUNIT_EXPECT_EQ(test, okp_ot_alu(5, 6), okp_ot_expect_alu(5, 6));
	okp_ot_expect_regs(test, p, 5, 6);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 3UL);
	okp_ot_unregister(p);
}
