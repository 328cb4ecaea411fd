/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okp_detour_entry: a detour's `call` lands here (arch/x86/detour.h has the detour's
 * layout), or in okp_detour_entry_with_post when its copy calls okp_detour_post_entry, the
 * same for post handlers. On entry the stack holds the
 * return address, i.e. the detour's relocated copy, right below the probed code's own stack.
 * It saves a full struct pt_regs (ip is filled by the core, sp is the probed code's), calls
 * the core (okp_core_on_detour_idle(site, regs) on the common hit, okp_core_on_detour(copy,
 * regs, cpu) otherwise / okp_detour_post_hit(ret, regs)), restores
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

#include "detour_layout.h"
#include "preempt_count.h"
#include "pt_regs_gprs.h"

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
.macro OKP_DETOUR_ENTRY name, hit, irqs_off, with_post=0
SYM_CODE_START(\name)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR
	pushq	$__KERNEL_DS		/* ss */
	/*
	 * sp: the probed code's stack pointer, above our return address and this ss. push %rsp
	 * stores rsp as it was before the push (the ss slot's address): 16 below it, added once
	 * the flags are saved (addq changes them).
	 */
	pushq	%rsp
	pushfq				/* flags */
	addq	$16, 8(%rsp)
	.if \irqs_off
	cli
	.endif
	pushq	$__KERNEL_CS		/* cs */
	pushq	$0			/* ip: the core sets it */
	pushq	$-1			/* orig_ax */
	OKP_PUSH_PT_REGS_GPRS
	UNWIND_HINT_REGS
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
	 * less is measurable (docs/jump-optimization.md). preempt_disable_notrace(), then the
	 * common hit straight: the CPU has no frame open (a detour with a post entry calls
	 * okp_detour_entry_with_post instead), so this CPU's depth goes 0 -> 1 around the pre
	 * handlers (okp_core_on_detour_idle, given the site the detour names), as the core's
	 * open_first_frame/close_first_frame do, frame 0 left unfilled (core/hit.cpp says why
	 * that is enough). A re-entry goes to okp_core_on_detour, out of line below.
	 * detour.c checks the preempt count's place against the kernel's definition, and that
	 * the depth is okp_cpu_state's first field; detour.h, the site word's place.
	 */
#ifdef CONFIG_PREEMPT_COUNT
	incl	%gs:OKP_PREEMPT_COUNT
#endif
	.if \with_post
	/* A detour with a post entry: always the core's general detour hit. */
	movq	$okp_cpu_state, %rdx
	addq	%gs:this_cpu_off, %rdx
	call	okp_core_on_detour
	.else
	cmpl	$0, %gs:okp_cpu_state	/* the depth */
	jne	.Lnot_idle_\@
	/* No post entry in a detour that calls this entry: its site word is untagged. */
	movq	OKP_DETOUR_SITE_FROM_COPY(%rdi), %rdi
	movl	$1, %gs:okp_cpu_state
	call	okp_core_on_detour_idle
	/* Nothing an interrupt may see (a kHandlers frame) was written: the count alone closes. */
	movl	$0, %gs:okp_cpu_state
	.endif
.Lhandled_\@:
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
	/* Every register back as the handlers left it; flags last, as nothing after popfq may
	 * change them (lea does not). */
	OKP_POP_PT_REGS_GPRS
	leaq	OKP_PT_FLAGS - OKP_PT_ORIG_AX(%rsp), %rsp	/* past orig_ax, ip, cs */
	popfq
	leaq	OKP_PT_SIZE - OKP_PT_SP(%rsp), %rsp	/* past sp, ss */
	UNWIND_HINT_FUNC
	RET
	.if !\irqs_off && !\with_post
.Lnot_idle_\@:
	/* A re-entry: the core's general detour hit. */
	movq	$okp_cpu_state, %rdx
	addq	%gs:this_cpu_off, %rdx
	call	okp_core_on_detour
	jmp	.Lhandled_\@
	.endif
SYM_CODE_END(\name)
.endm

/*
 * Every detour's `call`: pre handlers, then the copy (or where a handler sent execution).
 * A detour whose copy calls the post entry calls okp_detour_entry_with_post instead, so that
 * okp_detour_entry need not test for one on every hit. Both reach the same C (the trap-path
 * walk starts from okp_detour_entry; this text is .kprobes.text, blacklisted whole).
 */
OKP_DETOUR_ENTRY okp_detour_entry, okp_core_on_detour_idle, 0
OKP_DETOUR_ENTRY okp_detour_entry_with_post, okp_core_on_detour, 0, 1
/* A post_handler's detour calls this after the copy's first instruction. */
OKP_DETOUR_ENTRY okp_detour_post_entry, okp_detour_post_hit, 1
