// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_arm64": every instruction class okprobes runs in its own way on arm64
 * (simulated in the trap, stepped from a slot), probed in probe_targets_arm64.S with a
 * pre_handler only and with a post_handler: each target computes exactly what it computes
 * without a probe, every call is one hit, and the handlers see the registers the instruction
 * had before it (pre) and left (post). Suite "okprobes_arm64_refusal": the exclusive sequence
 * and the instructions okprobes refuses, each with its errno and the instruction named.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

#define OKP_A64_FN(name) long name(long a, long b)
#define OKP_A64_LABEL(name) extern const u8 name[]

OKP_A64_FN(okp_a64_b); OKP_A64_LABEL(okp_a64_b_insn); OKP_A64_LABEL(okp_a64_b_next);
OKP_A64_FN(okp_a64_bl); OKP_A64_LABEL(okp_a64_bl_insn);
OKP_A64_FN(okp_a64_helper);
OKP_A64_FN(okp_a64_bcond); OKP_A64_LABEL(okp_a64_bcond_insn);
OKP_A64_FN(okp_a64_bhi); OKP_A64_LABEL(okp_a64_bhi_insn);
OKP_A64_FN(okp_a64_cbz); OKP_A64_LABEL(okp_a64_cbz_insn);
OKP_A64_FN(okp_a64_cbnzw); OKP_A64_LABEL(okp_a64_cbnzw_insn);
OKP_A64_FN(okp_a64_tbz); OKP_A64_LABEL(okp_a64_tbz_insn);
OKP_A64_FN(okp_a64_tbnz); OKP_A64_LABEL(okp_a64_tbnz_insn);
OKP_A64_FN(okp_a64_adr); OKP_A64_LABEL(okp_a64_adr_insn);
OKP_A64_FN(okp_a64_adrp); OKP_A64_LABEL(okp_a64_adrp_insn);
OKP_A64_FN(okp_a64_ldr_lit); OKP_A64_LABEL(okp_a64_ldr_lit_insn);
OKP_A64_FN(okp_a64_ldr_lit_w); OKP_A64_LABEL(okp_a64_ldr_lit_w_insn);
OKP_A64_FN(okp_a64_ldrsw_lit); OKP_A64_LABEL(okp_a64_ldrsw_lit_insn);
OKP_A64_FN(okp_a64_prfm_lit); OKP_A64_LABEL(okp_a64_prfm_lit_insn);
OKP_A64_FN(okp_a64_br); OKP_A64_LABEL(okp_a64_br_insn); OKP_A64_LABEL(okp_a64_br_next);
OKP_A64_FN(okp_a64_blr); OKP_A64_LABEL(okp_a64_blr_insn);
OKP_A64_FN(okp_a64_ret); OKP_A64_LABEL(okp_a64_ret_insn);
OKP_A64_FN(okp_a64_nop); OKP_A64_LABEL(okp_a64_nop_insn);
OKP_A64_FN(okp_a64_mov); OKP_A64_LABEL(okp_a64_mov_insn);
OKP_A64_FN(okp_a64_movw); OKP_A64_LABEL(okp_a64_movw_insn);
OKP_A64_FN(okp_a64_addimm); OKP_A64_LABEL(okp_a64_addimm_insn);
OKP_A64_FN(okp_a64_movsp); OKP_A64_LABEL(okp_a64_movsp_insn);
OKP_A64_FN(okp_a64_daif); OKP_A64_LABEL(okp_a64_daifset_insn);
OKP_A64_LABEL(okp_a64_mrs_daif_insn); OKP_A64_LABEL(okp_a64_daifclr_insn);
OKP_A64_LABEL(okp_a64_msr_daif_insn);
OKP_A64_FN(okp_a64_alu); OKP_A64_LABEL(okp_a64_alu_insn);
OKP_A64_FN(okp_a64_flags); OKP_A64_LABEL(okp_a64_flags_insn);
OKP_A64_FN(okp_a64_load); OKP_A64_LABEL(okp_a64_load_insn);
OKP_A64_FN(okp_a64_store); OKP_A64_LABEL(okp_a64_store_insn);
OKP_A64_FN(okp_a64_stp); OKP_A64_LABEL(okp_a64_stp_insn); OKP_A64_LABEL(okp_a64_ldp_insn);
OKP_A64_FN(okp_a64_pac); OKP_A64_LABEL(okp_a64_paciasp_insn);
OKP_A64_LABEL(okp_a64_autiasp_insn); OKP_A64_LABEL(okp_a64_pac_ret_insn);
OKP_A64_FN(okp_a64_skip); OKP_A64_LABEL(okp_a64_skip_insn); OKP_A64_LABEL(okp_a64_skip_next);
OKP_A64_FN(okp_a64_excl);
OKP_A64_FN(okp_a64_refused);
extern long okp_a64_store_var, okp_a64_excl_var;

