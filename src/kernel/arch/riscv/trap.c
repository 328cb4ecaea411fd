// SPDX-License-Identifier: GPL-2.0
/*
 * The breakpoint trap on riscv64 comes to okprobes through the die notifier chain: the kernel's
 * do_trap_break() asks its kprobes and uprobes first, then raises DIE_TRAP for a kernel-mode
 * ebreak, but only when it is built with CONFIG_KGDB. Without it an ebreak nobody claims goes
 * straight to report_bug() and, not being a BUG/WARN site, to die(): so on such a kernel no
 * breakpoint of okprobes' may ever be written, and every mid-function probe is refused with
 * that reason at registration (function-entry probes still go through ftrace).
 *
 * With CONFIG_UPROBES, 6.1's do_trap_break() also hands every ebreak, kernel-mode ones
 * included, to uprobe_breakpoint_handler() before the die notifiers; that claims it for any task
 * whose mm has uprobes (MMF_HAS_UPROBES) without moving epc, so such a task reaching an
 * okprobes breakpoint in the kernel would trap on it forever. Mid-function probes are refused
 * there too, with that reason. The notifier (arch/common/die_notifier.c, die_breakpoint.h)
 * runs with interrupts off (the kernel's entry keeps them off for a breakpoint exception).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kconfig.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

#include "kernel/okp_glue.h"
#include "../common/die_notifier.h"
#include "okp_riscv.h"

/* A test knob: load as if this kernel had no KGDB, to prove the degraded mode on a kernel that
 * has it (tests/vm/scripts/probes_riscv.sh). */
static bool simulate_no_kgdb;
module_param(simulate_no_kgdb, bool, 0444);
MODULE_PARM_DESC(simulate_no_kgdb, "1: refuse breakpoint probes as on a kernel without KGDB (testing)");

/* Static strings: the core keeps the pointer and refuses every mid-function probe with it. */
static const char okp_reason_no_kgdb[] =
	"no breakpoint probes: without CONFIG_KGDB, this kernel's do_trap_break never passes "
	"an ebreak to a module (function entries use ftrace)";
static const char okp_reason_uprobes[] =
	"no breakpoint probes: with CONFIG_UPROBES, do_trap_break gives kernel ebreaks to "
	"uprobes first, looping a uprobed task on them (function entries use ftrace)";

int okp_trap_init(void)
{
	const char *reason = NULL;

	okp_riscv_detour_init();	/* jump probes work with or without the trap below */
	if (!IS_ENABLED(CONFIG_KGDB) || simulate_no_kgdb)
		reason = okp_reason_no_kgdb;
	else if (IS_ENABLED(CONFIG_UPROBES))
		reason = okp_reason_uprobes;
	if (reason) {
		okp_set_no_breakpoint_trap(reason);
		pr_warn("%s%s\n", reason, simulate_no_kgdb ? " [simulated: simulate_no_kgdb=1]" : "");
		return 0;
	}
	return okp_die_notifier_register();
}

void okp_trap_exit(void)
{
	okp_die_notifier_unregister();
}
