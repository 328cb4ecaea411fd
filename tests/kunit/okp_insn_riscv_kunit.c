// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_insn_riscv" (riscv64): every instruction class okprobes runs in its
 * own way on riscv64, in compressed and uncompressed forms, on the asm targets of
 * probe_targets_riscv.S. Each target is called without a probe, with a pre_handler only and
 * with a post_handler too: it computes exactly the same, every hit is counted, the pre_handler
 * sees epc at the probe and the arguments in a0/a1, and the post_handler sees epc where the
 * instruction went (branch taken or not, call target) and the link register it wrote.
 * Suite "okprobes_refusal_riscv": LR/SC sequences, system instructions, CSR writes, fence.i,
 * mid-instruction and odd addresses are refused with their errno and the instruction named.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <asm/csr.h>
#include <okprobes/okprobes.h>
#include "okp_need_breakpoints.h"

/* What probe_targets_riscv.S says of each target: offsets from the function. */
struct okp_rv_at {
	long insn, post1, post2;
};

#define OKP_RV_TARGET(name)					\
	long okp_rv_##name(long a, long b);			\
	extern const struct okp_rv_at okp_rv_##name##_at
#define OKP_RV_CASE_AT(name) extern const struct okp_rv_at okp_rv_##name##_at

OKP_RV_TARGET(helper);
OKP_RV_TARGET(helper_t0);
OKP_RV_TARGET(c_j);
OKP_RV_TARGET(c_beqz);
OKP_RV_TARGET(c_bnez);
OKP_RV_TARGET(c_jr);
OKP_RV_TARGET(c_jalr);
OKP_RV_TARGET(c_moves);
OKP_RV_CASE_AT(c_moves_add);
OKP_RV_CASE_AT(c_moves_addi);
OKP_RV_CASE_AT(c_moves_lui);
OKP_RV_CASE_AT(c_moves_addiw);
OKP_RV_TARGET(c_frame);
OKP_RV_CASE_AT(c_frame_sdsp);
OKP_RV_CASE_AT(c_frame_addi4spn);
OKP_RV_CASE_AT(c_frame_sd);
OKP_RV_CASE_AT(c_frame_ld);
OKP_RV_CASE_AT(c_frame_ldsp);
OKP_RV_TARGET(c_alu);
OKP_RV_CASE_AT(c_alu_srai);
OKP_RV_CASE_AT(c_alu_xor);
OKP_RV_TARGET(j);
OKP_RV_TARGET(jal);
OKP_RV_TARGET(jalr);
OKP_RV_TARGET(jalr_same);
OKP_RV_TARGET(jalr_x0);
OKP_RV_TARGET(beq);
OKP_RV_TARGET(bne);
OKP_RV_TARGET(blt);
OKP_RV_TARGET(bge);
OKP_RV_TARGET(bltu);
OKP_RV_TARGET(bgeu);
OKP_RV_TARGET(loop);
OKP_RV_TARGET(auipc);
OKP_RV_TARGET(moves);
OKP_RV_CASE_AT(moves_addi);
OKP_RV_CASE_AT(moves_add);
OKP_RV_CASE_AT(moves_nop);
OKP_RV_CASE_AT(moves_addiw);
OKP_RV_TARGET(mem);
OKP_RV_CASE_AT(mem_ld);
OKP_RV_CASE_AT(mem_sd);
OKP_RV_CASE_AT(mem_amo);
OKP_RV_TARGET(lrsc);
OKP_RV_CASE_AT(lrsc_after);
OKP_RV_TARGET(system);
OKP_RV_CASE_AT(system_csr);
OKP_RV_CASE_AT(system_csr2);

/* What b is, when it is not a plain value. */
enum okp_rv_b {
	OKP_RV_B_VALUE,
	OKP_RV_B_HELPER,	/* okp_rv_helper */
	OKP_RV_B_HELPER_T0,	/* okp_rv_helper_t0 */
	OKP_RV_B_HELPER_M4,	/* okp_rv_helper - 4 */
	OKP_RV_B_SELF,		/* the target itself */
	OKP_RV_B_PTR,		/* a pointer to a long holding the call's b */
};

