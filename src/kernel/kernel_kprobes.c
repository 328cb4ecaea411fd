// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own kprobes, as okprobes sees them: whether the running kernel has any, and
 * whether one sits in a range okprobes would patch.
 */
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/rcupdate.h>

#include "okp_glue.h"

/*
 * Has the running kernel kprobes of its own? register_kprobe (a text symbol, listed by kallsyms
 * even without KALLSYMS_ALL) exists only with CONFIG_KPROBES. (__kprobes_text_start does not
 * tell: 6.1's linker script defines it, over an empty range, either way.) Without kprobes,
 * NOKPROBE_SYMBOL() and __kprobes compile to nothing: the kernel's own annotations do not exist
 * to be read, and okprobes is that kernel's only kprobes. Nothing of okprobes needs them; only
 * these two blacklist sources (and the "kernel kprobe at this address" checks below, which find
 * no kprobe_table) are absent.
 */
bool okp_kernel_has_kprobes(void)
{
	return okp_ksyms.register_kprobe != 0;
}

#ifdef CONFIG_KPROBES
/*
 * Is the kernel's own kprobe at addr? A breakpoint says so, but an optimized kprobe is a jump,
 * so look in kprobes' hash (read-only, under RCU as its own readers do). Its size is
 * private to kernel/kprobes.c: 6.1 uses 6 bits.
 */
#define OKP_KERNEL_KPROBE_HASH_BITS 6

static bool okp_kernel_kprobe_at(unsigned long addr)
{
	struct hlist_head *table = (struct hlist_head *)okp_ksyms.kprobe_table;
	struct kprobe *p;
	bool found = false;

	if (!table)
		return false;
	rcu_read_lock();
	hlist_for_each_entry_rcu(p, &table[hash_ptr((void *)addr, OKP_KERNEL_KPROBE_HASH_BITS)], hlist) {
		if ((unsigned long)p->addr == addr) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}
#else
static bool okp_kernel_kprobe_at(unsigned long addr)
{
	return false;
}
#endif

okp_addr_t okp_seam_kernel_kprobe_in(okp_addr_t addr, unsigned long len)
{
	unsigned long a;

	for (a = addr; a < addr + len; a++) {
		if (okp_kernel_kprobe_at(a))
			return a;
	}
	return 0;
}
