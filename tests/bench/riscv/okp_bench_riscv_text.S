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
 */
	.option push
	.option norvc
OKP_BRV_FUNC(die_entry)
OKP_BRV_INSN(die_entry)
	ebreak
	addi	a0, a0, 1
	ret
OKP_BRV_END(die_entry)
	.option pop
