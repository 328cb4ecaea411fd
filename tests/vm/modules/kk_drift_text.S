/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okp_kkd_fn(x) = (x + 1) * 2 + 3, laid out so that a decoder walking through a breakpoint or a
 * jump at A or C (a 1-byte int3, a 5-byte jmp, decoded as if they were the original bytes)
 * drifts off the real instruction boundaries for several bytes: the immediates are 0x90 (nop)
 * and 0xb8 (mov imm32, which swallows the next instruction's first four bytes). Encodings are
 * spelt as bytes so no assembler can choose others. No inner symbol: kallsyms must see one
 * function, as the kernel's can_probe() decodes from the symbol's start.
 */
#include <linux/linkage.h>
#include <asm/linkage.h>

SYM_FUNC_START(okp_kkd_fn)
.Lkkd_a:	.byte 0x48, 0x8d, 0x47, 0x01			/* lea 1(%rdi),%rax */
.Lkkd_b:	.byte 0x48, 0xb9, 0x90, 0x90, 0x90, 0x90	/* movabs $0x9090..90,%rcx */
		.byte 0x90, 0x90, 0x90, 0x90
.Lkkd_c:	.byte 0xba, 0x90, 0x90, 0x90, 0xb8		/* mov $0xb8909090,%edx */
.Lkkd_d:	.byte 0x48, 0xb9, 0x90, 0x90, 0x90, 0x90	/* movabs $0x9090..90,%rcx */
		.byte 0x90, 0x90, 0x90, 0x90
.Lkkd_e:	.byte 0x48, 0x01, 0xc0				/* add %rax,%rax */
.Lkkd_f:	.byte 0x48, 0x83, 0xc0, 0x03			/* add $3,%rax */
.Lkkd_g:	RET
SYM_FUNC_END(okp_kkd_fn)

/*
 * okp_kkd_branch_fn(x) = (x + 1) * 2 + 3 too, with a branch whose target T lies 4 bytes after
 * Y: the kernel's can_optimize() refuses to optimize a kprobe at Y while it can see the jnz,
 * and sees only okprobes' int3 once okprobes probes the jnz (from B + 1 its walk reads
 * `85 04 00`, `00 00` and is back on Y).
 */
SYM_FUNC_START(okp_kkd_branch_fn)
		.byte 0x48, 0x85, 0xff				/* test %rdi,%rdi */
.Lkkb_b:	.byte 0x0f, 0x85, 0x04, 0x00, 0x00, 0x00	/* jnz .Lkkb_t */
.Lkkb_y:	.byte 0x48, 0x83, 0xc0, 0x64			/* add $100,%rax (then overwritten) */
.Lkkb_t:	.byte 0x48, 0x8d, 0x47, 0x01			/* lea 1(%rdi),%rax */
		.byte 0x48, 0x01, 0xc0				/* add %rax,%rax */
		.byte 0x48, 0x83, 0xc0, 0x03			/* add $3,%rax */
		RET
SYM_FUNC_END(okp_kkd_branch_fn)

/*
 * okp_kkd_thunk_fn(x, fn) = (x + 1) * 2 when fn is NULL, else a tail call fn(x) through a
 * retpoline thunk: `jmp __x86_indirect_thunk_r11` (J), an indirect jump to the kernel's
 * can_optimize(). okprobes' int3 on J hides it from the kernel, so okprobes must fence the
 * whole function (tests/vm/modules/kk_drift.c thunk=1). The tests never pass a fn.
 */
SYM_FUNC_START(okp_kkd_thunk_fn)
.Lkkt_a:	.byte 0x48, 0x8d, 0x47, 0x01			/* lea 1(%rdi),%rax */
		.byte 0x48, 0x85, 0xf6				/* test %rsi,%rsi */
		.byte 0x74, 0x08				/* jz .Lkkt_r */
		.byte 0x49, 0x89, 0xf3				/* mov %rsi,%r11 */
.Lkkt_j:	.byte 0xe9					/* jmp __x86_indirect_thunk_r11 */
		.long __x86_indirect_thunk_r11 - . - 4
.Lkkt_r:	.byte 0x48, 0x01, 0xc0				/* add %rax,%rax */
		RET
SYM_FUNC_END(okp_kkd_thunk_fn)

/* A neighbour, so that kallsyms ends okp_kkd_fn where it ends: as the last symbol of the
 * module's text it would be given the bytes after it too, which do not decode (6.12). */
SYM_FUNC_START(okp_kkd_after)
	RET
SYM_FUNC_END(okp_kkd_after)

/* Offsets from okp_kkd_fn of every instruction start A..G (G: the return), for the module. */
	.section .rodata
	.balign 4
SYM_DATA_START(okp_kkd_boundaries)
	.long .Lkkd_a - okp_kkd_fn, .Lkkd_b - okp_kkd_fn, .Lkkd_c - okp_kkd_fn
	.long .Lkkd_d - okp_kkd_fn, .Lkkd_e - okp_kkd_fn, .Lkkd_f - okp_kkd_fn
	.long .Lkkd_g - okp_kkd_fn
SYM_DATA_END(okp_kkd_boundaries)
/* okp_kkd_thunk_fn's first instruction (A) and its jump to the thunk (J). */
SYM_DATA_START(okp_kkd_thunk_offsets)
	.long .Lkkt_a - okp_kkd_thunk_fn, .Lkkt_j - okp_kkd_thunk_fn
SYM_DATA_END(okp_kkd_thunk_offsets)
/* okp_kkd_branch_fn's jnz (B) and the kernel kprobe's place (Y). */
SYM_DATA_START(okp_kkd_branch_offsets)
	.long .Lkkb_b - okp_kkd_branch_fn, .Lkkb_y - okp_kkd_branch_fn
SYM_DATA_END(okp_kkd_branch_offsets)
