// SPDX-License-Identifier: GPL-2.0
/*
 * The glue of x86-64 jump optimization: the C half of the detours' common entry
 * (detour_entry.S), and the exception-table entries the region check reads.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/extable.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <asm/extable.h>

#include "kernel/okp_glue.h"

void okp_detour_entry(void);
void okp_detour_post_entry(void);
void okp_detour_hit(unsigned long copy, struct pt_regs *regs);
void okp_detour_post_hit(unsigned long ret, struct pt_regs *regs);

/*
 * The C halves of okp_detour_entry and okp_detour_post_entry, called with interrupts off
 * (regs->flags has them as they were at the probe), as on the breakpoint path: this CPU's
 * frames stay this CPU's. Preemption is off too for the handlers, as kprobes promises them
 * (preempt_count says so); with interrupts off, enabling it cannot reschedule here.
 */
static __always_inline void okp_detour_call(void (*core)(okp_addr_t, struct okp_regs *,
							 struct okp_cpu_state *),
					    unsigned long where, struct pt_regs *regs)
{
	struct okp_cpu_state *cpu;

	preempt_disable_notrace();
	cpu = this_cpu_ptr(&okp_cpu_state);
	cpu->task = current;
	core(where, (struct okp_regs *)regs, cpu);
	preempt_enable_notrace();
}

void notrace okp_detour_hit(unsigned long copy, struct pt_regs *regs)
{
	okp_detour_call(okp_core_on_detour, copy, regs);
}
NOKPROBE_SYMBOL(okp_detour_hit);

void notrace okp_detour_post_hit(unsigned long ret, struct pt_regs *regs)
{
	okp_detour_call(okp_core_on_detour_post, ret, regs);
}
NOKPROBE_SYMBOL(okp_detour_post_hit);

okp_addr_t okp_seam_detour_entry(void)
{
	return (okp_addr_t)okp_detour_entry;
}

okp_addr_t okp_seam_detour_post_entry(void)
{
	return (okp_addr_t)okp_detour_post_entry;
}

/* Where okprobes' own code is entered from a detour: roots of the trap path. */
okp_addr_t okp_detour_entry_point(void)
{
	return (okp_addr_t)okp_detour_hit;
}

okp_addr_t okp_detour_post_entry_point(void)
{
	return (okp_addr_t)okp_detour_post_hit;
}

/* x86's entries are 32-bit offsets from their own fields (EX_TYPE in data). */
static unsigned long okp_ex_insn(const struct exception_table_entry *e)
{
	return (unsigned long)&e->insn + e->insn;
}

static unsigned long okp_ex_fixup(const struct exception_table_entry *e)
{
	return (unsigned long)&e->fixup + e->fixup;
}

static unsigned int okp_extable_scan(const struct exception_table_entry *first, unsigned int num,
				     okp_addr_t start, okp_addr_t end,
				     struct okp_extable_entry *out, unsigned int max,
				     unsigned int n)
{
	unsigned int i;

	for (i = 0; i < num; i++) {
		unsigned long insn = okp_ex_insn(&first[i]), fixup = okp_ex_fixup(&first[i]);

		if ((insn < start || insn >= end) && (fixup < start || fixup >= end))
			continue;
		if (n < max)
			out[n] = (struct okp_extable_entry){ insn, fixup };
		n++;
	}
	return n;
}

int okp_seam_extable_in(okp_addr_t start, okp_addr_t end, struct okp_extable_entry *out,
			unsigned int max)
{
	const struct exception_table_entry *first =
		(const struct exception_table_entry *)okp_ksyms.__start___ex_table;
	const struct exception_table_entry *stop =
		(const struct exception_table_entry *)okp_ksyms.__stop___ex_table;
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
