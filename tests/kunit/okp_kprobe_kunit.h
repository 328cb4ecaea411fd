/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the x86-64 probe suites (okprobes_kprobe, okprobes_insn, okprobes_refusal) share: the
 * asm targets of probe_targets_x86.S, and probes that record what their handlers saw
 * (okp_kprobe_probes.c). Handlers run in the breakpoint trap (NMI-like context): they only
 * record, and the test asserts afterwards. Every count is exact.
 */
#ifndef OKP_KPROBE_KUNIT_H
#define OKP_KPROBE_KUNIT_H

#include <kunit/test.h>
#include <linux/string.h>
#include <linux/types.h>
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
OKP_T_FN(okp_t_alu_add);
OKP_T_FN(okp_t_alu_sub_imm8);
OKP_T_FN(okp_t_alu_cmp);
OKP_T_FN(okp_t_alu_and32_imm32);
OKP_T_FN(okp_t_alu_or32);
OKP_T_FN(okp_t_alu_xor);
OKP_T_FN(okp_t_alu_test32);
OKP_T_FN(okp_t_alu_inc);
OKP_T_FN(okp_t_alu_dec32);
OKP_T_FN(okp_t_alu_sp);
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
OKP_T_LABEL(okp_t_alu_add_insn);
OKP_T_LABEL(okp_t_alu_add_next);
OKP_T_LABEL(okp_t_alu_sub_imm8_insn);
OKP_T_LABEL(okp_t_alu_sub_imm8_next);
OKP_T_LABEL(okp_t_alu_cmp_insn);
OKP_T_LABEL(okp_t_alu_cmp_next);
OKP_T_LABEL(okp_t_alu_and32_imm32_insn);
OKP_T_LABEL(okp_t_alu_and32_imm32_next);
OKP_T_LABEL(okp_t_alu_or32_insn);
OKP_T_LABEL(okp_t_alu_or32_next);
OKP_T_LABEL(okp_t_alu_xor_insn);
OKP_T_LABEL(okp_t_alu_xor_next);
OKP_T_LABEL(okp_t_alu_test32_insn);
OKP_T_LABEL(okp_t_alu_test32_next);
OKP_T_LABEL(okp_t_alu_inc_insn);
OKP_T_LABEL(okp_t_alu_inc_next);
OKP_T_LABEL(okp_t_alu_dec32_insn);
OKP_T_LABEL(okp_t_alu_dec32_next);
OKP_T_LABEL(okp_t_alu_sp_insn);
OKP_T_LABEL(okp_t_alu_sp_next);
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

/* --- Probes that record what their handlers saw (okp_kprobe_probes.c). --- */

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
extern int okp_t_order[16];
extern unsigned int okp_t_norder;

struct okp_t_probe *okp_t_new(struct kunit *test, int id, const void *addr,
			      const char *symbol, unsigned int offset, bool pre, bool post);
/* Register/unregister, tracked so that a case that fails an assertion leaves nothing behind. */
int okp_t_register(struct okp_t_probe *p);
void okp_t_unregister(struct okp_t_probe *p);
void okp_t_reset(struct okp_t_probe *p);
/* For probes registered without okp_t_register() (batches): live or gone. */
void okp_t_track(struct okp_kprobe *kp, bool live);
/* The suites' .init and .exit: .exit unregisters what a failed case left registered. */
int okp_t_suite_init(struct kunit *test);
void okp_t_suite_exit(struct kunit *test);

static inline u8 okp_t_byte(const void *addr)
{
	return READ_ONCE(*(const u8 *)addr);
}

static inline bool okp_t_is_endbr(const void *addr)
{
	static const u8 endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 sealed[] = { 0x0f, 0x1f, 0x40, 0xd6 };

	/*
	 * Compared through a register: folded into "cmpl $imm, fn(%rip)" the read's PC32
	 * relocation has addend -8, which 6.12's objtool takes for a reference to fn-4 (padding,
	 * not an ENDBR) and warns "relocation to !ENDBR".
	 */
	OPTIMIZER_HIDE_VAR(addr);
	return !memcmp(addr, endbr, 4) || !memcmp(addr, sealed, 4);
}

/* Where a probe at a function's first byte lands: after its ENDBR64, if it has one. */
static inline const u8 *okp_t_entry(const void *fn)
{
	const u8 *start = fn;

	/* Opaque, so no "fn+4" constant is emitted: objtool's IBT check flags it (!ENDBR). */
	OPTIMIZER_HIDE_VAR(start);
	return start + (okp_t_is_endbr(start) ? 4 : 0);
}

/* What a probe's reason says about its breakpoint: the part after the optimizer's "not
 * optimized: ...; ", "" when the optimizer's is all there is. The optimizer runs 20 ms after a
 * registration, on another CPU: a check right after okp_register_kprobe() may see its verdict
 * already (test-debug under load did). */
static inline const char *okp_t_breakpoint_reason(const char *reason)
{
	const char *sep;

	if (strncmp(reason, "not optimized: ", 15))
		return reason;
	sep = strstr(reason, "; not boosted: ");
	return sep ? sep + 2 : "";
}

static inline bool okp_t_has(const char *s, const char *what)
{
	return s && strstr(s, what);
}

#endif /* OKP_KPROBE_KUNIT_H */
