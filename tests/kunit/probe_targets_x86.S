/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 probe targets for the KUnit suite "okprobes_kprobe" (okp_kprobe_kunit.c).
 *
 * Each function holds one instruction of a class okprobes handles in its own way (stepped
 * or boosted out of line, emulated, refused) at a global label okp_t_<name>_insn, and
 * computes a result the test knows (see the C prototypes), so a probe that runs the
 * instruction wrongly changes the result. okp_t_<name>_next labels the instruction after
 * it (where a post_handler must see regs->ip), okp_t_<name>_target the branch target.
 * Every C prototype is long f(long a, long b); functions that take one argument ignore b.
 *
 * The labels are referenced from C, so each is ANNOTATE_NOENDBR for objtool's IBT check;
 * the functions have ENDBR64 (SYM_FUNC_START) and return through RET (rethunk/SLS).
 * Indirect branches are ANNOTATE_RETPOLINE_SAFE: they are what is being tested.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include <asm/nospec-branch.h>
#include <asm/unwind_hints.h>

#define OKP_LABEL(name) SYM_INNER_LABEL(name, SYM_L_GLOBAL) ASM_NL ANNOTATE_NOENDBR

	.data
	.balign 8
SYM_DATA(okp_t_data, .quad 0x1234)
SYM_DATA(okp_t_store_var, .quad 0)
SYM_DATA(okp_t_rmw_var, .quad 0)
SYM_DATA(okp_t_fnptr, .quad okp_t_helper)
/* okp_t_fntable[2] is reached as 8(table, index 1, scale 8). */
SYM_DATA(okp_t_fntable, .quad 0, 0, okp_t_helper2, 0)

	.text

/* helper(a) = 3a + 7: the target of the call and jmp classes. */
SYM_FUNC_START(okp_t_helper)
	leaq 7(%rdi,%rdi,2), %rax
	RET
SYM_FUNC_END(okp_t_helper)

/* helper2(a) = 5a + 1: the target of the table-indexed classes. */
SYM_FUNC_START(okp_t_helper2)
	leaq 1(%rdi,%rdi,4), %rax
	RET
SYM_FUNC_END(okp_t_helper2)

/* a + 0x1234: rip-relative load (stepped/boosted with its disp32 re-aimed). */
SYM_FUNC_START(okp_t_riprel_load)
OKP_LABEL(okp_t_riprel_load_insn)
	movq okp_t_data(%rip), %rax
OKP_LABEL(okp_t_riprel_load_next)
	addq %rdi, %rax
	RET
SYM_FUNC_END(okp_t_riprel_load)

/* a + 1, and okp_t_store_var = a: rip-relative store. */
SYM_FUNC_START(okp_t_riprel_store)
OKP_LABEL(okp_t_riprel_store_insn)
	movq %rdi, okp_t_store_var(%rip)
OKP_LABEL(okp_t_riprel_store_next)
	movq okp_t_store_var(%rip), %rax
	addq $1, %rax
	RET
SYM_FUNC_END(okp_t_riprel_store)

/* a + 3: rip-relative read-modify-write whose disp32 is followed by an imm8. */
SYM_FUNC_START(okp_t_riprel_rmw)
	movq %rdi, okp_t_rmw_var(%rip)
OKP_LABEL(okp_t_riprel_rmw_insn)
	addq $3, okp_t_rmw_var(%rip)
OKP_LABEL(okp_t_riprel_rmw_next)
	movq okp_t_rmw_var(%rip), %rax
	RET
SYM_FUNC_END(okp_t_riprel_rmw)

/* a + 1: jmp rel8 (backwards, so that everything is reachable for objtool). */
SYM_FUNC_START(okp_t_jmp8)
	movq %rdi, %rax
	jmp .Ljmp8_go
.Ljmp8_target:
OKP_LABEL(okp_t_jmp8_target)
	addq $1, %rax
	RET
.Ljmp8_go:
OKP_LABEL(okp_t_jmp8_insn)
	jmp .Ljmp8_target
SYM_FUNC_END(okp_t_jmp8)

/* a + 2: jmp rel32. */
SYM_FUNC_START(okp_t_jmp32)
	movq %rdi, %rax
	jmp .Ljmp32_go
.Ljmp32_target:
OKP_LABEL(okp_t_jmp32_target)
	addq $2, %rax
	RET
