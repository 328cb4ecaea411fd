/* SPDX-License-Identifier: GPL-2.0 */
/*
 * riscv64 return probes without a trap and without a task_struct field
 * (src/core/return_probe.cpp), as on x86-64 (arch/x86/return_stubs.S).
 *
 * At a return-probed function's entry (its ftrace site, or a breakpoint on its first
 * instruction) the core replaces ra, in the saved frame, by the address of one of
 * OKP_RET_STUBS stubs here, each held by one frame at a time: the stub a function returns to says
 * which instance it is, with no lookup.
 *
 * A stub saves t0 in a 16-byte frame of its own (never below sp: an interrupt would write
 * there) and links into the common part with jal t0: the link (stub + OKP_RET_STUB_LINK)
 * gives the index. The common part saves a struct pt_regs
 * (the registers as the function returned them: a0/a1 are its return value), calls
 * okp_return_trampoline_handler(regs, index) (src/kernel/return.c), which answers the real
 * return address, restores every register (a handler may change the return value in
 * regs->a0), sets ra to that address as the function's own ret would have left it, and
 * returns there.
 *
 * Assembled without linker relaxation: every offset here is final.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/csr.h>

#include "../common/return_stubs.h"

	.option norelax
	.option norvc

/* Where a stub's jal links: the stub's address plus this. */
#define OKP_RET_STUB_LINK 12
#if OKP_RET_STUB_SIZE != 16
#error "okp_return_common computes the index as (link - okp_return_stubs) >> 4"
#endif

/* Four instructions: OKP_RET_STUB_SIZE exactly, so the block pads nothing. */
.macro okp_return_stub
	addi sp, sp, -16		/* the common part's frame starts here */
	sd t0, 0(sp)
	jal t0, okp_return_common	/* t0 = this stub + OKP_RET_STUB_LINK */
	ebreak				/* never reached */
.endm
	okp_return_stub_block 0

/* sp: the caller's (as after the function's ret) - 16; 0(sp): the caller-visible t0. */
okp_return_common:
	addi sp, sp, -PT_SIZE_ON_STACK
	sd x1, PT_RA(sp)
	sd x3, PT_GP(sp)
	sd x4, PT_TP(sp)
	sd x6, PT_T1(sp)
	sd x7, PT_T2(sp)
	sd x8, PT_S0(sp)
	sd x9, PT_S1(sp)
	sd x10, PT_A0(sp)
	sd x11, PT_A1(sp)
	sd x12, PT_A2(sp)
	sd x13, PT_A3(sp)
	sd x14, PT_A4(sp)
	sd x15, PT_A5(sp)
	sd x16, PT_A6(sp)
	sd x17, PT_A7(sp)
	sd x18, PT_S2(sp)
	sd x19, PT_S3(sp)
	sd x20, PT_S4(sp)
	sd x21, PT_S5(sp)
	sd x22, PT_S6(sp)
	sd x23, PT_S7(sp)
	sd x24, PT_S8(sp)
	sd x25, PT_S9(sp)
	sd x26, PT_S10(sp)
	sd x27, PT_S11(sp)
	sd x28, PT_T3(sp)
	sd x29, PT_T4(sp)
	sd x30, PT_T5(sp)
	sd x31, PT_T6(sp)
	ld t1, PT_SIZE_ON_STACK(sp)		/* the t0 the stub saved */
	sd t1, PT_T0(sp)
	addi t1, sp, PT_SIZE_ON_STACK + 16
	sd t1, PT_SP(sp)			/* as the caller sees it after the return */
	sd zero, PT_EPC(sp)			/* the handler fills in the return address */
	csrr t1, CSR_STATUS
	sd t1, PT_STATUS(sp)
	li t1, -1
	sd t1, PT_ORIG_A0(sp)
	/* The index: (link - okp_return_stubs) / 16, the link being 12 bytes into its stub. */
	lla t1, okp_return_stubs
	sub a1, t0, t1
	srli a1, a1, 4
	mv a0, sp
	call okp_return_trampoline_handler
	mv ra, a0				/* the real return address: where ret goes */
	ld x3, PT_GP(sp)
	ld x4, PT_TP(sp)
	ld x5, PT_T0(sp)
	ld x6, PT_T1(sp)
	ld x7, PT_T2(sp)
	ld x8, PT_S0(sp)
	ld x9, PT_S1(sp)
	ld x10, PT_A0(sp)
	ld x11, PT_A1(sp)
	ld x12, PT_A2(sp)
	ld x13, PT_A3(sp)
	ld x14, PT_A4(sp)
	ld x15, PT_A5(sp)
	ld x16, PT_A6(sp)
	ld x17, PT_A7(sp)
	ld x18, PT_S2(sp)
	ld x19, PT_S3(sp)
	ld x20, PT_S4(sp)
	ld x21, PT_S5(sp)
	ld x22, PT_S6(sp)
	ld x23, PT_S7(sp)
	ld x24, PT_S8(sp)
	ld x25, PT_S9(sp)
	ld x26, PT_S10(sp)
	ld x27, PT_S11(sp)
	ld x28, PT_T3(sp)
	ld x29, PT_T4(sp)
	ld x30, PT_T5(sp)
	ld x31, PT_T6(sp)
	addi sp, sp, PT_SIZE_ON_STACK + 16
	ret
