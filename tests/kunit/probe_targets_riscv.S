/* SPDX-License-Identifier: GPL-2.0 */
/*
 * riscv64 asm targets of the okprobes_insn_riscv suite: each is `long f(long a, long b)` with
 * one instruction of a class worth probing, in its compressed and uncompressed forms. Each
 * target has a descriptor in .rodata, okp_rv_<name>_at: the probed instruction's offset from
 * the function, and the offsets where a post_handler must see epc (taken, not taken; -1: not
 * a function offset). The file is assembled without linker relaxation, so every branch and
 * offset is fixed here and no local label becomes a symbol of the module (kallsyms would take
 * one for a function).
 */
#include <linux/linkage.h>

	.option norelax
	.text

/* Case, function, probed label, first post offset, second post offset (-1: none). */
#define OKP_RV_AT2(name, fn, insn, post1, post2)	\
	.pushsection .rodata;				\
	.balign 8;					\
	.globl okp_rv_##name##_at;			\
okp_rv_##name##_at:					\
	.quad insn - okp_rv_##fn, post1, post2;		\
	.popsection
#define OKP_RV_AT(name, insn, post1, post2) OKP_RV_AT2(name, name, insn, post1, post2)

#define OKP_RV_OFF(name, label) (label - okp_rv_##name)

#define OKP_RV_FUNC(name)				\
	.globl okp_rv_##name;				\
	.type okp_rv_##name, @function;			\
	.option push; .option rvc; .balign 4; .option pop; /* c.nop pads */ \
	okp_rv_##name:

#define OKP_RV_END(name) .size okp_rv_##name, . - okp_rv_##name

/* helper: a + 7, returns through ra. helper_t0: the same through t0. */
OKP_RV_FUNC(helper)
	.option push
	.option norvc
	addi a0, a0, 7
	ret
	.option pop
OKP_RV_END(helper)

OKP_RV_FUNC(helper_t0)
	.option push
	.option norvc
	addi a0, a0, 7
	jr t0
	.option pop
OKP_RV_END(helper_t0)

/* --- Compressed forms --------------------------------------------------------------------- */
	.option push
	.option rvc

/* c.j: skips the c.addi: a + 1. */
OKP_RV_FUNC(c_j)
	c.nop
1:	c.j 2f
	c.addi a0, 30
2:	c.addi a0, 1
	ret
OKP_RV_END(c_j)
OKP_RV_AT(c_j, 1b, OKP_RV_OFF(c_j, 2b), -1)

/* c.beqz: a == 0 ? 1 : a + 10. */
OKP_RV_FUNC(c_beqz)
1:	c.beqz a0, 2f
3:	c.addi a0, 10
	ret
2:	c.li a0, 1
	ret
OKP_RV_END(c_beqz)
OKP_RV_AT(c_beqz, 1b, OKP_RV_OFF(c_beqz, 2b), OKP_RV_OFF(c_beqz, 3b))

/* c.bnez: a != 0 ? a + 10 : 1. */
OKP_RV_FUNC(c_bnez)
1:	c.bnez a0, 2f
3:	c.li a0, 1
	ret
2:	c.addi a0, 10
	ret
OKP_RV_END(c_bnez)
OKP_RV_AT(c_bnez, 1b, OKP_RV_OFF(c_bnez, 2b), OKP_RV_OFF(c_bnez, 3b))

/* c.jr: a tail jump to b (helper): a + 7, helper returns to our caller. */
OKP_RV_FUNC(c_jr)
1:	c.jr a1
OKP_RV_END(c_jr)
OKP_RV_AT(c_jr, 1b, -1, -1)

/* c.jalr: calls b (helper): a + 7 + 1. */
OKP_RV_FUNC(c_jalr)
	c.addi sp, -16
	c.sdsp ra, 8(sp)
1:	c.jalr a1
2:	c.ldsp ra, 8(sp)
	c.addi sp, 16
	c.addi a0, 1
	ret
OKP_RV_END(c_jalr)
OKP_RV_AT(c_jalr, 1b, -1, OKP_RV_OFF(c_jalr, 2b))

/* c.mv, c.li, c.addi, c.add, c.lui, c.addiw: emulated register moves. a * 2 + 5 + 0x3000 + b
 * (sign-extended from 32 bits by c.addiw). Probed: c.mv. */
OKP_RV_FUNC(c_moves)
1:	c.mv t1, a0
2:	c.add a0, t1
3:	c.addi a0, 5
4:	c.lui t2, 3
5:	c.add a0, t2
6:	c.add a0, a1
7:	c.addiw a0, 0
	ret
OKP_RV_END(c_moves)
OKP_RV_AT(c_moves, 1b, OKP_RV_OFF(c_moves, 2b), -1)
OKP_RV_AT2(c_moves_add, c_moves, 2b, OKP_RV_OFF(c_moves, 3b), -1)
OKP_RV_AT2(c_moves_addi, c_moves, 3b, OKP_RV_OFF(c_moves, 4b), -1)
OKP_RV_AT2(c_moves_lui, c_moves, 4b, OKP_RV_OFF(c_moves, 5b), -1)
OKP_RV_AT2(c_moves_addiw, c_moves, 7b, -1, -1)

