// SPDX-License-Identifier: GPL-2.0
/*
 * The glue of riscv64 jump probes: the C halves of the detours' entries (detour_entry.S), the
 * kernel's tables the region check reads (exception table, jump labels, BUG/WARN sites:
 * vmlinux's and the module's around an address), and the task look.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/bug.h>
#include <linux/jump_label.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <asm/extable.h>

#include "kernel/okp_glue.h"
#include "../common/extable_scan.h"
#include "detour_layout.h"
#include "okp_riscv.h"
#include "text_patch.h"

void okp_detour_entry(void);
void okp_detour_entry_with_post(void);
void okp_detour_post_entry(void);
int okp_detour_hit(unsigned long copy, struct pt_regs *regs);
void okp_detour_post_hit(unsigned long ret, struct pt_regs *regs);
void okp_detour_resched(void);

static_assert(sizeof(struct pt_regs) == OKP_PT_SIZE, "detour_entry.S's frame is a pt_regs");
static_assert(offsetof(struct pt_regs, epc) == OKP_PT_EPC &&
	      offsetof(struct pt_regs, ra) == OKP_PT_X(1) &&
	      offsetof(struct pt_regs, sp) == OKP_PT_X(2) &&
	      offsetof(struct pt_regs, t0) == OKP_PT_X(5) &&
	      offsetof(struct pt_regs, s0) == OKP_PT_X(8) &&
	      offsetof(struct pt_regs, a0) == OKP_PT_X(10) &&
	      offsetof(struct pt_regs, s2) == OKP_PT_X(18) &&
	      offsetof(struct pt_regs, t3) == OKP_PT_X(28) &&
	      offsetof(struct pt_regs, t6) == OKP_PT_X(31) &&
	      offsetof(struct pt_regs, status) == OKP_PT_STATUS &&
	      offsetof(struct pt_regs, badaddr) == OKP_PT_TAIL,
	      "detour_layout.h's offsets are struct pt_regs'");
static_assert(OKP_SR_SIE == SR_SIE && OKP_SR_SPIE == SR_SPIE && OKP_SR_SPP == SR_SPP,
	      "detour_layout.h's sstatus bits are the kernel's");
static_assert((OKP_DETOUR_FRAME % 16) == 0, "the entries keep sp 16-aligned");
/*
 * okp_detour_entry counts preemption and finds this CPU itself: current's thread_info is at
 * the start of the task_struct tp points at (THREAD_INFO_IN_TASK), and it reads and writes
 * this CPU's depth as the 4 bytes at the start of okp_cpu_state.
 */
static_assert(IS_ENABLED(CONFIG_THREAD_INFO_IN_TASK) &&
	      offsetof(struct task_struct, thread_info) == 0,
	      "detour_entry.S finds thread_info at tp");
static_assert(offsetof(struct thread_info, flags) == OKP_TI_FLAGS &&
	      offsetof(struct thread_info, preempt_count) == OKP_TI_PREEMPT_COUNT &&
	      sizeof(((struct thread_info *)0)->preempt_count) == 4 &&
	      offsetof(struct thread_info, cpu) == OKP_TI_CPU &&
	      sizeof(((struct thread_info *)0)->cpu) == 4,
	      "detour_layout.h's thread_info offsets are the kernel's");
static_assert(_TIF_NEED_RESCHED == OKP_TIF_NEED_RESCHED_MASK,
	      "detour_layout.h's need-resched flag is the kernel's");
static_assert(offsetof(struct okp_cpu_state, depth) == 0 &&
	      sizeof(((struct okp_cpu_state *)0)->depth) == 4,
	      "detour_entry.S reads okp_cpu_state.depth as the 4 bytes at its start");

/*
 * Each possible CPU's okp_cpu_state, by CPU number: okp_detour_entry finds its own with one
 * load from thread_info's CPU number, where this_cpu_ptr() would add the per-CPU offset to the
 * variable's address. Filled at load (okp_trap_init), before any detour exists; the possible
 * CPUs are fixed at boot.
 */
