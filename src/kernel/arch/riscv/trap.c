// SPDX-License-Identifier: GPL-2.0
/*
 * The breakpoint trap on riscv64 comes to okprobes through the die notifier chain: the kernel's
 * do_trap_break() asks its kprobes and uprobes first, then raises DIE_TRAP for a kernel-mode
 * ebreak, but only when it is built with CONFIG_KGDB. Without it an ebreak nobody claims goes
 * straight to report_bug() and, not being a BUG/WARN site, to die(): so on such a kernel no
 * breakpoint of okprobes' may ever be written, and every mid-function probe is refused with
 * that reason at registration (function-entry probes still go through ftrace). The notifier
 * runs with interrupts off (the kernel's entry keeps them off for a breakpoint exception): the
 * core does the rest without locks (src/core/hit.cpp).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/notifier.h>
#include <linux/printk.h>
#include <linux/ptrace.h>
#include <asm/csr.h>

#include "kernel/okp_glue.h"

void okp_riscv_set_no_breakpoint_trap(const char *reason);

#ifdef CONFIG_KGDB
/* notrace: the hit path is neither probed nor traced (a tracer here would run per hit). */
static int notrace okp_die_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	struct okp_cpu_state *cpu;

	if (val != DIE_TRAP || args->trapnr != EXC_BREAKPOINT || user_mode(args->regs))
		return NOTIFY_DONE;
	cpu = this_cpu_ptr(&okp_cpu_state);
	cpu->task = current;
	return okp_core_on_breakpoint((struct okp_regs *)args->regs, cpu) ?
		NOTIFY_STOP : NOTIFY_DONE;
}
NOKPROBE_SYMBOL(okp_die_notify);

static struct notifier_block okp_die_nb = {
	.notifier_call = okp_die_notify,
	/* Before kgdb's listener: a breakpoint of ours must never reach one that stops the machine. */
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
#else
okp_addr_t okp_trap_entry_point(void)
{
	return 0;
}

int okp_trap_init(void)
{
	static const char reason[] =
		"this riscv64 kernel is built without CONFIG_KGDB, so a kernel-mode ebreak never "
		"reaches a module (do_trap_break raises DIE_TRAP only with KGDB): only function-entry "
		"probes (ftrace) work here";

	okp_riscv_set_no_breakpoint_trap(reason);
	pr_warn("%s\n", reason);
	return 0;
}

void okp_trap_exit(void)
{
}
#endif
