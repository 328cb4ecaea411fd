/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 targets for the KUnit suite "okprobes_optimize" (okp_optimize_kunit.c): jump
 * optimization. Each function has one probe address whose region (the whole instructions
 * covering the 5 bytes of the jmp rel32 from it) holds one class of instruction the detour
 * must relocate, and computes a result the test knows (see the C side), so a region run
 * wrongly in the detour changes the result.
 *
 * No global label marks the probe address: kallsyms lists a global inner label as a symbol
 * of its own, and okprobes takes "the function" a region is checked against from kallsyms,
 * so a label there would hide the instructions before it. The C side gets each probe
 * address, and the end of its region, as offsets from the function (okp_ot_<name>_site:
 * two .longs, probe and end). The one inner label, okp_ot_into_region_label, is there on
 * purpose to test exactly that.
 *
 * Every function
 *  - stores its rsp into okp_ot_sp right before the probe (the pre_handler must see that
 *    sp), so the probe is never at the function's entry (entries are ftrace's on C
 *    functions, and ftrace sites are never jump-optimized);
 *  - loads OKP_OT_MARK into r11 before the probe (the pre_handler must see it) and checks it
 *    when it returns: r11 - OKP_OT_MARK is added to the result, so a detour that clobbers
 *    r11 changes the result;
 *  - is straight-line apart from the branches its class needs, none of which lands strictly
 *    inside its region (except okp_ot_into_region*, which are about that).
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include <asm/nospec-branch.h>

#define OKP_LABEL(name) SYM_INNER_LABEL(name, SYM_L_GLOBAL) ASM_NL ANNOTATE_NOENDBR

/* Keep in sync with okp_optimize_kunit.c. */
#define OKP_OT_MARK 0x1122334455667788
#define OKP_OT_DATA 0x5eed

	.data
	.balign 8
SYM_DATA(okp_ot_data, .quad OKP_OT_DATA)
SYM_DATA(okp_ot_store, .quad 0)
SYM_DATA(okp_ot_sp, .quad 0)
SYM_DATA(okp_ot_ret_addr, .quad 0)

/* The rsp at the probe, and r11 set to the mark. Changes no flag. */
.macro OKP_OT_PROLOGUE
	movq %rsp, okp_ot_sp(%rip)
	movabsq $OKP_OT_MARK, %r11
.endm

/* Returns rax + (r11 - OKP_OT_MARK): rax when r11 survived. Clobbers r10 and the flags. */
.macro OKP_OT_RET
	movabsq $OKP_OT_MARK, %r10
	subq %r10, %r11
	addq %r11, %rax
	RET
.endm

	.text

/* helper(x) = 3x + 7, and okp_ot_ret_addr = the address it returns to. */
SYM_FUNC_START(okp_ot_helper)
	movq (%rsp), %rax
	movq %rax, okp_ot_ret_addr(%rip)
	leaq 7(%rdi,%rdi,2), %rax
	RET
SYM_FUNC_END(okp_ot_helper)

/* a + 2b + OKP_OT_DATA: a rip-relative load, not the region's first instruction. */
SYM_FUNC_START(okp_ot_riprel_load)
	OKP_OT_PROLOGUE
.Lot_riprel_load_probe:
	leaq (%rdi,%rsi,2), %rax
	addq okp_ot_data(%rip), %rax
.Lot_riprel_load_end:
	OKP_OT_RET
SYM_FUNC_END(okp_ot_riprel_load)

/* a + 1 + b, and okp_ot_store = a + 1: a rip-relative store, read back after the region. */
SYM_FUNC_START(okp_ot_riprel_store)
	OKP_OT_PROLOGUE
.Lot_riprel_store_probe:
	leaq 1(%rdi), %rcx
	movq %rcx, okp_ot_store(%rip)
.Lot_riprel_store_end:
	movq okp_ot_store(%rip), %rax
	addq %rsi, %rax
	OKP_OT_RET
SYM_FUNC_END(okp_ot_riprel_store)

/* a < b ? a + b : a - b + 100: jl rel8 leaving the region, then sub (5 bytes in all). */
SYM_FUNC_START(okp_ot_jcc)
	OKP_OT_PROLOGUE
	movq %rdi, %rax
	cmpq %rsi, %rdi
