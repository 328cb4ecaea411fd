// SPDX-License-Identifier: GPL-2.0
/*
 * The breakpoint trap comes to okprobes through the die notifier chain (DIE_INT3:
 * die_breakpoint.h, arch/common/die_notifier.c), on every x86-64 kernel.
 */
#include "kernel/okp_glue.h"
#include "../common/die_notifier.h"

int okp_trap_init(void)
{
	return okp_die_notifier_register();
}

void okp_trap_exit(void)
{
	okp_die_notifier_unregister();
}