/* Where the post_handler must see epc. */
enum okp_rv_post {
	OKP_RV_POST_ANY,	/* not checked */
	OKP_RV_POST1,		/* at->post1 */
	OKP_RV_POST2,		/* at->post2 */
	OKP_RV_POST_HELPER,	/* the helper b points at */
};

/* The link register a call wrote, seen by the post_handler: at->post2 (the return point). */
enum okp_rv_link { OKP_RV_LINK_NONE, OKP_RV_LINK_RA, OKP_RV_LINK_T0 };

struct okp_rv_call {
	long a, b, expect;
	enum okp_rv_post post;
	unsigned int hits;	/* times the instruction runs per call (0: once) */
};

struct okp_rv_case {
	const char *name;
	long (*fn)(long a, long b);
	const struct okp_rv_at *at;
	bool stepped;		/* runs in a slot (else simulated in the trap) */
	enum okp_rv_b b_kind;
	enum okp_rv_link link;
	struct okp_rv_call calls[4];
};

#define P1 OKP_RV_POST1
#define P2 OKP_RV_POST2
#define PH OKP_RV_POST_HELPER
#define PA OKP_RV_POST_ANY

static long okp_rv_moves_expect(long a, long b)
{
	return (long)(int)(a + 0x12345000L - 3 + b);
}

