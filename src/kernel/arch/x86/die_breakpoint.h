/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which die notification is a breakpoint (arch/common/die_notifier.c): the kernel raises
 * DIE_INT3 from its int3 handler whether or not its own kprobes are built in, after kprobes and
 * kgdb had their look.
 */
#ifndef OKP_X86_DIE_BREAKPOINT_H
#define OKP_X86_DIE_BREAKPOINT_H

#include <linux/kdebug.h>

static __always_inline bool okp_die_is_breakpoint(unsigned long val, const struct die_args *args)
{
	return val == DIE_INT3;
}

#endif /* OKP_X86_DIE_BREAKPOINT_H */
