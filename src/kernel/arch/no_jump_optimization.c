// SPDX-License-Identifier: GPL-2.0
/*
 * The jump optimizer's seam on an arch without one (arm64, riscv64): the core never calls
 * these there (arch::kJumpOptimization is false); they exist so the one seam links everywhere.
 */
#include <linux/errno.h>

#include "kernel/okp_glue.h"

void okp_seam_text_lock(void) {}
void okp_seam_text_unlock(void) {}

int okp_seam_poke_text(okp_addr_t addr, const void *bytes, const void *expect, unsigned long len)
{
	return -EOPNOTSUPP;
}

void okp_seam_text_sync(void) {}

okp_addr_t okp_seam_detour_entry(int with_post)
{
	return 0;
}

okp_addr_t okp_seam_detour_post_entry(void)
{
	return 0;
}

okp_addr_t okp_detour_entry_point(void)
{
	return 0;
}

okp_addr_t okp_detour_post_entry_point(void)
{
	return 0;
}

unsigned int okp_seam_indirect_thunks(struct okp_addr_range *out, unsigned int max)
{
	return 0;
}

int okp_seam_extable_in(okp_addr_t start, okp_addr_t end, struct okp_extable_entry *out,
			unsigned int max)
{
	return -EOPNOTSUPP;
}

int okp_seam_tasks_outside(struct okp_text_span *spans, unsigned long n)
{
	return 0;
}

void okp_task_snapshot_debugfs(struct dentry *dir) {}