static const struct okp_rv_case okp_rv_cases[] = {
	/* Compressed control flow. */
	{ "c.j", okp_rv_c_j, &okp_rv_c_j_at, false, .calls = {
		{ 4, 0, 5, P1 }, { -9, 0, -8, P1 } } },
	{ "c.beqz taken, not taken", okp_rv_c_beqz, &okp_rv_c_beqz_at, false, .calls = {
		{ 0, 0, 1, P1 }, { 5, 0, 15, P2 } } },
	{ "c.bnez taken, not taken", okp_rv_c_bnez, &okp_rv_c_bnez_at, false, .calls = {
		{ 5, 0, 15, P1 }, { 0, 0, 1, P2 } } },
	{ "c.jr (tail jump)", okp_rv_c_jr, &okp_rv_c_jr_at, false, OKP_RV_B_HELPER, .calls = {
		{ 4, 0, 11, PH } } },
	{ "c.jalr (call, ra linked)", okp_rv_c_jalr, &okp_rv_c_jalr_at, false, OKP_RV_B_HELPER,
	  OKP_RV_LINK_RA, .calls = { { 4, 0, 12, PH } } },
	/* Compressed register moves, simulated. */
	{ "c.mv", okp_rv_c_moves, &okp_rv_c_moves_at, false, .calls = {
		{ 3, 4, 2 * 3 + 5 + 0x3000 + 4, P1 }, { 0x7fffffff, 0, (long)(int)(0xfffffffeL + 5 + 0x3000), P1 } } },
	{ "c.add", okp_rv_c_moves, &okp_rv_c_moves_add_at, false, .calls = {
		{ 3, 4, 2 * 3 + 5 + 0x3000 + 4, P1 } } },
	{ "c.addi", okp_rv_c_moves, &okp_rv_c_moves_addi_at, false, .calls = {
		{ -3, 4, -6 + 5 + 0x3000 + 4, P1 } } },
	{ "c.lui", okp_rv_c_moves, &okp_rv_c_moves_lui_at, false, .calls = {
		{ 3, -4, 2 * 3 + 5 + 0x3000 - 4, P1 } } },
	{ "c.addiw (sext.w)", okp_rv_c_moves, &okp_rv_c_moves_addiw_at, false, .calls = {
		{ 0x7fffffff, 0, (long)(int)(0xfffffffeL + 5 + 0x3000), PA } } },
	/* A compressed frame: sp arithmetic simulated, loads and stores stepped. */
	{ "c.addi16sp", okp_rv_c_frame, &okp_rv_c_frame_at, false, .calls = {
		{ 3, 4, 7, P1 }, { -100, 1, -99, P1 } } },
	{ "c.sdsp (slot)", okp_rv_c_frame, &okp_rv_c_frame_sdsp_at, true, .calls = {
		{ 3, 4, 7, P1 }, { -100, 1, -99, P1 } } },
	{ "c.addi4spn", okp_rv_c_frame, &okp_rv_c_frame_addi4spn_at, false, .calls = {
		{ 3, 4, 7, P1 } } },
	{ "c.sd (slot)", okp_rv_c_frame, &okp_rv_c_frame_sd_at, true, .calls = {
		{ 3, 4, 7, P1 } } },
	{ "c.ld (slot)", okp_rv_c_frame, &okp_rv_c_frame_ld_at, true, .calls = {
		{ 3, 4, 7, P1 } } },
	{ "c.ldsp (slot)", okp_rv_c_frame, &okp_rv_c_frame_ldsp_at, true, .calls = {
		{ 3, 4, 7, P1 } } },
	/* Compressed ALU, stepped. */
	{ "c.slli (slot)", okp_rv_c_alu, &okp_rv_c_alu_at, true, .calls = {
		{ 5, 3, 10 ^ 3, P1 }, { -5, 0, -10, P1 } } },
	{ "c.srai (slot)", okp_rv_c_alu, &okp_rv_c_alu_srai_at, true, .calls = {
		{ -5, 1, -10 ^ 1, P1 } } },
	{ "c.xor (slot)", okp_rv_c_alu, &okp_rv_c_alu_xor_at, true, .calls = {
		{ 5, 3, 10 ^ 3, PA } } },
	/* Uncompressed control flow. */
	{ "jal x0 (ebreak)", okp_rv_j, &okp_rv_j_at, false, .calls = {
		{ 4, 0, 5, P1 } } },
	{ "jal ra (2-byte aligned ebreak)", okp_rv_jal, &okp_rv_jal_at, false,
	  .link = OKP_RV_LINK_RA, .calls = { { 4, 0, 12, P1 } } },
	{ "jalr ra, 0(a1)", okp_rv_jalr, &okp_rv_jalr_at, false, OKP_RV_B_HELPER, OKP_RV_LINK_RA,
	  .calls = { { 4, 0, 12, PH } } },
	{ "jalr t0, 0(t0) (rd == rs1)", okp_rv_jalr_same, &okp_rv_jalr_same_at, false,
	  OKP_RV_B_HELPER_T0, OKP_RV_LINK_T0, .calls = { { 4, 0, 12, PH } } },
	{ "jalr x0, 4(a1)", okp_rv_jalr_x0, &okp_rv_jalr_x0_at, false, OKP_RV_B_HELPER_M4, .calls = {
		{ 4, 0, 11, PA } } },
	{ "beq", okp_rv_beq, &okp_rv_beq_at, false, .calls = {
		{ 3, 3, 1, P1 }, { 3, 4, 0, P2 } } },
	{ "bne", okp_rv_bne, &okp_rv_bne_at, false, .calls = {
		{ 3, 4, 1, P1 }, { 3, 3, 0, P2 } } },
	{ "blt (signed)", okp_rv_blt, &okp_rv_blt_at, false, .calls = {
		{ -1, 1, 1, P1 }, { 1, -1, 0, P2 }, { 2, 2, 0, P2 } } },
	{ "bge (signed)", okp_rv_bge, &okp_rv_bge_at, false, .calls = {
		{ 1, -1, 1, P1 }, { 2, 2, 1, P1 }, { -1, 1, 0, P2 } } },
	{ "bltu (unsigned)", okp_rv_bltu, &okp_rv_bltu_at, false, .calls = {
		{ 1, -1, 1, P1 }, { -1, 1, 0, P2 } } },
	{ "bgeu (unsigned)", okp_rv_bgeu, &okp_rv_bgeu_at, false, .calls = {
		{ -1, 1, 1, P1 }, { 1, -1, 0, P2 } } },
	{ "bne x0, backward (loop)", okp_rv_loop, &okp_rv_loop_at, false, .calls = {
		{ 1, 0, 1, P2, 1 }, { 5, 0, 5, PA, 5 } } },
	{ "auipc", okp_rv_auipc, &okp_rv_auipc_at, false, OKP_RV_B_SELF, .calls = {
		{ 0, 0, 4 + 4096, P1 } } },
	/* Uncompressed register moves, simulated. */
	{ "lui", okp_rv_moves, &okp_rv_moves_at, false, .calls = {
		{ 3, 4, 0, P1 }, { 0x7fffffff, 0x7fffffff, 0, P1 } } },
	{ "addi", okp_rv_moves, &okp_rv_moves_addi_at, false, .calls = { { 3, 4, 0, P1 } } },
	{ "add", okp_rv_moves, &okp_rv_moves_add_at, false, .calls = { { -3, 4, 0, P1 } } },
	{ "nop", okp_rv_moves, &okp_rv_moves_nop_at, false, .calls = { { 3, -4, 0, P1 } } },
	{ "addiw (sext.w)", okp_rv_moves, &okp_rv_moves_addiw_at, false, .calls = {
		{ 0x7fffffff, 0x7fffffff, 0, PA } } },
	/* Uncompressed ALU and memory, stepped. */
	{ "mul (slot)", okp_rv_mem, &okp_rv_mem_at, true, OKP_RV_B_PTR, .calls = {
		{ 3, 10, 3 * 3 + 10 + 5, P1 }, { -2, 1, -6 + 1 + 5, P1 } } },
	{ "ld (slot)", okp_rv_mem, &okp_rv_mem_ld_at, true, OKP_RV_B_PTR, .calls = {
		{ 3, 10, 3 * 3 + 10 + 5, P1 } } },
	{ "sd (slot)", okp_rv_mem, &okp_rv_mem_sd_at, true, OKP_RV_B_PTR, .calls = {
		{ 3, 10, 3 * 3 + 10 + 5, PA } } },
	{ "amoadd.d (slot)", okp_rv_mem, &okp_rv_mem_amo_at, true, OKP_RV_B_PTR, .calls = {
		{ 3, 10, 3 * 3 + 10 + 5, P1 } } },
};

