// SPDX-License-Identifier: GPL-2.0
/*
 * Return probes on the kernel's rethook (core/return_probe.cpp chooses it at registration when
 * okp_seam_rethook_unusable() says nothing).
 *
 * Why: okprobes' own return stubs (arch/<arch>/return_stubs.S) are text the kernel's unwinders
 * do not know, so a stack trace through a probed frame stops at a stub. The kernel's rethook
 * diverts a return to arch_rethook_trampoline and keeps the real address on the task's own
 * list (current->rethooks), which the ORC and frame-pointer unwinders read
 * (unwind_recover_rethook()): stack_trace_save() in a handler, /proc/PID/stack of a task
 * sleeping under an armed return probe and the reliable unwinder all show the real callers,
 * as for the kernel's kretprobes.
 *
 * The entry stays okprobes' own (its breakpoint, ftrace or jump probe): its pre handler,
 * okp_seam_rethook_entry(), takes a node (rethook_try_get) and hooks the frame (rethook_hook)
 * with the entry's pt_regs. The return runs through the kernel's trampoline, which calls
 * okp_rethook_handler() with preemption off.
 *
 * Each node is a struct okp_rethook_frame: the kernel's node first (6.1 frees a node by its
 * address), then the instance okprobes' handlers see, its data after it.
 *
 * Unload: a frame still hooked when its probe is unregistered returns to the kernel's
 * trampoline (kernel text), never into okprobes. Unregister calls rethook_free() (the handler
 * becomes NULL, the kernel frees the pool and each node still out when it comes back, from its
 * own RCU callbacks) and then waits an RCU grace period, which covers every handler already
 * running (preemption off). After that the kernel holds no pointer into okprobes' text, and its
 * pointers into okprobes' data (rethook->data) are never followed again; okprobes may unload.
 *
 * Not exported: the functions are read from /proc/kallsyms and checked by sprint_symbol()
 * (kernel_internals.c). Used where the arch's folder says where an entry's return address is
 * (rethook_frame.h: OKP_ARCH_RETHOOK_FRAME, okp_arch_rethook_divert()).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/llist.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/version.h>
#ifdef CONFIG_RETHOOK
#include <linux/rethook.h>
#endif

#include <okprobes/okprobes.h>
#include "kernel_return_route.h"
#include "okp_glue.h"
#include "rethook_frame.h"	/* the arch's folder (Kbuild) */

static const char *okp_rethook_reason = "not decided yet";

#if defined(CONFIG_RETHOOK) && OKP_ARCH_RETHOOK_FRAME
#define OKP_RETHOOK 1

/* 6.7 moved the pool to an objpool (rethook_alloc takes the node size and count); 6.5 passed
 * the return address to the handler. */
#define OKP_RETHOOK_OBJPOOL (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0))
#define OKP_RETHOOK_HANDLER_RET_ADDR (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0))

struct okp_rethook_frame {
	struct rethook_node node;	/* first: 6.1 frees a node by its address */
	/* Set when the frame is hooked, cleared when it returns. Still set when the node comes
	 * back from the pool: the kernel recycled it without a return (its task was freed inside
	 * the function, rethook_flush_task()), which the core counts as reclaimed. */
	unsigned long hooked;
	struct okp_kretprobe_instance ri;	/* last: data[] follows */
};

#if OKP_RETHOOK_HANDLER_RET_ADDR
typedef void (*okp_rethook_handler_t)(struct rethook_node *, void *, unsigned long,
				      struct pt_regs *);
#else
typedef void (*okp_rethook_handler_t)(struct rethook_node *, void *, struct pt_regs *);
#endif
#if OKP_RETHOOK_OBJPOOL
typedef struct rethook *(*okp_rethook_alloc_t)(void *, okp_rethook_handler_t, int, int);
#else
typedef struct rethook *(*okp_rethook_alloc_t)(void *, okp_rethook_handler_t);
#endif

#define OKP_RH(name, type) ((type)okp_ksyms.name)

/* The kernel's trampoline calls this at a hooked frame's return, preemption off. */
#if OKP_RETHOOK_HANDLER_RET_ADDR
static void notrace okp_rethook_handler(struct rethook_node *node, void *data,
					unsigned long ret_addr, struct pt_regs *regs)
#else
static void notrace okp_rethook_handler(struct rethook_node *node, void *data,
					struct pt_regs *regs)
#endif
{
	struct okp_rethook_frame *f = container_of(node, struct okp_rethook_frame, node);

	f->hooked = 0;
	okp_route_return(&f->ri, regs);
}
NOKPROBE_SYMBOL(okp_rethook_handler);

