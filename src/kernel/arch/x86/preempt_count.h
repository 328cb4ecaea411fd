/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's per-CPU preempt count as assembly names it (its symbol is exported; it moved
 * into pcpu_hot in 6.2, at the offset detour_layout.h gives and detour.c checks). Counted by
 * the detour entry (detour_entry.S) and the return stubs' common part (arch/x86/return_stubs.S),
 * which do preempt_disable_notrace()/preempt_enable_notrace() themselves.
 */
#ifndef OKP_X86_PREEMPT_COUNT_H
#define OKP_X86_PREEMPT_COUNT_H

#include <linux/version.h>

#include "detour_layout.h"

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define OKP_PREEMPT_COUNT pcpu_hot + OKP_PCPU_HOT_PREEMPT_COUNT
#else
#define OKP_PREEMPT_COUNT __preempt_count
#endif

#endif
