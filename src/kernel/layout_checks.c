// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time proof that what the C++ core mirrors matches the kernel it is built against:
 * the register frame, the errno values and the kprobes constants the public header repeats.
 * A mismatch fails the build here instead of corrupting a probed context at run time, or
 * letting a module ported from kprobes read a flag as another. The register frame is per
 * arch (src/kernel/arch/<arch>/layout_checks.c); the rest is here.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kprobes.h>

#include <okprobes/okprobes.h>

/* Errno values the core returns (core/errno.h). */
static_assert(EPERM == 1 && ENOENT == 2 && E2BIG == 7 && ENOMEM == 12 && EFAULT == 14 &&
	      EBUSY == 16 && EEXIST == 17 && EINVAL == 22 && ENOSPC == 28 && ERANGE == 34 &&
	      EILSEQ == 84 && EOPNOTSUPP == 95 && EADDRNOTAVAIL == 99,
	      "core/errno.h no longer matches <linux/errno.h>");

/* Every kernel flag keeps its value in okprobes (kprobes_compat.h maps the names one to one). */
static_assert(OKP_KPROBE_FLAG_GONE == KPROBE_FLAG_GONE, "KPROBE_FLAG_GONE moved");
static_assert(OKP_KPROBE_FLAG_DISABLED == KPROBE_FLAG_DISABLED, "KPROBE_FLAG_DISABLED moved");
static_assert(OKP_KPROBE_FLAG_OPTIMIZED == KPROBE_FLAG_OPTIMIZED, "KPROBE_FLAG_OPTIMIZED moved");
static_assert(OKP_KPROBE_FLAG_FTRACE == KPROBE_FLAG_FTRACE, "KPROBE_FLAG_FTRACE moved");
static_assert(OKP_KPROBE_FLAG_ON_FUNC_ENTRY == KPROBE_FLAG_ON_FUNC_ENTRY,
	      "KPROBE_FLAG_ON_FUNC_ENTRY moved");
/* okprobes' own flags take bits no kernel flag uses: from 16 up, where the kernel has none. */
static_assert((OKP_KPROBE_FLAG_IPMODIFY & (KPROBE_FLAG_GONE | KPROBE_FLAG_DISABLED |
					   KPROBE_FLAG_OPTIMIZED | KPROBE_FLAG_FTRACE |
					   KPROBE_FLAG_ON_FUNC_ENTRY)) == 0 &&
	      OKP_KPROBE_FLAG_IPMODIFY >= 0x10000,
	      "OKP_KPROBE_FLAG_IPMODIFY collides with a kernel flag");
static_assert(OKP_KRETPROBE_MAX_DATA_SIZE == KRETPROBE_MAX_DATA_SIZE,
	      "KRETPROBE_MAX_DATA_SIZE changed");

#ifdef CONFIG_KPROBES
/* p->addr has the type a kprobes module expects (kprobes_compat.h maps kprobe_opcode_t). */
static_assert(__builtin_types_compatible_p(okp_kprobe_opcode_t, kprobe_opcode_t),
	      "okp_kprobe_opcode_t is not this kernel's kprobe_opcode_t");
#endif