/* A compressed frame: c.addi16sp, c.addi4spn, c.sdsp, c.ldsp, c.sd, c.ld (slot-stepped
 * loads/stores through sp and through a register): a + b. */
OKP_RV_FUNC(c_frame)
1:	c.addi16sp sp, -32
2:	c.sdsp a0, 0(sp)
3:	c.addi4spn a5, sp, 16
4:	c.sd a1, 0(a5)
5:	c.ld a4, 0(a5)
6:	c.ldsp a0, 0(sp)
7:	c.add a0, a4
	c.addi16sp sp, 32
	ret
OKP_RV_END(c_frame)
OKP_RV_AT(c_frame, 1b, OKP_RV_OFF(c_frame, 2b), -1)
OKP_RV_AT2(c_frame_sdsp, c_frame, 2b, OKP_RV_OFF(c_frame, 3b), -1)
OKP_RV_AT2(c_frame_addi4spn, c_frame, 3b, OKP_RV_OFF(c_frame, 4b), -1)
OKP_RV_AT2(c_frame_sd, c_frame, 4b, OKP_RV_OFF(c_frame, 5b), -1)
OKP_RV_AT2(c_frame_ld, c_frame, 5b, OKP_RV_OFF(c_frame, 6b), -1)
OKP_RV_AT2(c_frame_ldsp, c_frame, 6b, OKP_RV_OFF(c_frame, 7b), -1)

/* c.slli, c.srai, c.and, c.sub, c.xor (slot-stepped ALU): ((a << 2) >> 1) ^ b. Probed: c.slli. */
OKP_RV_FUNC(c_alu)
1:	c.slli a0, 2
2:	c.srai a0, 1
3:	c.xor a0, a1
	ret
OKP_RV_END(c_alu)
OKP_RV_AT(c_alu, 1b, OKP_RV_OFF(c_alu, 2b), -1)
OKP_RV_AT2(c_alu_srai, c_alu, 2b, OKP_RV_OFF(c_alu, 3b), -1)
OKP_RV_AT2(c_alu_xor, c_alu, 3b, -1, -1)

	.option pop

/* --- Uncompressed forms (norvc: the assembler may not shorten them) ----------------------- */
	.option push
	.option norvc

/* jal x0 (j): a + 1. Aligned: the probe is an ebreak. */
OKP_RV_FUNC(j)
1:	jal x0, 2f
	addi a0, a0, 30
2:	addi a0, a0, 1
	ret
OKP_RV_END(j)
OKP_RV_AT(j, 1b, OKP_RV_OFF(j, 2b), -1)

/* jal ra (call) at a 2-byte aligned address (after a c.nop): the probe is a c.ebreak over the
 * first parcel: helper(a) + 1. */
OKP_RV_FUNC(jal)
	addi sp, sp, -16
	sd ra, 8(sp)
	.option push
	.option rvc
	c.nop
	.option pop
1:	jal ra, okp_rv_helper
2:	ld ra, 8(sp)
	addi sp, sp, 16
	addi a0, a0, 1
	ret
OKP_RV_END(jal)
OKP_RV_AT(jal, 1b, okp_rv_helper - okp_rv_jal, OKP_RV_OFF(jal, 2b))

/* jalr ra, 0(a1): calls b (helper): a + 8. */
OKP_RV_FUNC(jalr)
	addi sp, sp, -16
	sd ra, 8(sp)
1:	jalr ra, 0(a1)
2:	ld ra, 8(sp)
	addi sp, sp, 16
	addi a0, a0, 1
	ret
OKP_RV_END(jalr)
OKP_RV_AT(jalr, 1b, -1, OKP_RV_OFF(jalr, 2b))

/* jalr t0, 0(t0): rd == rs1, the target read before the link is written; b is helper_t0,
 * which returns through t0: a + 7 + 1. */
OKP_RV_FUNC(jalr_same)
	mv t0, a1
1:	jalr t0, 0(t0)
2:	addi a0, a0, 1
	ret
OKP_RV_END(jalr_same)
OKP_RV_AT(jalr_same, 1b, -1, OKP_RV_OFF(jalr_same, 2b))

/* jalr x0, 4(a1): a jump with an offset and no link (b is helper - 4): a + 7. */
OKP_RV_FUNC(jalr_x0)
1:	jalr x0, 4(a1)
OKP_RV_END(jalr_x0)
OKP_RV_AT(jalr_x0, 1b, -1, -1)

/* Branches: cond(a, b) ? 1 : 0. */
#define OKP_RV_BRANCH(op)				\
OKP_RV_FUNC(op)						\
1:	op a0, a1, 2f;					\
3:	li a0, 0;					\
	ret;						\
2:	li a0, 1;					\
	ret;						\
OKP_RV_END(op);						\
OKP_RV_AT(op, 1b, OKP_RV_OFF(op, 2b), OKP_RV_OFF(op, 3b))

OKP_RV_BRANCH(beq)
OKP_RV_BRANCH(bne)
OKP_RV_BRANCH(blt)
OKP_RV_BRANCH(bge)
OKP_RV_BRANCH(bltu)
OKP_RV_BRANCH(bgeu)