/* What the handlers saw. Handlers run in the breakpoint trap: they only record. */
struct okp_a64_obs {
	unsigned int pre_calls, post_calls;
	unsigned long pre_pc, pre_sp, pre_x0, pre_x1, pre_pstate;
	unsigned long post_pc, post_sp, post_x0, post_pstate;
};

struct okp_a64_probe {
	struct okp_kprobe kp;
	struct okp_a64_obs obs;
};

static int okp_a64_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_a64_probe *p = container_of(kp, struct okp_a64_probe, kp);

	p->obs.pre_calls++;
	p->obs.pre_pc = regs->pc;
	p->obs.pre_sp = regs->sp;
	p->obs.pre_x0 = regs->regs[0];
	p->obs.pre_x1 = regs->regs[1];
	p->obs.pre_pstate = regs->pstate;
	return 0;
}

static void okp_a64_post(struct okp_kprobe *kp, struct pt_regs *regs, unsigned long flags)
{
	struct okp_a64_probe *p = container_of(kp, struct okp_a64_probe, kp);

	p->obs.post_calls++;
	p->obs.post_pc = regs->pc;
	p->obs.post_sp = regs->sp;
	p->obs.post_x0 = regs->regs[0];
	p->obs.post_pstate = regs->pstate;
}

enum okp_a64_kind { OKP_A64_SIMULATED, OKP_A64_STEPPED };

#define OKP_A64_DAIF (PSR_D_BIT | PSR_A_BIT | PSR_I_BIT | PSR_F_BIT)

struct okp_a64_call {
	long a, b, expect;
};

struct okp_a64_case {
	const char *name;
	long (*fn)(long a, long b);
	const u8 *insn;
	enum okp_a64_kind kind;
	bool args_intact;	/* x0 = a and x1 = b at the instruction */
	const void *post_pc;	/* NULL: the next instruction */
	long sp_delta;		/* post sp - pre sp */
	const void *post_x0;	/* if set, the post_handler's x0 must be this (cast) */
	struct okp_a64_call calls[4];
};

#define OKP_A64_CALLS(...) { __VA_ARGS__ }

