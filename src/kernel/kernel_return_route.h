/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a return probe does the same through either of the kernel's return routes, the rethook
 * (rethook.c: x86-64, riscv64 6.12+) and the kretprobe trampoline (kretprobe_route.c: arm64):
 * the count of instances in use at entry and at return, and the return handler's run. Always
 * inlined into each route's entry and return, which are hit paths (preemption off).
 */
#ifndef OKP_KERNEL_RETURN_ROUTE_H
#define OKP_KERNEL_RETURN_ROUTE_H

#include <linux/compiler.h>
#include <linux/percpu.h>

#include <okprobes/okprobes.h>
#include "okp_glue.h"

/*
 * A frame was hooked: one more instance in use, and a new peak goes to the core. rp->okp_pool
 * is read here, not kept across the entry's calls: one load, where keeping it would cost a
 * saved register's push and pop.
 */
static __always_inline void okp_route_frame_in(struct okp_kretprobe *rp)
{
	unsigned int was_in_use = __atomic_fetch_add(
		&((struct okp_return_pool_head *)rp->okp_pool)->in_use, 1, __ATOMIC_RELAXED);

	if (unlikely(was_in_use >= READ_ONCE(rp->peak)))
		okp_core_rethook_peak(rp, was_in_use + 1);
}

/*
 * A hooked frame returned (the kernel's trampoline called the route's handler): ri's return
 * handler runs unless the hit is nested or the probe disabled (a miss, counted by the core).
 * The instance is counted out before the handler runs, so nothing of ri or rp is needed after
 * it: the kernel recycles the instance only after the route's handler returns, and in_use is a
 * count to show. The route's unregister stops the kernel calling it and waits a grace period
 * before rp->okp_pool is cleared and freed, so both are alive here. The handler runs here, not
 * in the core: a call less on every return. A hit on an idle CPU opens frame 0 by the count
 * alone (core/cpu_frames.h, open_first_frame, says why nothing else is written); per-CPU
 * operations, so no pointer to this CPU's state is kept across the call, which orders the
 * handler's accesses after the count's store and before its reset.
 */
static __always_inline void okp_route_return(struct okp_kretprobe_instance *ri,
					     struct pt_regs *regs)
{
	struct okp_kretprobe *rp = ri->rp;
	const unsigned int depth = this_cpu_read(okp_cpu_state.depth);
	const bool disabled = READ_ONCE(rp->kp.flags) & (OKP_KPROBE_FLAG_DISABLED | OKP_KPROBE_FLAG_GONE);

	__atomic_fetch_sub(&((struct okp_return_pool_head *)rp->okp_pool)->in_use, 1,
			   __ATOMIC_RELAXED);
	if (likely(!depth && !disabled && rp->handler)) {
		this_cpu_write(okp_cpu_state.depth, 1);
		rp->handler(ri, regs);
		this_cpu_write(okp_cpu_state.depth, 0);
	} else if (depth || disabled) {
		okp_core_rethook_return_missed(rp, depth);
	}
}

#endif /* OKP_KERNEL_RETURN_ROUTE_H */
