// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_kprobe" (x86-64): the probe API of <okprobes/okprobes.h> end to end,
 * on this module's own text. probe_targets_x86.S holds one function per instruction class
 * okprobes runs in its own way (out of line, boosted, emulated, refused), with the probed
 * instruction at a global label; the C functions below are function-entry (ftrace) targets
 * and the owners of jump label, static call and WARN sites.
 *
 * Handlers run in the breakpoint trap (NMI-like context): they only record what they saw in
 * their struct okp_t_probe, and the test asserts on it afterwards. Every count is exact.
 * Probes still registered when a case ends (an assertion failed) are unregistered by .exit.
 */
#include <kunit/test.h>
#include <linux/bug.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/smp.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

/* --- The asm targets (probe_targets_x86.S); see there for what each computes. --- */

#define OKP_T_FN(name) long name(long a, long b)
#define OKP_T_LABEL(name) extern const u8 name[]

OKP_T_FN(okp_t_helper);
OKP_T_FN(okp_t_helper2);
OKP_T_FN(okp_t_riprel_load);
OKP_T_FN(okp_t_riprel_store);
OKP_T_FN(okp_t_riprel_rmw);
OKP_T_FN(okp_t_jmp8);
OKP_T_FN(okp_t_jmp32);
OKP_T_FN(okp_t_jcc8);
OKP_T_FN(okp_t_jcc32);
OKP_T_FN(okp_t_call);
OKP_T_FN(okp_t_ret);
OKP_T_FN(okp_t_retimm);
OKP_T_FN(okp_t_icall_reg);
OKP_T_FN(okp_t_icall_rip);
OKP_T_FN(okp_t_icall_rsp);
OKP_T_FN(okp_t_icall_sib);
OKP_T_FN(okp_t_ijmp_reg);
OKP_T_FN(okp_t_ijmp_rip);
OKP_T_FN(okp_t_ijmp_sib);
OKP_T_FN(okp_t_pushf);
OKP_T_FN(okp_t_popf);
OKP_T_FN(okp_t_push_rsp);
OKP_T_FN(okp_t_pop_rsp);
OKP_T_FN(okp_t_mov_reg);
OKP_T_FN(okp_t_mov_imm);
OKP_T_FN(okp_t_frame);
OKP_T_FN(okp_t_push_pop_reg);
OKP_T_FN(okp_t_push_sp);
OKP_T_FN(okp_t_nop);
OKP_T_FN(okp_t_lea);
OKP_T_FN(okp_t_lea32);
OKP_T_FN(okp_t_lea_rip);
OKP_T_FN(okp_t_cli_sti);
OKP_T_FN(okp_t_loop);
OKP_T_FN(okp_t_loopl);
OKP_T_FN(okp_t_jrcxz);
OKP_T_FN(okp_t_rdtsc);
OKP_T_FN(okp_t_skip);
OKP_T_FN(okp_t_int3);
OKP_T_FN(okp_t_int3_before);
OKP_T_FN(okp_t_ud2);
OKP_T_FN(okp_t_extable);
OKP_T_FN(okp_t_hlt);
long okp_t_args(long a, long b, long c, long d, long e, long f, long g, long h);