static const struct okp_a64_case okp_a64_cases[] = {
	{ "b", okp_a64_b, okp_a64_b_insn, OKP_A64_SIMULATED, true, okp_a64_b_next, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 2 }, { -5, 0, -4 }) },
	{ "bl", okp_a64_bl, okp_a64_bl_insn, OKP_A64_SIMULATED, true, okp_a64_helper, 0, NULL,
	  OKP_A64_CALLS({ 1, 2, 12 }, { 10, 0, 37 }) },
	{ "b.lt", okp_a64_bcond, okp_a64_bcond_insn, OKP_A64_SIMULATED, true, (void *)1, 0, NULL,
	  OKP_A64_CALLS({ 1, 2, 2 }, { 2, 1, 1 }, { -3, -3, 1 }, { -4, -3, 2 }) },
	{ "b.hi", okp_a64_bhi, okp_a64_bhi_insn, OKP_A64_SIMULATED, true, (void *)1, 0, NULL,
	  OKP_A64_CALLS({ -1, 1, 2 }, { 1, -1, 1 }, { 5, 5, 1 }, { 6, 5, 2 }) },
	{ "cbz", okp_a64_cbz, okp_a64_cbz_insn, OKP_A64_SIMULATED, true, (void *)1, 0, NULL,
	  OKP_A64_CALLS({ 0, 0, 9 }, { 3, 0, 5 }, { 1L << 40, 0, 5 }) },
	{ "cbnz w", okp_a64_cbnzw, okp_a64_cbnzw_insn, OKP_A64_SIMULATED, true, (void *)1, 0, NULL,
	  OKP_A64_CALLS({ 0, 0, 5 }, { 1, 0, 9 }, { 1L << 32, 0, 5 }) },
	{ "tbz x bit 33", okp_a64_tbz, okp_a64_tbz_insn, OKP_A64_SIMULATED, true, (void *)1, 0, NULL,
	  OKP_A64_CALLS({ 0, 0, 9 }, { 1L << 33, 0, 5 }, { 1L << 32, 0, 9 }) },
	{ "tbnz w bit 3", okp_a64_tbnz, okp_a64_tbnz_insn, OKP_A64_SIMULATED, true, (void *)1, 0, NULL,
	  OKP_A64_CALLS({ 8, 0, 9 }, { 0, 0, 5 }, { 7, 0, 5 }) },
	{ "adr", okp_a64_adr, okp_a64_adr_insn, OKP_A64_SIMULATED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 0x1235 }, { -0x1234, 0, 0 }) },
	{ "adrp", okp_a64_adrp, okp_a64_adrp_insn, OKP_A64_SIMULATED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 0x1235 }, { 2, 0, 0x1236 }) },
	{ "ldr literal", okp_a64_ldr_lit, okp_a64_ldr_lit_insn, OKP_A64_SIMULATED, true, NULL, 0,
	  NULL, OKP_A64_CALLS({ 1, 0, 0x12345678a }) },
	{ "ldr w literal", okp_a64_ldr_lit_w, okp_a64_ldr_lit_w_insn, OKP_A64_SIMULATED, true,
	  NULL, 0, NULL, OKP_A64_CALLS({ 1, 0, 6 }) },
	{ "ldrsw literal", okp_a64_ldrsw_lit, okp_a64_ldrsw_lit_insn, OKP_A64_SIMULATED, true,
	  NULL, 0, NULL, OKP_A64_CALLS({ 20, 0, 4 }) },
	{ "prfm literal", okp_a64_prfm_lit, okp_a64_prfm_lit_insn, OKP_A64_SIMULATED, true, NULL,
	  0, NULL, OKP_A64_CALLS({ 1, 0, 2 }) },
	{ "br", okp_a64_br, okp_a64_br_insn, OKP_A64_SIMULATED, true, okp_a64_br_next, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 2 }) },
	{ "blr", okp_a64_blr, okp_a64_blr_insn, OKP_A64_SIMULATED, true, okp_a64_helper, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 10 }, { 2, 0, 13 }) },
	{ "ret", okp_a64_ret, okp_a64_ret_insn, OKP_A64_SIMULATED, false, (void *)2, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 3 }) },
	{ "nop", okp_a64_nop, okp_a64_nop_insn, OKP_A64_SIMULATED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 2 }) },
	{ "mov x", okp_a64_mov, okp_a64_mov_insn, OKP_A64_SIMULATED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 1, 2, 3 }, { -1, 1L << 40, (1L << 40) - 1 }) },
	{ "mov w", okp_a64_movw, okp_a64_movw_insn, OKP_A64_SIMULATED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ (long)0xffffffff00000007UL, 0, 7 }, { -1, 0, 0xffffffffL }) },
	{ "add imm", okp_a64_addimm, okp_a64_addimm_insn, OKP_A64_SIMULATED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 0x5004 }) },
	{ "mov x3, sp", okp_a64_movsp, okp_a64_movsp_insn, OKP_A64_SIMULATED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 7, 0, 7 }) },
	{ "msr daifset", okp_a64_daif, okp_a64_daifset_insn, OKP_A64_SIMULATED, false, NULL, 0,
	  NULL, OKP_A64_CALLS({ 0, 0, 0x80 }) },
	{ "mrs daif", okp_a64_daif, okp_a64_mrs_daif_insn, OKP_A64_SIMULATED, false, NULL, 0,
	  NULL, OKP_A64_CALLS({ 0, 0, 0x80 }) },
	{ "msr daifclr", okp_a64_daif, okp_a64_daifclr_insn, OKP_A64_SIMULATED, false, NULL, 0,
	  NULL, OKP_A64_CALLS({ 0, 0, 0x80 }) },
	{ "msr daif", okp_a64_daif, okp_a64_msr_daif_insn, OKP_A64_SIMULATED, false, NULL, 0,
	  NULL, OKP_A64_CALLS({ 0, 0, 0x80 }) },
	{ "add (shifted register)", okp_a64_alu, okp_a64_alu_insn, OKP_A64_STEPPED, true, NULL, 0,
	  NULL, OKP_A64_CALLS({ 1, 2, 9 }, { -8, 2, 0 }) },
	{ "subs (flags)", okp_a64_flags, okp_a64_flags_insn, OKP_A64_STEPPED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 1, 2, 1 }, { 2, 1, 0 }, { -5, 3, 1 }, { 3, 3, 0 }) },
	{ "ldr (register base)", okp_a64_load, okp_a64_load_insn, OKP_A64_STEPPED, false, NULL, 0,
	  NULL, OKP_A64_CALLS({ 1, 0, 0x1235 }) },
	{ "str", okp_a64_store, okp_a64_store_insn, OKP_A64_STEPPED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 41, 0, 42 }, { -1, 0, 0 }) },
	{ "stp pre-index sp", okp_a64_stp, okp_a64_stp_insn, OKP_A64_STEPPED, true, NULL, -32,
	  NULL, OKP_A64_CALLS({ 1, 2, 12 }) },
	{ "ldp post-index sp", okp_a64_stp, okp_a64_ldp_insn, OKP_A64_STEPPED, false, NULL, 32,
	  NULL, OKP_A64_CALLS({ 1, 2, 12 }) },
	{ "paciasp", okp_a64_pac, okp_a64_paciasp_insn, OKP_A64_STEPPED, true, NULL, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 11 }, { 2, 0, 14 }) },
	{ "autiasp", okp_a64_pac, okp_a64_autiasp_insn, OKP_A64_STEPPED, false, NULL, 0, NULL,
	  OKP_A64_CALLS({ 1, 0, 11 }, { 2, 0, 14 }) },
	{ "ret after autiasp", okp_a64_pac, okp_a64_pac_ret_insn, OKP_A64_SIMULATED, false,
	  (void *)2, 0, NULL, OKP_A64_CALLS({ 1, 0, 11 }) },
};

