// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time proof that what the C++ core mirrors matches the kernel it is built against:
 * the register frame and the errno values. A mismatch fails the build here instead of
 * corrupting a probed context at run time. The register frame is per arch
 * (src/kernel/arch/<arch>/layout_checks.c); the errno values are here.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>

/* Errno values the core returns (core/errno.h). */
static_assert(EPERM == 1 && ENOENT == 2 && ENOMEM == 12 && EFAULT == 14 && EBUSY == 16 &&
	      EEXIST == 17 && EINVAL == 22 && ENOSPC == 28 && ERANGE == 34 && EILSEQ == 84 &&
	      EOPNOTSUPP == 95 && EADDRNOTAVAIL == 99,
	      "core/errno.h no longer matches <linux/errno.h>");
