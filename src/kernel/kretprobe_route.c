// SPDX-License-Identifier: GPL-2.0
/*
 * Return probes through the kernel's kretprobe trampoline, where the kernel has kretprobes but
 * no rethook (arm64 through 6.12: its rethook_frame.h sets OKP_KRETPROBE_ROUTE). The seam's
 * "rethook" functions (seam/kernel_services.h) are this file's there; the core chooses this
 * route at registration as it chooses rethook elsewhere (okp_seam_rethook_unusable()).
 *
 * Why: okprobes' own stubs are text the kernel's unwinders do not know, so a stack trace
 * through a probed frame stops at a stub. arm64's unwinder recovers the kernel's own kretprobe
 * frames: at __kretprobe_trampoline it asks kretprobe_find_ret_addr(), which walks
 * current->kretprobe_instances. So the entry (okprobes' breakpoint, ftrace or jump entry, as
 * for every return probe) does what the kernel's pre_handler_kretprobe() and
 * arch_prepare_kretprobe() do: it takes a kernel struct kretprobe_instance from a pool, keeps
 * the real return address and the frame pointer in it, diverts x30 to the kernel's trampoline
 * and pushes the instance onto current's list. At the return the kernel's trampoline handler
 * finds the instance, calls its kretprobe's handler (okp_krp_handler: okprobes' return
 * handler) and recycles the instance into the kretprobe's pool.
 *
 * The kretprobe is okprobes' own (struct okp_krp_route, one per return probe): the kernel's
 * struct kretprobe, never registered with the kernel, whose handler is okp_krp_handler and
 * whose pool (6.1: a freelist and a refcounted kretprobe_holder; 6.7+: an objpool in the
 * holder) holds maxactive instances. Each instance's data[] holds okprobes' instance
 * (struct okp_krp_frame).
 *
 * Unregister and unload, as the kernel's unregister_kretprobes(): okp_seam_rethook_free()
 * clears holder->rp under RCU, the core waits a grace period (no trampoline handler that read
 * the kretprobe is still running: the kernel runs them with preemption off), then
 * okp_seam_rethook_release() frees the kretprobe and the instances in the pool. An instance
 * still out (its frame still inside the function) comes back to the kernel's trampoline
 * (kernel text), which sees no kretprobe, runs no handler and frees it from its own RCU
 * callback (free_rp_inst_rcu); the holder goes with the last one (6.1: its refcount; 6.7+: the
 * objpool's, whose release callback is the kernel's kretprobe_fini_pool). So after
 * unregister nothing the kernel will call or read is okprobes' text or okprobes' memory but
 * the holder and the instances, which are plain kmalloc/objpool memory the kernel frees:
 * okprobes may unload (no reference held, unlike the stubs' g_detached_live).
 *
 * Not exported: __kretprobe_trampoline and (6.7+) kretprobe_fini_pool are read from
 * /proc/kallsyms (kernel_internals.c); the freelist and objpool operations are inline headers.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/llist.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/version.h>

#include <okprobes/okprobes.h>
#include "kernel_return_route.h"
#include "okp_glue.h"
#include "rethook_frame.h"	/* the arch's folder (Kbuild) */

#if OKP_KRETPROBE_ROUTE

/* 6.7 moved kretprobe instances from a freelist to an objpool. */
#define OKP_KRP_OBJPOOL (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0))
#if OKP_KRP_OBJPOOL
#include <linux/objpool.h>
#else
#include <linux/freelist.h>
#endif

/* okprobes' kretprobe: what the kernel's trampoline handler reaches through holder->rp. */
struct okp_krp_route {
	struct kretprobe krp;
};

/* What an instance's data[] holds. */
struct okp_krp_frame {
	/* Set when the frame is hooked, cleared when it returns. Still set when the instance
	 * comes back from the pool: the kernel recycled it without a return (its task was freed
	 * inside the function, kprobe_flush_task()), which the core counts as reclaimed. */
	unsigned long hooked;
	struct okp_kretprobe_instance ri;	/* last: its data[] follows */
};

static bool okp_krp_usable;

/* okprobes.kretprobe_route=0 (at load, or written to /sys/module/okprobes/parameters/ later)
 * keeps return probes registered from then on on okprobes' stubs; frames already hooked
 * return through the kernel's trampoline all the same. */
static bool okp_kretprobe_route = true;
module_param_named(kretprobe_route, okp_kretprobe_route, bool, 0644);
MODULE_PARM_DESC(kretprobe_route,
		 "return probes through the kernel's kretprobe trampoline (arm64 with CONFIG_KRETPROBES; 0: okprobes' stubs)");