OKP_T_LABEL(okp_t_riprel_load_insn);
OKP_T_LABEL(okp_t_riprel_load_next);
OKP_T_LABEL(okp_t_riprel_store_insn);
OKP_T_LABEL(okp_t_riprel_store_next);
OKP_T_LABEL(okp_t_riprel_rmw_insn);
OKP_T_LABEL(okp_t_riprel_rmw_next);
OKP_T_LABEL(okp_t_jmp8_insn);
OKP_T_LABEL(okp_t_jmp8_target);
OKP_T_LABEL(okp_t_jmp32_insn);
OKP_T_LABEL(okp_t_jmp32_target);
OKP_T_LABEL(okp_t_jcc8_insn);
OKP_T_LABEL(okp_t_jcc8_next);
OKP_T_LABEL(okp_t_jcc8_target);
OKP_T_LABEL(okp_t_jcc32_insn);
OKP_T_LABEL(okp_t_jcc32_next);
OKP_T_LABEL(okp_t_jcc32_target);
OKP_T_LABEL(okp_t_call_insn);
OKP_T_LABEL(okp_t_call_next);
OKP_T_LABEL(okp_t_ret_insn);
OKP_T_LABEL(okp_t_retimm_insn);
OKP_T_LABEL(okp_t_icall_reg_insn);
OKP_T_LABEL(okp_t_icall_reg_next);
OKP_T_LABEL(okp_t_icall_rip_insn);
OKP_T_LABEL(okp_t_icall_rip_next);
OKP_T_LABEL(okp_t_icall_rsp_insn);
OKP_T_LABEL(okp_t_icall_rsp_next);
OKP_T_LABEL(okp_t_icall_sib_insn);
OKP_T_LABEL(okp_t_icall_sib_next);
OKP_T_LABEL(okp_t_ijmp_reg_insn);
OKP_T_LABEL(okp_t_ijmp_rip_insn);
OKP_T_LABEL(okp_t_ijmp_sib_insn);
OKP_T_LABEL(okp_t_pushf_insn);
OKP_T_LABEL(okp_t_pushf_next);
OKP_T_LABEL(okp_t_popf_insn);
OKP_T_LABEL(okp_t_popf_next);
OKP_T_LABEL(okp_t_push_rsp_insn);
OKP_T_LABEL(okp_t_push_rsp_next);
OKP_T_LABEL(okp_t_pop_rsp_insn);
OKP_T_LABEL(okp_t_pop_rsp_next);
OKP_T_LABEL(okp_t_mov_reg_insn);
OKP_T_LABEL(okp_t_mov_reg_next);
OKP_T_LABEL(okp_t_mov_imm_insn);
OKP_T_LABEL(okp_t_mov_imm_next);
OKP_T_LABEL(okp_t_frame_insn);
OKP_T_LABEL(okp_t_frame_next);
OKP_T_LABEL(okp_t_push_reg_insn);
OKP_T_LABEL(okp_t_push_reg_next);
OKP_T_LABEL(okp_t_pop_reg_insn);
OKP_T_LABEL(okp_t_pop_reg_next);
OKP_T_LABEL(okp_t_push_sp_insn);
OKP_T_LABEL(okp_t_push_sp_next);
OKP_T_LABEL(okp_t_nop_insn);
OKP_T_LABEL(okp_t_nop_next);
OKP_T_LABEL(okp_t_lea_insn);
OKP_T_LABEL(okp_t_lea_next);
OKP_T_LABEL(okp_t_lea32_insn);
OKP_T_LABEL(okp_t_lea32_next);
OKP_T_LABEL(okp_t_lea_rip_insn);
OKP_T_LABEL(okp_t_lea_rip_next);
OKP_T_LABEL(okp_t_cli_insn);
OKP_T_LABEL(okp_t_cli_next);
OKP_T_LABEL(okp_t_sti_insn);
OKP_T_LABEL(okp_t_sti_next);
OKP_T_LABEL(okp_t_loop_insn);
OKP_T_LABEL(okp_t_loop_next);
OKP_T_LABEL(okp_t_loopl_insn);
OKP_T_LABEL(okp_t_loopl_next);
OKP_T_LABEL(okp_t_jrcxz_insn);
OKP_T_LABEL(okp_t_jrcxz_next);
OKP_T_LABEL(okp_t_jrcxz_target);
OKP_T_LABEL(okp_t_rdtsc_insn);
OKP_T_LABEL(okp_t_rdtsc_next);
OKP_T_LABEL(okp_t_skip_insn);
OKP_T_LABEL(okp_t_skip_next);
OKP_T_LABEL(okp_t_int3_insn);
OKP_T_LABEL(okp_t_ud2_insn);
OKP_T_LABEL(okp_t_extable_insn);
OKP_T_LABEL(okp_t_hlt_insn);

