// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_insn" (x86-64): every instruction class okprobes runs in its own way
 * (out of line, boosted, stepped, emulated), probed in probe_targets_x86.S with a pre_handler
 * only and with a post_handler: the probed function computes the same result, and the
 * handlers see the registers, stack and flags the instruction would have left.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"

/* --- Every instruction class, probed with a pre_handler only and with a post_handler. --- */

#define OKP_T_IP_RET ((const void *)1) /* post_handler ip: the return address pre saw */

struct okp_t_call {
	long a, b;
	long expect;		/* the result; for flags results, its CF PF AF ZF SF OF */
	const void *post_ip;	/* where the post_handler must see regs->ip */
	unsigned int hits;	/* times the instruction runs per call (0: once) */
};

enum okp_t_kind { OKP_T_SLOT, OKP_T_NOBOOST, OKP_T_EMULATED };

struct okp_t_insn_case {
	const char *name;
	const u8 *insn;
	long (*fn)(long a, long b);
	enum okp_t_kind kind;
	bool flags_result;	/* the result is RFLAGS: expect names its arithmetic bits */
	bool sets_if;		/* cli/sti: IF differs after the instruction */
	long sp_delta;		/* post_handler sp - pre_handler sp */
	const void *post_top;	/* the word at the post_handler's sp, if not NULL */
	void (*check)(struct kunit *test, const struct okp_t_call *c, const struct okp_t_obs *o);
	struct okp_t_call calls[4];
};

static void okp_t_check_store(struct kunit *test, const struct okp_t_call *c,
			      const struct okp_t_obs *o)
{
	KUNIT_EXPECT_EQ(test, READ_ONCE(okp_t_store_var), c->a);
}

static void okp_t_check_pushf(struct kunit *test, const struct okp_t_call *c,
			      const struct okp_t_obs *o)
{
	/* The word pushed is the flags at the instruction, without RF and VM. */
	KUNIT_EXPECT_EQ(test, o->post_top, o->pre_flags & ~(OKP_T_RF | OKP_T_VM));
	KUNIT_EXPECT_EQ(test, o->post_flags, o->pre_flags);
}

static void okp_t_check_popf(struct kunit *test, const struct okp_t_call *c,
			     const struct okp_t_obs *o)
{
	KUNIT_EXPECT_EQ(test, o->post_flags & OKP_T_ARITH, (unsigned long)c->a & OKP_T_ARITH);
	KUNIT_EXPECT_EQ(test, o->post_flags & OKP_T_IF, o->pre_flags & OKP_T_IF);
}

static void okp_t_check_push_rsp(struct kunit *test, const struct okp_t_call *c,
				 const struct okp_t_obs *o)
{
	KUNIT_EXPECT_EQ(test, (long)o->post_top, c->a);
}

static void okp_t_check_push_sp(struct kunit *test, const struct okp_t_call *c,
				const struct okp_t_obs *o)
{
	/* The word pushed is the rsp before the push: the pre_handler's sp. */
	KUNIT_EXPECT_EQ(test, o->post_top, o->pre_sp);
}

static void okp_t_check_pop_rsp(struct kunit *test, const struct okp_t_call *c,
				const struct okp_t_obs *o)
{
	/* 7 was popped into 8(%rsp), computed with the incremented rsp. */
	KUNIT_EXPECT_EQ(test, o->post_top1, 7UL);
}

static void okp_t_check_cli(struct kunit *test, const struct okp_t_call *c,
			    const struct okp_t_obs *o)
{
	KUNIT_EXPECT_EQ(test, o->pre_flags & OKP_T_IF, OKP_T_IF);
	KUNIT_EXPECT_EQ(test, o->post_flags & OKP_T_IF, 0UL);
}

static void okp_t_check_sti(struct kunit *test, const struct okp_t_call *c,
			    const struct okp_t_obs *o)
{
	KUNIT_EXPECT_EQ(test, o->pre_flags & OKP_T_IF, 0UL);
	KUNIT_EXPECT_EQ(test, o->post_flags & OKP_T_IF, OKP_T_IF);
}

