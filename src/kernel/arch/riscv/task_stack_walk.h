/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One task's kernel stack read through its frame-pointer chain (riscv64, issue 28): every
 * exception frame on it found and its interrupted pc compared with the regions a switch is
 * about to write. The walk is arch/riscv/task_stack_walk.cpp (host-tested over a fake stack);
 * the glue (task_look.c) runs it for every task inside the switch's stop_machine, where no
 * task runs and every stack is still. docs/riscv64-detours.md, "A preemptible kernel".
 */
#ifndef OKP_RISCV_TASK_STACK_WALK_H
#define OKP_RISCV_TASK_STACK_WALK_H

#include "seam/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where struct pt_regs keeps what the walk reads (the kernel's, filled by the glue). */
struct okp_riscv_regs_layout {
	unsigned long size;	/* PT_SIZE_ON_STACK: the frame the exception entry pushes */
	unsigned long epc, ra, sp, s0, status;	/* byte offsets */
	unsigned long status_spp;	/* SR_SPP: the exception came from the kernel */
};

/* [start, end) of text. */
struct okp_riscv_text_range {
	okp_addr_t start, end;
};

/* What the walk needs of the kernel, the same for every task of one look. */
struct okp_riscv_walk_env {
	struct okp_riscv_regs_layout regs;
	/*
	 * The exception entry's code and the fork returns' (handle_exception up to
	 * ret_from_exception's end, ret_from_fork, ...): a return address there is where a C
	 * function called from the entry with sp at a pt_regs returns, so that pt_regs is the
	 * calling frame's CFA; and code a nested exception interrupted there ran with sp at the
	 * outer pt_regs.
	 */
	const struct okp_riscv_text_range *entry;
	unsigned int n_entry;
	/* The ranges no task may be stopped strictly inside: (start, end). */
	const struct okp_riscv_text_range *inside;
	unsigned long n_inside;
	/*
	 * Whether a pc outside those ranges still keeps the switch (nonzero): a task in a detour
	 * of a site being switched, whose way back lands where that detour's region ended, which
	 * may be strictly inside the jump written now. NULL: none does.
	 */
	int (*keeps_switch)(okp_addr_t pc);
	/* One aligned word of the stack, or nonzero when it cannot be read. */
	int (*read_word)(okp_addr_t addr, unsigned long *value);
	/* Whether addr is kernel or module text (a return address must be). */
	int (*is_text)(okp_addr_t addr);
};

/* One task off its CPU: its stack and the context __switch_to saved. */
struct okp_riscv_task_stack {
	okp_addr_t stack_low, stack_high;	/* [low, high): the task's kernel stack */
	okp_addr_t top_regs;	/* task_pt_regs(): the frame of its entry from user mode or fork */
	okp_addr_t pc, fp, sp;	/* thread.ra, thread.s[0], thread.sp */
};

enum okp_riscv_walk_result {
	OKP_RISCV_TASK_OUTSIDE = 0,	/* every frame read to the top, no pc inside */
	OKP_RISCV_TASK_INSIDE = 1,	/* *where: a pc strictly inside one of env->inside */
	OKP_RISCV_TASK_UNKNOWN = 2,	/* *why: the chain could not be followed to the top */
};

/*
 * Walks one task's frame chain from its switch context to the pt_regs at the top of its stack,
 * through every exception frame on the way; *where is the pc found inside (INSIDE) or the
 * address the walk stopped at (UNKNOWN), *why a static string for UNKNOWN.
 */
enum okp_riscv_walk_result okp_riscv_walk_task_stack(const struct okp_riscv_walk_env *env,
						     const struct okp_riscv_task_stack *task,
						     okp_addr_t *where, const char **why);

#ifdef __cplusplus
}
#endif

#endif /* OKP_RISCV_TASK_STACK_WALK_H */
