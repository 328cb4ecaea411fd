// SPDX-License-Identifier: GPL-2.0
/*
 * How okprobes writes kernel text on riscv64: through the kernel's own patch_text_nosync()
 * (found in /proc/kallsyms by symbols.c) under text_mutex, as its jump labels and ftrace do.
 * It writes through a fixmap alias (module text included) and then flushes the I-cache of
 * every hart (flush_icache_range: fence.i here, SBI or IPI remote fence.i elsewhere), so no
 * hart runs the old bytes once it returns. Process context, registry lock held.
 *
 * No stop_machine: the core only asks for writes another hart can never see half done. A
 * breakpoint is one naturally aligned 2- or 4-byte store (arch/riscv/insn_plan.cpp picks
 * c.ebreak where an ebreak would not be 4-byte aligned), and so is putting the original back;
 * slots are written while nothing runs them. The source is copied to an aligned buffer first,
 * so copy_to_kernel_nofault() writes it in one store, not byte by byte.
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

/* No text the kernel rewrites itself beyond what text.c checks for every arch. */
const char *okp_arch_text_owner(okp_addr_t addr, unsigned long len)
{
	return NULL;
}

/* Is the text at addr still expect? text_mutex held. */
static int okp_text_is(okp_addr_t addr, const void *expect, unsigned long len)
{
	u8 now[OKP_PATCH_MAX];

	if (copy_from_kernel_nofault(now, (void *)addr, len) || memcmp(now, expect, len)) {
		pr_err("text at %pS changed under us: not patching\n", (void *)addr);
		return -EBUSY;
	}
	return 0;
}

int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len)
{
	int (*patch)(void *addr, const void *insns, size_t len) =
		(void *)okp_riscv_patch_text_nosync;
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	u64 aligned[OKP_PATCH_MAX / sizeof(u64)];
	int ret = 0;

	if (!patch || !text_mutex)
		return -EOPNOTSUPP;
	if (len > OKP_PATCH_MAX || !len || (addr & 1))
		return -EINVAL;
	/* A 2- or 4-byte write must be one store: naturally aligned (see the comment above). */
	if (len <= 4 && (addr & (len - 1))) {
		pr_err("refusing a %lu-byte write at %pS: it would not be a single store\n", len,
		       (void *)addr);
		return -EINVAL;
	}
	memcpy(aligned, bytes, len);
	mutex_lock(text_mutex);
	if (expect) {
		ret = okp_text_is(addr, expect, len);
		if (ret)
			goto out;
	}
	ret = patch((void *)addr, aligned, len);
out:
	mutex_unlock(text_mutex);
	return ret;
}