static const struct okp_t_insn_case okp_t_insn_cases[] = {
	{ "rip-relative load", okp_t_riprel_load_insn, okp_t_riprel_load, OKP_T_SLOT, .calls = {
		{ 5, 0, 5 + OKP_T_DATA, okp_t_riprel_load_next },
		{ -3, 0, -3 + OKP_T_DATA, okp_t_riprel_load_next } } },
	{ "rip-relative store", okp_t_riprel_store_insn, okp_t_riprel_store, OKP_T_SLOT,
	  .check = okp_t_check_store, .calls = {
		{ 7, 0, 8, okp_t_riprel_store_next },
		{ 100, 0, 101, okp_t_riprel_store_next } } },
	{ "rip-relative add with imm8", okp_t_riprel_rmw_insn, okp_t_riprel_rmw, OKP_T_SLOT, .calls = {
		{ 7, 0, 10, okp_t_riprel_rmw_next },
		{ -10, 0, -7, okp_t_riprel_rmw_next } } },
	{ "add imm32 (emulated)", okp_t_skip_insn, okp_t_skip, OKP_T_EMULATED, .calls = {
		{ 4, 0, 1005, okp_t_skip_next } } },
	{ "rdtsc (not boostable)", okp_t_rdtsc_insn, okp_t_rdtsc, OKP_T_NOBOOST, .calls = {
		{ 4, 0, 5, okp_t_rdtsc_next } } },
	{ "jmp rel8", okp_t_jmp8_insn, okp_t_jmp8, OKP_T_EMULATED, .calls = {
		{ 4, 0, 5, okp_t_jmp8_target } } },
	{ "jmp rel32", okp_t_jmp32_insn, okp_t_jmp32, OKP_T_EMULATED, .calls = {
		{ 4, 0, 6, okp_t_jmp32_target } } },
	{ "jcc rel8 taken, not taken", okp_t_jcc8_insn, okp_t_jcc8, OKP_T_EMULATED, .calls = {
		{ -5, 0, 5, okp_t_jcc8_target },
		{ 5, 0, 6, okp_t_jcc8_next } } },
	{ "jcc rel32 taken, not taken", okp_t_jcc32_insn, okp_t_jcc32, OKP_T_EMULATED, .calls = {
		{ -5, 0, 5, okp_t_jcc32_target },
		{ 5, 0, 6, okp_t_jcc32_next } } },
	{ "call rel32", okp_t_call_insn, okp_t_call, OKP_T_EMULATED, .sp_delta = -8,
	  .post_top = okp_t_call_next, .calls = {
		{ 4, 0, 24, okp_t_helper } } },
	{ "ret", okp_t_ret_insn, okp_t_ret, OKP_T_EMULATED, .sp_delta = 8, .calls = {
		{ 4, 0, 5, OKP_T_IP_RET } } },
	{ "ret imm16", okp_t_retimm_insn, okp_t_retimm, OKP_T_EMULATED, .sp_delta = 16, .calls = {
		{ 4, 0, 6, OKP_T_IP_RET } } },
	{ "call *reg", okp_t_icall_reg_insn, okp_t_icall_reg, OKP_T_EMULATED, .sp_delta = -8,
	  .post_top = okp_t_icall_reg_next, .calls = {
		{ 4, 0, 24, okp_t_helper } } },
	{ "call *rip-relative", okp_t_icall_rip_insn, okp_t_icall_rip, OKP_T_EMULATED,
	  .sp_delta = -8, .post_top = okp_t_icall_rip_next, .calls = {
		{ 4, 0, 24, okp_t_helper } } },
	{ "call *disp(rsp)", okp_t_icall_rsp_insn, okp_t_icall_rsp, OKP_T_EMULATED, .sp_delta = -8,
	  .post_top = okp_t_icall_rsp_next, .calls = {
		{ 4, 0, 24, okp_t_helper } } },
	{ "call *disp(base,index,8)", okp_t_icall_sib_insn, okp_t_icall_sib, OKP_T_EMULATED,
	  .sp_delta = -8, .post_top = okp_t_icall_sib_next, .calls = {
		{ 4, 0, 26, okp_t_helper2 } } },
	{ "jmp *reg", okp_t_ijmp_reg_insn, okp_t_ijmp_reg, OKP_T_EMULATED, .calls = {
		{ 4, 0, 19, okp_t_helper } } },
	{ "jmp *rip-relative", okp_t_ijmp_rip_insn, okp_t_ijmp_rip, OKP_T_EMULATED, .calls = {
		{ 4, 0, 19, okp_t_helper } } },
	{ "jmp *disp(base,index,8)", okp_t_ijmp_sib_insn, okp_t_ijmp_sib, OKP_T_EMULATED, .calls = {
		{ 4, 0, 21, okp_t_helper2 } } },
	{ "pushfq", okp_t_pushf_insn, okp_t_pushf, OKP_T_EMULATED, .flags_result = true,
	  .sp_delta = -8, .check = okp_t_check_pushf, .calls = {
		{ 5, 5, OKP_T_ZF | OKP_T_PF, okp_t_pushf_next },
		{ 1, 2, OKP_T_CF | OKP_T_PF | OKP_T_AF | OKP_T_SF, okp_t_pushf_next } } },
	{ "popfq", okp_t_popf_insn, okp_t_popf, OKP_T_EMULATED, .flags_result = true,
	  .sp_delta = 8, .check = okp_t_check_popf, .calls = {
		{ OKP_T_ARITH, 0, OKP_T_ARITH, okp_t_popf_next },
		{ 0, 0, 0, okp_t_popf_next },
		{ OKP_T_ZF | OKP_T_CF, 0, OKP_T_ZF | OKP_T_CF, okp_t_popf_next } } },
	{ "push 8(%rsp)", okp_t_push_rsp_insn, okp_t_push_rsp, OKP_T_SLOT, .sp_delta = -8,
	  .check = okp_t_check_push_rsp, .calls = {
		{ 4, 0, 18, okp_t_push_rsp_next },
		{ -9, 0, -8, okp_t_push_rsp_next } } },
	{ "pop 8(%rsp)", okp_t_pop_rsp_insn, okp_t_pop_rsp, OKP_T_SLOT, .sp_delta = 8,
	  .check = okp_t_check_pop_rsp, .calls = {
		{ 4, 0, 15, okp_t_pop_rsp_next } } },
	{ "mov %esi,%r11d (zero-extends)", okp_t_mov_reg_insn, okp_t_mov_reg, OKP_T_EMULATED,
	  .calls = {
		{ 5, -1, 10 + 0xffffffffL, okp_t_mov_reg_next },
		{ -3, 7, 1, okp_t_mov_reg_next } } },
	{ "movabs $imm64,%rax", okp_t_mov_imm_insn, okp_t_mov_imm, OKP_T_EMULATED, .calls = {
		{ 1, 0, 0x1122334455667789L, okp_t_mov_imm_next } } },
	{ "mov %rsp,%rbp", okp_t_frame_insn, okp_t_frame, OKP_T_EMULATED, .calls = {
		{ 4, 0, 12, okp_t_frame_next } } },
	{ "push %rdi", okp_t_push_reg_insn, okp_t_push_pop_reg, OKP_T_EMULATED, .sp_delta = -8,
	  .check = okp_t_check_push_rsp, .calls = {
		{ 4, 0, 7, okp_t_push_reg_next },
		{ -9, 0, -6, okp_t_push_reg_next } } },
	{ "pop %rax", okp_t_pop_reg_insn, okp_t_push_pop_reg, OKP_T_EMULATED, .sp_delta = 8,
	  .calls = {
		{ 4, 0, 7, okp_t_pop_reg_next } } },
	{ "push %rsp", okp_t_push_sp_insn, okp_t_push_sp, OKP_T_EMULATED, .sp_delta = -8,
	  .check = okp_t_check_push_sp, .calls = {
		{ 4, 0, 4, okp_t_push_sp_next } } },
	{ "nopl 0(%rax,%rax,1)", okp_t_nop_insn, okp_t_nop, OKP_T_EMULATED, .calls = {
		{ 4, 0, 13, okp_t_nop_next } } },
	{ "lea 7(%rdi,%rdi,2),%rax", okp_t_lea_insn, okp_t_lea, OKP_T_EMULATED, .calls = {
		{ 4, 0, 19, okp_t_lea_next },
		{ -3, 0, -2, okp_t_lea_next } } },
	{ "lea 1(%rsi),%r11d (zero-extends)", okp_t_lea32_insn, okp_t_lea32, OKP_T_EMULATED,
	  .calls = {
		{ 5, -2, 5 + 0xffffffffL, okp_t_lea32_next },
		{ 1, 6, 8, okp_t_lea32_next } } },
	{ "lea rip-relative", okp_t_lea_rip_insn, okp_t_lea_rip, OKP_T_EMULATED, .calls = {
		{ 4, 0, 4, okp_t_lea_rip_next } } },
	/* Flag-setting arithmetic: expect = result ^ flags << 32 ^ jcc's taken << 48 (see
	 * OKP_ALU_FOLD), from the host CPU running the same code; CF is set before each. */
	{ "add %rsi,%rax: carry, overflow, AF", okp_t_alu_add_insn, okp_t_alu_add, OKP_T_EMULATED,
	  .calls = {
		{ 1, 2, 0x2000400000003L, okp_t_alu_add_next },
		{ -1, 1, 0xc7005500000000L, okp_t_alu_add_next },
		{ 0x7fffffffffffffffL, 1, 0x801a089400000000L, okp_t_alu_add_next },
		{ 0x0f, 1, 0x1000000010L, okp_t_alu_add_next } } },
	{ "sub $imm8,%rax: zero, borrow, overflow", okp_t_alu_sub_imm8_insn, okp_t_alu_sub_imm8,
	  OKP_T_EMULATED, .calls = {
		{ 0x10, 0, 0xc6004400000000L, okp_t_alu_sub_imm8_next },
		{ 0x0f, 0, 0xff14ff7affffffffL, okp_t_alu_sub_imm8_next },
		{ (long)0x8000000000000005UL, 0, 0x7f4df7fbfffffff5L, okp_t_alu_sub_imm8_next },
		{ 0x100, 0, 0x20004000000f0L, okp_t_alu_sub_imm8_next } } },
	{ "cmp %rsi,%rax: below, equal, overflow", okp_t_alu_cmp_insn, okp_t_alu_cmp,
	  OKP_T_EMULATED, .calls = {
		{ 5, 7, 0xe9009100000005L, okp_t_alu_cmp_next },
		{ 7, 7, 0xc6004400000007L, okp_t_alu_cmp_next },
		{ -1, 1, 0xff57ff7fffffffffL, okp_t_alu_cmp_next },
		{ (long)0x8000000000000000UL, 1, 0x80b2081400000000L, okp_t_alu_cmp_next } } },
	{ "and $imm32,%eax (zero-extends)", okp_t_alu_and32_imm32_insn, okp_t_alu_and32_imm32,
	  OKP_T_EMULATED, .calls = {
		{ -1, 0, 0xaa00848000ffffL, okp_t_alu_and32_imm32_next },
		{ 0x7fff0000L, 0, 0xc6004400000000L, okp_t_alu_and32_imm32_next },
		{ 0x12345678abcdL, 0, 0xabcdL, okp_t_alu_and32_imm32_next } } },
	{ "or %esi,%eax (zero-extends)", okp_t_alu_or32_insn, okp_t_alu_or32, OKP_T_EMULATED,
	  .calls = {
		{ (long)0xffffffff00000000UL, 0, 0xc6004400000000L, okp_t_alu_or32_next },
		{ 1, 0x80000000L, 0xa8008080000001L, okp_t_alu_or32_next },
		{ -1, 0x10, 0xaa0084ffffffffL, okp_t_alu_or32_next } } },
	{ "xor %rsi,%rax", okp_t_alu_xor_insn, okp_t_alu_xor, OKP_T_EMULATED, .calls = {
		{ 0x1234, 0x1234, 0xc6004400000000L, okp_t_alu_xor_next },
		{ (long)0x8000000000000000UL, 1, 0x80a8008000000001L, okp_t_alu_xor_next },
		{ -1, 0xff, 0xff55ff7bffffff00L, okp_t_alu_xor_next } } },
	{ "test %esi,%eax (writes nothing)", okp_t_alu_test32_insn, okp_t_alu_test32,
	  OKP_T_EMULATED, .calls = {
		{ (long)0xffffffff00000001UL, 2, 0xff39ffbb00000001L, okp_t_alu_test32_next },
		{ 0x80000000L, 0x80000000L, 0xaa008480000000L, okp_t_alu_test32_next },
		{ 3, -1, 0x2000400000003L, okp_t_alu_test32_next } } },
	{ "inc %rax (keeps CF)", okp_t_alu_inc_insn, okp_t_alu_inc, OKP_T_EMULATED, .calls = {
		{ -1, 0, 0xc7005500000000L, okp_t_alu_inc_next },
		{ 0x7fffffffffffffffL, 0, 0x805b089500000000L, okp_t_alu_inc_next },
		{ 0x0f, 0, 0x41001100000010L, okp_t_alu_inc_next } } },
	{ "dec %eax (keeps CF, zero-extends)", okp_t_alu_dec32_insn, okp_t_alu_dec32,
	  OKP_T_EMULATED, .calls = {
		{ (long)0xffffffff00000001UL, 0, 0xc7004500000000L, okp_t_alu_dec32_next },
		{ 0, 0, 0xeb0095ffffffffL, okp_t_alu_dec32_next },
		{ (long)0x80000000UL, 0, 0xf308157fffffffL, okp_t_alu_dec32_next } } },
	{ "sub $0x28,%rsp (frame allocation)", okp_t_alu_sp_insn, okp_t_alu_sp, OKP_T_EMULATED,
	  .sp_delta = -0x28, .calls = {
		{ 4, 0, 4, okp_t_alu_sp_next },
		{ -9, 0, -9, okp_t_alu_sp_next } } },
	{ "cli (inside pushf/popf)", okp_t_cli_insn, okp_t_cli_sti, OKP_T_EMULATED, .sets_if = true,
	  .check = okp_t_check_cli, .calls = {
		{ 4, 0, 6, okp_t_cli_next } } },
	{ "sti (inside pushf/popf)", okp_t_sti_insn, okp_t_cli_sti, OKP_T_EMULATED, .sets_if = true,
	  .check = okp_t_check_sti, .calls = {
		{ 4, 0, 6, okp_t_sti_next } } },
	{ "loop", okp_t_loop_insn, okp_t_loop, OKP_T_EMULATED, .calls = {
		{ 1, 0, 3, okp_t_loop_next, 1 },
		{ 5, 0, 15, okp_t_loop_next, 5 } } },
	{ "loopl (ecx, 0x67)", okp_t_loopl_insn, okp_t_loopl, OKP_T_EMULATED, .calls = {
		{ 3, 0, 9, okp_t_loopl_next, 3 } } },
	{ "jrcxz taken, not taken", okp_t_jrcxz_insn, okp_t_jrcxz, OKP_T_EMULATED, .calls = {
		{ 0, 0, 1, okp_t_jrcxz_target },
		{ 9, 0, 2, okp_t_jrcxz_next } } },
};