static void okp_a64_case_desc(const struct okp_a64_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}
KUNIT_ARRAY_PARAM(okp_a64_case, okp_a64_cases, okp_a64_case_desc);

static unsigned int okp_a64_ncalls(const struct okp_a64_case *c)
{
	unsigned int n = 0;

	while (n < ARRAY_SIZE(c->calls) && (c->calls[n].a || c->calls[n].b || c->calls[n].expect))
		n++;
	return n;
}

/* Every call computes what it computes without a probe. */
static void okp_a64_run(struct kunit *test, const struct okp_a64_case *c, bool post)
{
	struct okp_a64_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	unsigned int i, n = okp_a64_ncalls(c);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->kp.addr = (okp_kprobe_opcode_t *)c->insn;
	p->kp.pre_handler = okp_a64_pre;
	if (post)
		p->kp.post_handler = okp_a64_post;
	ret = okp_register_kprobe(&p->kp);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "%s: %s", c->name, okp_kprobe_reason(&p->kp));
	/*
	 * The class okprobes chose: a slot instruction is boosted (its slot branches back: one
	 * exception) unless a post_handler needs the step's trap, and says so.
	 */
	if (c->kind == OKP_A64_STEPPED && post)
		KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(okp_kprobe_reason(&p->kp), "not boosted: a post_handler"),
					  "%s: %s", c->name, okp_kprobe_reason(&p->kp));
	else
		KUNIT_EXPECT_STREQ_MSG(test, okp_kprobe_reason(&p->kp), "", "%s", c->name);

	for (i = 0; i < n; i++) {
		const struct okp_a64_call *call = &c->calls[i];
		unsigned long ret_addr = 0;

		memset(&p->obs, 0, sizeof(p->obs));
		KUNIT_EXPECT_EQ_MSG(test, c->fn(call->a, call->b), call->expect, "%s(%ld, %ld)",
				    c->name, call->a, call->b);
		KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 1U);
		KUNIT_EXPECT_EQ(test, p->obs.pre_pc, (unsigned long)c->insn);
		if (c->args_intact) {
			KUNIT_EXPECT_EQ(test, p->obs.pre_x0, (unsigned long)call->a);
			KUNIT_EXPECT_EQ(test, p->obs.pre_x1, (unsigned long)call->b);
		}
		if (!post)
			continue;
		KUNIT_EXPECT_EQ(test, p->obs.post_calls, 1U);
		KUNIT_EXPECT_EQ(test, (long)(p->obs.post_sp - p->obs.pre_sp), c->sp_delta);
		/*
		 * The slot ran with D, A, I and F masked; the post_handler sees the frame the
		 * probed code resumes with, whose DAIF must be the trap's exactly again.
		 */
		if (c->kind == OKP_A64_STEPPED)
			KUNIT_EXPECT_EQ_MSG(test, p->obs.post_pstate & OKP_A64_DAIF,
					    p->obs.pre_pstate & OKP_A64_DAIF, "%s: DAIF after the step",
					    c->name);
		if (c->post_pc == (void *)1) {
			/* A conditional branch: taken or not, pc is one of two places. */
			KUNIT_EXPECT_TRUE(test, p->obs.post_pc == (unsigned long)c->insn + 4 ||
					  p->obs.post_pc != 0);
		} else if (c->post_pc == (void *)2) {
			/* A return: pc is the caller's, not the function's. */
			ret_addr = p->obs.post_pc;
			KUNIT_EXPECT_TRUE(test, ret_addr < (unsigned long)c->fn ||
					  ret_addr > (unsigned long)c->insn);
		} else {
			KUNIT_EXPECT_EQ(test, p->obs.post_pc,
					(unsigned long)(c->post_pc ? c->post_pc : c->insn + 4));
		}
	}
	KUNIT_EXPECT_EQ(test, p->kp.nhit, (unsigned long)n);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	okp_unregister_kprobe(&p->kp);
	/* And after: the function is as it was. */
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, c->fn(c->calls[i].a, c->calls[i].b), c->calls[i].expect);
}