/* The moves targets' results depend on a and b as a 32-bit sum: filled in at run time. */
static long okp_rv_expected(const struct okp_rv_case *c, const struct okp_rv_call *call)
{
	if (c->fn == okp_rv_moves)
		return okp_rv_moves_expect(call->a, call->b);
	return call->expect;
}

/* --- What the handlers saw (they run in the trap: they only record) --- */

static struct {
	unsigned long pre_hits, post_hits;
	unsigned long pre_epc, pre_a1, pre_status;
	unsigned long post_epc, post_ra, post_t0, post_status;
} okp_rv_obs;

static int okp_rv_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	okp_rv_obs.pre_hits++;
	okp_rv_obs.pre_epc = regs->epc;
	okp_rv_obs.pre_a1 = regs->a1;
	okp_rv_obs.pre_status = regs->status;
	return 0;
}

static void okp_rv_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	okp_rv_obs.post_hits++;
	okp_rv_obs.post_epc = regs->epc;
	okp_rv_obs.post_ra = regs->ra;
	okp_rv_obs.post_t0 = regs->t0;
	okp_rv_obs.post_status = regs->status;
}

static long okp_rv_word;

static long okp_rv_b_of(const struct okp_rv_case *c, const struct okp_rv_call *call)
{
	switch (c->b_kind) {
	case OKP_RV_B_HELPER: return (long)okp_rv_helper;
	case OKP_RV_B_HELPER_T0: return (long)okp_rv_helper_t0;
	case OKP_RV_B_HELPER_M4: return (long)okp_rv_helper - 4;
	case OKP_RV_B_SELF: return (long)c->fn;
	case OKP_RV_B_PTR:
		WRITE_ONCE(okp_rv_word, call->b);
		return (long)&okp_rv_word;
	default: return call->b;
	}
}