static void okp_t_insn_desc(const struct okp_t_insn_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(okp_t_insn, okp_t_insn_cases, okp_t_insn_desc);

static bool okp_t_result_ok(const struct okp_t_insn_case *c, const struct okp_t_call *call, long r)
{
	if (c->flags_result)
		return ((unsigned long)r & OKP_T_ARITH) == (unsigned long)call->expect &&
		       ((unsigned long)r & OKP_T_IF);
	return r == call->expect;
}

static void okp_t_run_insn(struct kunit *test, const struct okp_t_insn_case *c, bool post)
{
	const char *bp_reason;
	long baseline[ARRAY_SIZE(c->calls)];
	unsigned long total = 0;
	struct okp_t_probe *p;
	unsigned int i;
	u8 orig = okp_t_byte(c->insn);

	kunit_info(test, "%s, %s\n", c->name, post ? "pre_handler + post_handler" : "pre_handler only");
	KUNIT_ASSERT_NE(test, orig, (u8)OKP_T_INT3);
	for (i = 0; i < ARRAY_SIZE(c->calls) && c->calls[i].post_ip; i++) {
		baseline[i] = c->fn(c->calls[i].a, c->calls[i].b);
		KUNIT_EXPECT_TRUE_MSG(test, okp_t_result_ok(c, &c->calls[i], baseline[i]),
				      "unprobed call %u: %ld (%#lx), expected %ld", i, baseline[i],
				      baseline[i], c->calls[i].expect);
	}

	p = okp_t_new(test, 1, c->insn, NULL, 0, true, post);
	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	KUNIT_EXPECT_PTR_EQ(test, (const u8 *)p->kp.addr, c->insn);
	KUNIT_EXPECT_EQ(test, okp_t_byte(c->insn), (u8)OKP_T_INT3);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_FTRACE, 0U);
	/* The reason says why a stepped instruction is not boosted, and nothing else about the
	 * breakpoint. The optimizer (its 20 ms delay may have run by now, test-debug under load
	 * saw it) may have said first why the site is not a jump: "not optimized: ...; ". */
	bp_reason = okp_t_breakpoint_reason(okp_kprobe_reason(&p->kp));
	if (c->kind == OKP_T_NOBOOST)
		KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(bp_reason, "must be single-stepped"),
				      "reason: '%s'", okp_kprobe_reason(&p->kp));
	else if (c->kind == OKP_T_SLOT && post)
		KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(bp_reason, "not boosted"),
				      "reason: '%s'", okp_kprobe_reason(&p->kp));
	else
		KUNIT_EXPECT_STREQ_MSG(test, bp_reason, "", "reason: '%s'", okp_kprobe_reason(&p->kp));

	for (i = 0; i < ARRAY_SIZE(c->calls) && c->calls[i].post_ip; i++) {
		const struct okp_t_call *call = &c->calls[i];
		unsigned int hits = call->hits ? call->hits : 1;
		long r;

		okp_t_reset(p);
		r = c->fn(call->a, call->b);
		KUNIT_EXPECT_EQ_MSG(test, r, baseline[i], "call %u (a=%ld): probed %ld, unprobed %ld",
				    i, call->a, r, baseline[i]);
		KUNIT_EXPECT_FALSE_MSG(test, irqs_disabled(), "call %u left interrupts off", i);
		KUNIT_EXPECT_EQ_MSG(test, p->obs.pre_calls, hits, "call %u", i);
		KUNIT_EXPECT_EQ_MSG(test, p->obs.pre_ip, (unsigned long)c->insn + 1, "call %u", i);
		total += hits;
		if (!post) {
			KUNIT_EXPECT_EQ(test, p->obs.post_calls, 0U);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, p->obs.post_calls, hits, "call %u", i);
		if (call->post_ip == OKP_T_IP_RET)
			KUNIT_EXPECT_EQ_MSG(test, p->obs.post_ip, p->obs.pre_top,
					    "call %u: post ip %pS, return address %pS", i,
					    (void *)p->obs.post_ip, (void *)p->obs.pre_top);
		else
			KUNIT_EXPECT_EQ_MSG(test, p->obs.post_ip, (unsigned long)call->post_ip,
					    "call %u: post ip %pS, expected %pS", i,
					    (void *)p->obs.post_ip, call->post_ip);
		KUNIT_EXPECT_EQ_MSG(test, (long)(p->obs.post_sp - p->obs.pre_sp), c->sp_delta,
				    "call %u", i);
		if (c->post_top)
			KUNIT_EXPECT_EQ_MSG(test, p->obs.post_top, (unsigned long)c->post_top,
					    "call %u: pushed %pS", i, (void *)p->obs.post_top);
		/* Stepping runs the copy with IF cleared: the post_handler sees it restored. */
		if (!c->sets_if)
			KUNIT_EXPECT_EQ_MSG(test, p->obs.post_flags & OKP_T_IF,
					    p->obs.pre_flags & OKP_T_IF, "call %u", i);
		if (c->check)
			c->check(test, call, &p->obs);
	}
	KUNIT_EXPECT_EQ(test, p->kp.nhit, total);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	okp_t_unregister(p);
	KUNIT_EXPECT_EQ(test, okp_t_byte(c->insn), orig);

	/* Unregistered: the text is back and nothing counts. */
	c->fn(c->calls[0].a, c->calls[0].b);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, total);
}