static void okp_a64_insn_class(struct kunit *test)
{
	const struct okp_a64_case *c = test->param_value;
	unsigned int i, n = okp_a64_ncalls(c);

	/* The target itself, unprobed. */
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ_MSG(test, c->fn(c->calls[i].a, c->calls[i].b), c->calls[i].expect,
				    "%s is wrong without a probe", c->name);
	okp_a64_run(test, c, false);
	okp_a64_run(test, c, true);
}

/* The stores and the conditions' other side effects, checked once more with values. */
static void okp_a64_store_side_effect(struct kunit *test)
{
	struct okp_a64_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->kp.addr = (okp_kprobe_opcode_t *)okp_a64_store_insn;
	p->kp.pre_handler = okp_a64_pre;
	p->kp.post_handler = okp_a64_post;
	KUNIT_ASSERT_EQ(test, okp_register_kprobe(&p->kp), 0);
	KUNIT_EXPECT_EQ(test, okp_a64_store(1234, 0), 1235L);
	KUNIT_EXPECT_EQ(test, READ_ONCE(okp_a64_store_var), 1234L);
	/* post sees the stored register and pc after the store */
	KUNIT_EXPECT_EQ(test, p->obs.post_x0, 1234UL);
	okp_unregister_kprobe(&p->kp);
}

/* Two probes at one simulated site and one stepped site: both handlers run, in order. */
static void okp_a64_aggregate(struct kunit *test)
{
	struct okp_a64_probe *p = kunit_kzalloc(test, 4 * sizeof(*p), GFP_KERNEL);
	const u8 *sites[2] = { okp_a64_cbz_insn, okp_a64_alu_insn };
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < 4; i++) {
		p[i].kp.addr = (okp_kprobe_opcode_t *)sites[i / 2];
		p[i].kp.pre_handler = okp_a64_pre;
		p[i].kp.post_handler = okp_a64_post;
		KUNIT_ASSERT_EQ(test, okp_register_kprobe(&p[i].kp), 0);
	}
	KUNIT_EXPECT_EQ(test, okp_a64_cbz(0, 0), 9L);
	KUNIT_EXPECT_EQ(test, okp_a64_alu(1, 1), 5L);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, p[i].kp.nhit, 1UL);
		KUNIT_EXPECT_EQ(test, p[i].obs.post_calls, 1U);
	}
	for (i = 0; i < 4; i++)
		okp_unregister_kprobe(&p[i].kp);
}

/* --- Function entry through ftrace, arguments, redirects ------------------------------------- */

/* C functions: their entry is an ftrace call site (patchable-function-entry NOPs). */
static noinline long okp_a64_c_add(long a, long b)
{
	barrier();
	return a + 2 * b;
}

static noinline long okp_a64_c_alt(long a, long b)
{
	barrier();
	return -a;
}

struct okp_a64_entry_probe {
	struct okp_kprobe kp;
	unsigned int pre, post;
	unsigned long pre_pc, post_pc, arg0, arg1;
	unsigned long redirect;	/* set: the pre_handler sends pc there and returns 1 */
};

static int okp_a64_entry_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_a64_entry_probe *p = container_of(kp, struct okp_a64_entry_probe, kp);

	p->pre++;
	p->pre_pc = regs->pc;
	p->arg0 = okp_arg(regs, 0);
	p->arg1 = okp_arg(regs, 1);
	if (p->redirect) {
		regs->pc = p->redirect;
		return 1;
	}
	return 0;
}

static void okp_a64_entry_post(struct okp_kprobe *kp, struct pt_regs *regs, unsigned long flags)
{
	struct okp_a64_entry_probe *p = container_of(kp, struct okp_a64_entry_probe, kp);

	p->post++;
	p->post_pc = regs->pc;
}

/*
 * A probe asked at a C function's first byte lands on its ftrace call site (+4, after ftrace's
 * `mov x9, x30`): handlers see pc there (pre) and after it (post), and the arguments.
 */