.Lot_jcc_probe:
	jl .Lot_jcc_less
	subq %rsi, %rax
.Lot_jcc_end:
	addq $100, %rax
	OKP_OT_RET
.Lot_jcc_less:
	addq %rsi, %rax
	OKP_OT_RET
SYM_FUNC_END(okp_ot_jcc)

/*
 * a + 2b + 7: lea, then jmp rel8 leaving the region as its last instruction. The target
 * lies before the probe, so the function enters the region through a jmp to its first byte
 * (allowed: that byte is where the detour's jump starts).
 */
SYM_FUNC_START(okp_ot_jmp8)
	OKP_OT_PROLOGUE
	jmp .Lot_jmp8_probe
.Lot_jmp8_target:
	addq $7, %rax
	OKP_OT_RET
.Lot_jmp8_probe:
	leaq (%rdi,%rsi,2), %rax
	jmp .Lot_jmp8_target
.Lot_jmp8_end:
SYM_FUNC_END(okp_ot_jmp8)

/*
 * helper(a + b) + a = 4a + 3b + 7: a call as the region's last instruction. The helper
 * records its return address, which must be the original one (the region's end).
 */
SYM_FUNC_START(okp_ot_call)
	pushq %rbx
	movq %rdi, %rbx
	OKP_OT_PROLOGUE
.Lot_call_probe:
	addq %rsi, %rdi
	call okp_ot_helper
.Lot_call_end:
	addq %rbx, %rax
	popq %rbx
	OKP_OT_RET
SYM_FUNC_END(okp_ot_call)

/* a + 4b: push, push, pop, pop, lea, all in the region, on the original stack. */
SYM_FUNC_START(okp_ot_push_pop)
	OKP_OT_PROLOGUE
.Lot_push_pop_probe:
	pushq %rdi
	pushq %rsi
	popq %rax
	popq %rcx
	leaq (%rcx,%rax,4), %rax
.Lot_push_pop_end:
	OKP_OT_RET
SYM_FUNC_END(okp_ot_push_pop)

/*
 * 4 * min(a, b) + (a < b): the flags of cmp b, a are read by setl inside the region and by
 * cmovg after it, so they must reach the detour's copy and survive the jump back.
 */
SYM_FUNC_START(okp_ot_flags)
	OKP_OT_PROLOGUE
	xorl %eax, %eax
	cmpq %rsi, %rdi
.Lot_flags_probe:
	movq %rdi, %rcx
	setl %al
.Lot_flags_end:
	cmovgq %rsi, %rcx
	leaq (%rax,%rcx,4), %rax
	OKP_OT_RET
SYM_FUNC_END(okp_ot_flags)

/* 16a + b: mov and shl, plain ALU instructions, make the region. */
SYM_FUNC_START(okp_ot_alu)
	OKP_OT_PROLOGUE
.Lot_alu_probe:
	movq %rdi, %rax
	shlq $4, %rax
.Lot_alu_end:
	addq %rsi, %rax
	OKP_OT_RET
SYM_FUNC_END(okp_ot_alu)

/*
 * a + 1000 + b + 1, or a + 1 when a pre_handler resumes at okp_ot_skip_to_off (skipping
 * the region's add $1000 and the add of b after it).
 */
SYM_FUNC_START(okp_ot_skip)
	OKP_OT_PROLOGUE
	movq %rdi, %rax
.Lot_skip_probe:
	addq $1000, %rax
.Lot_skip_end:
	addq %rsi, %rax
.Lot_skip_to:
	addq $1, %rax
	OKP_OT_RET
SYM_FUNC_END(okp_ot_skip)

/*
 * b == 0 ? a : a + 100 + b: for b == 0 the jz before the probe lands on the region's
 * second instruction. Never optimizable: the jmp rel32 would cover that landing point.
 */
SYM_FUNC_START(okp_ot_into_region)
	OKP_OT_PROLOGUE
	movq %rdi, %rax
	testq %rsi, %rsi
	jz .Lot_into_region_middle
.Lot_into_region_probe:
	addq $100, %rax
.Lot_into_region_middle:
	addq %rsi, %rax
