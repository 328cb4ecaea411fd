// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side of the seam (seam/okp_seam.h): primitives the C++ core calls (memory, log,
 * invariants, its work items), and each CPU's hit state the glue hands it on every hit.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/bug.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "okp_glue.h"

DEFINE_PER_CPU(struct okp_cpu_state, okp_cpu_state);

void *okp_seam_alloc(unsigned long size, enum okp_gfp gfp)
{
	return kzalloc(size, gfp == OKP_GFP_ATOMIC ? GFP_ATOMIC : GFP_KERNEL);
}

void okp_seam_free(void *ptr)
{
	kfree(ptr);
}

void *okp_seam_alloc_large(unsigned long size)
{
	return kvzalloc(size, GFP_KERNEL);
}

void okp_seam_free_large(void *ptr)
{
	kvfree(ptr);
}

int okp_seam_read_nofault(void *dst, okp_addr_t src, unsigned long len)
{
	return copy_from_kernel_nofault(dst, (const void *)src, len) ? -EFAULT : 0;
}
NOKPROBE_SYMBOL(okp_seam_read_nofault); /* emulation reads memory from the trap */

void okp_seam_log(enum okp_log_level level, const char *msg)
{
	switch (level) {
	case OKP_LOG_ERR:
		pr_err("%s\n", msg);
		break;
	case OKP_LOG_WARNING:
		pr_warn("%s\n", msg);
		break;
	case OKP_LOG_INFO:
		pr_info("%s\n", msg);
		break;
	default:
		pr_debug("%s\n", msg);
		break;
	}
}

void okp_seam_invariant_failed(const char *what, const char *file, int line)
{
	WARN_ONCE(1, "okprobes: invariant broken: %s (%s:%d)\n", what, file, line);
}
NOKPROBE_SYMBOL(okp_seam_invariant_failed); /* reported from the trap path too */

/*
 * Where no trap hook tail-calls the core (an arch, or a kernel, whose breakpoints reach
 * okprobes by other ways), okp_core_on_break_hook is never entered: this answers "refused" for
 * the link. An arch's trap glue that has such a hook defines the real one.
 */
int __weak okp_seam_break_not_ours(struct okp_regs *regs)
{
	return 1;
}
NOKPROBE_SYMBOL(okp_seam_break_not_ours);

/*
 * Boosted slots are freed after an RCU-tasks grace period, which can take seconds: a worker
 * waits for it, never a registration holding the registry lock. One work item, so one
 * collection at a time (the core relies on that: see Registry::collect_retired_slots).
 */
static void okp_collect_slots_fn(struct work_struct *work)
{
	okp_core_collect_slots();
}
static DECLARE_WORK(okp_collect_slots_work, okp_collect_slots_fn);

void okp_seam_defer_slot_collection(void)
{
	schedule_work(&okp_collect_slots_work);
}

void okp_seam_flush_slot_collection(void)
{
	schedule_work(&okp_collect_slots_work);
	flush_work(&okp_collect_slots_work);
}
