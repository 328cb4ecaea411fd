// SPDX-License-Identifier: GPL-2.0
/*
 * How okprobes writes kernel text on riscv64: through the kernel's own patch_text_nosync()
 * (found in /proc/kallsyms by symbols.c) under text_mutex, as its jump labels and ftrace do.
 * It writes through a fixmap alias (module text included) and then flushes the I-cache of
 * every hart (flush_icache_range: fence.i here, SBI or IPI remote fence.i elsewhere), so no
 * hart runs the old bytes once it returns. Process context, registry lock held.
 *
 * No stop_machine (the kernel's kprobes stop every hart to write a breakpoint): no hart may
 * ever fetch a half-written instruction, and every write here is arranged so none can.
 *  - A 2-byte breakpoint (c.ebreak) or its original, or a 4-byte one at a 4-byte aligned
 *    address, is one naturally aligned store. (The source is copied to an aligned buffer first,
 *    so copy_to_kernel_nofault() writes it in one store, not byte by byte.)
 *  - A 4-byte write at an address that is only 2-byte aligned would be two stores, so it is
 *    done in three, each made visible to every hart before the next: the low parcel becomes a
 *    c.ebreak, then the high parcel takes its new value (no hart runs it: the instruction
 *    there is the 2-byte c.ebreak), then the low parcel does. Every state in between traps at
 *    the same address, which okprobes handles as a hit of the site (armed before the first
 *    write, removed only after the last), and the breakpoint keeps the instruction's length
 *    for every tool that walks the text.
 *  - Slots are written while nothing runs them.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/errno.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kernel/okp_glue.h"
#include "text_patch.h"

/* Longest text one write changes (a slot cell) or an expect check compares. */
#define OKP_PATCH_MAX 32
static_assert(OKP_PATCH_MAX <= OKP_TEXT_EXPECT_MAX, "every write can be checked first");

/* No text the kernel rewrites itself beyond what text_owner.c checks for every arch. */
const char *okp_arch_text_owner(okp_addr_t addr, unsigned long len)
{
	return NULL;
}

/* One write of at most OKP_PATCH_MAX bytes, from an aligned copy. text_mutex held. */
static int okp_patch_once(okp_addr_t addr, const void *bytes, unsigned long len)
{
	int (*patch)(void *addr, const void *insns, size_t len) =
		(void *)okp_riscv_patch_text_nosync;
	u64 aligned[OKP_PATCH_MAX / sizeof(u64)];

	memcpy(aligned, bytes, len);
	return patch((void *)addr, aligned, len);
}

/* The three-step write of a 4-byte instruction at addr = 2 mod 4 (see the top). */
static int okp_patch_unaligned_insn(okp_addr_t addr, const u8 *bytes)
{
	static const u8 c_ebreak[2] = { 0x02, 0x90 };
	int ret;

	ret = okp_patch_once(addr, c_ebreak, 2);
	if (!ret)
		ret = okp_patch_once(addr + 2, bytes + 2, 2);
	if (!ret)
		ret = okp_patch_once(addr, bytes, 2);
	return ret;
}

int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	int ret = 0;

	if (!okp_riscv_patch_text_nosync || !text_mutex)
		return -EOPNOTSUPP;
	if (len > OKP_PATCH_MAX || !len || (addr & 1))
		return -EINVAL;
	if (len == 4 && (addr & 3) && (((const u8 *)bytes)[0] & 3) != 3) {
		/* Only a 4-byte instruction may be written in steps. */
		pr_err("refusing a 4-byte write of a compressed instruction at %pS\n", (void *)addr);
		return -EINVAL;
	}
	mutex_lock(text_mutex);
	ret = okp_text_is(addr, expect, len);
	if (ret)
		goto out;
	if (len == 4 && (addr & 3))
		ret = okp_patch_unaligned_insn(addr, bytes);
	else if (len <= 4 && (addr & (len - 1)))
		ret = -EINVAL;	/* 2 bytes at an odd address: never asked */
	else
		ret = okp_patch_once(addr, bytes, len);
out:
	mutex_unlock(text_mutex);
	return ret;
}