.Ljmp32_go:
OKP_LABEL(okp_t_jmp32_insn)
	{disp32} jmp .Ljmp32_target
SYM_FUNC_END(okp_t_jmp32)

/* a < 0 ? -a : a + 1: js rel8, taken for negative a. */
SYM_FUNC_START(okp_t_jcc8)
	movq %rdi, %rax
	testq %rdi, %rdi
OKP_LABEL(okp_t_jcc8_insn)
	js .Ljcc8_target
OKP_LABEL(okp_t_jcc8_next)
	addq $1, %rax
	RET
.Ljcc8_target:
OKP_LABEL(okp_t_jcc8_target)
	negq %rax
	RET
SYM_FUNC_END(okp_t_jcc8)

/* a < 0 ? -a : a + 1: js rel32. */
SYM_FUNC_START(okp_t_jcc32)
	movq %rdi, %rax
	testq %rdi, %rdi
OKP_LABEL(okp_t_jcc32_insn)
	{disp32} js .Ljcc32_target
OKP_LABEL(okp_t_jcc32_next)
	addq $1, %rax
	RET
.Ljcc32_target:
OKP_LABEL(okp_t_jcc32_target)
	negq %rax
	RET
SYM_FUNC_END(okp_t_jcc32)

/*
 * okp_t_jcc_<cc>(f): loads the arithmetic flags CF PF AF ZF SF OF from f (the others are
 * kept), then returns 1 if j<cc> (rel8, at okp_t_jcc_<cc>_insn) is taken, else 0.
 */
.macro OKP_JCC cc
SYM_FUNC_START(okp_t_jcc_\cc)
	pushfq
	movq (%rsp), %rax
	andq $~0x8d5, %rax
	andl $0x8d5, %edi
	orq %rdi, %rax
	movq %rax, (%rsp)
	popfq
OKP_LABEL(okp_t_jcc_\cc\()_insn)
	j\cc .Ljcc_\cc\()_taken
	xorl %eax, %eax
	RET
.Ljcc_\cc\()_taken:
	movl $1, %eax
	RET
SYM_FUNC_END(okp_t_jcc_\cc)
.endm

	OKP_JCC o
	OKP_JCC no
	OKP_JCC b
	OKP_JCC ae
	OKP_JCC e
	OKP_JCC ne
	OKP_JCC be
	OKP_JCC a
	OKP_JCC s
	OKP_JCC ns
	OKP_JCC p
	OKP_JCC np
	OKP_JCC l
	OKP_JCC ge
	OKP_JCC le
	OKP_JCC g

/* 3a + 12: call rel32 to helper. */
SYM_FUNC_START(okp_t_call)
OKP_LABEL(okp_t_call_insn)
	call okp_t_helper
OKP_LABEL(okp_t_call_next)
	addq $5, %rax
	RET
SYM_FUNC_END(okp_t_call)

/* a + 1: a bare ret (the RET macro is a jmp to the return thunk under RETHUNK). */
SYM_FUNC_START(okp_t_ret)
	leaq 1(%rdi), %rax
OKP_LABEL(okp_t_ret_insn)
	ANNOTATE_UNRET_SAFE
	ret
	int3
SYM_FUNC_END(okp_t_ret)

/* a + 2: ret $8, through a callee that pops the word its caller pushed. */
SYM_FUNC_START(okp_t_retimm_callee)
	movq 8(%rsp), %rax
	addq $2, %rax
OKP_LABEL(okp_t_retimm_insn)
	ANNOTATE_UNRET_SAFE
	ret $8
	int3
SYM_FUNC_END(okp_t_retimm_callee)

SYM_FUNC_START(okp_t_retimm)
	pushq %rdi
	call okp_t_retimm_callee
	/* The callee popped the pushed word: the frame is the entry one again. */
	UNWIND_HINT_FUNC
	RET
SYM_FUNC_END(okp_t_retimm)

/* 3a + 12: call *%r11. */
SYM_FUNC_START(okp_t_icall_reg)
	leaq okp_t_helper(%rip), %r11
OKP_LABEL(okp_t_icall_reg_insn)
	ANNOTATE_RETPOLINE_SAFE
	call *%r11
OKP_LABEL(okp_t_icall_reg_next)
	addq $5, %rax
	RET
SYM_FUNC_END(okp_t_icall_reg)