static size_t okp_krp_data_size(unsigned long instance_size)
{
	return offsetof(struct okp_krp_frame, ri) + instance_size;
}

static __always_inline struct okp_krp_frame *okp_krp_frame_of(struct kretprobe_instance *kri)
{
	return (struct okp_krp_frame *)kri->data;
}

/*
 * The kernel's trampoline handler calls this at a hooked frame's return (preemption off,
 * kprobe_busy; current_kprobe is this kretprobe's kp), only while holder->rp names the
 * kretprobe: unregister clears it and waits a grace period before the pool goes, so rp and
 * its pool are alive here. The kernel recycles the instance after this returns.
 */
static int notrace okp_krp_handler(struct kretprobe_instance *kri, struct pt_regs *regs)
{
	struct okp_krp_frame *f = okp_krp_frame_of(kri);

	f->hooked = 0;
	/* The kernel's answer, not the entry's x30: where another return probe had diverted
	 * this frame first, the entry saw that probe's trampoline. */
	f->ri.ret_addr = (unsigned long)kri->ret_addr;
	okp_route_return(&f->ri, regs);
	return 0;
}
NOKPROBE_SYMBOL(okp_krp_handler);

okp_addr_t okp_rethook_entry_point(void)
{
	return (okp_addr_t)okp_krp_handler;
}

static __always_inline struct kretprobe_instance *okp_krp_pop(struct kretprobe *krp)
{
#if OKP_KRP_OBJPOOL
	return objpool_pop(&krp->rph->pool);
#else
	struct freelist_node *fn = freelist_try_get(&krp->freelist);

	return fn ? container_of(fn, struct kretprobe_instance, freelist) : NULL;
#endif
}

static __always_inline void okp_krp_push(struct kretprobe_instance *kri, struct kretprobe *krp)
{
#if OKP_KRP_OBJPOOL
	objpool_push(kri, &krp->rph->pool);
#else
	freelist_add(&kri->freelist, &krp->freelist);
#endif
}

#if OKP_KRP_OBJPOOL
/* objpool_init()'s callback, called by it before it returns (the pool keeps no pointer to it). */
static int okp_krp_init_instance(void *obj, void *context)
{
	struct kretprobe_instance *kri = obj;

	kri->rph = context;
	okp_krp_frame_of(kri)->hooked = 0;
	return 0;
}
#endif

void *okp_seam_rethook_create(void *data, unsigned int num, unsigned long instance_size)
{
	const size_t data_size = okp_krp_data_size(instance_size);
	struct okp_krp_route *route;
	struct kretprobe_holder *rph;

	route = kzalloc(sizeof(*route), GFP_KERNEL);
	if (!route)
		return NULL;
	route->krp.handler = okp_krp_handler;
	route->krp.maxactive = num;
	route->krp.data_size = data_size;
	/* Freed by the kernel when the last instance out comes back after unregister. */
	rph = kzalloc(sizeof(*rph), GFP_KERNEL);
	if (!rph)
		goto fail;
#if OKP_KRP_OBJPOOL
	/* The release callback is the kernel's own (kfree of the holder): it may run from the
	 * kernel's RCU callback after okprobes is gone. */
	if (objpool_init(&rph->pool, num, sizeof(struct kretprobe_instance) + data_size,
			 GFP_KERNEL, rph, okp_krp_init_instance,
			 (objpool_fini_cb)okp_ksyms.kretprobe_fini_pool)) {
		kfree(rph);
		goto fail;
	}
#else
	{
		unsigned int i;

		for (i = 0; i < num; i++) {
			struct kretprobe_instance *kri;

			kri = kzalloc(sizeof(*kri) + data_size, GFP_KERNEL);
			if (!kri) {
				struct freelist_node *node = route->krp.freelist.head;

				while (node) {
					kri = container_of(node, struct kretprobe_instance, freelist);
					node = node->next;
					kfree(kri);
				}
				kfree(rph);
				goto fail;
			}
			kri->rph = rph;
			freelist_add(&kri->freelist, &route->krp.freelist);
		}
		refcount_set(&rph->ref, num);
	}
#endif
	route->krp.rph = rph;
	rcu_assign_pointer(rph->rp, &route->krp);
	return route;
fail:
	kfree(route);
	return NULL;
}

/* Unregister, first step (the entry probe is detached): no handler runs after the next grace
 * period; instances that return later are the kernel's to free. */
