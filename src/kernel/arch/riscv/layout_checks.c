// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time proof that the register frame the C++ core mirrors (struct okp_regs, riscv64)
 * matches the kernel's struct pt_regs: each field's offset and size. A mismatch fails the
 * build here instead of corrupting a probed context at run time. (The errno values are
 * checked arch-neutrally in src/kernel/layout_checks.c.)
 */
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <asm/ptrace.h>

#include "seam/okp_seam.h"

#define OKP_SAME_FIELD(ours, theirs) \
	static_assert(offsetof(struct okp_regs, ours) == offsetof(struct pt_regs, theirs) && \
		      sizeof(((struct okp_regs *)0)->ours) == sizeof(((struct pt_regs *)0)->theirs), \
		      "okp_regs." #ours " does not mirror pt_regs." #theirs)

OKP_SAME_FIELD(epc, epc); OKP_SAME_FIELD(ra, ra); OKP_SAME_FIELD(sp, sp);
OKP_SAME_FIELD(a0, a0); OKP_SAME_FIELD(a7, a7); OKP_SAME_FIELD(s11, s11);
OKP_SAME_FIELD(t6, t6); OKP_SAME_FIELD(status, status); OKP_SAME_FIELD(orig_a0, orig_a0);