static void okp_kprobe_insn_class(struct kunit *test)
{
	const struct okp_t_insn_case *c = test->param_value;

	okp_t_run_insn(test, c, false);
	okp_t_run_insn(test, c, true);
}

/* --- jcc: the sixteen conditions against every combination of the flags they read. --- */

static long (*const okp_t_jcc_fns[16])(long f, long unused) = {
	okp_t_jcc_o, okp_t_jcc_no, okp_t_jcc_b, okp_t_jcc_ae, okp_t_jcc_e, okp_t_jcc_ne,
	okp_t_jcc_be, okp_t_jcc_a, okp_t_jcc_s, okp_t_jcc_ns, okp_t_jcc_p, okp_t_jcc_np,
	okp_t_jcc_l, okp_t_jcc_ge, okp_t_jcc_le, okp_t_jcc_g,
};

static const u8 *const okp_t_jcc_insns[16] = {
	okp_t_jcc_o_insn, okp_t_jcc_no_insn, okp_t_jcc_b_insn, okp_t_jcc_ae_insn,
	okp_t_jcc_e_insn, okp_t_jcc_ne_insn, okp_t_jcc_be_insn, okp_t_jcc_a_insn,
	okp_t_jcc_s_insn, okp_t_jcc_ns_insn, okp_t_jcc_p_insn, okp_t_jcc_np_insn,
	okp_t_jcc_l_insn, okp_t_jcc_ge_insn, okp_t_jcc_le_insn, okp_t_jcc_g_insn,
};