.Lot_into_region_end:
	OKP_OT_RET
SYM_FUNC_END(okp_ot_into_region)

/*
 * The same, with a global inner label between the jz and the probe: kallsyms then starts a
 * symbol at the probe, but the jz into the region is still part of the function.
 */
SYM_FUNC_START(okp_ot_into_region_past_label)
	OKP_OT_PROLOGUE
	movq %rdi, %rax
	testq %rsi, %rsi
	jz .Lot_into_region_past_label_middle
OKP_LABEL(okp_ot_into_region_label)
.Lot_into_region_past_label_probe:
	addq $100, %rax
.Lot_into_region_past_label_middle:
	addq %rsi, %rax
.Lot_into_region_past_label_end:
	OKP_OT_RET
SYM_FUNC_END(okp_ot_into_region_past_label)

/*
 * A bounded switch on a & 7 through a jump table, as GCC emits one where jump tables are on
 * (non-PIC: jmp *table(,%idx,8), 8-byte absolute entries in .rodata, bounded by cmp + ja;
 * every case starts with ENDBR, as an IBT kernel needs of an indirect jump's target):
 *   0: b + 1000   1: b + 2000   2: b + 3 + 5 (falls into 3)   3: b + 5   4: b + 40
 *   5..7 (default): b + 7
 * Two probes: jump_table, case 0's add, whose region no entry lands in (optimizable);
 * jump_table_into, case 2's add then case 3's ENDBR, whose region entry 3 lands inside (never
 * optimizable). The function keeps no frame: the tail-call rule alone would accept both.
 */
SYM_FUNC_START(okp_ot_jump_table)
	OKP_OT_PROLOGUE
	movq %rdi, %rax
	andq $7, %rax
	cmpq $4, %rax
	ja .Lot_jt_default
	ANNOTATE_RETPOLINE_SAFE
	jmp *.Lot_jt_table(,%rax,8)
.Lot_jt_case0:
	ENDBR
.Lot_jump_table_probe:
	addq $1000, %rsi
.Lot_jump_table_end:
	jmp .Lot_jt_out
.Lot_jt_case1:
	ENDBR
	addq $2000, %rsi
	jmp .Lot_jt_out
.Lot_jt_case2:
	ENDBR
.Lot_jump_table_into_probe:
	addq $3, %rsi
.Lot_jt_case3:
	ENDBR
	addq $5, %rsi
.Lot_jump_table_into_end:
	jmp .Lot_jt_out
.Lot_jt_case4:
	ENDBR
	addq $40, %rsi
	jmp .Lot_jt_out
.Lot_jt_default:
	addq $7, %rsi
.Lot_jt_out:
	movq %rsi, %rax
	OKP_OT_RET
SYM_FUNC_END(okp_ot_jump_table)

	/* Anonymous, as GCC's are: objtool takes an unnamed .rodata table for a switch's. */
	.section .rodata
	.balign 8
.Lot_jt_table:
	.quad .Lot_jt_case0, .Lot_jt_case1, .Lot_jt_case2, .Lot_jt_case3, .Lot_jt_case4
	.text

/* Where each probe goes and where its region ends, as offsets from the function. */
.macro OKP_OT_SITE name
SYM_DATA(okp_ot_\name\()_site, \
	 .long .Lot_\name\()_probe - okp_ot_\name, .Lot_\name\()_end - okp_ot_\name)
.endm

	.section .rodata
	.balign 4
	OKP_OT_SITE riprel_load
	OKP_OT_SITE riprel_store
	OKP_OT_SITE jcc
	OKP_OT_SITE jmp8
	OKP_OT_SITE call
	OKP_OT_SITE push_pop
	OKP_OT_SITE flags
	OKP_OT_SITE alu
	OKP_OT_SITE skip
	OKP_OT_SITE into_region
	OKP_OT_SITE into_region_past_label
	OKP_OT_SITE jump_table
SYM_DATA(okp_ot_jump_table_into_site, .long .Lot_jump_table_into_probe - okp_ot_jump_table, \
	 .Lot_jump_table_into_end - okp_ot_jump_table)
SYM_DATA(okp_ot_skip_to_off, .long .Lot_skip_to - okp_ot_skip)
