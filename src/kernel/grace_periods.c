// SPDX-License-Identifier: GPL-2.0
/* The grace periods the core waits for, never with the registry lock held. */
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>

#include "okp_glue.h"

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