OKP_T_FN(okp_t_jcc_o);
OKP_T_FN(okp_t_jcc_no);
OKP_T_FN(okp_t_jcc_b);
OKP_T_FN(okp_t_jcc_ae);
OKP_T_FN(okp_t_jcc_e);
OKP_T_FN(okp_t_jcc_ne);
OKP_T_FN(okp_t_jcc_be);
OKP_T_FN(okp_t_jcc_a);
OKP_T_FN(okp_t_jcc_s);
OKP_T_FN(okp_t_jcc_ns);
OKP_T_FN(okp_t_jcc_p);
OKP_T_FN(okp_t_jcc_np);
OKP_T_FN(okp_t_jcc_l);
OKP_T_FN(okp_t_jcc_ge);
OKP_T_FN(okp_t_jcc_le);
OKP_T_FN(okp_t_jcc_g);
OKP_T_LABEL(okp_t_jcc_o_insn);
OKP_T_LABEL(okp_t_jcc_no_insn);
OKP_T_LABEL(okp_t_jcc_b_insn);
OKP_T_LABEL(okp_t_jcc_ae_insn);
OKP_T_LABEL(okp_t_jcc_e_insn);
OKP_T_LABEL(okp_t_jcc_ne_insn);
OKP_T_LABEL(okp_t_jcc_be_insn);
OKP_T_LABEL(okp_t_jcc_a_insn);
OKP_T_LABEL(okp_t_jcc_s_insn);
OKP_T_LABEL(okp_t_jcc_ns_insn);
OKP_T_LABEL(okp_t_jcc_p_insn);
OKP_T_LABEL(okp_t_jcc_np_insn);
OKP_T_LABEL(okp_t_jcc_l_insn);
OKP_T_LABEL(okp_t_jcc_ge_insn);
OKP_T_LABEL(okp_t_jcc_le_insn);
OKP_T_LABEL(okp_t_jcc_g_insn);

extern long okp_t_data;
extern long okp_t_store_var;
extern const u32 okp_t_int3_before_off;

#define OKP_T_INT3 0xcc
#define OKP_T_DATA 0x1234L
/* RFLAGS bits. */
#define OKP_T_CF 0x001UL
#define OKP_T_PF 0x004UL
#define OKP_T_AF 0x010UL
#define OKP_T_ZF 0x040UL
#define OKP_T_SF 0x080UL
#define OKP_T_IF 0x200UL
#define OKP_T_OF 0x800UL
#define OKP_T_ARITH (OKP_T_CF | OKP_T_PF | OKP_T_AF | OKP_T_ZF | OKP_T_SF | OKP_T_OF)
#define OKP_T_RF 0x10000UL
#define OKP_T_VM 0x20000UL

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

/* A static symbol of the same name as a local asm one: "okp_t_dup" is ambiguous. */
static noinline __used long okp_t_dup(long a)
{
	return a + 2;
}

/* A jump label site. */
static DEFINE_STATIC_KEY_FALSE(okp_t_key);

static noinline long okp_t_jump_label(long a)
{
	if (static_branch_unlikely(&okp_t_key))
		return a * 2;
	return a + 1;
}

static long (*volatile okp_t_jump_label_ptr)(long) = okp_t_jump_label;

/* A static call site. */
static long okp_t_sc_target(long a)
{
	return a + 5;
}

DEFINE_STATIC_CALL(okp_t_sc, okp_t_sc_target);

static noinline long okp_t_static_call(long a)
{
	return static_call(okp_t_sc)(a) + 1;
}

static long (*volatile okp_t_static_call_ptr)(long) = okp_t_static_call;

/* A WARN site (never triggered: nothing passes 0x5eed). */
static noinline void okp_t_warn(long a)
{
	WARN_ON(a == 0x5eed);
}

static void (*volatile okp_t_warn_ptr)(long) = okp_t_warn;

/* --- Probes that record what their handlers saw. --- */

struct okp_t_obs {
	unsigned int pre_calls, post_calls;
	unsigned long pre_ip, pre_sp, pre_top, pre_flags;
	unsigned long post_ip, post_sp, post_top, post_top1, post_flags;
	unsigned long args[8];		/* okp_arg(regs, 0..7) */
	unsigned long regs_args[6];	/* regs->di, si, dx, cx, r8, r9 */
	long hook_result;
};

struct okp_t_probe {
	struct okp_kprobe kp;
	int id;
	unsigned long redirect;	/* pre_handler: set regs->ip to it and return 1 */
	bool read_args;
	/* Called from the pre (or post) handler: a probed function, for re-entry. */
	long (*pre_call)(long a, long b);
	long (*post_call)(long a, long b);
	long call_arg;
	unsigned int *cpu_pre, *cpu_post;	/* handler runs per CPU, if set */
	struct okp_t_obs obs;
};

/* The order handlers ran in: 10 * id + 1 for a pre_handler, 10 * id + 2 for a post_handler. */
static int okp_t_order[16];
static unsigned int okp_t_norder;

