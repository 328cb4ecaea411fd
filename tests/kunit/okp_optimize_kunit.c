// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_optimize" (x86-64): jump optimization. A probe without post_handler
 * is armed as an int3, then replaced by a jmp rel32 to a detour once the optimizer ran
 * (okp_wait_for_optimizer() runs it now). Each instruction class a region may hold
 * (optimize_targets_x86.S) is probed there: the function computes the same result, the
 * pre_handler sees the registers, stack and flags of the probe address, and unregistering
 * gives the text back. Then what must not be optimized (a branch into the region, a
 * post_handler), a redirecting pre_handler, aggregates, disable/enable, and patching while
 * every CPU runs the targets.
 * Probes still registered when a case ends (an assertion failed) are unregistered by .exit.
 */
#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/minmax.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
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

/* --- The asm targets (optimize_targets_x86.S); see there for what each computes. --- */

/* Keep in sync with optimize_targets_x86.S. */
#define OKP_OT_MARK 0x1122334455667788UL	/* r11 at every probe */
#define OKP_OT_DATA 0x5eedL			/* okp_ot_data */

#define OKP_OT_JMP32 0xe9
#define OKP_OT_JMP_SIZE 5

/* Where a target's probe goes and where its region ends, as offsets from the function. */
struct okp_ot_site {
	u32 probe, end;
};

#define OKP_OT_TARGET(name)		\
	long okp_ot_##name(long a, long b);	\
	extern const struct okp_ot_site okp_ot_##name##_site

OKP_OT_TARGET(riprel_load);
OKP_OT_TARGET(riprel_store);
OKP_OT_TARGET(jcc);
OKP_OT_TARGET(jmp8);
OKP_OT_TARGET(call);
OKP_OT_TARGET(push_pop);
OKP_OT_TARGET(flags);
OKP_OT_TARGET(alu);
OKP_OT_TARGET(skip);
OKP_OT_TARGET(into_region);
OKP_OT_TARGET(into_region_past_label);

extern const u32 okp_ot_skip_to_off;
extern long okp_ot_store;
extern unsigned long okp_ot_sp, okp_ot_ret_addr;

typedef long (*okp_ot_fn)(long a, long b);

static const u8 *okp_ot_at(okp_ot_fn fn, u32 off)
{
	return (const u8 *)fn + off;
}

/* The inputs every target is called with: a < b, a > b, a == b, negatives, zeros. */
static const struct {
	long a, b;
} okp_ot_inputs[] = {
	{ 3, 5 }, { 5, 3 }, { 4, 4 }, { -7, 2 }, { 2, -9 }, { 0, 0 }, { -3, -3 }, { 1000, 1 },
};

/* --- Probes that record what their pre_handler saw. --- */

struct okp_ot_probe {
	struct okp_kprobe kp;
	int id;
	bool quiet;		/* the stress case: count nothing, record nothing */
	unsigned long redirect;	/* pre_handler: resume there and return 1 */
	/* What the handlers saw, the last hit. */
	unsigned int hits, post_hits;
	unsigned long ip, sp, di, si, r11, flags;
	unsigned long post_ip, post_ax, post_flags;	/* the post_handler's view */
	bool irqs_off;		/* irqs_disabled() in the pre_handler */
	unsigned int preempt;	/* preempt_count() in the pre_handler */
};

/* The order handlers ran in: 10 * id + 1 for a pre_handler. */
static int okp_ot_order[8];
static unsigned int okp_ot_norder;

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

static struct okp_ot_probe *okp_ot_new(struct kunit *test, int id, const u8 *addr, bool post)
{
	struct okp_ot_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	p->id = id;
	p->kp.addr = (okp_kprobe_opcode_t *)addr;
	p->kp.pre_handler = okp_ot_pre;
	p->kp.post_handler = post ? okp_ot_post : NULL;
	return p;
}

static void okp_ot_clear(struct okp_ot_probe *p)
{
	p->hits = p->post_hits = 0;
	p->ip = p->sp = p->di = p->si = p->r11 = p->flags = 0;
	p->irqs_off = false;
	p->preempt = 0;
}

/* Register/unregister, tracked (okp_t_track) so that .exit cleans up after a failed case. */
static int okp_ot_register(struct okp_ot_probe *p)
{
	int ret = okp_register_kprobe(&p->kp);

	if (!ret)
		okp_t_track(&p->kp, true);
	return ret;
}

static void okp_ot_unregister(struct okp_ot_probe *p)
{
	okp_t_track(&p->kp, false);
	okp_unregister_kprobe(&p->kp);
}

static bool okp_ot_optimized(const struct okp_ot_probe *p)
{
	return p->kp.flags & OKP_KPROBE_FLAG_OPTIMIZED;
}

