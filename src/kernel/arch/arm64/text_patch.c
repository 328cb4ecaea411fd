// SPDX-License-Identifier: GPL-2.0
/*
 * How okprobes writes kernel text on arm64: through the kernel's own instruction patching,
 * after checking the word is still what okprobes expects.
 *
 * - A probe site's word (original <-> BRK) goes through aarch64_insn_patch_text(), which
 *   writes it under stop_machine: the architecture allows another CPU to execute a word being
 *   rewritten only when both old and new are among a few instructions (b, bl, brk, nop, ...),
 *   and the original instruction is arbitrary. stop_machine needs the CPU-hotplug lock held
 *   (cpus_read_lock), taken before text_mutex as the kernel's kprobes do: lock order
 *   registry lock -> cpu hotplug lock -> text_mutex.
 * - A slot (okprobes' own text, run by nobody while it is written: the core writes a slot
 *   before arming the site that leads there) goes word by word through
 *   aarch64_insn_patch_text_nosync(), which cleans the D-cache and invalidates the I-cache to
 *   the point of unification, for module text as for the kernel's (it maps the page through
 *   the fixmap, read-only text stays read-only).
 * Process context, registry lock held.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/cpu.h>
#include <linux/errno.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kernel/okp_glue.h"
#include "okp_arm64.h"

extern const char okp_slot_area_start[], okp_slot_area_end[];

/* No text the kernel rewrites itself beyond what text.c checks for every arch (jump labels,
 * static calls, ftrace, alternatives are applied once at boot or module load on arm64). */
const char *okp_arch_text_owner(okp_addr_t addr, unsigned long len)
{
	return NULL;
}

static bool okp_in_slot_area(okp_addr_t addr, unsigned long len)
{
	return addr >= (okp_addr_t)okp_slot_area_start &&
	       addr + len <= (okp_addr_t)okp_slot_area_end;
}

/* Is the word at addr still expect? text_mutex held. */
static int okp_word_is(okp_addr_t addr, u32 expect)
{
	u32 now;

	if (copy_from_kernel_nofault(&now, (void *)addr, sizeof(now)) || now != expect) {
		pr_err("text at %pS changed under us: not patching\n", (void *)addr);
		return -EBUSY;
	}
	return 0;
}

int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	unsigned long i;
	int ret = 0;

	if (!okp_arm64_ksyms.aarch64_insn_patch_text ||
	    !okp_arm64_ksyms.aarch64_insn_patch_text_nosync || !text_mutex)
		return -EOPNOTSUPP;
	if ((addr | len) & 3 || !len)
		return -EINVAL;

	if (okp_in_slot_area(addr, len)) {
		mutex_lock(text_mutex);
		for (i = 0; i < len && !ret; i += 4) {
			u32 word, old;

			memcpy(&word, (const u8 *)bytes + i, 4);
			if (expect) {
				memcpy(&old, (const u8 *)expect + i, 4);
				ret = okp_word_is(addr + i, old);
			}
			if (!ret)
				ret = okp_arm64_ksyms.aarch64_insn_patch_text_nosync((void *)(addr + i),
										     le32_to_cpu(word));
		}
		mutex_unlock(text_mutex);
		return ret;
	}

	/* A probe site: one instruction. */
	if (len != 4)
		return -EINVAL;
	{
		void *addrs[1] = { (void *)addr };
		u32 word, insns[1];

		memcpy(&word, bytes, 4);
		insns[0] = le32_to_cpu(word);
		cpus_read_lock();
		mutex_lock(text_mutex);
		if (expect) {
			u32 old;

			memcpy(&old, expect, 4);
			ret = okp_word_is(addr, old);
		}
		if (!ret)
			ret = okp_arm64_ksyms.aarch64_insn_patch_text(addrs, insns, 1);
		mutex_unlock(text_mutex);
		cpus_read_unlock();
	}
	return ret;
}
