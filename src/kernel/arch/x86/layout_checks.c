// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time proof that the register frame the C++ core mirrors (struct okp_regs, x86-64)
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

OKP_SAME_FIELD(r15, r15); OKP_SAME_FIELD(bx, bx); OKP_SAME_FIELD(ax, ax);
OKP_SAME_FIELD(cx, cx); OKP_SAME_FIELD(dx, dx); OKP_SAME_FIELD(si, si);
OKP_SAME_FIELD(di, di); OKP_SAME_FIELD(r8, r8); OKP_SAME_FIELD(r9, r9);
OKP_SAME_FIELD(orig_ax, orig_ax); OKP_SAME_FIELD(ip, ip); OKP_SAME_FIELD(flags, flags);
OKP_SAME_FIELD(sp, sp); OKP_SAME_FIELD(ss, ss);
