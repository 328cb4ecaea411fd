// SPDX-License-Identifier: GPL-2.0
/*
 * The glue of x86-64 jump optimization: the C half of the detours' common entry
 * (detour_entry.S), and the exception-table entries the region check reads.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/extable.h>
#include <linux/kallsyms.h>
#include <linux/version.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <asm/extable.h>

#include "kernel/okp_glue.h"
#include "../common/extable_scan.h"
#include "okp_x86.h"
#include "detour_layout.h"

void okp_detour_entry(void);
void okp_detour_entry_with_post(void);
void okp_detour_post_entry(void);
void okp_detour_post_hit(unsigned long ret, struct pt_regs *regs);
void okp_detour_resched(void);

/*
 * The pre entry (okp_detour_entry) calls the core itself, with preemption off and interrupts
 * as they were at the probe (an interrupt nests its own frames over ours, core/cpu_frames.h).
 * It counts preemption in the kernel's per-CPU preempt count, by its symbol (detour_layout.h
 * has its place in pcpu_hot, 6.2 on), and this CPU's okp_cpu_state by its own.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static_assert(offsetof(struct pcpu_hot, preempt_count) == OKP_PCPU_HOT_PREEMPT_COUNT,
	      "OKP_PCPU_HOT_PREEMPT_COUNT is not pcpu_hot.preempt_count's offset");
static_assert(sizeof(pcpu_hot.preempt_count) == 4, "detour_entry.S counts with incl/decl");
#else
static_assert(sizeof(__preempt_count) == 4, "detour_entry.S counts with incl/decl");
#endif
/* It reads and writes this CPU's depth as %gs:okp_cpu_state: the depth is the first field. */
static_assert(offsetof(struct okp_cpu_state, depth) == 0 &&
	      sizeof(((struct okp_cpu_state *)0)->depth) == 4,
	      "detour_entry.S reads okp_cpu_state.depth as the 4 bytes at its start");

/*
 * The pre entry's preempt_enable_notrace() (or the return stubs' common part's,
 * arch/x86/return_stubs.S) found a reschedule due (the count went to 0 with the folded
 * need-resched bit): count one more and drop it through the kernel's own helper, which
 * reschedules if this context may.
 */
void notrace okp_detour_resched(void)
{
	preempt_disable_notrace();
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(okp_detour_resched);

/*
 * The C half of okp_detour_post_entry, called with interrupts off: the pre entry left a frame
 * open on this CPU and the copy's first instruction ran with interrupts off. Preemption is off
 * for the post handlers, as kprobes promises them (preempt_count says so); with interrupts
 * off, enabling it cannot reschedule here.
 */
void notrace okp_detour_post_hit(unsigned long ret, struct pt_regs *regs)
{
	struct okp_cpu_state *cpu;

	preempt_disable_notrace();
	cpu = this_cpu_ptr(&okp_cpu_state);
	okp_core_on_detour_post(ret, (struct okp_regs *)regs, cpu);
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

/* rel32 reaches the slot area from all of the kernel's text: no memory near it is needed. */
okp_addr_t okp_seam_near_text_area(unsigned long *size)
{
	*size = 0;
	return 0;
}

/* Where okprobes' own code is entered from a detour: roots of the trap path (the walk follows
 * the entries' direct calls into the core, okp_detour_resched and the post C half). */
okp_addr_t okp_detour_entry_point(void)
{
	return (okp_addr_t)okp_detour_entry;
}

okp_addr_t okp_detour_post_entry_point(void)
{
	return (okp_addr_t)okp_detour_post_entry;
}

/*
 * Where an array of thunks ends: its symbol names only its first thunk's start (kallsyms puts
 * __x86_indirect_thunk_rax at the same address, and sizes are distances to the next symbol),
 * so the run of __x86_indirect_* symbols from there is walked, one thunk per register.
 */
static unsigned long okp_thunks_end(unsigned long start)
{
	static const char prefix[] = "__x86_indirect_";
	unsigned long a = start, s, size;
	char name[KSYM_NAME_LEN];

	while (okp_symbol_extent(a, name, sizeof(name), &s, &size) && s == a && size &&
	       !strncmp(name, prefix, sizeof(prefix) - 1))
		a = s + size;
	return a;
}

/*
 * The retpoline thunk arrays (jump, call-depth and ITS flavours where the kernel has them),
 * found at load; their extents from kallsyms once, on the first plan (registry lock held: the
 * optimizer's plans are serialised by it).
 */
unsigned int okp_seam_indirect_thunks(struct okp_addr_range *out, unsigned int max)
{
	static struct okp_addr_range ranges[3];
	static unsigned int n = UINT_MAX;
	unsigned long starts[] = { okp_x86_ksyms.__x86_indirect_thunk_array,
				   okp_x86_ksyms.__x86_indirect_jump_thunk_array,
				   okp_x86_ksyms.__x86_indirect_its_thunk_array };
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(starts) > ARRAY_SIZE(ranges));
	if (n == UINT_MAX) {
		n = 0;
		for (i = 0; i < ARRAY_SIZE(starts); i++) {
			unsigned long end = starts[i] ? okp_thunks_end(starts[i]) : 0;

			if (end > starts[i])
				ranges[n++] = (struct okp_addr_range){ starts[i], end };
		}
		for (i = 0; i < n; i++)
			pr_info("jump optimization: retpoline thunks %pS..%pS count as indirect jumps\n",
				(void *)ranges[i].start, (void *)ranges[i].end);
	}
	for (i = 0; i < n && i < max; i++)
		out[i] = ranges[i];
	return min(n, max);
}

int okp_seam_extable_in(okp_addr_t start, okp_addr_t end, struct okp_extable_entry *out,
			unsigned int max)
{
	const struct exception_table_entry *first =
		(const struct exception_table_entry *)okp_x86_ksyms.__start___ex_table;
	const struct exception_table_entry *stop =
		(const struct exception_table_entry *)okp_x86_ksyms.__stop___ex_table;
	unsigned int n = 0;
	struct module *mod;

	if (!first || stop <= first)
		return -ENOENT; /* no fault could be told apart from a fixed-up one */
	n = okp_extable_scan(first, stop - first, start, end, out, max, n);
	/* A module's own table; modules' fixups stay within the module. */
	preempt_disable();
	mod = okp_ksyms.__module_text_address ? okp_ksyms.__module_text_address(start) : NULL;
	if (mod)
		n = okp_extable_scan(mod->extable, mod->num_exentries, start, end, out, max, n);
	preempt_enable();
	return min_t(unsigned int, n, INT_MAX);
}
