// SPDX-License-Identifier: GPL-2.0
/*
 * The C halves of arm64's detour entries (detour_entry.S) and the rest of the jump seam
 * arm64 implements (seam/jump_services.h): the entries' addresses, whether the kernel
 * enforces BTI.
 */
#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <asm/cpufeature.h>
#include <asm/sysreg.h>

#include "kernel/okp_glue.h"
#include "detour_layout.h"

void okp_detour_entry(void);
void okp_detour_post_entry(void);
int okp_detour_hit(unsigned long copy, struct pt_regs *regs);
void okp_detour_post_hit(unsigned long ret, struct pt_regs *regs);

static_assert(sizeof(struct pt_regs) <= OKP_DETOUR_RECORD, "detour_entry.S's frame holds a pt_regs");
static_assert(offsetof(struct pt_regs, regs[30]) == OKP_PT_LR &&
	      offsetof(struct pt_regs, sp) == OKP_PT_SP && offsetof(struct pt_regs, pc) == OKP_PT_PC &&
	      offsetof(struct pt_regs, pstate) == OKP_PT_PSTATE &&
	      offsetof(struct pt_regs, orig_x0) == OKP_PT_TAIL,
	      "detour_layout.h's offsets are struct pt_regs'");
static_assert(OKP_PSR_MODE_EL1H == PSR_MODE_EL1h, "detour_layout.h's EL1h is the kernel's");

/*
 * The PSTATE bits the entry cannot read with one mrs on every CPU: PAN, which is set in the
 * kernel but clear inside a uaccess window (an eret with the wrong one would open user memory
 * to the kernel, or fault a uaccess). Read here, in the probed context's PSTATE (nothing on
 * the way from the probe changed it).
 */
static __always_inline u64 okp_pstate_pan(void)
{
	if (system_uses_hw_pan())
		return read_sysreg_s(sys_reg(3, 0, 4, 2, 3)) & PSR_PAN_BIT;
	return 0;
}

/*
 * The pre entry's C half: preemption off around the core's hit, as kprobes promises handlers.
 * A post step (the core sends execution into the copy with DAIF masked in regs, a frame open
 * on this CPU until the post entry) must not reschedule on the way, the frame being this
 * CPU's: interrupts go off first (the entry's return sets DAIF from regs anyway), and
 * preempt_enable() does not reschedule with them off.
 */
int notrace okp_detour_hit(unsigned long copy, struct pt_regs *regs)
{
	int ret;

	preempt_disable_notrace();
	regs->pstate |= okp_pstate_pan();
	ret = okp_core_on_detour(copy, (struct okp_regs *)regs, this_cpu_ptr(&okp_cpu_state));
	if (ret && regs->pc == copy)
		arch_local_irq_disable();	/* masked in the copy anyway: no reschedule below */
	preempt_enable_notrace();
	return ret;
}
NOKPROBE_SYMBOL(okp_detour_hit);

/*
 * The post entry's C half, DAIF masked (the copy ran with the pre entry's begin_step): the
 * frame the pre entry left open is closed, DAIF comes back from it on the way out.
 */
void notrace okp_detour_post_hit(unsigned long ret, struct pt_regs *regs)
{
	preempt_disable_notrace();
	regs->pstate |= okp_pstate_pan();
	okp_core_on_detour_post(ret, (struct okp_regs *)regs, this_cpu_ptr(&okp_cpu_state));
	preempt_enable_notrace();	/* interrupts masked: it cannot reschedule */
}
NOKPROBE_SYMBOL(okp_detour_post_hit);

/* One pre entry for detours with and without post calls (the flag is in the detour). */
okp_addr_t okp_seam_detour_entry(int with_post)
{
	return (okp_addr_t)okp_detour_entry;
}

okp_addr_t okp_seam_detour_post_entry(void)
{
	return (okp_addr_t)okp_detour_post_entry;
}

int okp_seam_kernel_bti(void)
{
	return IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) && system_supports_bti();
}

/* Roots of the trap path (the walk follows the entries' direct calls into the core). */
okp_addr_t okp_detour_entry_point(void)
{
	return (okp_addr_t)okp_detour_entry;
}

okp_addr_t okp_detour_post_entry_point(void)
{
	return (okp_addr_t)okp_detour_post_entry;
}

/* No task look on arm64 (a region is one instruction: nothing to wait for): no file. */
void okp_task_snapshot_debugfs(struct dentry *dir)
{
}