okp_addr_t okp_rethook_entry_point(void)
{
	return (okp_addr_t)okp_rethook_handler;
}

static size_t okp_frame_size(unsigned long instance_size)
{
	return offsetof(struct okp_rethook_frame, ri) + instance_size;
}

void *okp_seam_rethook_create(void *data, unsigned int num, unsigned long instance_size)
{
	struct rethook *rh;
#if OKP_RETHOOK_OBJPOOL
	rh = OKP_RH(rethook_alloc, okp_rethook_alloc_t)(data, okp_rethook_handler,
							 okp_frame_size(instance_size), num);
	return IS_ERR(rh) ? NULL : rh;
#else
	unsigned int i;

	rh = OKP_RH(rethook_alloc, okp_rethook_alloc_t)(data, okp_rethook_handler);
	if (!rh)
		return NULL;
	for (i = 0; i < num; i++) {
		struct okp_rethook_frame *f = kzalloc(okp_frame_size(instance_size), GFP_KERNEL);

		if (!f) {
			/* frees the nodes already added */
			OKP_RH(rethook_free, void (*)(struct rethook *))(rh);
			return NULL;
		}
		OKP_RH(rethook_add_node, void (*)(struct rethook *, struct rethook_node *))(rh, &f->node);
	}
	return rh;
#endif
}

/* Stops the handler and frees the pool once no node is out (the kernel's RCU callbacks). The
 * caller waits a grace period before it frees what data points to. */
void okp_seam_rethook_free(void *rh)
{
	OKP_RH(rethook_free, void (*)(struct rethook *))(rh);
}

/*
 * The hit path's two steps, rethook_try_get() and rethook_hook(), done here without calling
 * the kernel where its pool is an inline header (6.1's freelist, 6.12's objpool): two
 * indirect calls (retpolines on Debian's kernels) were most of what rethook cost over the
 * stubs at entry (docs/benchmarks-return-rethook.md). What they do is the kernel's documented
 * contract: a node from the pool unless the rethook is being freed (handler NULL) or RCU is
 * not watching; then what arch_rethook_prepare() and rethook_hook() do (rethook_frame.h).
 */
#define OKP_RETHOOK_INLINE_POOL (!OKP_RETHOOK_OBJPOOL || \
				 LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0))

/*
 * rp's pool's rethook is read after rcu_is_watching(), not before: nothing of the pool has
 * to be kept across that call (a saved register less on the hit path). The two tests are
 * independent, so their order is the kernel's contract either way.
 */
static __always_inline struct rethook_node *okp_rethook_try_get(struct okp_kretprobe *rp)
{
#if OKP_RETHOOK_INLINE_POOL
	struct rethook *rh;

	if (unlikely(!rcu_is_watching()))
		return NULL;
	rh = ((struct okp_return_pool_head *)rp->okp_pool)->rethook;
	if (unlikely(!rcu_access_pointer(rh->handler)))
		return NULL;
#if OKP_RETHOOK_OBJPOOL
	return objpool_pop(&rh->pool);
#else
	{
		struct freelist_node *fn = freelist_try_get(&rh->pool);

		return fn ? container_of(fn, struct rethook_node, freelist) : NULL;
	}
#endif
#else
	return OKP_RH(rethook_try_get, struct rethook_node *(*)(struct rethook *))(
		((struct okp_return_pool_head *)rp->okp_pool)->rethook);
#endif
}

/*
 * A return probe's entry through the rethook: its pre handler (seam/kernel_services.h), on
 * the hit path with preemption off. rp->okp_pool is set before the entry probe is registered
 * and cleared only a grace period after it was detached, so it is here. What is rare (a miss,
 * a node recycled without a return, a new peak) is the core's.
 */