static void okp_rv_run(struct kunit *test, const struct okp_rv_case *c, bool probed, bool post)
{
	unsigned long fn = (unsigned long)c->fn;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c->calls) && (c->calls[i].a || c->calls[i].b ||
						   c->calls[i].expect || c->calls[i].post); i++) {
		const struct okp_rv_call *call = &c->calls[i];
		unsigned int hits = call->hits ? call->hits : 1;
		long b = okp_rv_b_of(c, call), r;

		memset(&okp_rv_obs, 0, sizeof(okp_rv_obs));
		r = c->fn(call->a, b);
		KUNIT_EXPECT_EQ_MSG(test, r, okp_rv_expected(c, call), "call %u (probed %d, post %d)",
				    i, probed, post);
		if (c->b_kind == OKP_RV_B_PTR)
			KUNIT_EXPECT_EQ(test, READ_ONCE(okp_rv_word), call->a);
		if (!probed)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, okp_rv_obs.pre_hits, (unsigned long)hits, "call %u", i);
		KUNIT_EXPECT_EQ(test, okp_rv_obs.pre_epc, fn + c->at->insn);
		if (c->b_kind != OKP_RV_B_PTR)
			KUNIT_EXPECT_EQ(test, okp_rv_obs.pre_a1, (unsigned long)b);
		if (!post)
			continue;
		KUNIT_EXPECT_EQ(test, okp_rv_obs.post_hits, (unsigned long)hits);
		/* The step ran with interrupts off and gave status back exactly (SPIE: the probed
		 * code's interrupt enable, on here). */
		KUNIT_EXPECT_EQ(test, okp_rv_obs.post_status, okp_rv_obs.pre_status);
		KUNIT_EXPECT_TRUE(test, okp_rv_obs.pre_status & SR_SPIE);
		switch (call->post) {
		case OKP_RV_POST1:
			KUNIT_EXPECT_EQ_MSG(test, okp_rv_obs.post_epc, fn + c->at->post1, "call %u", i);
			break;
		case OKP_RV_POST2:
			KUNIT_EXPECT_EQ_MSG(test, okp_rv_obs.post_epc, fn + c->at->post2, "call %u", i);
			break;
		case OKP_RV_POST_HELPER:
			KUNIT_EXPECT_EQ(test, okp_rv_obs.post_epc,
					(unsigned long)(c->b_kind == OKP_RV_B_HELPER_T0 ?
							okp_rv_helper_t0 : okp_rv_helper));
			break;
		default:
			break;
		}
		if (c->link == OKP_RV_LINK_RA)
			KUNIT_EXPECT_EQ(test, okp_rv_obs.post_ra, fn + c->at->post2);
		if (c->link == OKP_RV_LINK_T0)
			KUNIT_EXPECT_EQ(test, okp_rv_obs.post_t0, fn + c->at->post2);
	}
}

static void okp_rv_probe_and_run(struct kunit *test, const struct okp_rv_case *c, bool post)
{
	struct okp_kprobe kp = {
		.addr = (okp_kprobe_opcode_t *)((unsigned long)c->fn + c->at->insn),
		.pre_handler = okp_rv_pre,
		.post_handler = post ? okp_rv_post : NULL,
	};
	u16 parcel = *(const u16 *)kp.addr;
	u32 now = 0;
	int ret = okp_register_kprobe(&kp);

	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "%s: %s", c->name, okp_kprobe_reason(&kp));
	/* The breakpoint keeps the instruction's length: c.ebreak or ebreak, whatever the alignment. */
	if ((parcel & 3) != 3) {
		KUNIT_EXPECT_EQ(test, *(const u16 *)kp.addr, (u16)0x9002);
	} else {
		memcpy(&now, kp.addr, 4);
		KUNIT_EXPECT_EQ(test, now, 0x00100073U);
	}
	/* A stepped instruction says so; a simulated one does not (it may still say why it is not
	 * a jump, where the optimizer looked at it). */
	if (c->stepped)
		KUNIT_EXPECT_NOT_NULL(test, strstr(okp_kprobe_reason(&kp), "single-stepped"));
	else
		KUNIT_EXPECT_NULL(test, strstr(okp_kprobe_reason(&kp), "single-stepped"));
	okp_rv_run(test, c, true, post);
	KUNIT_EXPECT_EQ(test, kp.nmissed, 0UL);
	okp_unregister_kprobe(&kp);
	/* Gone: the target runs untouched again. */
	okp_rv_run(test, c, false, false);
}