struct okp_cpu_state *okp_riscv_cpu_states[NR_CPUS] __read_mostly;

void okp_riscv_detour_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		okp_riscv_cpu_states[cpu] = per_cpu_ptr(&okp_cpu_state, cpu);
}

/*
 * okp_detour_entry's preempt_enable_notrace() found the count back at 0 with a reschedule due:
 * count one more and drop it through the kernel's own helper, which reschedules if this
 * context may.
 */
void notrace okp_detour_resched(void)
{
	preempt_disable_notrace();
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(okp_detour_resched);

/*
 * okp_detour_entry_with_post's C half: preemption off around the core's hit, as kprobes
 * promises handlers. A post step (the core sends execution into the copy with SPIE cleared in regs, a frame open
 * on this CPU until the post entry) must not reschedule on the way: interrupts go off first
 * (the entry's return sets SIE from regs anyway), and preempt_enable() does not reschedule
 * with them off.
 */
int notrace okp_detour_hit(unsigned long copy, struct pt_regs *regs)
{
	int ret;

	preempt_disable_notrace();
	ret = okp_core_on_detour(copy, (struct okp_regs *)regs, this_cpu_ptr(&okp_cpu_state));
	if (ret && regs->epc == copy)
		local_irq_disable();
	preempt_enable_notrace();
	return ret;
}
NOKPROBE_SYMBOL(okp_detour_hit);

/* The post entry's C half, interrupts off (the copy's first instruction ran so). */
void notrace okp_detour_post_hit(unsigned long ret, struct pt_regs *regs)
{
	preempt_disable_notrace();
	okp_core_on_detour_post(ret, (struct okp_regs *)regs, this_cpu_ptr(&okp_cpu_state));
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(okp_detour_post_hit);

okp_addr_t okp_seam_detour_entry(int with_post)
{
	return with_post ? (okp_addr_t)okp_detour_entry_with_post : (okp_addr_t)okp_detour_entry;
}

okp_addr_t okp_seam_detour_post_entry(void)
{
	return (okp_addr_t)okp_detour_post_entry;
}

/* Roots of the trap path (the walk follows the entries' direct calls into the core). */
okp_addr_t okp_detour_entry_point(void)
{
	return (okp_addr_t)okp_detour_entry;
}

okp_addr_t okp_detour_entry_with_post_point(void)
{
	return (okp_addr_t)okp_detour_entry_with_post;
}

okp_addr_t okp_detour_post_entry_point(void)
{
	return (okp_addr_t)okp_detour_post_entry;
}

/* No memory near the kernel's text: the pair reaches the module area from all of it. */
okp_addr_t okp_seam_near_text_area(unsigned long *size)
{
	*size = 0;
	return 0;
}

/*
 * Before a batch's way in from breakpoints that trap (KGDB): on a kernel that preempts no
 * kernel code a task is stopped only where it called schedule() (a region's call is its last
 * instruction: it returns to the region's end, never inside), and the RCU grace period the
 * optimizer waited for covers every hart. On one that preempts this proves nothing: the
 * optimizer then waits for tasks-RCU (every task has since passed a voluntary switch or user
 * mode, so none is still stopped inside). The stopped switches read every task's stack
 * themselves (task_look.c).
 */
int okp_seam_tasks_outside(struct okp_text_span *spans, unsigned long n)
{
	return !preempt_model_preemptible();
}

/* The module whose core text holds addr, with a reference to keep its tables; NULL: vmlinux
 * (or nobody's). */
static struct module *okp_module_get(okp_addr_t addr)
{
	struct module *mod = NULL;

	if (!okp_ksyms.__module_text_address)
		return NULL;
	preempt_disable();
	mod = okp_ksyms.__module_text_address(addr);
	if (mod && !try_module_get(mod))
		mod = NULL;
	preempt_enable();
	return mod;
}

int okp_seam_extable_in(okp_addr_t start, okp_addr_t end, struct okp_extable_entry *out,
			unsigned int max)
{
	const struct exception_table_entry *first =
		(const struct exception_table_entry *)okp_riscv_ksyms.__start___ex_table;
	const struct exception_table_entry *stop =
		(const struct exception_table_entry *)okp_riscv_ksyms.__stop___ex_table;
	struct module *mod;
	unsigned int n;

	if (!first || stop <= first)
		return -ENOENT; /* no fault could be told apart from a fixed-up one */
	n = okp_extable_scan(first, stop - first, start, end, out, max, 0);
	mod = okp_module_get(start);
	if (mod) {
		n = okp_extable_scan(mod->extable, mod->num_exentries, start, end, out, max, n);
		module_put(mod);
	}
	return n;
}

static unsigned int okp_jump_scan(const struct jump_entry *first, unsigned long num,
				  okp_addr_t start, okp_addr_t end, okp_addr_t *sites,
				  okp_addr_t *targets, unsigned int max, unsigned int n)
{
	unsigned long i;

	for (i = 0; i < num; i++) {
		unsigned long code = jump_entry_code(&first[i]);
		unsigned long target = jump_entry_target(&first[i]);

		if ((code < start || code >= end) && (target < start || target >= end))
			continue;
		if (n < max) {
			sites[n] = code;
			targets[n] = target;
		}
		n++;
	}
	return n;
}

int okp_riscv_jump_labels_in(okp_addr_t start, okp_addr_t end, okp_addr_t *sites,
			     okp_addr_t *targets, unsigned int max)
{
#ifdef CONFIG_JUMP_LABEL
	const struct jump_entry *first = (const struct jump_entry *)okp_ksyms.__start___jump_table;
	const struct jump_entry *stop = (const struct jump_entry *)okp_ksyms.__stop___jump_table;
	struct module *mod;
	unsigned int n;

	if (!first || stop < first)
		return -ENOENT;
	n = okp_jump_scan(first, stop - first, start, end, sites, targets, max, 0);
	mod = okp_module_get(start);
	if (mod) {
		n = okp_jump_scan(mod->jump_entries, mod->num_jump_entries, start, end, sites,
				  targets, max, n);
		module_put(mod);
	}
	return n;
#else
	return 0;
#endif
}

#ifdef CONFIG_GENERIC_BUG
static unsigned long okp_bug_addr(const struct bug_entry *bug)
{
#ifdef CONFIG_GENERIC_BUG_RELATIVE_POINTERS
	return (unsigned long)&bug->bug_addr_disp + bug->bug_addr_disp;
#else
	return bug->bug_addr;
#endif
}

static unsigned int okp_bug_scan(const struct bug_entry *first, unsigned long num,
				 okp_addr_t start, okp_addr_t end, okp_addr_t *out,
				 unsigned int max, unsigned int n)
{
	unsigned long i;

	for (i = 0; i < num; i++) {
		unsigned long addr = okp_bug_addr(&first[i]);

		if (addr < start || addr >= end)
			continue;
		if (n < max)
			out[n] = addr;
		n++;
	}
	return n;
}
#endif

int okp_riscv_bug_sites_in(okp_addr_t start, okp_addr_t end, okp_addr_t *out, unsigned int max)
{
#ifdef CONFIG_GENERIC_BUG
	const struct bug_entry *first = (const struct bug_entry *)okp_riscv_ksyms.__start___bug_table;
	const struct bug_entry *stop = (const struct bug_entry *)okp_riscv_ksyms.__stop___bug_table;
	struct module *mod;
	unsigned int n;

	if (!first || stop < first)
		return -ENOENT;
	n = okp_bug_scan(first, stop - first, start, end, out, max, 0);
	mod = okp_module_get(start);
	if (mod) {
		n = okp_bug_scan(mod->bug_table, mod->num_bugs, start, end, out, max, n);
		module_put(mod);
	}
	return n;
#else
	return 0;
#endif
}