void okp_seam_rethook_free(void *p)
{
	struct okp_krp_route *route = p;

	rcu_assign_pointer(route->krp.rph->rp, NULL);
}

/* A grace period after okp_seam_rethook_free(): what the kernel's free_rp_inst() does, then
 * the kretprobe goes. */
void okp_seam_rethook_release(void *p)
{
	struct okp_krp_route *route = p;
	struct kretprobe_holder *rph = route->krp.rph;

#if OKP_KRP_OBJPOOL
	objpool_fini(&rph->pool);
#else
	{
		struct freelist_node *node = route->krp.freelist.head;
		int count = 0;

		while (node) {
			struct kretprobe_instance *kri =
				container_of(node, struct kretprobe_instance, freelist);

			node = node->next;
			kfree(kri);
			count++;
		}
		if (refcount_sub_and_test(count, &rph->ref))
			kfree(rph);
	}
#endif
	kfree(route);
}

/*
 * A return probe's entry through the kernel's kretprobe trampoline: its pre handler, on the
 * hit path with preemption off. rp->okp_pool is set before the entry probe is registered and
 * cleared only a grace period after it was detached, so it is here; where RCU is not watching
 * that grace period would not wait for this CPU, so nothing is taken there (a miss, as
 * rethook_try_get() answers). What is rare is the core's.
 */
notrace int okp_seam_rethook_entry(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_kretprobe *rp = container_of(kp, struct okp_kretprobe, kp);
	struct okp_krp_route *route;
	struct kretprobe_instance *kri;
	struct okp_krp_frame *f;

	if (unlikely(!rcu_is_watching())) {
		okp_core_rethook_missed(rp, OKP_RP_MISS_POOL_EMPTY);
		return 0;
	}
	route = ((struct okp_return_pool_head *)rp->okp_pool)->rethook;
	kri = okp_krp_pop(&route->krp);
	if (unlikely(!kri)) {
		okp_core_rethook_missed(rp, OKP_RP_MISS_POOL_EMPTY);
		return 0;
	}
	f = okp_krp_frame_of(kri);
	if (unlikely(f->hooked))
		okp_core_rethook_reclaimed(rp);
	f->ri.rp = rp;
	f->ri.frame = okp_arch_kretprobe_frame(regs);
	f->ri.ret_addr = okp_arch_kretprobe_return_address(regs);
	f->ri.task = current;
	if (rp->entry_handler && rp->entry_handler(&f->ri, regs)) {
		f->hooked = 0;
		okp_krp_push(kri, &route->krp);
		return 0;
	}
	f->hooked = 1;
	/* What the kernel's arch_prepare_kretprobe() and pre_handler_kretprobe() do: the instance
	 * holds the real return address and the frame pointer, the function returns to the
	 * kernel's trampoline, and the instance goes onto current's list (no lock: its own). */
	kri->ret_addr = (kprobe_opcode_t *)f->ri.ret_addr;
	kri->fp = (void *)okp_arch_kretprobe_fp(regs);
	okp_arch_kretprobe_divert(regs, okp_ksyms.__kretprobe_trampoline);
	__llist_add(&kri->llist, &current->kretprobe_instances);
	okp_route_frame_in(rp);
	return 0;
}
NOKPROBE_SYMBOL(okp_seam_rethook_entry);

okp_addr_t okp_rethook_pre_handler_entry_point(void)
{
	return (okp_addr_t)okp_seam_rethook_entry;
}

unsigned long okp_rethook_trampoline(void)
{
	return okp_krp_usable ? okp_ksyms.__kretprobe_trampoline : 0;
}

/* NULL when okprobes' return probes can go through the kernel's kretprobe trampoline, else
 * why not (a static string). */
/* Per registration: NULL, or why the route is not taken now although it could be. */
const char *okp_kretprobe_route_off(void)
{
	if (!READ_ONCE(okp_kretprobe_route))
		return "the kernel's kretprobe trampoline route is off (okprobes.kretprobe_route=0)";
	return NULL;
}

const char *okp_kretprobe_route_init(void)
{
	if (!okp_ksyms.__kretprobe_trampoline)
		return "__kretprobe_trampoline was not found in /proc/kallsyms";
	if (OKP_KRP_OBJPOOL && !okp_ksyms.kretprobe_fini_pool)
		return "kretprobe_fini_pool (the kernel's release of a kretprobe pool) was not found in /proc/kallsyms";
	okp_krp_usable = true;
	return NULL;
}

#endif /* OKP_KRETPROBE_ROUTE */