/* 3a + 12: call *okp_t_fnptr(%rip). */
SYM_FUNC_START(okp_t_icall_rip)
OKP_LABEL(okp_t_icall_rip_insn)
	ANNOTATE_RETPOLINE_SAFE
	call *okp_t_fnptr(%rip)
OKP_LABEL(okp_t_icall_rip_next)
	addq $5, %rax
	RET
SYM_FUNC_END(okp_t_icall_rip)

/* 3a + 12: call *8(%rsp), the operand read before the return address is pushed. */
SYM_FUNC_START(okp_t_icall_rsp)
	leaq okp_t_helper(%rip), %rax
	pushq %rax
	pushq $0
OKP_LABEL(okp_t_icall_rsp_insn)
	ANNOTATE_RETPOLINE_SAFE
	call *8(%rsp)
OKP_LABEL(okp_t_icall_rsp_next)
	addq $16, %rsp
	addq $5, %rax
	RET
SYM_FUNC_END(okp_t_icall_rsp)

/* 5a + 6: call *8(%rsi,%rdx,8) into okp_t_fntable[2] = helper2. */
SYM_FUNC_START(okp_t_icall_sib)
	leaq okp_t_fntable(%rip), %rsi
	movl $1, %edx
OKP_LABEL(okp_t_icall_sib_insn)
	ANNOTATE_RETPOLINE_SAFE
	call *8(%rsi,%rdx,8)
OKP_LABEL(okp_t_icall_sib_next)
	addq $5, %rax
	RET
SYM_FUNC_END(okp_t_icall_sib)

/* 3a + 7: jmp *%r11, a tail call to helper. */
SYM_FUNC_START(okp_t_ijmp_reg)
	leaq okp_t_helper(%rip), %r11
OKP_LABEL(okp_t_ijmp_reg_insn)
	ANNOTATE_RETPOLINE_SAFE
	jmp *%r11
SYM_FUNC_END(okp_t_ijmp_reg)

/* 3a + 7: jmp *okp_t_fnptr(%rip). */
SYM_FUNC_START(okp_t_ijmp_rip)
OKP_LABEL(okp_t_ijmp_rip_insn)
	ANNOTATE_RETPOLINE_SAFE
	jmp *okp_t_fnptr(%rip)
SYM_FUNC_END(okp_t_ijmp_rip)

/* 5a + 1: jmp *8(%rsi,%rdx,8) into okp_t_fntable[2] = helper2. */
SYM_FUNC_START(okp_t_ijmp_sib)
	leaq okp_t_fntable(%rip), %rsi
	movl $1, %edx
OKP_LABEL(okp_t_ijmp_sib_insn)
	ANNOTATE_RETPOLINE_SAFE
	jmp *8(%rsi,%rdx,8)
SYM_FUNC_END(okp_t_ijmp_sib)

/* RFLAGS after cmp b, a (a - b), as pushfq pushes it. */
SYM_FUNC_START(okp_t_pushf)
	cmpq %rsi, %rdi
OKP_LABEL(okp_t_pushf_insn)
	pushfq
OKP_LABEL(okp_t_pushf_next)
	popq %rax
	RET
SYM_FUNC_END(okp_t_pushf)

/* RFLAGS after popfq of the caller's flags with CF PF AF ZF SF OF taken from a. */
SYM_FUNC_START(okp_t_popf)
	pushfq
	movq (%rsp), %rax
	andq $~0x8d5, %rax
	andl $0x8d5, %edi
	orq %rdi, %rax
	movq %rax, (%rsp)
OKP_LABEL(okp_t_popf_insn)
	popfq
OKP_LABEL(okp_t_popf_next)
	pushfq
	popq %rax
	RET
SYM_FUNC_END(okp_t_popf)

/* 2a + 10: pushq 8(%rsp) (stepped: rsp-relative, runs on the original stack). */
SYM_FUNC_START(okp_t_push_rsp)
	pushq %rdi
	pushq $5
OKP_LABEL(okp_t_push_rsp_insn)
	pushq 8(%rsp)
OKP_LABEL(okp_t_push_rsp_next)
	popq %rax
	popq %rcx
	popq %rdx
	leaq (%rax,%rcx,2), %rax
	addq %rdx, %rax
	RET
SYM_FUNC_END(okp_t_push_rsp)

/* 2a + 7: popq 8(%rsp), whose address is computed after rsp is incremented. */
SYM_FUNC_START(okp_t_pop_rsp)
	pushq %rdi
	pushq $0
	pushq $7