/* Intel SDM vol. 1, appendix B; checked against the hardware by the unprobed calls. */
static bool okp_t_cond(unsigned int cc, unsigned long f)
{
	bool cf = f & OKP_T_CF, pf = f & OKP_T_PF, zf = f & OKP_T_ZF;
	bool sf = f & OKP_T_SF, of = f & OKP_T_OF, r;

	switch (cc >> 1) {
	case 0: /* o, no */
		r = of;
		break;
	case 1: /* b, ae */
		r = cf;
		break;
	case 2: /* e, ne */
		r = zf;
		break;
	case 3: /* be, a */
		r = cf || zf;
		break;
	case 4: /* s, ns */
		r = sf;
		break;
	case 5: /* p, np */
		r = pf;
		break;
	case 6: /* l, ge */
		r = sf != of;
		break;
	default: /* le, g */
		r = zf || sf != of;
		break;
	}
	return (cc & 1) ? !r : r;
}

/* The 32 combinations of CF PF ZF SF OF. */
static unsigned long okp_t_flags_combo(unsigned int n)
{
	static const unsigned long bits[] = { OKP_T_CF, OKP_T_PF, OKP_T_ZF, OKP_T_SF, OKP_T_OF };
	unsigned long f = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bits); i++)
		if (n & (1U << i))
			f |= bits[i];
	return f;
}

