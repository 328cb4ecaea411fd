/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Return probes without a trap and without a task_struct field (src/core/return_probe.cpp).
 *
 * At a return-probed function's entry the core replaces the return address on the stack by
 * the address of one of OKP_RET_STUBS stubs here, each held by one frame at a time. The stub
 * itself therefore says which instance a returning frame belongs to: recursion, nesting,
 * interrupts and tasks sleeping inside the function need no lookup at all.
 *
 * A stub pushes its index (into the slot the ret just popped) and jumps to the common part,
 * which saves a struct pt_regs below it, calls okp_core_on_return(regs, index, cpu) with
 * preemption off (what okp_return_trampoline_handler() in src/kernel/return.c does for the
 * other arches), puts the real return address it answers into that slot, restores the
 * registers (a handler may change the return value in regs->ax) and returns there.
 *
 * Returns are not IBT-checked, so stubs have no ENDBR. The unwind hints say "undefined
 * stack" (objtool then knows the code is reached, by ret): an unwinder stops at a stub (see
 * docs/api.md, okp_kretprobe_find_ret_addr()).
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/nospec-branch.h>
#include <asm/segment.h>
#include <asm/unwind_hints.h>

#include "../common/return_stubs.h"
#include "../../src/kernel/arch/x86/preempt_count.h"
#include "../../src/kernel/arch/x86/pt_regs_gprs.h"
/* 6.4 renamed the "undefined stack" hint UNWIND_HINT_EMPTY (an assembler macro) to
 * UNWIND_HINT_UNDEFINED (a cpp one). */
#include <linux/version.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define OKP_UNWIND_HINT_UNDEFINED UNWIND_HINT_UNDEFINED
#else
#define OKP_UNWIND_HINT_UNDEFINED UNWIND_HINT_EMPTY
#endif
#define OKP_PT_REGS_SIZE (21 * 8)

.macro okp_return_stub
	OKP_UNWIND_HINT_UNDEFINED
	ANNOTATE_NOENDBR
	pushq $okp_stub_index
	jmp okp_return_common
.endm
	okp_return_stub_block 0xcc

/* [rsp] = the stub's index, in the slot that held the return address (sp after ret - 8). */
okp_return_common:
	OKP_UNWIND_HINT_UNDEFINED
	ANNOTATE_NOENDBR
	/* struct pt_regs, pushed from its end down (as the detour entry builds it). */
	pushq $__KERNEL_DS			/* ss */
	/*
	 * sp: as the caller sees it after the return, above the index and this ss. push %rsp
	 * stores rsp as it was before the push (the ss slot's address): 16 below it, added once
	 * the flags are saved (addq changes them).
	 */
	pushq %rsp
	pushfq					/* flags, as the function returned with them */
	addq $16, 8(%rsp)
	pushq $__KERNEL_CS			/* cs */
	subq $8, %rsp				/* ip: okp_core_on_return() writes the return address */
	pushq $-1				/* orig_ax */
	OKP_PUSH_PT_REGS_GPRS
	/*
	 * What okp_return_trampoline_handler() does for the other arches, done here (a call level
	 * less on every return, as the detour entry does): preempt_disable_notrace(), the core's
	 * return with this CPU's okp_cpu_state, preempt_enable_notrace().
	 */
#ifdef CONFIG_PREEMPT_COUNT
	incl %gs:OKP_PREEMPT_COUNT
#endif
	movq %rsp, %rdi
	movq OKP_PT_REGS_SIZE(%rsp), %rsi	/* the index */
	movq $okp_cpu_state, %rdx
	addq %gs:this_cpu_off, %rdx
	call okp_core_on_return
	movq %rax, OKP_PT_REGS_SIZE(%rsp)	/* the real return address, where ret finds it */
	/* x86 folds a pending reschedule into the count (0 = due): okp_detour_resched() takes it. */
#ifdef CONFIG_PREEMPT_COUNT
	decl %gs:OKP_PREEMPT_COUNT
#ifdef CONFIG_PREEMPTION
	jnz 1f
	call okp_detour_resched
1:
#endif
#endif
	OKP_POP_PT_REGS_GPRS
	addq $(OKP_PT_REGS_SIZE - 15*8), %rsp	/* past orig_ax, ip, cs, flags, sp, ss: at the index's slot */
	ANNOTATE_UNRET_SAFE
	ret
	int3