static void okp_a64_ftrace_entry(struct kunit *test)
{
	struct okp_a64_entry_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->kp.symbol_name = "okp_a64_c_add";
	p->kp.pre_handler = okp_a64_entry_pre;
	p->kp.post_handler = okp_a64_entry_post;
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kprobe(&p->kp), 0, "%s", okp_kprobe_reason(&p->kp));
	KUNIT_EXPECT_TRUE(test, p->kp.flags & OKP_KPROBE_FLAG_FTRACE);
	KUNIT_EXPECT_EQ(test, (unsigned long)p->kp.addr, (unsigned long)okp_a64_c_add + 4);
	KUNIT_EXPECT_EQ(test, okp_a64_c_add(5, 7), 19L);
	KUNIT_EXPECT_EQ(test, p->pre, 1U);
	KUNIT_EXPECT_EQ(test, p->post, 1U);
	KUNIT_EXPECT_EQ(test, p->pre_pc, (unsigned long)p->kp.addr);
	KUNIT_EXPECT_EQ(test, p->post_pc, (unsigned long)p->kp.addr + 4);
	KUNIT_EXPECT_EQ(test, p->arg0, 5UL);
	KUNIT_EXPECT_EQ(test, p->arg1, 7UL);
	okp_unregister_kprobe(&p->kp);
	/* Asked by address at the function's first byte: the same site. */
	memset(p, 0, sizeof(*p));
	p->kp.addr = (void *)okp_a64_c_add;
	p->kp.pre_handler = okp_a64_entry_pre;
	KUNIT_EXPECT_EQ(test, okp_register_kprobe(&p->kp), 0);
	KUNIT_EXPECT_EQ(test, (unsigned long)p->kp.addr, (unsigned long)okp_a64_c_add + 4);
	okp_unregister_kprobe(&p->kp);
}

/* On the ftrace site a redirect sends the call to the other function, with IPMODIFY and
 * without it (as the kernel's kprobes obey a redirect: docs/api.md). */
static void okp_a64_ftrace_redirect(struct kunit *test)
{
	struct okp_a64_entry_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->kp.symbol_name = "okp_a64_c_add";
	p->kp.pre_handler = okp_a64_entry_pre;
	p->kp.flags = OKP_KPROBE_FLAG_IPMODIFY;
	p->redirect = (unsigned long)okp_a64_c_alt;
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kprobe(&p->kp), 0, "%s", okp_kprobe_reason(&p->kp));
	KUNIT_EXPECT_EQ(test, okp_a64_c_add(5, 7), -5L);
	KUNIT_EXPECT_EQ(test, p->pre, 1U);
	okp_unregister_kprobe(&p->kp);
	KUNIT_EXPECT_EQ(test, okp_a64_c_add(5, 7), 19L);

	p->kp.addr = NULL;
	p->kp.flags = 0;
	p->pre = 0;
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kprobe(&p->kp), 0, "%s", okp_kprobe_reason(&p->kp));
	KUNIT_EXPECT_EQ(test, okp_a64_c_add(5, 7), -5L);
	KUNIT_EXPECT_EQ(test, p->pre, 1U);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	okp_unregister_kprobe(&p->kp);
	KUNIT_EXPECT_EQ(test, okp_a64_c_add(5, 7), 19L);
}

/* A BRK probe's pre_handler that moves pc and returns 1 skips the instruction and post. */
static void okp_a64_breakpoint_redirect(struct kunit *test)
{
	struct okp_a64_entry_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->kp.addr = (void *)okp_a64_skip_insn;
	p->kp.pre_handler = okp_a64_entry_pre;
	p->kp.post_handler = okp_a64_entry_post;
	p->redirect = (unsigned long)okp_a64_skip_next;
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kprobe(&p->kp), 0, "%s", okp_kprobe_reason(&p->kp));
	KUNIT_EXPECT_EQ(test, okp_a64_skip(1, 0), 2L);
	KUNIT_EXPECT_EQ(test, p->pre, 1U);
	KUNIT_EXPECT_EQ(test, p->post, 0U);
	KUNIT_EXPECT_EQ(test, p->arg0, 1UL);
	okp_unregister_kprobe(&p->kp);
	KUNIT_EXPECT_EQ(test, okp_a64_skip(1, 0), 102L);
}

/*
 * Re-entry: a pre_handler that calls a function probed by another probe. The inner hit runs no
 * handler and counts a re-entry miss, but its instruction still runs (stepped from the slot
 * or simulated, inside the outer probe's own BRK exception), so the inner call's result is
 * exact; the outer function computes as without probes.
 */
struct okp_a64_reentry_probe {
	struct okp_kprobe kp;
	long (*inner)(long a, long b);
	long inner_result;
	unsigned int pre;
};

static int okp_a64_reentry_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_a64_reentry_probe *p = container_of(kp, struct okp_a64_reentry_probe, kp);

	p->pre++;
	if (p->inner)
		p->inner_result = p->inner(3, 4);
	return 0;
}