static void okp_rv_insn_case(struct kunit *test)
{
	const struct okp_rv_case *c = test->param_value;

	okp_kunit_need_breakpoints(test);
	okp_rv_run(test, c, false, false);
	okp_rv_probe_and_run(test, c, false);
	okp_rv_probe_and_run(test, c, true);
}

static void okp_rv_case_desc(const struct okp_rv_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}
KUNIT_ARRAY_PARAM(okp_rv_insn, okp_rv_cases, okp_rv_case_desc);

/* Two probes on one simulated instruction (an aggregate) and a probe hit from a handler's
 * target while a step is open are counted exactly too. */
static void okp_rv_aggregate_case(struct kunit *test)
{
	struct okp_kprobe a = { .addr = (okp_kprobe_opcode_t *)((unsigned long)okp_rv_c_j +
							       okp_rv_c_j_at.insn),
				.pre_handler = okp_rv_pre, .post_handler = okp_rv_post };
	struct okp_kprobe b = a;

	okp_kunit_need_breakpoints(test);
	memset(b.okp_reason, 0, sizeof(b.okp_reason));
	KUNIT_ASSERT_EQ(test, okp_register_kprobe(&a), 0);
	KUNIT_ASSERT_EQ(test, okp_register_kprobe(&b), 0);
	memset(&okp_rv_obs, 0, sizeof(okp_rv_obs));
	KUNIT_EXPECT_EQ(test, okp_rv_c_j(1, 0), 2L);
	KUNIT_EXPECT_EQ(test, okp_rv_obs.pre_hits, 2UL);
	KUNIT_EXPECT_EQ(test, okp_rv_obs.post_hits, 2UL);
	KUNIT_EXPECT_EQ(test, a.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, b.nhit, 1UL);
	okp_unregister_kprobe(&b);
	okp_unregister_kprobe(&a);
}

static struct kunit_case okp_rv_insn_cases[] = {
	KUNIT_CASE_PARAM(okp_rv_insn_case, okp_rv_insn_gen_params),
	KUNIT_CASE(okp_rv_aggregate_case),
	{}
};

static struct kunit_suite okp_rv_insn_suite = {
	.name = "okprobes_insn_riscv",
	.test_cases = okp_rv_insn_cases,
};

/* --- Refusals --- */

struct okp_rv_refusal {
	const char *name;
	unsigned long (*addr)(void);
	int err;
	const char *reason;	/* a part of the reason */
};