OKP_LABEL(okp_t_pop_rsp_insn)
	popq 8(%rsp)
OKP_LABEL(okp_t_pop_rsp_next)
	popq %rcx
	popq %rax
	leaq (%rax,%rdi,2), %rax
	addq %rcx, %rax
	RET
SYM_FUNC_END(okp_t_pop_rsp)

/*
 * Register moves, emulated in the trap (one trap, no slot). Each result depends on the
 * moved value, so a move done wrong (or its zero-extension, or the stack effect) shows.
 */

/* 2a + (u32)b: movl %esi,%r11d over r11 = -1 (the upper half must become 0). */
SYM_FUNC_START(okp_t_mov_reg)
	movq $-1, %r11
OKP_LABEL(okp_t_mov_reg_insn)
	movl %esi, %r11d
OKP_LABEL(okp_t_mov_reg_next)
	leaq (%r11,%rdi,2), %rax
	RET
SYM_FUNC_END(okp_t_mov_reg)

/* 3a + 7: lea with base, scaled index and displacement. */
SYM_FUNC_START(okp_t_lea)
OKP_LABEL(okp_t_lea_insn)
	leaq 7(%rdi,%rdi,2), %rax
OKP_LABEL(okp_t_lea_next)
	RET
SYM_FUNC_END(okp_t_lea)

/* a + (u32)(b + 1): leal over r11 = -1 (the upper half must become 0). */
SYM_FUNC_START(okp_t_lea32)
	movq $-1, %r11
OKP_LABEL(okp_t_lea32_insn)
	leal 1(%rsi), %r11d
OKP_LABEL(okp_t_lea32_next)
	addq %rdi, %r11
	movq %r11, %rax
	RET
SYM_FUNC_END(okp_t_lea32)

/* a: the address a rip-relative lea computes, minus the same address computed unprobed. */
SYM_FUNC_START(okp_t_lea_rip)
OKP_LABEL(okp_t_lea_rip_insn)
	leaq okp_t_lea_rip(%rip), %rax
OKP_LABEL(okp_t_lea_rip_next)
	leaq okp_t_lea_rip(%rip), %rcx
	subq %rcx, %rax
	addq %rdi, %rax
	RET
SYM_FUNC_END(okp_t_lea_rip)

/* a + 0x1122334455667788: movabs. */
SYM_FUNC_START(okp_t_mov_imm)
OKP_LABEL(okp_t_mov_imm_insn)
	movabsq $0x1122334455667788, %rax
OKP_LABEL(okp_t_mov_imm_next)
	addq %rdi, %rax
	RET
SYM_FUNC_END(okp_t_mov_imm)

/* a + 8: the frame prologue, movq %rsp,%rbp, then rbp + 8 - rsp. */
SYM_FUNC_START(okp_t_frame)
	pushq %rbp
OKP_LABEL(okp_t_frame_insn)
	movq %rsp, %rbp
OKP_LABEL(okp_t_frame_next)
	leaq 8(%rbp), %rax
	subq %rsp, %rax
	addq %rdi, %rax
	popq %rbp
	RET
SYM_FUNC_END(okp_t_frame)

/* a + 3: pushq %rdi, rdi = 3, popq %rax. */
SYM_FUNC_START(okp_t_push_pop_reg)
OKP_LABEL(okp_t_push_reg_insn)
	pushq %rdi
OKP_LABEL(okp_t_push_reg_next)
	movq $3, %rdi
OKP_LABEL(okp_t_pop_reg_insn)
	popq %rax
OKP_LABEL(okp_t_pop_reg_next)
	addq %rdi, %rax
	RET
SYM_FUNC_END(okp_t_push_pop_reg)

/* a: pushq %rsp pushes the rsp before the push. */
SYM_FUNC_START(okp_t_push_sp)
	movq %rsp, %rcx
OKP_LABEL(okp_t_push_sp_insn)
	pushq %rsp
OKP_LABEL(okp_t_push_sp_next)
	popq %rax
	subq %rcx, %rax
	addq %rdi, %rax
	RET
SYM_FUNC_END(okp_t_push_sp)

/* a + 9: a multi-byte nop. */
SYM_FUNC_START(okp_t_nop)
	movq %rdi, %rax
OKP_LABEL(okp_t_nop_insn)
	nopl 0x0(%rax,%rax,1)
OKP_LABEL(okp_t_nop_next)
	addq $9, %rax
	RET