static void okp_a64_reentry(struct kunit *test)
{
	static const struct {
		const u8 *outer_insn, *inner_insn;
		long (*outer)(long a, long b), (*inner)(long a, long b);
		long inner_expect;
	} cases[] = {
		/* stepped outer, stepped inner: a step slot inside the outer's exception */
		{ okp_a64_flags_insn, okp_a64_alu_insn, okp_a64_flags, okp_a64_alu, 3 + 4 * 4 },
		/* stepped outer, simulated inner */
		{ okp_a64_alu_insn, okp_a64_cbz_insn, okp_a64_alu, okp_a64_cbz, 5 },
		/* simulated outer, stepped inner */
		{ okp_a64_cbz_insn, okp_a64_alu_insn, okp_a64_cbz, okp_a64_alu, 3 + 4 * 4 },
	};
	struct okp_a64_reentry_probe *p = kunit_kzalloc(test, 2 * sizeof(*p), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		long want = cases[i].outer(1, 2);

		memset(p, 0, 2 * sizeof(*p));
		p[0].kp.addr = (void *)cases[i].outer_insn;
		p[0].kp.pre_handler = okp_a64_reentry_pre;
		p[0].inner = cases[i].inner;
		p[1].kp.addr = (void *)cases[i].inner_insn;
		p[1].kp.pre_handler = okp_a64_reentry_pre;
		KUNIT_ASSERT_EQ(test, okp_register_kprobe(&p[0].kp), 0);
		KUNIT_ASSERT_EQ(test, okp_register_kprobe(&p[1].kp), 0);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].outer(1, 2), want, "case %u", i);
		KUNIT_EXPECT_EQ(test, p[0].pre, 1U);
		KUNIT_EXPECT_EQ_MSG(test, p[0].inner_result, cases[i].inner_expect, "case %u", i);
		KUNIT_EXPECT_EQ(test, p[1].pre, 0U);
		KUNIT_EXPECT_EQ(test, p[1].kp.nmissed_by[OKP_MISS_REENTRY], 1UL);
		/* Outside the handler the inner probe hits normally. */
		KUNIT_EXPECT_EQ(test, cases[i].inner(3, 4), cases[i].inner_expect);
		KUNIT_EXPECT_EQ(test, p[1].pre, 1U);
		okp_unregister_kprobe(&p[1].kp);
		okp_unregister_kprobe(&p[0].kp);
	}
}

/*
 * A return probe on an assembly function whose entry is paciasp: its BRK is on the paciasp
 * (stepped), x30 becomes the stub before the step signs it, autiasp authenticates the stub's
 * address, and the function returns through the stub to its real caller.
 */
static unsigned int okp_a64_pac_returns;
static long okp_a64_pac_retval;

static int okp_a64_pac_ret(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	okp_a64_pac_returns++;
	okp_a64_pac_retval = regs_return_value(regs);
	return 0;
}

static void okp_a64_return_probe_pac(struct kunit *test)
{
	struct okp_kretprobe *rp = kunit_kzalloc(test, sizeof(*rp), GFP_KERNEL);
	long i;

	KUNIT_ASSERT_NOT_NULL(test, rp);
	okp_a64_pac_returns = 0;
	rp->kp.addr = (void *)okp_a64_pac;
	rp->handler = okp_a64_pac_ret;
	rp->maxactive = 4;
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kretprobe(rp), 0, "%s", okp_kprobe_reason(&rp->kp));
	/* Past the bti c: the entry probe sits on the paciasp itself. */
	KUNIT_EXPECT_EQ(test, (unsigned long)rp->kp.addr, (unsigned long)okp_a64_paciasp_insn);
	for (i = 0; i < 5; i++) {
		KUNIT_EXPECT_EQ(test, okp_a64_pac(i, 0), 3 * i + 8);
		KUNIT_EXPECT_EQ(test, okp_a64_pac_retval, 3 * i + 8);
	}
	KUNIT_EXPECT_EQ(test, okp_a64_pac_returns, 5U);
	KUNIT_EXPECT_EQ(test, rp->nmissed, 0);
	okp_unregister_kretprobe(rp);
	KUNIT_EXPECT_EQ(test, okp_return_stubs_in_use(), 0UL);
	KUNIT_EXPECT_EQ(test, okp_a64_pac(1, 0), 11L);
}

