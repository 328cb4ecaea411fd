// SPDX-License-Identifier: GPL-2.0
/*
 * The breakpoint trap through the die notifier chain, for an arch whose kernel raises a die
 * notification for a kernel-mode breakpoint (which one: die_breakpoint.h in the arch's
 * folder). The notifier runs with interrupts off, in NMI-like context: the core does the rest
 * without locks (src/core/hit.cpp).
 */
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>

#include "kernel/okp_glue.h"
#include "die_breakpoint.h"
#include "die_notifier.h"

/* notrace: the hit path is neither probed nor traced (a tracer here would run per hit). */
static int notrace okp_die_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	struct okp_cpu_state *cpu;

	if (!okp_die_is_breakpoint(val, args) || user_mode(args->regs))
		return NOTIFY_DONE;
	cpu = this_cpu_ptr(&okp_cpu_state);
	return okp_core_on_breakpoint((struct okp_regs *)args->regs, cpu) ?
		NOTIFY_STOP : NOTIFY_DONE;
}
NOKPROBE_SYMBOL(okp_die_notify);

static struct notifier_block okp_die_nb = {
	.notifier_call = okp_die_notify,
	/* Before other listeners (kgdb's among them): a breakpoint of ours must never reach one
	 * that oopses or stops the machine. */
	.priority = INT_MAX,
};

static bool okp_die_registered;

/* Where okprobes' own code is entered from a breakpoint trap: a root of the trap path. */
okp_addr_t okp_trap_entry_point(void)
{
	return (okp_addr_t)okp_die_notify;
}

int okp_die_notifier_register(void)
{
	int ret = register_die_notifier(&okp_die_nb);

	okp_die_registered = !ret;
	return ret;
}

void okp_die_notifier_unregister(void)
{
	if (okp_die_registered)
		unregister_die_notifier(&okp_die_nb);
	okp_die_registered = false;
}