notrace int okp_seam_rethook_entry(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_kretprobe *rp = container_of(kp, struct okp_kretprobe, kp);
	struct rethook_node *node = okp_rethook_try_get(rp);
	struct okp_rethook_frame *f;

	if (unlikely(!node)) {
		okp_core_rethook_missed(rp, OKP_RP_MISS_POOL_EMPTY);
		return 0;
	}
	f = container_of(node, struct okp_rethook_frame, node);
	if (unlikely(f->hooked))
		okp_core_rethook_reclaimed(rp);
	f->ri.rp = rp;
	f->ri.frame = okp_arch_rethook_frame(regs);
	f->ri.ret_addr = okp_arch_rethook_return_address(regs);
	f->ri.task = current;
	if (rp->entry_handler && rp->entry_handler(&f->ri, regs)) {
		f->hooked = 0;
		OKP_RH(rethook_recycle, void (*)(struct rethook_node *))(node);
		return 0;
	}
	f->hooked = 1;
	/*
	 * What the kernel's arch_rethook_prepare() does, from the instance just filled (read
	 * back from f, which is at hand, rather than from regs again or kept across the entry
	 * handler): the node holds the real return address and the frame, the frame returns to
	 * the kernel's trampoline, and the node goes onto the task's list, which the trampoline
	 * and the unwinders read (current's own list: no lock).
	 */
	node->ret_addr = f->ri.ret_addr;
	node->frame = f->ri.frame;
	okp_arch_rethook_divert(regs, f->ri.frame, okp_ksyms.arch_rethook_trampoline);
	__llist_add(&node->llist, &((struct task_struct *)f->ri.task)->rethooks);
	okp_route_frame_in(rp);
	return 0;
}
NOKPROBE_SYMBOL(okp_seam_rethook_entry);

okp_addr_t okp_rethook_pre_handler_entry_point(void)
{
	return (okp_addr_t)okp_seam_rethook_entry;
}

void okp_rethook_init(void)
{
	if (!okp_ksyms.rethook_alloc || !okp_ksyms.rethook_free || !okp_ksyms.rethook_try_get ||
	    !okp_ksyms.rethook_hook || !okp_ksyms.rethook_recycle ||
	    !okp_ksyms.arch_rethook_trampoline ||
	    (!OKP_RETHOOK_OBJPOOL && !okp_ksyms.rethook_add_node)) {
		okp_rethook_reason = "the kernel's rethook functions were not all found in /proc/kallsyms";
		pr_info("return probes use okprobes' stubs: %s\n", okp_rethook_reason);
		return;
	}
	okp_rethook_reason = NULL;
}

unsigned long okp_rethook_trampoline(void)
{
	return okp_rethook_reason ? 0 : okp_ksyms.arch_rethook_trampoline;
}

void okp_seam_rethook_release(void *rh)
{
	/* rethook_free() left the rest to the kernel */
}

#elif OKP_KRETPROBE_ROUTE /* kretprobe_route.c serves the seam */
#define OKP_ROUTE_SWITCH okp_kretprobe_route_off

void okp_rethook_init(void)
{
	okp_rethook_reason = okp_kretprobe_route_init();
	if (okp_rethook_reason)
		pr_info("return probes use okprobes' stubs: %s\n", okp_rethook_reason);
}

#else /* neither */

void *okp_seam_rethook_create(void *data, unsigned int num, unsigned long instance_size)
{
	return NULL;
}
void okp_seam_rethook_free(void *rh) {}
void okp_seam_rethook_release(void *rh) {}
int okp_seam_rethook_entry(struct okp_kprobe *kp, struct pt_regs *regs)
{
	return 0;	/* never registered: okp_seam_rethook_unusable() says why */
}
okp_addr_t okp_rethook_entry_point(void)
{
	return 0;
}
okp_addr_t okp_rethook_pre_handler_entry_point(void)
{
	return 0;
}
unsigned long okp_rethook_trampoline(void)
{
	return 0;
}

void okp_rethook_init(void)
{
#if defined(OKP_KRETPROBE_WHY_NOT)
	okp_rethook_reason = OKP_KRETPROBE_WHY_NOT;
#elif !defined(CONFIG_RETHOOK)
	okp_rethook_reason = "the kernel has no rethook (CONFIG_RETHOOK is off)";
#else
	okp_rethook_reason = OKP_ARCH_RETHOOK_WHY_NOT;
#endif
}

#endif

/* Which of the kernel's return routes okp_seam_rethook_create() builds on, when one is used. */
const char *okp_seam_kernel_return_route(void)
{
	return OKP_KRETPROBE_ROUTE ? "kretprobe" : "rethook";
}

/* NULL when return probes go through the kernel (its rethook, or on arm64 its kretprobe
 * trampoline: kretprobe_route.c), else why not (a static string).
 * The sysctl debug.okprobes-return-stubs=1 (okp_force_return_stubs) asks for the stubs. */
const char *okp_seam_rethook_unusable(void)
{
	if (okp_force_return_stubs)
		return "okprobes' stubs asked for (debug.okprobes-return-stubs=1)";
#ifdef OKP_ROUTE_SWITCH
	if (!okp_rethook_reason)
		return OKP_ROUTE_SWITCH();
#endif
	return okp_rethook_reason;
}
