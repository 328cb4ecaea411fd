/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam of the jump optimizer (core/optimizer/), both ways, on an arch with jump probes
 * (OKP_JUMP_PROBES: x86-64, arm64). The work item is src/kernel/optimizer_work.c; the rest is
 * the arch's, under src/kernel/arch/<arch>/:
 *   x86-64: text_patch.c (batched patching), detour.c (the detours' entries, thunks,
 *           exception table), task_snapshot.c (the task look);
 *   arm64:  text_patch.c (one word per site), detour.c and detour_entry.S (the entries, BTI).
 * A piece an arch's jump contract never calls (arm64: the task look, thunks, exception table)
 * is not implemented there. An arch without jump probes neither includes this header nor
 * implements any of it.
 */
#ifndef OKP_SEAM_JUMP_SERVICES_H
#define OKP_SEAM_JUMP_SERVICES_H

#include "seam/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Core -> kernel. --- */

/* A span of text [start, start + length): a jump's region. */
struct okp_text_span {
	okp_addr_t start;
	unsigned long length;
};
/*
 * Proves at one instant that no task is stopped strictly inside any of spans[0..n) (sorted
 * here), nor in okprobes' slot area, by reading every task's stack with the reliable unwinder
 * in stop_machine(). The caller has published the regions' copies and waited for an RCU grace
 * period, so no context can enter a region's inside any more. 1: proven, the jumps may be
 * written now; 0: not proven (a task inside, a stack the unwinder cannot read, PREEMPT_RT, no
 * reliable unwinder; said in debugfs optimizer_waits), the caller waits for tasks-RCU.
 * Process context, no lock held.
 */
int okp_seam_tasks_outside(struct okp_text_span *spans, unsigned long n);
/*
 * Batched patching: the caller takes text_mutex once, writes several sites with
 * okp_seam_poke_text (no sync; expect as for okp_seam_patch_text), then okp_seam_text_sync()
 * makes every CPU see all of them before any further stage.
 */
void okp_seam_text_lock(void);
void okp_seam_text_unlock(void);
int okp_seam_poke_text(okp_addr_t addr, const void *bytes, const void *expect, unsigned long len);
void okp_seam_text_sync(void);
/*
 * Why no jump may be written on this kernel at all, or NULL (a static string). riscv64: a
 * kernel that preempts kernel code (PREEMPT, PREEMPT_LAZY, preempt=full), where its switch
 * cannot prove no task is stopped inside a region. The optimizer refuses each site with it up
 * front, so the reason reaches the probe (not a failed switch later).
 */
const char *okp_seam_jumps_refused(void);
/* okp_detour_entry's and okp_detour_post_entry's addresses (the detours' common entries).
 * with_post: the entry for a detour whose copy calls the post entry
 * (okp_detour_entry_with_post), which takes no common-hit shortcut. */
okp_addr_t okp_seam_detour_entry(int with_post);
okp_addr_t okp_seam_detour_post_entry(void);
/* An exception-table entry: the instruction that may fault, and its fixup. */
struct okp_extable_entry {
	okp_addr_t insn;
	okp_addr_t fixup;
};
/* The kernel's indirect-branch thunks (retpolines): at most max ranges [start, end) written to
 * out, their number returned (0: none). Registry lock held. */
struct okp_addr_range {
	okp_addr_t start;
	okp_addr_t end;
};
unsigned int okp_seam_indirect_thunks(struct okp_addr_range *out, unsigned int max);
/* The entries whose instruction or fixup lies in [start, end) (vmlinux and modules): at most
 * max written to out; returns how many there are (more than max: out is partial), or -ENOENT
 * when this kernel's exception table cannot be found. */
int okp_seam_extable_in(okp_addr_t start, okp_addr_t end, struct okp_extable_entry *out,
			unsigned int max);
/* The jump optimizer's work item: defer runs okp_core_run_optimizer() after a short delay
 * that batches registrations; flush runs it now and waits (registry lock NOT held); cancel
 * waits for a running one and drops a pending one (unload). */
void okp_seam_defer_optimizer(void);
void okp_seam_flush_optimizer(void);
void okp_seam_cancel_optimizer(void);

/*
 * Executable memory near the kernel's text that okprobes may put detours in, for sites its
 * slot area is out of a jump's reach of: its start and *size, or 0 (none; x86-64's rel32
 * reaches the slot area from all of the kernel's text). arm64: the padding the linker script
 * leaves between the kernel's last code and _etext (mapped as kernel text, zero-filled, no
 * symbol in it), written through the kernel's text patching. Registry init.
 */
okp_addr_t okp_seam_near_text_area(unsigned long *size);
/* arm64: the kernel enforces BTI landing pads on its text (a br into a function's `bti c`
 * faults), so the detour relocates no blr into a br. */
int okp_seam_kernel_bti(void);

/* --- Kernel -> core (core/optimizer/). --- */

/* The jump optimizer's worker body (process context, takes the registry lock itself). */
void okp_core_run_optimizer(void);
/* A jump-optimized probe was reached: okp_detour_entry saved regs and calls this with
 * preemption off (interrupts as at the probe). copy: the detour's relocated copy (the entry's
 * return address). Returns 0 to go on in copy (regs->ip is then not read), non-zero to go on
 * at regs->ip (where a handler sent it, or copy with the flags a post handler's step needs). */
int okp_core_on_detour(okp_addr_t copy, struct okp_regs *regs, struct okp_cpu_state *cpu);
/* The common one of those hits, which okp_detour_entry tells apart itself: this CPU had no
 * frame open (the entry moved its depth from 0 to 1 and moves it back to 0 after the call) and
 * the detour calls no post entry. site: the core's site the detour names (its word before the
 * call, untagged then). Runs the pre handlers only; returns as okp_core_on_detour. */
int okp_core_on_detour_idle(okp_addr_t site, struct okp_regs *regs);
/* A jump-optimized probe with a post_handler ran its first instruction: the post entry saved
 * regs (interrupts still off) and calls this; ret is its return address (the detour's data).
 * On return regs->ip is where the copy goes on. */
void okp_core_on_detour_post(okp_addr_t ret, struct okp_regs *regs, struct okp_cpu_state *cpu);

#ifdef __cplusplus
}
#endif

#endif /* OKP_SEAM_JUMP_SERVICES_H */
