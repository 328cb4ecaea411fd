/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probed text of the riscv64 benchmark (okp_bench_riscv.c), in assembly so that both
 * frameworks see exactly the same instructions (no ftrace site), assembled without linker
 * relaxation. Each probe goes on the instruction at the function's okp_brv_<state>_insn label:
 *   simulated  `beq zero, zero` (4 bytes): both frameworks simulate it in the trap;
 *   stepped    `slli a1, a0, 1` (4 bytes, an ebreak): both run it from a slot, ended by a
 *              second breakpoint;
 *   stepped-c  `c.slli a0, 1` (2 bytes, a c.ebreak): the same, compressed;
 *   add-imm    `addi a0, a0, 1`: okprobes simulates it, the kernel steps it;
 *   return     the function's entry (a breakpoint for both, no ftrace site), a return probe.
 *   die-entry  an ebreak claimed by a die notifier of the benchmark's own (below).
 * Every function returns x + 1 (stepped, stepped-c: 2x + 1).
 */
#include <linux/linkage.h>

	.option norelax
	.text

#define OKP_BRV_FUNC(name)				\
	.globl okp_brv_##name;				\
	.type okp_brv_##name, @function;		\
	.balign 4;					\
	okp_brv_##name:
#define OKP_BRV_INSN(name)				\
	.globl okp_brv_##name##_insn;			\
	okp_brv_##name##_insn:
#define OKP_BRV_END(name) .size okp_brv_##name, . - okp_brv_##name

	.option push
	.option norvc
OKP_BRV_FUNC(sim)
OKP_BRV_INSN(sim)
	beq	zero, zero, 1f
	ebreak				/* never reached */
1:	addi	a0, a0, 1
	ret
OKP_BRV_END(sim)

OKP_BRV_FUNC(step)
OKP_BRV_INSN(step)
	slli	a1, a0, 1
	addi	a0, a1, 1
	ret
OKP_BRV_END(step)

OKP_BRV_FUNC(addimm)
OKP_BRV_INSN(addimm)
	addi	a0, a0, 1
	ret
OKP_BRV_END(addimm)

OKP_BRV_FUNC(ret)
	addi	a0, a0, 1
	ret
OKP_BRV_END(ret)
	.option pop

	.option push
	.option rvc
OKP_BRV_FUNC(step_c)
OKP_BRV_INSN(step_c)
	c.slli	a0, 1
	c.addi	a0, 1
	c.jr	ra
OKP_BRV_END(step_c)
	.option pop

/*
 * die-entry: an ebreak that only the benchmark's own die notifier claims (it moves epc past
 * it): the cheapest breakpoint a module can be reached by on riscv64, the floor under every
 * okprobes hit. Returns x + 1. Only ever called while that notifier is registered: without it
 * this ebreak is a kernel BUG.
 * (.balign before .option norvc: under norvc gas 2.40 does not pad 2 bytes to align)
 */
	.balign 4
	.option push
	.option norvc
OKP_BRV_FUNC(die_entry)
OKP_BRV_INSN(die_entry)
	ebreak
	addi	a0, a0, 1
	ret
OKP_BRV_END(die_entry)
	.option pop

/*
 * detour (jump=1): `slli a1, a1, 1` one instruction into the function (kallsyms sees it
 * inside okp_brv_detour, as any mid-function instruction), the probe okprobes
 * makes a jump into a detour (the region: slli and addi, 8 bytes, t0 dead throughout) and the
 * kernel an ebreak, stepped from a slot. Returns 2x + 1.
 */
	.balign 4
	.option push
	.option norvc
OKP_BRV_FUNC(detour)
	mv	a1, a0
	slli	a1, a1, 1		/* the probe, okp_brv_detour + 4: no symbol of its own */
	addi	a0, a1, 1
	ret
OKP_BRV_END(detour)

/*
 * Registration until armed (jump=1): OKP_BRV_OFNS copies of okp_brv_detour, okp_brv_ofn_<i>,
 * each its own symbol (okprobes reads the function around a jump from kallsyms), 16 bytes
 * apart from okp_brv_ofn_0 (no other symbol there: kallsyms' function around a probe must be
 * its okp_brv_ofn_<i>); each is probed at its slli (+4).
 */
.macro OKP_BRV_OFN i
	.globl okp_brv_ofn_\i
	.type okp_brv_ofn_\i, @function
	.balign 16
okp_brv_ofn_\i:
	mv	a1, a0
	slli	a1, a1, 1
	addi	a0, a1, 1
	ret
	.size okp_brv_ofn_\i, . - okp_brv_ofn_\i
.endm

	.altmacro
	.set .Lokp_brv_ofn_index, 0
	.rept 64		/* OKP_BRV_OFNS in okp_bench_riscv.c */
	OKP_BRV_OFN %.Lokp_brv_ofn_index
	.set .Lokp_brv_ofn_index, .Lokp_brv_ofn_index + 1
	.endr
	.noaltmacro
	.option pop
