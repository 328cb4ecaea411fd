// SPDX-License-Identifier: GPL-2.0
/*
 * Keeps the kernel's own kprobes off bytes they would misread (x86-64; docs/architecture.md,
 * "The kernel's kprobes beside okprobes"). The kernel's can_probe() decodes a function from its
 * start, recovering original bytes only under its own kprobes: okprobes' int3 or jump is
 * decoded as an instruction, the walk after it can land inside real instructions, and the
 * kernel would then write its int3 into the middle of one. The kernel offers no veto hook but
 * its blacklist: register_kprobe() refuses (-EINVAL) any address inside an entry of the list
 * kprobe_blacklist (kernel/kprobes.c; also what /sys/kernel/debug/kprobes/blacklist shows).
 * okprobes adds one entry per patched site, [site, end of the misread bytes), and removes it
 * once its bytes are gone.
 *
 * The list and its mutex are static in kernel/kprobes.c: found through kallsyms (data
 * symbols, CONFIG_KALLSYMS_ALL). Writers hold kprobe_mutex, as the kernel's own module
 * notifier does. Readers (within_kprobe_blacklist) hold no lock: RCU on 6.1 stable (its
 * entries are freed after a grace period), preemption off in check_kprobe_address_safe() on
 * 6.12. An entry is added with list_add_tail_rcu and freed after a grace period, which covers
 * both. Lock order: the registry lock, then kprobe_mutex (never with text_mutex held: the
 * kernel takes text_mutex under kprobe_mutex).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>

#include "okp_glue.h"

#ifdef CONFIG_KPROBES
struct okp_kprobe_fence {
	struct kprobe_blacklist_entry entry;	/* first: what the kernel's list links */
	struct rcu_head rcu;
};

static bool okp_fence_symbols(void)
{
	return okp_ksyms.kprobe_blacklist && okp_ksyms.kprobe_mutex;
}

void *okp_seam_fence_kernel_kprobes(void *handle, okp_addr_t start, okp_addr_t end)
{
	struct okp_kprobe_fence *fence = handle;
	struct mutex *kprobe_mutex = (struct mutex *)okp_ksyms.kprobe_mutex;

	if (!okp_fence_symbols()) {
		pr_warn_once("no kprobe_blacklist/kprobe_mutex in kallsyms: the kernel's kprobes are not kept off the bytes after okprobes' int3s and jumps\n");
		return NULL;
	}
	if (fence) {
		/* Only ever grows (the start stays): a reader sees the old end or the new one. */
		WRITE_ONCE(fence->entry.end_addr, end);
		return fence;
	}
	fence = kzalloc(sizeof(*fence), GFP_KERNEL);
	if (!fence) {
		pr_warn("no memory to keep the kernel's kprobes off %pS..%pS (the bytes after okprobes' breakpoint there)\n",
			(void *)start, (void *)(end - 1));
		return NULL;
	}
	fence->entry.start_addr = start;
	fence->entry.end_addr = end;
	INIT_LIST_HEAD(&fence->entry.list);
	mutex_lock(kprobe_mutex);
	list_add_tail_rcu(&fence->entry.list, (struct list_head *)okp_ksyms.kprobe_blacklist);
	mutex_unlock(kprobe_mutex);
	return fence;
}

void okp_seam_unfence_kernel_kprobes(void *handle)
{
	struct okp_kprobe_fence *fence = handle;

	if (!fence)
		return;
	mutex_lock((struct mutex *)okp_ksyms.kprobe_mutex);
	list_del_rcu(&fence->entry.list);
	mutex_unlock((struct mutex *)okp_ksyms.kprobe_mutex);
	kfree_rcu(fence, rcu);
}
#else
void *okp_seam_fence_kernel_kprobes(void *handle, okp_addr_t start, okp_addr_t end)
{
	return NULL;	/* no kernel kprobes to keep off */
}

void okp_seam_unfence_kernel_kprobes(void *handle)
{
}
#endif
