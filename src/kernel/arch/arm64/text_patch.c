// SPDX-License-Identifier: GPL-2.0
/*
 * How okprobes writes kernel text on arm64: not yet (its backend is a later issue). The core
 * refuses every probe before it would write one; these say so if it ever asked.
 */
#include <linux/errno.h>
#include <linux/stddef.h>

#include "kernel/okp_glue.h"

/* No text the kernel rewrites itself beyond what text.c checks for every arch. */
const char *okp_arch_text_owner(okp_addr_t addr, unsigned long len)
{
	return NULL;
}

int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len)
{
	return -EOPNOTSUPP;
}
