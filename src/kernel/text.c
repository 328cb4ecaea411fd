// SPDX-License-Identifier: GPL-2.0
/*
 * Where probes may go and how their text is written: the seam functions the core's
 * registration path calls (the writing itself is per arch: arch/<arch>/text_patch.c).
 * Everything here runs in process context under the registry lock.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/bug.h>
#include <linux/extable.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>
#include <linux/uaccess.h>

#include "okp_glue.h"

static DEFINE_MUTEX(okp_registry_mutex);
DEFINE_PER_CPU(struct okp_cpu_state, okp_cpu_state);

/* Slots live in okprobes' own text (arch/<arch>/slots.S): read-only and executable, within
 * reach of rip-relative targets in the kernel and modules. */
extern const char okp_slot_area_start[], okp_slot_area_end[];

void okp_seam_registry_lock(void)
{
	mutex_lock(&okp_registry_mutex);
}

void okp_seam_registry_unlock(void)
{
	mutex_unlock(&okp_registry_mutex);
}

void okp_seam_assert_registry_locked(void)
{
	lockdep_assert_held(&okp_registry_mutex);
}

void okp_seam_synchronize_rcu(void)
{
	/*
	 * Expedited: unregistering (and the rollback of a failed registration) waits for one
	 * grace period per probe, and a normal one costs tens of milliseconds. The price is an
	 * IPI to busy CPUs, paid only by writers.
	 */
	synchronize_rcu_expedited();
}

void okp_seam_synchronize_tasks(void)
{
	/*
	 * A preempted task may sit inside a boosted slot. Without preemption it cannot: it leaves
	 * the slot before its CPU passes the quiescent state the caller already waited for.
	 */
#ifdef CONFIG_TASKS_RCU
	synchronize_rcu_tasks();
#endif
}

int okp_seam_read_nofault(void *dst, okp_addr_t src, unsigned long len)
{
	return copy_from_kernel_nofault(dst, (const void *)src, len) ? -EFAULT : 0;
}
NOKPROBE_SYMBOL(okp_seam_read_nofault); /* emulation reads memory from the trap */

void okp_seam_format(char *buf, unsigned long len, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(buf, len, fmt, args);
	va_end(args);
}

void okp_seam_vformat(char *buf, unsigned long len, const char *fmt, va_list args)
{
	vsnprintf(buf, len, fmt, args);
}

okp_addr_t okp_seam_slot_area(unsigned long *size)
{
	*size = okp_slot_area_end - okp_slot_area_start;
	return (okp_addr_t)okp_slot_area_start;
}

int okp_seam_module_get(void *module)
{
	return try_module_get(module) ? 0 : -ENOENT;
}

void okp_seam_module_put(void *module)
{
	module_put(module);
}

static void okp_describe(unsigned long addr, struct okp_text_info *info)
{
	okp_symbol_extent(addr, info->symbol, sizeof(info->symbol), &info->func_start,
			  &info->func_size);
}

int okp_seam_locate(const char *symbol_name, okp_addr_t addr, unsigned int offset,
		    okp_addr_t *resolved, struct okp_text_info *info, char *reason,
		    unsigned long reason_len)
{
	struct module *mod = NULL;
	int ret;

	if (symbol_name) {
		ret = okp_resolve_symbol(symbol_name, &addr, reason, reason_len);
		if (ret)
			return ret;
	}
	addr += offset;
	if (addr >= okp_ksyms._stext && addr < okp_ksyms._etext) {
		/* vmlinux text */
	} else if (okp_ksyms._sinittext && addr >= okp_ksyms._sinittext &&
		   addr < okp_ksyms._einittext) {
		snprintf(reason, reason_len, "%px is in vmlinux __init text, freed after boot",
			 (void *)addr);
		return -EINVAL;
	} else {
		preempt_disable();
		mod = okp_ksyms.__module_text_address ? okp_ksyms.__module_text_address(addr) : NULL;
		if (mod) {
			info->module_init_text = within_module_init(addr, mod);
			strscpy(info->module_name, mod->name, sizeof(info->module_name));
			if (mod->state == MODULE_STATE_GOING) {
				snprintf(reason, reason_len, "module %s is going away", mod->name);
				mod = ERR_PTR(-ENOENT);
			} else if (info->module_init_text && mod->state == MODULE_STATE_LIVE) {
				snprintf(reason, reason_len,
					 "%px is in module %s's __init text, freed when it went live",
					 (void *)addr, mod->name);
				mod = ERR_PTR(-EINVAL);
			}
		}
		preempt_enable();
		if (IS_ERR(mod))
			return PTR_ERR(mod);
		if (!mod) {
			snprintf(reason, reason_len, "%px is not kernel or module text", (void *)addr);
			return -EINVAL;
		}
	}
	info->module = mod;
	okp_describe(addr, info);
	*resolved = addr;
	return 0;
}

#ifdef CONFIG_KPROBES
/*
 * Is the kernel's own kprobe at addr? An int3 says so, but an optimized kprobe is a jump,
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

const char *okp_seam_text_owner(okp_addr_t addr, unsigned long len)
{
	void *start = (void *)addr, *end = (void *)(addr + len - 1);
	const char *owner = NULL;

	/* Any byte of the range: a jump-optimized region must not cover one either. */
	if (okp_seam_kernel_kprobe_in(addr, len))
		return "kernel kprobe (possibly optimized into a jump)";
	/* A static call's trampoline (__SCT__*): the core refuses it by its symbol's name. */
	/* Not jump_label_text_reserved(): it walks all of vmlinux's table (jump_label_index.c). */
	if (okp_jump_label_in(addr, len))
		return "jump label";
	if (okp_ksyms.static_call_text_reserved && okp_ksyms.static_call_text_reserved(start, end))
		return "static call";
	owner = okp_arch_text_owner(addr, len); /* e.g. x86's SMP alternatives */
	if (owner)
		return owner;
	if (okp_ksyms.find_bug && okp_ksyms.find_bug(addr))
		return "BUG/WARN site";
	preempt_disable();
	if (okp_ksyms.search_exception_tables && okp_ksyms.search_exception_tables(addr))
		owner = "exception-table fixup (a fault there must be fixed up at this address)";
	preempt_enable();
	return owner;
}
