// SPDX-License-Identifier: GPL-2.0
/*
 * Is the text okprobes is about to write still what it expects? Every arch's text patching
 * asks before it writes a site (text_mutex held, or the machine stopped): text that changed
 * under okprobes is someone else's now, and is left alone.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/errno.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "okp_glue.h"

int okp_text_is(okp_addr_t addr, const void *expect, unsigned long len)
{
	u8 now[OKP_TEXT_EXPECT_MAX];

	if (!expect)
		return 0;
	if (len > sizeof(now))
		return -EINVAL;
	if (copy_from_kernel_nofault(now, (void *)addr, len) || memcmp(now, expect, len)) {
		pr_err("text at %pS changed under us: not patching\n", (void *)addr);
		return -EBUSY;
	}
	return 0;
}