static void okp_t_log(int what)
{
	unsigned int n = READ_ONCE(okp_t_norder);

	if (n < ARRAY_SIZE(okp_t_order))
		okp_t_order[n] = what;
	WRITE_ONCE(okp_t_norder, n + 1);
}

static unsigned long okp_t_top(unsigned long sp)
{
	return *(unsigned long *)sp;
}

static int okp_t_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_t_probe *p = container_of(kp, struct okp_t_probe, kp);
	unsigned int i;

	if (p->cpu_pre) {
		p->cpu_pre[smp_processor_id()]++;
		return 0;
	}
	p->obs.pre_calls++;
	p->obs.pre_ip = regs->ip;
	p->obs.pre_sp = regs->sp;
	p->obs.pre_top = okp_t_top(regs->sp);
	p->obs.pre_flags = regs->flags;
	okp_t_log(10 * p->id + 1);
	if (p->read_args) {
		for (i = 0; i < ARRAY_SIZE(p->obs.args); i++)
			p->obs.args[i] = okp_arg(regs, i);
		p->obs.regs_args[0] = regs->di;
		p->obs.regs_args[1] = regs->si;
		p->obs.regs_args[2] = regs->dx;
		p->obs.regs_args[3] = regs->cx;
		p->obs.regs_args[4] = regs->r8;
		p->obs.regs_args[5] = regs->r9;
	}
	if (p->pre_call)
		p->obs.hook_result = p->pre_call(p->call_arg, 0);
	if (p->redirect) {
		regs->ip = p->redirect;
		return 1;
	}
	return 0;
}

static void okp_t_post(struct okp_kprobe *kp, struct pt_regs *regs, unsigned long flags)
{
	struct okp_t_probe *p = container_of(kp, struct okp_t_probe, kp);

	if (p->cpu_post) {
		p->cpu_post[smp_processor_id()]++;
		return;
	}
	p->obs.post_calls++;
	p->obs.post_ip = regs->ip;
	p->obs.post_sp = regs->sp;
	p->obs.post_top = okp_t_top(regs->sp);
	p->obs.post_top1 = okp_t_top(regs->sp + 8);
	p->obs.post_flags = regs->flags;
	okp_t_log(10 * p->id + 2);
	if (p->post_call)
		p->obs.hook_result = p->post_call(p->call_arg, 0);
}

static struct okp_t_probe *okp_t_new(struct kunit *test, int id, const void *addr,
				     const char *symbol, unsigned int offset, bool pre, bool post)
{
	struct okp_t_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	p->id = id;
	p->kp.addr = (okp_kprobe_opcode_t *)addr;
	p->kp.symbol_name = symbol;
	p->kp.offset = offset;
	p->kp.pre_handler = pre ? okp_t_pre : NULL;
	p->kp.post_handler = post ? okp_t_post : NULL;
	return p;
}

/* What is registered, for .exit to clean up after a failed assertion. */
static struct okp_kprobe *okp_t_live[48];

static void okp_t_track(struct okp_kprobe *kp, bool live)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okp_t_live); i++) {
		if (live && !okp_t_live[i]) {
			okp_t_live[i] = kp;
			return;
		}
		if (!live && okp_t_live[i] == kp) {
			okp_t_live[i] = NULL;
			return;
		}
	}
}

static int okp_t_register(struct okp_t_probe *p)
{
	int ret = okp_register_kprobe(&p->kp);

	if (!ret)
		okp_t_track(&p->kp, true);
	return ret;
}

static void okp_t_unregister(struct okp_t_probe *p)
{
	okp_t_track(&p->kp, false);
	okp_unregister_kprobe(&p->kp);
}

static void okp_t_reset(struct okp_t_probe *p)
{
	memset(&p->obs, 0, sizeof(p->obs));
}

static u8 okp_t_byte(const void *addr)
{
	return READ_ONCE(*(const u8 *)addr);
}

static bool okp_t_is_endbr(const void *addr)
{
	static const u8 endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 sealed[] = { 0x0f, 0x1f, 0x40, 0xd6 };

	return !memcmp(addr, endbr, 4) || !memcmp(addr, sealed, 4);
}

