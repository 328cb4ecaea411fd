/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which die notification is a breakpoint (arch/common/die_notifier.c): do_trap_break() raises
 * DIE_TRAP for an ebreak its kprobes and uprobes did not claim (only with CONFIG_KGDB: see
 * trap.c).
 */
#ifndef OKP_RISCV_DIE_BREAKPOINT_H
#define OKP_RISCV_DIE_BREAKPOINT_H

#include <linux/kdebug.h>
#include <asm/csr.h>

static __always_inline bool okp_die_is_breakpoint(unsigned long val, const struct die_args *args)
{
	return val == DIE_TRAP && args->trapnr == EXC_BREAKPOINT;
}

#endif /* OKP_RISCV_DIE_BREAKPOINT_H */
