/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probed text of the benchmark (tests/bench/okp_bench.c), in assembly so that both frameworks
 * see exactly the same instructions and none of them is an ftrace site (no -pg here):
 *
 *   okp_bench_target   the hit target: the probe goes on its first real instruction (after
 *                      the ENDBR64 landing pad), a plain `mov %rdi,%rax`, which the kernel's
 *                      kprobes copy to a slot (and boost, can_boost) and okprobes emulates.
 *   okp_bench_target_lea  the same with `lea 1(%rdi),%rax`, which okprobes emulates too.
 *   okp_bench_target_add  the same with `add $1,%rdi` (flags), which the kernel's kprobes copy
 *                      to a slot and okprobes emulates (Emulation::kAlu).
 *   okp_bench_dense    OKP_BENCH_DENSE `mov %rdi,%rax` (3 bytes each) in one function: the
 *                      registration benchmark puts one probe on each of the first N.
 *   okp_bench_fn_<i>   OKP_BENCH_SPREAD one-instruction functions, listed in
 *                      okp_bench_spread_fns[]: the same benchmark with one probe per function.
 *   okp_bench_target_opt  the jump-optimization target (okp_bench_opt.c): three plain
 *                      instructions, so the 5 bytes at its entry (+4: mov, add) and at +7
 *                      (add, mov) are regions both frameworks can replace by a jmp rel32.
 *   okp_bench_ofn_<i>  OKP_BENCH_OPT copies of it (and a movl $0x2a,%ecx before the
 *                      return), listed in okp_bench_opt_fns[]: the registration-until-
 *                      optimized benchmark, one probe at +7 of each (reg_one_insn=1: at
 *                      the movl, a region of one instruction).
 */
#include <linux/linkage.h>

#define OKP_BENCH_DENSE 1024
#define OKP_BENCH_SPREAD 1024
#define OKP_BENCH_OPT 1024

	.text

/* unsigned long okp_bench_target(unsigned long x): returns x + 1. */
SYM_FUNC_START(okp_bench_target)
	mov	%rdi, %rax
	add	$1, %rax
	RET
SYM_FUNC_END(okp_bench_target)

/* unsigned long okp_bench_target_lea(unsigned long x): returns x + 1. */
SYM_FUNC_START(okp_bench_target_lea)
	leaq	1(%rdi), %rax
	RET
SYM_FUNC_END(okp_bench_target_lea)

/* unsigned long okp_bench_target_add(unsigned long x): returns x + 1. */
SYM_FUNC_START(okp_bench_target_add)
	addq	$1, %rdi
	movq	%rdi, %rax
	RET
SYM_FUNC_END(okp_bench_target_add)

/*
 * unsigned long okp_bench_target_opt(unsigned long x): returns x + 1. No branch, every
 * instruction boostable and position-independent:
 *   +4   mov %rdi,%rax   3 bytes: the entry (return probes)
 *   +7   add $1,%rax     4 bytes: the kprobe, off the entry; its region is +7..+13
 *   +11  mov %rax,%rdx   3 bytes
 */
SYM_FUNC_START(okp_bench_target_opt)
	mov	%rdi, %rax
	addq	$1, %rax
	mov	%rax, %rdx
	RET
SYM_FUNC_END(okp_bench_target_opt)

/* unsigned long okp_bench_dense(unsigned long x): returns x; never called. */
SYM_FUNC_START(okp_bench_dense)
	.rept OKP_BENCH_DENSE
	mov	%rdi, %rax
	.endr
	RET
SYM_FUNC_END(okp_bench_dense)

.macro okp_bench_fn okpidx
SYM_FUNC_START(okp_bench_fn_\okpidx)
	mov	%rdi, %rax
	RET
SYM_FUNC_END(okp_bench_fn_\okpidx)
.endm

.macro okp_bench_fn_ref okpidx
	.quad	okp_bench_fn_\okpidx
.endm

/*
 * The shape of okp_bench_target_opt, then one 5-byte instruction: with reg_one_insn=1 the
 * probe goes there (+10 from the first instruction), a region of that one instruction.
 */
.macro okp_bench_ofn okpidx
SYM_FUNC_START(okp_bench_ofn_\okpidx)
	mov	%rdi, %rax
	addq	$1, %rax
	mov	%rax, %rdx
	movl	$0x2a, %ecx
	RET
SYM_FUNC_END(okp_bench_ofn_\okpidx)
.endm

.macro okp_bench_ofn_ref okpidx
	.quad	okp_bench_ofn_\okpidx
.endm

	.altmacro
	.set	okp_bench_i, 0
	.rept	OKP_BENCH_SPREAD
	okp_bench_fn %okp_bench_i
	.set	okp_bench_i, okp_bench_i + 1
	.endr

	.set	okp_bench_i, 0
	.rept	OKP_BENCH_OPT
	okp_bench_ofn %okp_bench_i
	.set	okp_bench_i, okp_bench_i + 1
	.endr

	.section .rodata, "a"
	.balign 8
SYM_DATA_START(okp_bench_spread_fns)
	.set	okp_bench_i, 0
	.rept	OKP_BENCH_SPREAD
	okp_bench_fn_ref %okp_bench_i
	.set	okp_bench_i, okp_bench_i + 1
	.endr
SYM_DATA_END(okp_bench_spread_fns)

SYM_DATA_START(okp_bench_opt_fns)
	.set	okp_bench_i, 0
	.rept	OKP_BENCH_OPT
	okp_bench_ofn_ref %okp_bench_i
	.set	okp_bench_i, okp_bench_i + 1
	.endr
SYM_DATA_END(okp_bench_opt_fns)
	.noaltmacro