/* Where a probe at a function's first byte lands: after its ENDBR64, if it has one. */
static const u8 *okp_t_entry(const void *fn)
{
	return (const u8 *)fn + (okp_t_is_endbr(fn) ? 4 : 0);
}

static bool okp_t_has(const char *s, const char *what)
{
	return s && strstr(s, what);
}

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
	{ "add imm32", okp_t_skip_insn, okp_t_skip, OKP_T_SLOT, .calls = {
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
	/* The reason says why a stepped instruction is not boosted, and nothing else. */
	if (c->kind == OKP_T_NOBOOST)
		KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(okp_kprobe_reason(&p->kp), "must be single-stepped"),
				      "reason: '%s'", okp_kprobe_reason(&p->kp));
	else if (c->kind == OKP_T_SLOT && post)
		KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(okp_kprobe_reason(&p->kp), "not boosted"),
				      "reason: '%s'", okp_kprobe_reason(&p->kp));
	else
		KUNIT_EXPECT_STREQ(test, okp_kprobe_reason(&p->kp), "");

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
	KUNIT_EXPECT_STREQ(test, okp_kprobe_reason(&a->kp), "");
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
	/* Alone and disabled: the breakpoint is gone, nothing is counted. */
	KUNIT_EXPECT_EQ(test, okp_t_byte(insn), orig);
	KUNIT_EXPECT_EQ(test, okp_t_riprel_load(2, 0), 2 + OKP_T_DATA);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 0UL);
	KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 1U);

	KUNIT_EXPECT_EQ(test, okp_enable_kprobe(&p->kp), 0);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_DISABLED, 0U);
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

/* On an ftrace site, a redirect needs OKP_KPROBE_FLAG_IPMODIFY; without it, it is undone. */
static void okp_kprobe_ftrace_ipmodify(struct kunit *test)
{
	struct okp_t_probe *p = okp_t_new(test, 1, NULL, "okp_t_c_orig", 0, true, true);
	struct okp_t_probe *q = okp_t_new(test, 2, NULL, "okp_t_c_orig", 0, true, false);

	KUNIT_ASSERT_EQ(test, okp_t_c_orig_ptr(3), 4L);
	p->redirect = (unsigned long)okp_t_c_alt;
	p->kp.flags = OKP_KPROBE_FLAG_IPMODIFY;
	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_FTRACE, (unsigned int)OKP_KPROBE_FLAG_FTRACE);
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

	/* Without IPMODIFY: the function runs, the redirect is counted as a miss. */
	p->kp.flags = 0;
	p->kp.addr = NULL;
	okp_t_reset(p);
	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	KUNIT_EXPECT_EQ(test, okp_t_c_orig_ptr(3), 4L);
	KUNIT_EXPECT_EQ(test, p->obs.pre_calls, 1U);
	KUNIT_EXPECT_EQ(test, p->obs.post_calls, 0U);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed, 1UL);
	KUNIT_EXPECT_EQ(test, p->kp.nmissed_by[OKP_MISS_IPMODIFY], 1UL);
	okp_t_unregister(p);
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

/* --- Refusals: each with its errno and a reason. --- */

struct okp_t_refusal {
	const char *name;
	int err;
	const char *reason_has;
	const char *symbol;
	unsigned int offset;
	const void *addr;
	/* A site found at run time (NULL: use addr). */
	unsigned long (*find)(struct kunit *test);
	bool null_probe;
};

static unsigned long okp_t_jump_label_site(struct kunit *test)
{
	struct jump_entry *e = THIS_MODULE->jump_entries;
	unsigned int i;

	for (i = 0; i < THIS_MODULE->num_jump_entries; i++, e++)
		if (jump_entry_key(e) == &okp_t_key.key)
			return jump_entry_code(e);
	return 0;
}

static unsigned long okp_t_static_call_site(struct kunit *test)
{
	struct static_call_site *s = THIS_MODULE->static_call_sites;
	int i;

	for (i = 0; i < THIS_MODULE->num_static_call_sites; i++, s++) {
		unsigned long key = ((unsigned long)&s->key + s->key) & ~(unsigned long)STATIC_CALL_SITE_FLAGS;

		if (key == (unsigned long)&STATIC_CALL_KEY(okp_t_sc))
			return (unsigned long)&s->addr + s->addr;
	}
	return 0;
}

