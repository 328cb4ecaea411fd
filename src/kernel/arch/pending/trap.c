// SPDX-License-Identifier: GPL-2.0
/*
 * The breakpoint trap of an arch whose backend is still to come (arm64, riscv64): not hooked.
 * Their breakpoints arrive differently from x86's DIE_INT3: arm64's BRK through the kernel's
 * break hooks, riscv64's ebreak through a die notifier (DIE_TRAP) only on a kernel built with
 * KGDB. Until their backends land okprobes loads and the core refuses every probe, so no
 * breakpoint of ours is ever written.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/printk.h>
#include <linux/utsname.h>

#include "kernel/okp_glue.h"

/* No entry from a breakpoint trap: no root for the trap-path blacklist. */
okp_addr_t okp_trap_entry_point(void)
{
	return 0;
}

int okp_trap_init(void)
{
	pr_info("breakpoint probes are not implemented on %s yet\n", init_utsname()->machine);
	return 0;
}

void okp_trap_exit(void)
{
}
