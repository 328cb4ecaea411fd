/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For KUnit cases that need a breakpoint (mid-function) probe: on a kernel where okprobes
 * serves none (riscv64 without KGDB: okprobes refuses every one with -EOPNOTSUPP and a reason
 * starting "no breakpoint probes:", docs/riscv.md), the case is skipped with okprobes' own
 * reason instead of failing; anywhere else it runs. Function-entry (ftrace) cases never call it.
 */
#ifndef OKP_NEED_BREAKPOINTS_H
#define OKP_NEED_BREAKPOINTS_H

#include <kunit/test.h>

#ifdef CONFIG_RISCV
void okp_kunit_need_breakpoints(struct kunit *test);
#else
/* x86-64 and arm64 trap their breakpoints on every kernel okprobes loads on. */
static inline void okp_kunit_need_breakpoints(struct kunit *test) {}
#endif

#endif