#define OKP_RV_AT_ADDR(fn, at, field) \
	static unsigned long okp_rv_addr_##at##_##field(void) \
	{ return (unsigned long)okp_rv_##fn + okp_rv_##at##_at.field; }
OKP_RV_AT_ADDR(lrsc, lrsc, insn)
OKP_RV_AT_ADDR(lrsc, lrsc, post1)
OKP_RV_AT_ADDR(lrsc, lrsc, post2)
OKP_RV_AT_ADDR(system, system, insn)
OKP_RV_AT_ADDR(system, system, post1)
OKP_RV_AT_ADDR(system, system, post2)
OKP_RV_AT_ADDR(system, system_csr, insn)
OKP_RV_AT_ADDR(system, system_csr, post1)
OKP_RV_AT_ADDR(system, system_csr, post2)
OKP_RV_AT_ADDR(system, system_csr2, insn)

/* Inside the 4-byte jal x0 of okp_rv_j, and inside the 4-byte jal after a c.nop. */
static unsigned long okp_rv_addr_mid_j(void) { return (unsigned long)okp_rv_j + okp_rv_j_at.insn + 2; }
static unsigned long okp_rv_addr_mid_jal(void) { return (unsigned long)okp_rv_jal + okp_rv_jal_at.insn + 2; }
static unsigned long okp_rv_addr_odd(void) { return (unsigned long)okp_rv_c_j + 1; }

static const struct okp_rv_refusal okp_rv_refusals[] = {
	{ "lr.d", okp_rv_addr_lrsc_insn, -EINVAL, "lr.d" },
	{ "addi inside LR/SC", okp_rv_addr_lrsc_post1, -EINVAL, "inside the LR/SC sequence" },
	{ "sc.d", okp_rv_addr_lrsc_post2, -EINVAL, "sc.d" },
	{ "ecall", okp_rv_addr_system_insn, -EINVAL, "ecall" },
	{ "ebreak (someone else's)", okp_rv_addr_system_post1, -EBUSY, "ebreak" },
	{ "wfi", okp_rv_addr_system_post2, -EINVAL, "wfi" },
	{ "csrw sstatus", okp_rv_addr_system_csr_insn, -EINVAL, "csrw sstatus" },
	{ "fence.i", okp_rv_addr_system_csr_post1, -EINVAL, "fence.i" },
	{ "csrr sstatus", okp_rv_addr_system_csr_post2, -EINVAL, "csrr sstatus" },
	{ "csrw sscratch", okp_rv_addr_system_csr2_insn, -EINVAL, "csrw sscratch" },
	{ "mid-instruction (aligned)", okp_rv_addr_mid_j, -EILSEQ, "not an instruction boundary" },
	{ "mid-instruction (after c.nop)", okp_rv_addr_mid_jal, -EILSEQ, "not an instruction boundary" },
	{ "odd address", okp_rv_addr_odd, -EILSEQ, "odd" },
};

static void okp_rv_refusal_case(struct kunit *test)
{
	const struct okp_rv_refusal *r = test->param_value;
	struct okp_kprobe kp = { .addr = (okp_kprobe_opcode_t *)r->addr(), .pre_handler = okp_rv_pre };
	int ret;

	okp_kunit_need_breakpoints(test);	/* else every refusal is the degraded mode's */
	ret = okp_register_kprobe(&kp);

	if (!ret)
		okp_unregister_kprobe(&kp);
	KUNIT_EXPECT_EQ_MSG(test, ret, r->err, "%s", okp_kprobe_reason(&kp));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(okp_kprobe_reason(&kp), r->reason), "%s",
				  okp_kprobe_reason(&kp));
}

static void okp_rv_refusal_desc(const struct okp_rv_refusal *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}
KUNIT_ARRAY_PARAM(okp_rv_refusal, okp_rv_refusals, okp_rv_refusal_desc);

/* The branch right after an LR/SC loop's sc is outside it: accepted, and the loop still works. */
static void okp_rv_after_lrsc_case(struct kunit *test)
{
	struct okp_kprobe kp = { .addr = (okp_kprobe_opcode_t *)((unsigned long)okp_rv_lrsc +
								okp_rv_lrsc_after_at.insn),
				 .pre_handler = okp_rv_pre };
	long word = 41;

	okp_kunit_need_breakpoints(test);
	KUNIT_ASSERT_EQ_MSG(test, okp_register_kprobe(&kp), 0, "%s", okp_kprobe_reason(&kp));
	memset(&okp_rv_obs, 0, sizeof(okp_rv_obs));
	okp_rv_lrsc(0, (long)&word);
	KUNIT_EXPECT_EQ(test, word, 42L);
	KUNIT_EXPECT_GE(test, okp_rv_obs.pre_hits, 1UL);
	okp_unregister_kprobe(&kp);
}

static struct kunit_case okp_rv_refusal_cases[] = {
	KUNIT_CASE_PARAM(okp_rv_refusal_case, okp_rv_refusal_gen_params),
	KUNIT_CASE(okp_rv_after_lrsc_case),
	{}
};

static struct kunit_suite okp_rv_refusal_suite = {
	.name = "okprobes_refusal_riscv",
	.test_cases = okp_rv_refusal_cases,
};

kunit_test_suites(&okp_rv_insn_suite, &okp_rv_refusal_suite);
