// SPDX-License-Identifier: GPL-2.0
/* The jump optimizer's work item (seam/jump_services.h): the worker that runs its batches. */
#include <linux/workqueue.h>

#include "kernel/okp_glue.h"

/*
 * The jump optimizer's work item: a short delay gathers the probes registered meanwhile into
 * one batch (one pair of text syncs, one tasks-RCU wait for all of them). One work item, so one
 * batch at a time (core/optimizer/jump_optimizer.cpp relies on it).
 */
#define OKP_OPTIMIZE_DELAY msecs_to_jiffies(20)

static void okp_optimizer_fn(struct work_struct *work)
{
	okp_core_run_optimizer();
}
static DECLARE_DELAYED_WORK(okp_optimizer_work, okp_optimizer_fn);

void okp_seam_defer_optimizer(void)
{
	schedule_delayed_work(&okp_optimizer_work, OKP_OPTIMIZE_DELAY);
}

void okp_seam_flush_optimizer(void)
{
	mod_delayed_work(system_wq, &okp_optimizer_work, 0);
	flush_delayed_work(&okp_optimizer_work);
}

void okp_seam_cancel_optimizer(void)
{
	cancel_delayed_work_sync(&okp_optimizer_work);
}

/* No arch refuses every jump but riscv64 on a preemptible kernel (its text_patch.c). */
const char *__weak okp_seam_jumps_refused(void)
{
	return NULL;
}