static unsigned long okp_t_warn_site(struct kunit *test)
{
	struct bug_entry *b = THIS_MODULE->bug_table;
	char sym[KSYM_SYMBOL_LEN];
	unsigned int i;

	for (i = 0; i < THIS_MODULE->num_bugs; i++, b++) {
		unsigned long addr = (unsigned long)&b->bug_addr_disp + b->bug_addr_disp;

		sprint_symbol(sym, addr);
		if (!strncmp(sym, "okp_t_warn+", strlen("okp_t_warn+")))
			return addr;
	}
	return 0;
}

/* +1 into the call __fentry__ of a C function. */
static unsigned long okp_t_ftrace_site_plus1(struct kunit *test)
{
	struct okp_t_probe *p = okp_t_new(test, 1, NULL, "okp_t_c_orig", 0, true, false);
	unsigned long site;

	if (okp_t_register(p))
		return 0;
	site = (unsigned long)p->kp.addr;
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_FTRACE, (unsigned int)OKP_KPROBE_FLAG_FTRACE);
	okp_t_unregister(p);
	return site + 1;
}

static unsigned long okp_t_jiffies(struct kunit *test)
{
	return (unsigned long)&jiffies;
}

static const struct okp_t_refusal okp_t_refusals[] = {
	{ "NULL probe", -EINVAL, "NULL", .null_probe = true },
	{ "symbol and address", -EINVAL, "both", .symbol = "okp_t_riprel_load",
	  .addr = okp_t_riprel_load_insn },
	{ "neither symbol nor address", -EINVAL, "neither" },
	{ "unknown symbol", -ENOENT, "no text symbol", .symbol = "okp_t_no_such_function" },
	{ "data symbol", -ENOENT, "no text symbol", .symbol = "okp_t_data" },
	{ "bad module prefix", -EINVAL, "module prefix", .symbol = ":okp_t_riprel_load" },
	{ "ambiguous symbol", -EADDRNOTAVAIL, "ambiguous", .symbol = "okp_t_dup" },
	{ "ambiguous symbol in a module", -EADDRNOTAVAIL, "ambiguous",
	  .symbol = "okprobes_kunit:okp_t_dup" },
	{ "mid-instruction address", -EILSEQ, "not an instruction boundary",
	  .addr = okp_t_riprel_load_insn + 2 },
	{ "mid-instruction symbol+offset", -EILSEQ, "not an instruction boundary",
	  .symbol = "okp_t_riprel_load_insn", .offset = 3 },
	{ "blacklisted (notify_die)", -EINVAL, "blacklisted", .symbol = "notify_die" },
	{ "blacklisted (okprobes itself)", -EINVAL, "blacklisted", .symbol = "okp_register_kprobe" },
	{ "not text (module data)", -EINVAL, "not kernel or module text", .addr = &okp_t_data },
	{ "not text (vmlinux data)", -EINVAL, "not kernel or module text", .find = okp_t_jiffies },
	{ "jump label site", -EBUSY, "jump label", .find = okp_t_jump_label_site },
	{ "static call site", -EBUSY, "static call", .find = okp_t_static_call_site },
	{ "WARN site", -EBUSY, "BUG/WARN", .find = okp_t_warn_site },
	{ "ud2", -EBUSY, "BUG/WARN", .addr = okp_t_ud2_insn },
	{ "exception table site", -EBUSY, "exception-table", .addr = okp_t_extable_insn },
	{ "int3 already there", -EBUSY, "int3", .addr = okp_t_int3_insn },
	{ "int3 before the probe", -EBUSY, "int3", .symbol = "okp_t_int3_before" },
	{ "inside the ftrace call", -EILSEQ, "ftrace call", .find = okp_t_ftrace_site_plus1 },
	{ "hlt (cannot be stepped)", -EINVAL, "hlt", .addr = okp_t_hlt_insn },
};

