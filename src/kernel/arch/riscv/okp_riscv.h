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
};
/*
 * Every site of patches[0..n) written with every other hart stopped, under text_mutex. 0, or
 * -EBUSY with nothing written when the kernel may preempt kernel code (a task could be
 * stopped inside a region).
 */
int okp_riscv_patch_stopped(struct okp_riscv_patch *patches, unsigned int n);
/*
 * From breakpoints to jumps with no hart stopped, under text_mutex: each site's expect starts
 * with a breakpoint of breakpoint_size bytes that traps, and no context is inside its region
 * (the optimizer waited for that). The bytes after the breakpoint first, then the breakpoint's
 * own. 0, or -EBUSY with nothing written on a kernel that preempts kernel code (as
 * okp_riscv_patch_stopped: the way back would be refused).
 */
int okp_riscv_patch_behind_breakpoints(struct okp_riscv_patch *patches, unsigned int n);

/* The detour entry's table of each CPU's okp_cpu_state (detour.c), filled at load. */
void okp_riscv_detour_init(void);

#ifdef __cplusplus
}
#endif

#endif /* OKP_RISCV_H */