#define OKP_OT_ASSERT_OPTIMIZED(test, p)						\
	KUNIT_ASSERT_TRUE_MSG(test, okp_ot_optimized(p), "%pS is not optimized: '%s'",	\
			      (p)->kp.addr, okp_kprobe_reason(&(p)->kp))

#define OKP_OT_EXPECT_OPTIMIZED(test, p)						\
	KUNIT_EXPECT_TRUE_MSG(test, okp_ot_optimized(p), "%pS is not optimized: '%s'",	\
			      (p)->kp.addr, okp_kprobe_reason(&(p)->kp))

/*
 * What a pre_handler of an optimized probe must see on a call f(a, b): the int3 convention
 * for ip, the stack and registers of the probe address, the caller's interrupt state in the
 * saved flags (on), and the handler itself running with preemption off and interrupts as the
 * caller had them (on), as the kernel's optimized kprobes run theirs (docs/api.md).
 */
static void okp_ot_expect_regs(struct kunit *test, const struct okp_ot_probe *p, long a, long b)
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

/* --- Every class a region may hold, optimized. --- */

struct okp_ot_case {
	const char *name;
	okp_ot_fn fn;
	const struct okp_ot_site *site;
	long (*expect)(long a, long b);
	/* More to check after a call; p is NULL for an unprobed call. */
	void (*check)(struct kunit *test, const struct okp_ot_case *c, long a, long b,
		      const struct okp_ot_probe *p);
	bool shared;		/* its result goes through a global: not for several CPUs at once */
};

static long okp_ot_expect_riprel_load(long a, long b)
{
	return a + 2 * b + OKP_OT_DATA;
}

static long okp_ot_expect_riprel_store(long a, long b)
{
	return a + 1 + b;
}

static long okp_ot_expect_jcc(long a, long b)
{
	return a < b ? a + b : a - b + 100;
}

static long okp_ot_expect_jmp8(long a, long b)
{
	return a + 2 * b + 7;
}

static long okp_ot_expect_call(long a, long b)
{
	return 4 * a + 3 * b + 7;
}

static long okp_ot_expect_push_pop(long a, long b)
{
	return a + 4 * b;
}

static long okp_ot_expect_flags(long a, long b)
{
	return 4 * min(a, b) + (a < b);
}

static long okp_ot_expect_alu(long a, long b)
{
	return 16 * a + b;
}

static long okp_ot_expect_skip(long a, long b)
{
	return a + 1000 + b + 1;
}

static long okp_ot_expect_into_region(long a, long b)
{
	return b ? a + 100 + b : a;
}

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

