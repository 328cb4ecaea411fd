// SPDX-License-Identifier: GPL-2.0
/*
 * How okprobes writes kernel text on x86-64: through the kernel's own text patching
 * (text_poke and text_poke_sync, found in /proc/kallsyms by symbols.c) under
 * text_mutex, as every other writer of kernel text does. Also who else owns text here: the
 * SMP alternatives (lock prefixes the kernel rewrites itself). Process context, registry
 * lock held.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/errno.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/text-patching.h>

#include "kernel/okp_glue.h"
#include "okp_x86.h"

/*
 * x86's jump labels are a 2-byte jmp8 or nop2, or a 5-byte jmp or nop5, and stay that size as
 * they flip (the kernel's arch_jump_entry_size() decodes them; it is not for modules).
 * Unreadable or mid-flip (an int3 in byte 0): the larger.
 */
unsigned int okp_arch_jump_entry_size(unsigned long code)
{
	u8 b[2];

	if (copy_from_kernel_nofault(b, (void *)code, sizeof(b)))
		return 5;
	return b[0] == 0xeb || (b[0] == 0x66 && b[1] == 0x90) ? 2 : 5;
}

const char *okp_arch_text_owner(okp_addr_t addr, unsigned long len)
{
	void *start = (void *)addr, *end = (void *)(addr + len - 1);
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	int reserved;

	if (!okp_x86_ksyms.alternatives_text_reserved)
		return NULL;
	mutex_lock(text_mutex); /* it walks the SMP-alternatives list text_mutex guards */
	reserved = okp_x86_ksyms.alternatives_text_reserved(start, end);
	mutex_unlock(text_mutex);
	return reserved ? "SMP alternative (lock prefix)" : NULL;
}

int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	int ret = 0;

	if (!okp_x86_ksyms.text_poke || !okp_x86_ksyms.text_poke_sync || !text_mutex)
		return -EOPNOTSUPP;
	if (len > OKP_TEXT_EXPECT_MAX && expect)
		return -EINVAL;
	mutex_lock(text_mutex);
	ret = okp_text_is(addr, expect, len);
	if (ret)
		goto out;
	okp_x86_ksyms.text_poke((void *)addr, bytes, len);
	/* Every CPU must stop executing the old bytes before we return. */
	okp_x86_ksyms.text_poke_sync();
out:
	mutex_unlock(text_mutex);
	return ret;
}

/*
 * The jump optimizer's batches (core/optimizer/jump_optimizer.cpp): text_mutex is taken once for a batch,
 * each write is a text_poke, and one text_poke_sync per stage makes every CPU see them all.
 */
void okp_seam_text_lock(void)
{
	mutex_lock((struct mutex *)okp_ksyms.text_mutex);
}

void okp_seam_text_unlock(void)
{
	mutex_unlock((struct mutex *)okp_ksyms.text_mutex);
}

int okp_seam_poke_text(okp_addr_t addr, const void *bytes, const void *expect, unsigned long len)
{
	int ret;

	lockdep_assert_held((struct mutex *)okp_ksyms.text_mutex);
	if (!okp_x86_ksyms.text_poke || len > OKP_TEXT_EXPECT_MAX)
		return -EINVAL;
	ret = okp_text_is(addr, expect, len);
	if (ret)
		return ret;
	okp_x86_ksyms.text_poke((void *)addr, bytes, len);
	return 0;
}

void okp_seam_text_sync(void)
{
	if (okp_x86_ksyms.text_poke_sync)
		okp_x86_ksyms.text_poke_sync();
}
