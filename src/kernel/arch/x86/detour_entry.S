/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okp_detour_entry: every detour's `call` lands here (arch/x86/detour.h has the detour's
 * layout); okp_detour_post_entry, the same for post handlers. On entry the stack holds the
 * return address, i.e. the detour's relocated copy, right below the probed code's own stack.
 * It saves a full struct pt_regs (ip is filled by the core, sp is the probed code's), calls
 * the core (okp_core_on_detour(copy, regs, cpu) / okp_detour_post_hit(ret, regs)), restores
 * every register and the flags from regs (a handler's changes take effect) and returns: to the
 * copy, or to regs->ip where the core says so (a pre_handler sent execution there, a post
 * handler's step, the post entry).
 *
 * Only ever reached by a direct call from a detour: no ENDBR. UNWIND_HINT_REGS makes ORC
 * unwind through the saved regs into the probed function, so a stack trace taken in a handler
 * shows the probed function and its callers (the detour itself has no ORC data).
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include <asm/segment.h>
#include <asm/unwind_hints.h>

#include <linux/version.h>

#include "detour_layout.h"

/* The preempt count, by its per-CPU symbol (exported): it moved into pcpu_hot in 6.2. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define OKP_PREEMPT_COUNT pcpu_hot + OKP_PCPU_HOT_PREEMPT_COUNT
#else
#define OKP_PREEMPT_COUNT __preempt_count
#endif

	/* .kprobes.text: the hit path, never probed (okprobes' text is blacklisted whole). */
	.section .kprobes.text, "ax"

/*
 * One entry per handler kind: name is called by the detour, hit is the C half.
 *
 * Pre handlers (irqs_off=0) run with interrupts as they were at the probe and preemption off,
 * as the kernel's optimized kprobes run theirs: the C half only opens a per-CPU frame, which
 * an interrupt may nest over (core/cpu_frames.h), and a cli costs a hit more than any other
 * instruction here under emulation (docs/jump-optimization.md). A pre handler that wants the
 * copy's first instruction followed by post handlers leaves interrupts off in regs->flags
 * (begin_step), so the copy runs that instruction with them off, as a single-step would.
 *
 * The post entry (irqs_off=1) turns them off from the saved flags on, as the breakpoint trap
 * does: its C half reads and closes the frame the pre entry left open. They come back with
 * the flags restored from regs (the post entry's C half restores the IF the pre entry
 * cleared).
 */
.macro OKP_DETOUR_ENTRY name, hit, irqs_off
SYM_CODE_START(\name)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR
	pushq	$__KERNEL_DS		/* ss */
	pushq	$0			/* sp, below */
	pushfq				/* flags */
	.if \irqs_off
	cli
	.endif
	pushq	$__KERNEL_CS		/* cs */
	pushq	$0			/* ip: the core sets it */
	pushq	$-1			/* orig_ax */
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%rax
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	UNWIND_HINT_REGS
	/* The probed code's stack pointer: above the regs and our return address. */
	leaq	OKP_PT_SIZE + 8(%rsp), %rax
	movq	%rax, OKP_PT_SP(%rsp)
	movq	OKP_PT_SIZE(%rsp), %rdi	/* our return address: names the probe */
	movq	%rsp, %rsi
	.if \irqs_off
	call	\hit
	/* The post entry goes on at regs->ip: it becomes the return address. */
	movq	OKP_PT_IP(%rsp), %rax
	movq	%rax, OKP_PT_SIZE(%rsp)
	.else
	/*
	 * The pre entry does its C half's work itself: on every optimized hit, a call level
	 * less is measurable (docs/jump-optimization.md). preempt_disable_notrace(), this CPU's
	 * okp_cpu_state, then the core. detour.c checks the preempt count's place against the
	 * kernel's definition.
	 */
#ifdef CONFIG_PREEMPT_COUNT
	incl	%gs:OKP_PREEMPT_COUNT
#endif
	movq	okp_detour_pcpu_state(%rip), %rdx
	addq	%gs:this_cpu_off, %rdx
	call	okp_core_on_detour
	/* Non-zero: go on at regs->ip. Zero (every plain hit): at the copy, our return address. */
	testl	%eax, %eax
	jz	.Lto_copy_\@
	movq	OKP_PT_IP(%rsp), %rax
	movq	%rax, OKP_PT_SIZE(%rsp)
.Lto_copy_\@:
	/* preempt_enable_notrace(): x86 folds a pending reschedule into the count (0 = due). */
#ifdef CONFIG_PREEMPT_COUNT
	decl	%gs:OKP_PREEMPT_COUNT
#ifdef CONFIG_PREEMPTION
	jnz	.Lno_resched_\@
	call	okp_detour_resched
.Lno_resched_\@:
#endif
#endif
	.endif
	movq	OKP_PT_R15(%rsp), %r15
	movq	OKP_PT_R14(%rsp), %r14
	movq	OKP_PT_R13(%rsp), %r13
	movq	OKP_PT_R12(%rsp), %r12
	movq	OKP_PT_BP(%rsp), %rbp
	movq	OKP_PT_BX(%rsp), %rbx
	movq	OKP_PT_R11(%rsp), %r11
	movq	OKP_PT_R10(%rsp), %r10
	movq	OKP_PT_R9(%rsp), %r9
	movq	OKP_PT_R8(%rsp), %r8
	movq	OKP_PT_AX(%rsp), %rax
	movq	OKP_PT_CX(%rsp), %rcx
	movq	OKP_PT_DX(%rsp), %rdx
	movq	OKP_PT_SI(%rsp), %rsi
	movq	OKP_PT_DI(%rsp), %rdi
	/* Flags last: nothing after this may change them (lea does not). */
	pushq	OKP_PT_FLAGS(%rsp)
	popfq
	leaq	OKP_PT_SIZE(%rsp), %rsp
	UNWIND_HINT_FUNC
	RET
SYM_CODE_END(\name)
.endm

/* Every detour's `call`: pre handlers, then the copy (or where a handler sent execution). */
OKP_DETOUR_ENTRY okp_detour_entry, okp_detour_hit, 0
/* A post_handler's detour calls this after the copy's first instruction. */
OKP_DETOUR_ENTRY okp_detour_post_entry, okp_detour_post_hit, 1
