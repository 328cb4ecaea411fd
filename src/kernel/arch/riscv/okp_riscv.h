/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What riscv64's jump probes ask of its glue beyond seam/jump_services.h
 * (arch/riscv/jump_probe_arch.cpp calls these; src/kernel/arch/riscv/{detour,text_patch}.c).
 */
#ifndef OKP_RISCV_H
#define OKP_RISCV_H

#include "seam/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The kernel's tables for a region check, over [start, end) of vmlinux's or a module's text:
 * the jump labels' sites and targets, the BUG/WARN sites. Each returns how many there are
 * (more than max: out is partial), or -ENOENT when the table is not found.
 */
int okp_riscv_jump_labels_in(okp_addr_t start, okp_addr_t end, okp_addr_t *sites,
			     okp_addr_t *targets, unsigned int max);
int okp_riscv_bug_sites_in(okp_addr_t start, okp_addr_t end, okp_addr_t *out, unsigned int max);

/* One site's switch: len bytes at addr from expect to bytes; failed when the text was not
 * expect (then left as it was). */
struct okp_riscv_patch {
	okp_addr_t addr;
	const unsigned char *bytes;
	const unsigned char *expect;
	unsigned char len;
	unsigned char failed;
	unsigned char breakpoint_size;	/* okp_riscv_patch_behind_breakpoints: expect's first bytes */
	/* A switch to the auipc/jalr pair from text that was not one (the original, or a jal):
	 * a detour of this site planned for a jal may still hold tasks, whose way back lands
	 * strictly inside the pair (the task look waits for them, task_look.c). */
	unsigned char check_detours;
};
/*
 * Every site of patches[0..n) written with every other hart stopped, under text_mutex. On a
 * kernel that preempts kernel code each stop first reads every task's stack (task_look.c) and
 * writes only when no task is stopped strictly inside a site's [addr, addr + len): else it
 * lets the tasks run and stops again. may_refuse (a switch to the jump, which a registration
 * may fail with): after a few tries -EBUSY with nothing written and why (why_len bytes) saying
 * which task or stack kept it; otherwise (the way back, which must happen) it tries until the
 * look proves it. 0 when written; -EBUSY with nothing written when the kernel preempts and
 * okprobes cannot read its tasks' stacks (okp_seam_jumps_refused said so first).
 */
int okp_riscv_patch_stopped(struct okp_riscv_patch *patches, unsigned int n, int may_refuse,
			    char *why, unsigned long why_len);
/*
 * From breakpoints to jumps with no hart stopped, under text_mutex: each site's expect starts
 * with a breakpoint of breakpoint_size bytes that traps, and no context is inside its region
 * (the optimizer waited for that). The bytes after the breakpoint first, then the breakpoint's
 * own. 0, or -EBUSY with nothing written on a kernel that preempts kernel code where its
 * tasks' stacks cannot be read (the way back could never be proven).
 */
int okp_riscv_patch_behind_breakpoints(struct okp_riscv_patch *patches, unsigned int n);

/* The detour entry's table of each CPU's okp_cpu_state (detour.c), filled at load. */
void okp_riscv_detour_init(void);

/*
 * The task look (task_look.c), for text_patch.c: why it cannot run on this kernel (NULL: it
 * can; process context, prepares it on first call), and the look itself inside stop_machine
 * (1: no task is stopped strictly inside any of the n sites; 0 with why written).
 */
const char *okp_riscv_task_look_missing(void);
int okp_riscv_task_look(const struct okp_riscv_patch *patches, unsigned int n, char *why,
			unsigned long why_len);

#ifdef __cplusplus
}
#endif

#endif /* OKP_RISCV_H */