SYM_FUNC_END(okp_t_nop)

/*
 * a + 2 when called with interrupts on: cli, read IF (0), sti, read IF (1 -> 2); the
 * caller's flags are restored by the popfq.
 */
SYM_FUNC_START(okp_t_cli_sti)
	pushfq
OKP_LABEL(okp_t_cli_insn)
	cli
OKP_LABEL(okp_t_cli_next)
	pushfq
	popq %rax
	andl $0x200, %eax
OKP_LABEL(okp_t_sti_insn)
	sti
OKP_LABEL(okp_t_sti_next)
	pushfq
	popq %rcx
	andl $0x200, %ecx
	shrl $9, %eax
	shrl $8, %ecx
	addq %rcx, %rax
	addq %rdi, %rax
	popfq
	RET
SYM_FUNC_END(okp_t_cli_sti)

/* 3a for a >= 1: loop runs a times. */
SYM_FUNC_START(okp_t_loop)
	xorl %eax, %eax
	movq %rdi, %rcx
.Lloop_top:
OKP_LABEL(okp_t_loop_top)
	addq $3, %rax
OKP_LABEL(okp_t_loop_insn)
	loop .Lloop_top
OKP_LABEL(okp_t_loop_next)
	RET
SYM_FUNC_END(okp_t_loop)

/*
 * 3a for 1 <= a < 2^32: loopl counts in ecx although rcx has bit 32 set, and writing ecx
 * clears it (the result adds what is left in rcx).
 */
SYM_FUNC_START(okp_t_loopl)
	xorl %eax, %eax
	movabsq $0x100000000, %rcx
	orq %rdi, %rcx
.Lloopl_top:
OKP_LABEL(okp_t_loopl_top)
	addq $3, %rax
OKP_LABEL(okp_t_loopl_insn)
	loopl .Lloopl_top
OKP_LABEL(okp_t_loopl_next)
	addq %rcx, %rax
	RET
SYM_FUNC_END(okp_t_loopl)

/* a == 0 ? 1 : 2: jrcxz. */
SYM_FUNC_START(okp_t_jrcxz)
	movq %rdi, %rcx
	movl $1, %eax
OKP_LABEL(okp_t_jrcxz_insn)
	jrcxz .Ljrcxz_target
OKP_LABEL(okp_t_jrcxz_next)
	movl $2, %eax
.Ljrcxz_target:
OKP_LABEL(okp_t_jrcxz_target)
	RET
SYM_FUNC_END(okp_t_jrcxz)

/* a + 1 after an rdtsc: not boostable, always single-stepped. */
SYM_FUNC_START(okp_t_rdtsc)
OKP_LABEL(okp_t_rdtsc_insn)
	rdtsc
OKP_LABEL(okp_t_rdtsc_next)
	leaq 1(%rdi), %rax
	RET
SYM_FUNC_END(okp_t_rdtsc)

/* a + 1001, or a + 1 when a pre_handler skips the addq $1000. */
SYM_FUNC_START(okp_t_skip)
	movq %rdi, %rax
OKP_LABEL(okp_t_skip_insn)
	addq $1000, %rax
OKP_LABEL(okp_t_skip_next)
	addq $1, %rax
	RET
SYM_FUNC_END(okp_t_skip)

/* a + 2b + 3c + 4d + 5e + 6f + 7g + 8h: eight arguments, two on the stack. */
SYM_FUNC_START(okp_t_args)
	movq %rdi, %rax
	leaq (%rax,%rsi,2), %rax
	imulq $3, %rdx, %rdx
	addq %rdx, %rax
	leaq (%rax,%rcx,4), %rax
	imulq $5, %r8, %r8
	addq %r8, %rax
	imulq $6, %r9, %r9
	addq %r9, %rax
	movq 8(%rsp), %rdx
	imulq $7, %rdx, %rdx
	addq %rdx, %rax
	movq 16(%rsp), %rdx
	leaq (%rax,%rdx,8), %rax
	RET
SYM_FUNC_END(okp_t_args)

/* --- Refused sites: never called. --- */

/* An int3 already at the probe address. */
SYM_FUNC_START(okp_t_int3)
	xorl %eax, %eax
OKP_LABEL(okp_t_int3_insn)
	int3
	RET
SYM_FUNC_END(okp_t_int3)

/*
 * An int3 before the probe address within the same symbol: the instruction boundaries
 * after it cannot be known. okp_t_int3_before_off is the probe's offset in the symbol.
 */
