// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time proof that the register frame the C++ core mirrors (struct okp_regs, x86-64)
 * matches the kernel's struct pt_regs: each field's offset and size. A mismatch fails the
 * build here instead of corrupting a probed context at run time. (The errno values are
 * checked arch-neutrally in src/kernel/layout_checks.c.)
 */
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/version.h>
#include <asm/ptrace.h>

#include "seam/okp_seam.h"
#include "detour_layout.h"

#define OKP_SAME_FIELD(ours, theirs) \
	static_assert(offsetof(struct okp_regs, ours) == offsetof(struct pt_regs, theirs) && \
		      sizeof(((struct okp_regs *)0)->ours) == sizeof(((struct pt_regs *)0)->theirs), \
		      "okp_regs." #ours " does not mirror pt_regs." #theirs)

OKP_SAME_FIELD(r15, r15); OKP_SAME_FIELD(bx, bx); OKP_SAME_FIELD(ax, ax);
OKP_SAME_FIELD(cx, cx); OKP_SAME_FIELD(dx, dx); OKP_SAME_FIELD(si, si);
OKP_SAME_FIELD(di, di); OKP_SAME_FIELD(r8, r8); OKP_SAME_FIELD(r9, r9);
OKP_SAME_FIELD(orig_ax, orig_ax); OKP_SAME_FIELD(ip, ip); OKP_SAME_FIELD(flags, flags);
OKP_SAME_FIELD(sp, sp);
/* 6.9 (FRED) made cs and ss u16 views of the whole 8-byte slots csx and ssx. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
OKP_SAME_FIELD(cs, csx); OKP_SAME_FIELD(ss, ssx);
#define OKP_PT_CS_FIELD csx
#define OKP_PT_SS_FIELD ssx
#else
OKP_SAME_FIELD(cs, cs); OKP_SAME_FIELD(ss, ss);
#define OKP_PT_CS_FIELD cs
#define OKP_PT_SS_FIELD ss
#endif

/* The frame detour_entry.S builds, by offsets an assembly file can use. */
#define OKP_SAME_OFFSET(ours, theirs) \
	static_assert(ours == offsetof(struct pt_regs, theirs), #ours " is not pt_regs." #theirs)
OKP_SAME_OFFSET(OKP_PT_R15, r15); OKP_SAME_OFFSET(OKP_PT_R14, r14); OKP_SAME_OFFSET(OKP_PT_R13, r13);
OKP_SAME_OFFSET(OKP_PT_R12, r12); OKP_SAME_OFFSET(OKP_PT_BP, bp); OKP_SAME_OFFSET(OKP_PT_BX, bx);
OKP_SAME_OFFSET(OKP_PT_R11, r11); OKP_SAME_OFFSET(OKP_PT_R10, r10); OKP_SAME_OFFSET(OKP_PT_R9, r9);
OKP_SAME_OFFSET(OKP_PT_R8, r8); OKP_SAME_OFFSET(OKP_PT_AX, ax); OKP_SAME_OFFSET(OKP_PT_CX, cx);
OKP_SAME_OFFSET(OKP_PT_DX, dx); OKP_SAME_OFFSET(OKP_PT_SI, si); OKP_SAME_OFFSET(OKP_PT_DI, di);
OKP_SAME_OFFSET(OKP_PT_ORIG_AX, orig_ax); OKP_SAME_OFFSET(OKP_PT_IP, ip);
OKP_SAME_OFFSET(OKP_PT_CS, OKP_PT_CS_FIELD); OKP_SAME_OFFSET(OKP_PT_FLAGS, flags);
OKP_SAME_OFFSET(OKP_PT_SP, sp); OKP_SAME_OFFSET(OKP_PT_SS, OKP_PT_SS_FIELD);
static_assert(OKP_PT_SIZE == sizeof(struct pt_regs), "OKP_PT_SIZE is not sizeof(struct pt_regs)");

/* The core reads the current task as %gs:pcpu_hot from 6.2 on (arch/x86/probe_arch.h,
 * current_task(); Kbuild picks the symbol): it must be the struct's first field. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#include <asm/current.h>
static_assert(offsetof(struct pcpu_hot, current_task) == 0,
	      "the core reads current as pcpu_hot's first word");
#endif
