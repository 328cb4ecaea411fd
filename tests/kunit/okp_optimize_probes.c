// SPDX-License-Identifier: GPL-2.0
/*
 * Suite "okprobes_optimize": the probes its cases register, whose handlers record what they
 * saw (registers, stack, flags, interrupt and preemption state, the order they ran in), and
 * what a pre_handler of an optimized probe must have seen.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"
#include "okp_optimize_kunit.h"

const struct okp_ot_input okp_ot_inputs[OKP_OT_NINPUTS] = {
	{ 3, 5 }, { 5, 3 }, { 4, 4 }, { -7, 2 }, { 2, -9 }, { 0, 0 }, { -3, -3 }, { 1000, 1 },
};

int okp_ot_order[OKP_OT_NORDER];
unsigned int okp_ot_norder;

static int okp_ot_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_ot_probe *p = container_of(kp, struct okp_ot_probe, kp);
	unsigned long redirect = READ_ONCE(p->redirect);

	if (p->quiet)
		return 0;
	p->hits++;
	p->ip = regs->ip;
	p->sp = regs->sp;
	p->di = regs->di;
	p->si = regs->si;
	p->r11 = regs->r11;
	p->flags = regs->flags;
	p->irqs_off = irqs_disabled();
	p->preempt = preempt_count();
	if (okp_ot_norder < ARRAY_SIZE(okp_ot_order))
		okp_ot_order[okp_ot_norder] = 10 * p->id + 1;
	okp_ot_norder++;
	if (redirect) {
		regs->ip = redirect;
		return 1;
	}
	return 0;
}

static void okp_ot_post(struct okp_kprobe *kp, struct pt_regs *regs, unsigned long flags)
{
	struct okp_ot_probe *p = container_of(kp, struct okp_ot_probe, kp);

	if (p->quiet)
		return;
	p->post_hits++;
	p->post_ip = regs->ip;
	p->post_ax = regs->ax;
	p->post_flags = regs->flags;
}

struct okp_ot_probe *okp_ot_new(struct kunit *test, int id, const u8 *addr, bool post)
{
	struct okp_ot_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	p->id = id;
	p->kp.addr = (okp_kprobe_opcode_t *)addr;
	p->kp.pre_handler = okp_ot_pre;
	p->kp.post_handler = post ? okp_ot_post : NULL;
	return p;
}

void okp_ot_clear(struct okp_ot_probe *p)
{
	p->hits = p->post_hits = 0;
	p->ip = p->sp = p->di = p->si = p->r11 = p->flags = 0;
	p->irqs_off = false;
	p->preempt = 0;
}

int okp_ot_register(struct okp_ot_probe *p)
{
	int ret = okp_register_kprobe(&p->kp);

	if (!ret)
		okp_t_track(&p->kp, true);
	return ret;
}

void okp_ot_unregister(struct okp_ot_probe *p)
{
	okp_t_track(&p->kp, false);
	okp_unregister_kprobe(&p->kp);
}

/*
 * What a pre_handler of an optimized probe must see on a call f(a, b): the int3 convention
 * for ip, the stack and registers of the probe address, the caller's interrupt state in the
 * saved flags (on), and the handler itself running with preemption off and interrupts as the
 * caller had them (on), as the kernel's optimized kprobes run theirs (docs/api.md).
 */
void okp_ot_expect_regs(struct kunit *test, const struct okp_ot_probe *p, long a, long b)
{
	KUNIT_EXPECT_EQ_MSG(test, p->hits, 1U, "f(%ld, %ld)", a, b);
	KUNIT_EXPECT_EQ_MSG(test, p->ip, (unsigned long)p->kp.addr + 1, "f(%ld, %ld)", a, b);
	KUNIT_EXPECT_EQ_MSG(test, p->sp, READ_ONCE(okp_ot_sp), "f(%ld, %ld)", a, b);
	KUNIT_EXPECT_EQ_MSG(test, (long)p->di, a, "f(%ld, %ld)", a, b);
	KUNIT_EXPECT_EQ_MSG(test, (long)p->si, b, "f(%ld, %ld)", a, b);
	KUNIT_EXPECT_EQ_MSG(test, p->r11, OKP_OT_MARK, "f(%ld, %ld)", a, b);
	KUNIT_EXPECT_EQ_MSG(test, p->flags & OKP_T_IF, OKP_T_IF, "f(%ld, %ld)", a, b);
	KUNIT_EXPECT_FALSE_MSG(test, p->irqs_off,
			       "f(%ld, %ld): handler ran with interrupts off, the caller had them on",
			       a, b);
	if (IS_ENABLED(CONFIG_PREEMPT_COUNT))
		KUNIT_EXPECT_NE_MSG(test, p->preempt & PREEMPT_MASK, 0U,
				    "f(%ld, %ld): handler ran preemptible", a, b);
}