static void okp_kprobe_jcc_conditions(struct kunit *test)
{
	struct okp_t_probe *p[16];
	unsigned int cc, n, mode;

	for (cc = 0; cc < 16; cc++)
		for (n = 0; n < 32; n++)
			KUNIT_EXPECT_EQ_MSG(test, okp_t_jcc_fns[cc](okp_t_flags_combo(n), 0),
					    (long)okp_t_cond(cc, okp_t_flags_combo(n)),
					    "unprobed cc %u flags %#lx", cc, okp_t_flags_combo(n));

	for (mode = 0; mode < 2; mode++) {
		for (cc = 0; cc < 16; cc++) {
			p[cc] = okp_t_new(test, 1, okp_t_jcc_insns[cc], NULL, 0, true, mode);
			KUNIT_ASSERT_EQ(test, okp_t_register(p[cc]), 0);
		}
		for (n = 0; n < 32; n++) {
			unsigned long f = okp_t_flags_combo(n);

			for (cc = 0; cc < 16; cc++) {
				const u8 *insn = okp_t_jcc_insns[cc];
				bool taken = okp_t_cond(cc, f);
				/* jcc rel8: 2 bytes, the displacement in the second. */
				unsigned long target = (unsigned long)insn + 2 + (s8)insn[1];

				okp_t_reset(p[cc]);
				KUNIT_EXPECT_EQ_MSG(test, okp_t_jcc_fns[cc](f, 0), (long)taken,
						    "probed cc %u flags %#lx", cc, f);
				KUNIT_EXPECT_EQ(test, p[cc]->obs.pre_flags & OKP_T_ARITH, f);
				if (mode)
					KUNIT_EXPECT_EQ_MSG(test, p[cc]->obs.post_ip,
							    taken ? target : (unsigned long)insn + 2,
							    "cc %u flags %#lx", cc, f);
			}
		}
		for (cc = 0; cc < 16; cc++) {
			KUNIT_EXPECT_EQ(test, p[cc]->kp.nhit, 32UL);
			okp_t_unregister(p[cc]);
		}
	}
}

static struct kunit_case okp_insn_cases[] = {
	KUNIT_CASE_PARAM(okp_kprobe_insn_class, okp_t_insn_gen_params),
	KUNIT_CASE(okp_kprobe_jcc_conditions),
	{}
};

static struct kunit_suite okp_insn_suite = {
	.name = "okprobes_insn",
	.init = okp_t_suite_init,
	.exit = okp_t_suite_exit,
	.test_cases = okp_insn_cases,
};
kunit_test_suites(&okp_insn_suite);
