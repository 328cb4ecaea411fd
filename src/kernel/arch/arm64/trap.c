// SPDX-License-Identifier: GPL-2.0
/*
 * The breakpoint trap on arm64: not hooked yet. BRK arrives differently from x86's DIE_INT3
 * (through the kernel's break hooks, not the die notifier chain): its backend is a later
 * issue. Until then okprobes loads and the core refuses every probe, so no breakpoint of ours
 * is ever written.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/printk.h>

#include "kernel/okp_glue.h"

/* No entry from a breakpoint trap: no root for the trap-path blacklist. */
okp_addr_t okp_trap_entry_point(void)
{
	return 0;
}

int okp_trap_init(void)
{
	pr_info("breakpoint probes are not implemented on arm64 yet\n");
	return 0;
}

void okp_trap_exit(void)
{
}