static void okp_t_refusal_desc(const struct okp_t_refusal *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(okp_t_refusal, okp_t_refusals, okp_t_refusal_desc);

static void okp_kprobe_refusal(struct kunit *test)
{
	const struct okp_t_refusal *r = test->param_value;
	struct okp_t_probe *p;
	const void *addr = r->addr;
	unsigned int offset = r->offset;
	u8 before = 0;
	int ret;

	if (r->null_probe) {
		KUNIT_EXPECT_EQ(test, okp_register_kprobe(NULL), r->err);
		KUNIT_EXPECT_TRUE(test, okp_t_has(okp_kprobe_reason(NULL), r->reason_has));
		okp_unregister_kprobe(NULL);
		return;
	}
	if (r->find) {
		addr = (const void *)r->find(test);
		KUNIT_ASSERT_TRUE_MSG(test, addr != NULL, "site not found in this module");
	}
	if (r->symbol && !strcmp(r->symbol, "okp_t_int3_before"))
		offset = okp_t_int3_before_off;
	p = okp_t_new(test, 1, addr, r->symbol, offset, true, false);
	if (addr && r->err != -EINVAL)
		before = okp_t_byte(addr);

	ret = okp_t_register(p);
	KUNIT_EXPECT_EQ_MSG(test, ret, r->err, "reason: '%s'", okp_kprobe_reason(&p->kp));
	KUNIT_EXPECT_TRUE_MSG(test, okp_kprobe_reason(&p->kp)[0] != '\0', "empty reason");
	KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(okp_kprobe_reason(&p->kp), r->reason_has),
			      "reason '%s' does not say '%s'", okp_kprobe_reason(&p->kp),
			      r->reason_has);
	kunit_info(test, "%d: %s\n", ret, okp_kprobe_reason(&p->kp));
	if (!ret) {
		okp_t_unregister(p);
		return;
	}
	/* Refused: not registered, text untouched, addr as the caller left it. */
	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&p->kp), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, (const void *)p->kp.addr, addr);
	if (addr && r->err != -EINVAL)
		KUNIT_EXPECT_EQ(test, okp_t_byte(addr), before);
}

/* Registering one struct twice: -EEXIST, and the registered probe is left as it was. */
static void okp_kprobe_already_registered(struct kunit *test)
{
	struct okp_t_probe *p = okp_t_new(test, 1, okp_t_rdtsc_insn, NULL, 0, true, false);
	char reason[OKP_REASON_MAX];

	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	strscpy(reason, okp_kprobe_reason(&p->kp), sizeof(reason));
	KUNIT_EXPECT_TRUE(test, reason[0] != '\0');
	KUNIT_EXPECT_EQ(test, okp_register_kprobe(&p->kp), -EEXIST);
	KUNIT_EXPECT_STREQ(test, okp_kprobe_reason(&p->kp), reason);
	KUNIT_EXPECT_EQ(test, okp_t_rdtsc(1, 0), 2L);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	okp_t_unregister(p);
	KUNIT_EXPECT_EQ(test, okp_t_rdtsc(1, 0), 2L);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
}

/* The sites the refusal cases use exist and behave (the asm ones are never called). */
static void okp_kprobe_c_sites_callable(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, okp_t_jump_label_ptr(3), 4L);
	KUNIT_EXPECT_EQ(test, okp_t_static_call_ptr(3), 9L);
	okp_t_warn_ptr(3);
	KUNIT_EXPECT_EQ(test, okp_t_dup(3), 5L);
}

static int okp_kprobe_test_init(struct kunit *test)
{
	okp_t_norder = 0;
	memset(okp_t_live, 0, sizeof(okp_t_live));
	return 0;
}

static void okp_kprobe_test_exit(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okp_t_live); i++) {
		if (okp_t_live[i]) {
			okp_unregister_kprobe(okp_t_live[i]);
			okp_t_live[i] = NULL;
		}
	}
}

static struct kunit_case okp_kprobe_cases[] = {
	KUNIT_CASE_PARAM(okp_kprobe_insn_class, okp_t_insn_gen_params),
	KUNIT_CASE(okp_kprobe_jcc_conditions),
	KUNIT_CASE(okp_kprobe_args_breakpoint),
	KUNIT_CASE(okp_kprobe_args_ftrace),
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
	KUNIT_CASE_PARAM(okp_kprobe_refusal, okp_t_refusal_gen_params),
	KUNIT_CASE(okp_kprobe_already_registered),
	KUNIT_CASE(okp_kprobe_c_sites_callable),
	{}
};

static struct kunit_suite okp_kprobe_suite = {
	.name = "okprobes_kprobe",
	.init = okp_kprobe_test_init,
	.exit = okp_kprobe_test_exit,
	.test_cases = okp_kprobe_cases,
};
kunit_test_suites(&okp_kprobe_suite);