static const struct okp_ot_case okp_ot_cases[] = {
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

static void okp_ot_case_desc(const struct okp_ot_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(okp_ot_class, okp_ot_cases, okp_ot_case_desc);

#define OKP_OT_REGION_MAX 32

static void okprobes_optimize_class(struct kunit *test)
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

static void okprobes_optimize_branch_into_region(struct kunit *test)
{
	okp_ot_run_into_region(test, okp_ot_into_region, &okp_ot_into_region_site);
}

/*
 * The same branch, with a global label between it and the probe: kallsyms starts a symbol
 * at the probe, so a check of "the function" taken from kallsyms alone misses the jz.
 */
static void okprobes_optimize_branch_into_region_past_label(struct kunit *test)
{
	okp_ot_run_into_region(test, okp_ot_into_region_past_label,
			       &okp_ot_into_region_past_label_site);
}

/*
 * --- A post_handler runs from the detour: after the copy's first instruction, with the
 * registers it left and ip at the original next instruction. ---
 */

static void okprobes_optimize_post_handler(struct kunit *test)
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
static void okprobes_optimize_post_handler_joins(struct kunit *test)
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

static void okprobes_optimize_redirect(struct kunit *test)
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

static void okprobes_optimize_aggregate(struct kunit *test)
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

static void okprobes_optimize_disable_enable(struct kunit *test)
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

/* --- Optimizing and unoptimizing while every CPU runs the targets. --- */

#define OKP_OT_STRESS_ROUNDS 50
#define OKP_OT_STRESS_THREADS 8

struct okp_ot_stress {
	atomic_t wrong;		/* results that differ from the expected */
	atomic_long_t calls;
};

static int okp_ot_stress_caller(void *arg)
{
	struct okp_ot_stress *s = arg;
	unsigned long calls = 0;
	unsigned int i, k;

	while (!kthread_should_stop()) {
		for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
			const struct okp_ot_case *c = &okp_ot_cases[k];

			if (c->shared)
				continue;
			for (i = 0; i < ARRAY_SIZE(okp_ot_inputs); i++) {
				long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

				if (c->fn(a, b) != c->expect(a, b))
					atomic_inc(&s->wrong);
				calls++;
			}
		}
		/*
		 * Sleep, not just cond_resched(): the optimizer waits for tasks to leave the
		 * text it patches (RCU-tasks counts voluntary sleeps), and on a kernel without
		 * preemption the KUnit thread shares a CPU with one of these.
		 */
		usleep_range(10, 50);
	}
	atomic_long_add(calls, &s->calls);
	return 0;
}

static void okprobes_optimize_stress(struct kunit *test)
{
	struct okp_ot_probe *p[ARRAY_SIZE(okp_ot_cases)];
	struct task_struct *threads[OKP_OT_STRESS_THREADS];
	struct okp_ot_stress s = { .wrong = ATOMIC_INIT(0), .calls = ATOMIC_LONG_INIT(0) };
	unsigned int nthreads = 0, round, k, failed_registers = 0, not_optimized = 0;
	unsigned long hits = 0;
	bool registered[ARRAY_SIZE(okp_ot_cases)];
	u8 orig[ARRAY_SIZE(okp_ot_cases)][OKP_OT_REGION_MAX];
	unsigned int cpu;

	for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
		const struct okp_ot_case *c = &okp_ot_cases[k];

		p[k] = okp_ot_new(test, k + 1, okp_ot_at(c->fn, c->site->probe), false);
		p[k]->quiet = true;
		memcpy(orig[k], p[k]->kp.addr, c->site->end - c->site->probe);
	}

	/* One caller per online CPU (at least two); from here to kthread_stop, no ASSERT. */
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		if (nthreads == OKP_OT_STRESS_THREADS)
			break;
		t = kthread_create(okp_ot_stress_caller, &s, "okp_ot/%u", cpu);
		if (IS_ERR(t))
			continue;
		kthread_bind(t, cpu);
		threads[nthreads++] = t;
		wake_up_process(t);
	}
	if (nthreads < 2) {
		struct task_struct *t = kthread_run(okp_ot_stress_caller, &s, "okp_ot/any");

		if (!IS_ERR(t))
			threads[nthreads++] = t;
	}

	for (round = 0; round < OKP_OT_STRESS_ROUNDS; round++) {
		for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
			registered[k] = !okp_ot_register(p[k]);
			if (!registered[k])
				failed_registers++;
		}
		/* Every fifth round unregisters at once: probes still queued for the optimizer. */
		if (round % 5 != 4) {
			okp_wait_for_optimizer();
			for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++)
				if (registered[k] && !okp_ot_optimized(p[k]))
					not_optimized++;
			/* Let the callers run through the detours. */
			usleep_range(1000, 2000);
		}
		for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
			if (!registered[k])
				continue;
			okp_ot_unregister(p[k]);
			hits += p[k]->kp.nhit;
		}
	}

	for (k = 0; k < nthreads; k++)
		kthread_stop(threads[k]);

	kunit_info(test, "%u callers, %u rounds: %ld calls, %lu hits\n", nthreads,
		   OKP_OT_STRESS_ROUNDS, atomic_long_read(&s.calls), hits);
	KUNIT_EXPECT_GE(test, nthreads, 2U);
	KUNIT_EXPECT_EQ(test, atomic_read(&s.wrong), 0);
	KUNIT_EXPECT_GT(test, atomic_long_read(&s.calls), 0L);
	KUNIT_EXPECT_GT(test, hits, 0UL);
	KUNIT_EXPECT_EQ(test, failed_registers, 0U);
	KUNIT_EXPECT_EQ(test, not_optimized, 0U);
	/* Every site is back: the region's bytes as they were, the functions right. */
	for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
		const struct okp_ot_case *c = &okp_ot_cases[k];

		KUNIT_EXPECT_EQ_MSG(test, memcmp(okp_ot_at(c->fn, c->site->probe), orig[k],
						 c->site->end - c->site->probe), 0, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, c->fn(2, 3), c->expect(2, 3), "%s", c->name);
	}
}

static int okp_ot_suite_init(struct kunit *test)
{
	okp_ot_norder = 0;
	return okp_t_suite_init(test);
}

static struct kunit_case okp_optimize_cases[] = {
	KUNIT_CASE_PARAM(okprobes_optimize_class, okp_ot_class_gen_params),
	KUNIT_CASE(okprobes_optimize_branch_into_region),
	KUNIT_CASE(okprobes_optimize_branch_into_region_past_label),
	KUNIT_CASE(okprobes_optimize_post_handler),
	KUNIT_CASE(okprobes_optimize_post_handler_joins),
	KUNIT_CASE(okprobes_optimize_redirect),
	KUNIT_CASE(okprobes_optimize_aggregate),
	KUNIT_CASE(okprobes_optimize_disable_enable),
	KUNIT_CASE(okprobes_optimize_stress),
	{}
};

static struct kunit_suite okp_optimize_suite = {
	.name = "okprobes_optimize",
	.init = okp_ot_suite_init,
	.exit = okp_t_suite_exit,
	.test_cases = okp_optimize_cases,
};
kunit_test_suites(&okp_optimize_suite);