SYM_FUNC_START(okp_t_int3_before)
	xorl %eax, %eax
	int3
.Lint3_after:
	movl $1, %eax
	RET
SYM_FUNC_END(okp_t_int3_before)

/* A ud2, as a BUG() leaves. */
SYM_FUNC_START(okp_t_ud2)
	xorl %eax, %eax
OKP_LABEL(okp_t_ud2_insn)
	ud2
SYM_FUNC_END(okp_t_ud2)

/* A load with an exception-table fixup. */
SYM_FUNC_START(okp_t_extable)
OKP_LABEL(okp_t_extable_insn)
1:	movq (%rdi), %rax
2:	RET
	_ASM_EXTABLE(1b, 2b)
SYM_FUNC_END(okp_t_extable)

/* hlt: can be neither stepped nor emulated. */
SYM_FUNC_START(okp_t_hlt)
OKP_LABEL(okp_t_hlt_insn)
	hlt
	RET
SYM_FUNC_END(okp_t_hlt)

/* A local symbol whose name a static C function of the C file shares: ambiguous. */
SYM_FUNC_START_LOCAL(okp_t_dup)
	movq %rdi, %rax
	RET
SYM_FUNC_END(okp_t_dup)

	.section .rodata
	.balign 4
SYM_DATA(okp_t_int3_before_off, .long .Lint3_after - okp_t_int3_before)

	.text

/*
 * Flag-setting register arithmetic, emulated in the trap (one trap, no slot, also with a
 * post_handler). Each returns the instruction's result in rax (for cmp/test: a, unwritten),
 * folded with what the code after it sees: OKP_ALU_FOLD xors in CF PF AF ZF SF OF << 32 and
 * the jcc's taken (c, p, z, s, o, l, be, le: bits 48..55), so a flag emulated wrong changes
 * the branches and the result. 32-bit forms start from a 64-bit a: zero-extension shows.
 */
.macro OKP_ALU_FOLD
	pushfq
	movl $0, %ecx
	jnc 1f
	leal 1(%rcx), %ecx
1:	jnp 2f
	leal 2(%rcx), %ecx
2:	jnz 3f
	leal 4(%rcx), %ecx
3:	jns 4f
	leal 8(%rcx), %ecx
4:	jno 5f
	leal 16(%rcx), %ecx
5:	jnl 6f
	leal 32(%rcx), %ecx
6:	jnbe 7f
	leal 64(%rcx), %ecx
7:	jnle 8f
	leal 128(%rcx), %ecx
8:	popq %rdx
	andl $0x8d5, %edx
	shlq $32, %rdx
	shlq $48, %rcx
	xorq %rdx, %rax
	xorq %rcx, %rax
.endm

.macro OKP_ALU_TARGET name, insn:vararg
SYM_FUNC_START(okp_t_alu_\name)
	movq %rdi, %rax
	stc	/* inc/dec must keep it; the others must clear or compute it */
OKP_LABEL(okp_t_alu_\name\()_insn)
	\insn
OKP_LABEL(okp_t_alu_\name\()_next)
	OKP_ALU_FOLD
	RET
SYM_FUNC_END(okp_t_alu_\name)
.endm

OKP_ALU_TARGET add, addq %rsi, %rax
OKP_ALU_TARGET sub_imm8, subq $0x10, %rax
OKP_ALU_TARGET cmp, cmpq %rsi, %rax
OKP_ALU_TARGET and32_imm32, andl $0x8000ffff, %eax
OKP_ALU_TARGET or32, orl %esi, %eax
OKP_ALU_TARGET xor, xorq %rsi, %rax
OKP_ALU_TARGET test32, testl %esi, %eax
OKP_ALU_TARGET inc, incq %rax
OKP_ALU_TARGET dec32, decl %eax

/* a: subq $0x28,%rsp (the prologue's frame allocation), then the rsp it left, undone. */
SYM_FUNC_START(okp_t_alu_sp)
	movq %rsp, %rcx
OKP_LABEL(okp_t_alu_sp_insn)
	subq $0x28, %rsp
OKP_LABEL(okp_t_alu_sp_next)
	leaq 0x28(%rsp), %rax
	subq %rcx, %rax
	addq %rdi, %rax
	addq $0x28, %rsp
	RET
SYM_FUNC_END(okp_t_alu_sp)
