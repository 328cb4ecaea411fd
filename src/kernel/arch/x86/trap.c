// SPDX-License-Identifier: GPL-2.0
/*
 * The breakpoint trap comes to okprobes through the die notifier chain (DIE_INT3): the kernel
 * raises it from its int3 handler whether or not its own kprobes are built in, after kprobes
 * and kgdb had their look. The notifier runs with interrupts off in NMI-like context: the core
 * does the rest without locks (src/core/hit.cpp).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/notifier.h>
#include <linux/ptrace.h>

#include "kernel/okp_glue.h"

/* notrace: the hit path is neither probed nor traced (a tracer here would run per hit). */
static int notrace okp_die_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;

	if (val != DIE_INT3 || user_mode(args->regs))
		return NOTIFY_DONE;
	struct okp_cpu_state *cpu = this_cpu_ptr(&okp_cpu_state);

	return okp_core_on_breakpoint((struct okp_regs *)args->regs, cpu) ?
		NOTIFY_STOP : NOTIFY_DONE;
}
NOKPROBE_SYMBOL(okp_die_notify);

static struct notifier_block okp_die_nb = {
	.notifier_call = okp_die_notify,
	/* Before other die listeners: a breakpoint of ours must never reach one that oopses. */
	.priority = INT_MAX,
};

/* Where okprobes' own code is entered from a breakpoint trap: a root of the trap path. */
okp_addr_t okp_trap_entry_point(void)
{
	return (okp_addr_t)okp_die_notify;
}

int okp_trap_init(void)
{
	return register_die_notifier(&okp_die_nb);
}

void okp_trap_exit(void)
{
	unregister_die_notifier(&okp_die_nb);
}
