// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time proof that what the C++ core mirrors matches the kernel it is built against:
 * the register frame and the errno values. A mismatch fails the build here instead of
 * corrupting a probed context at run time.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#include <asm/ptrace.h>

#include "seam/okp_seam.h"

#define OKP_SAME_FIELD(ours, theirs) \
	static_assert(offsetof(struct okp_regs, ours) == offsetof(struct pt_regs, theirs) && \
		      sizeof(((struct okp_regs *)0)->ours) == sizeof(((struct pt_regs *)0)->theirs), \
		      "okp_regs." #ours " does not mirror pt_regs." #theirs)

#if defined(CONFIG_X86_64)
OKP_SAME_FIELD(r15, r15); OKP_SAME_FIELD(bx, bx); OKP_SAME_FIELD(ax, ax);
OKP_SAME_FIELD(cx, cx); OKP_SAME_FIELD(dx, dx); OKP_SAME_FIELD(si, si);
OKP_SAME_FIELD(di, di); OKP_SAME_FIELD(r8, r8); OKP_SAME_FIELD(r9, r9);
OKP_SAME_FIELD(orig_ax, orig_ax); OKP_SAME_FIELD(ip, ip); OKP_SAME_FIELD(flags, flags);
OKP_SAME_FIELD(sp, sp); OKP_SAME_FIELD(ss, ss);
#elif defined(CONFIG_ARM64)
OKP_SAME_FIELD(regs, regs); OKP_SAME_FIELD(sp, sp); OKP_SAME_FIELD(pc, pc);
OKP_SAME_FIELD(pstate, pstate);
#elif defined(CONFIG_RISCV)
OKP_SAME_FIELD(epc, epc); OKP_SAME_FIELD(ra, ra); OKP_SAME_FIELD(sp, sp);
OKP_SAME_FIELD(a0, a0); OKP_SAME_FIELD(a7, a7); OKP_SAME_FIELD(s11, s11);
OKP_SAME_FIELD(t6, t6); OKP_SAME_FIELD(status, status); OKP_SAME_FIELD(orig_a0, orig_a0);
#endif

/* Errno values the core returns (core/errno.h). */
static_assert(EPERM == 1 && ENOENT == 2 && ENOMEM == 12 && EFAULT == 14 && EBUSY == 16 &&
	      EEXIST == 17 && EINVAL == 22 && ENOSPC == 28 && ERANGE == 34 && EILSEQ == 84 &&
	      EOPNOTSUPP == 95 && EADDRNOTAVAIL == 99,
	      "core/errno.h no longer matches <linux/errno.h>");