/* A backward branch with x0: counts a down to 0, returns the iterations (a > 0). */
OKP_RV_FUNC(loop)
	li t1, 0
2:	addi a0, a0, -1
	addi t1, t1, 1
1:	bne a0, x0, 2b
3:	mv a0, t1
	ret
OKP_RV_END(loop)
OKP_RV_AT(loop, 1b, OKP_RV_OFF(loop, 2b), OKP_RV_OFF(loop, 3b))

/* auipc: the pc, minus b (this function's address): its offset + 4096. */
OKP_RV_FUNC(auipc)
	nop
1:	auipc t0, 1
2:	sub a0, t0, a1
	ret
OKP_RV_END(auipc)
OKP_RV_AT(auipc, 1b, OKP_RV_OFF(auipc, 2b), -1)

/* addi, lui, addiw, add, nop (emulated): ((a + 0x12345000 - 3) + b) as 32-bit, sign-extended. */
OKP_RV_FUNC(moves)
1:	lui t1, 0x12345
2:	addi t1, t1, -3
3:	add a0, a0, t1
4:	nop
5:	add a0, a0, a1
6:	addiw a0, a0, 0
	ret
OKP_RV_END(moves)
OKP_RV_AT(moves, 1b, OKP_RV_OFF(moves, 2b), -1)
OKP_RV_AT2(moves_addi, moves, 2b, OKP_RV_OFF(moves, 3b), -1)
OKP_RV_AT2(moves_add, moves, 3b, OKP_RV_OFF(moves, 4b), -1)
OKP_RV_AT2(moves_nop, moves, 4b, OKP_RV_OFF(moves, 5b), -1)
OKP_RV_AT2(moves_addiw, moves, 6b, -1, -1)

/* Slot-stepped: mul, sd/ld through a pointer (b points at a long), amoadd.d: a * 3 + *b + 5,
 * and *b becomes a. Probed: mul. */
OKP_RV_FUNC(mem)
	li t1, 3
1:	mul t1, a0, t1
2:	ld t2, 0(a1)
3:	sd a0, 0(a1)
	li t3, 5
4:	amoadd.d t4, t3, (a1)
5:	ld t4, 0(a1)
	sd a0, 0(a1)
	add a0, t1, t2
	addi a0, a0, 5
	ret
OKP_RV_END(mem)
OKP_RV_AT(mem, 1b, OKP_RV_OFF(mem, 2b), -1)
OKP_RV_AT2(mem_ld, mem, 2b, OKP_RV_OFF(mem, 3b), -1)
OKP_RV_AT2(mem_sd, mem, 3b, -1, -1)
OKP_RV_AT2(mem_amo, mem, 4b, OKP_RV_OFF(mem, 5b), -1)

/* Refusals (never called): an LR/SC loop, the system instructions, a CSR write, fence.i. */
OKP_RV_FUNC(lrsc)
1:	lr.d t0, (a1)
2:	addi t0, t0, 1
3:	sc.d t1, t0, (a1)
4:	bnez t1, 1b
5:	ret
OKP_RV_END(lrsc)
OKP_RV_AT(lrsc, 1b, OKP_RV_OFF(lrsc, 2b), OKP_RV_OFF(lrsc, 3b))
OKP_RV_AT2(lrsc_after, lrsc, 4b, OKP_RV_OFF(lrsc, 5b), -1)

OKP_RV_FUNC(system)
1:	ecall
2:	ebreak
3:	wfi
4:	csrw sstatus, a0
5:	fence.i
6:	csrr a0, sstatus
7:	csrw sscratch, a0
8:	ret
OKP_RV_END(system)
OKP_RV_AT(system, 1b, OKP_RV_OFF(system, 2b), OKP_RV_OFF(system, 3b))
OKP_RV_AT2(system_csr, system, 4b, OKP_RV_OFF(system, 5b), OKP_RV_OFF(system, 6b))
OKP_RV_AT2(system_csr2, system, 7b, -1, -1)

	.option pop

/* The arch-neutral okprobes_kretprobe suite's asm targets (no ftrace site: a return probe's
 * entry is a breakpoint): okp_t_helper(a) = 3a + 7; okp_t_riprel_load(a) = a + okp_rv_data. */
	.option push
	.option norvc
	.globl okp_t_helper
	.type okp_t_helper, @function
	.balign 4
okp_t_helper:
	slli t0, a0, 1
	add a0, a0, t0
	addi a0, a0, 7
	ret
	.size okp_t_helper, . - okp_t_helper

	.globl okp_t_riprel_load
	.type okp_t_riprel_load, @function
	.balign 4
okp_t_riprel_load:
	auipc t0, %pcrel_hi(okp_rv_data)
	ld t0, %pcrel_lo(okp_t_riprel_load)(t0)
	add a0, a0, t0
	ret
	.size okp_t_riprel_load, . - okp_t_riprel_load
	.option pop

	.pushsection .data
	.balign 8
okp_rv_data:
	.quad 100
	.popsection