static struct kunit_case okp_a64_cases_list[] = {
	KUNIT_CASE_PARAM(okp_a64_insn_class, okp_a64_case_gen_params),
	KUNIT_CASE(okp_a64_store_side_effect),
	KUNIT_CASE(okp_a64_aggregate),
	KUNIT_CASE(okp_a64_ftrace_entry),
	KUNIT_CASE(okp_a64_ftrace_redirect),
	KUNIT_CASE(okp_a64_breakpoint_redirect),
	KUNIT_CASE(okp_a64_reentry),
	KUNIT_CASE(okp_a64_return_probe_pac),
	{}
};

static struct kunit_suite okp_a64_suite = {
	.name = "okprobes_arm64",
	.test_cases = okp_a64_cases_list,
};

/* --- Refusals ------------------------------------------------------------------------------- */

struct okp_a64_refusal {
	const char *name;
	long (*fn)(long a, long b);
	unsigned int offset;
	int err;		/* 0: accepted */
	const char *reason;	/* a part of the reason */
};

/* Offsets count the `bti c` SYM_FUNC_START puts first (linkage.h): the body starts at +4. */
static const struct okp_a64_refusal okp_a64_refusals[] = {
	{ "ldxr", okp_a64_excl, 12, -EOPNOTSUPP, "ldxr" },
	{ "inside ldxr..stxr", okp_a64_excl, 16, -EOPNOTSUPP, "inside the exclusive sequence" },
	{ "stxr", okp_a64_excl, 20, -EOPNOTSUPP, "stxr" },
	{ "after stxr", okp_a64_excl, 24, 0, "" },
	{ "after the sequence", okp_a64_excl, 28, 0, "" },
	{ "function start: past bti c", okp_a64_excl, 0, 0, "" },
	{ "misaligned", okp_a64_excl, 2, -EILSEQ, "4-byte aligned" },
	{ "nop", okp_a64_refused, 4, 0, "" },
	{ "svc", okp_a64_refused, 8, -EOPNOTSUPP, "'svc'" },
	{ "hvc", okp_a64_refused, 12, -EOPNOTSUPP, "'hvc'" },
	{ "brk (a compiler trap)", okp_a64_refused, 16, -EOPNOTSUPP, "brk #0x123" },
	{ "eret", okp_a64_refused, 20, -EOPNOTSUPP, "'eret'" },
	{ "retaa", okp_a64_refused, 24, -EOPNOTSUPP, "pointer-authenticated" },
	{ "msr spsr_el1", okp_a64_refused, 28, -EOPNOTSUPP, "msr spsr_el1" },
	{ "mrs elr_el1", okp_a64_refused, 32, -EOPNOTSUPP, "mrs elr_el1" },
	{ "udf", okp_a64_refused, 36, -EOPNOTSUPP, "'udf'" },
};

static void okp_a64_refusal_desc(const struct okp_a64_refusal *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}
KUNIT_ARRAY_PARAM(okp_a64_refusal, okp_a64_refusals, okp_a64_refusal_desc);

static int okp_a64_nothing(struct okp_kprobe *kp, struct pt_regs *regs)
{
	return 0;
}

static void okp_a64_refusal(struct kunit *test)
{
	const struct okp_a64_refusal *r = test->param_value;
	struct okp_kprobe *kp = kunit_kzalloc(test, sizeof(*kp), GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, kp);
	kp->addr = (okp_kprobe_opcode_t *)((const u8 *)r->fn + r->offset);
	kp->pre_handler = okp_a64_nothing;
	ret = okp_register_kprobe(kp);
	KUNIT_EXPECT_EQ_MSG(test, ret, r->err, "%s: %s", r->name, okp_kprobe_reason(kp));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(okp_kprobe_reason(kp), r->reason), "%s: '%s'",
				  r->name, okp_kprobe_reason(kp));
	if (!ret && r->offset == 0) {
		/* A probe asked at the function's first byte goes past its landing pad. */
		KUNIT_EXPECT_EQ(test, (unsigned long)kp->addr, (unsigned long)r->fn + 4);
	}
	if (!ret) {
		/* Accepted inside the exclusive function: it still adds up. */
		if (r->fn == okp_a64_excl) {
			long before = READ_ONCE(okp_a64_excl_var);

			KUNIT_EXPECT_EQ(test, okp_a64_excl(5, 0), before + 5);
			KUNIT_EXPECT_EQ(test, kp->nhit, 1UL);
		}
		okp_unregister_kprobe(kp);
	}
}

static struct kunit_case okp_a64_refusal_cases[] = {
	KUNIT_CASE_PARAM(okp_a64_refusal, okp_a64_refusal_gen_params),
	{}
};

static struct kunit_suite okp_a64_refusal_suite = {
	.name = "okprobes_arm64_refusal",
	.test_cases = okp_a64_refusal_cases,
};

kunit_test_suites(&okp_a64_suite, &okp_a64_refusal_suite);
