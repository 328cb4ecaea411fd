// SPDX-License-Identifier: GPL-2.0
/*
 * The breakpoint trap on arm64: a kernel-mode BRK goes el1h_64_sync -> el1_dbg ->
 * do_debug_exception -> brk_handler -> call_break_hook, which hands it to the hook whose
 * immediate matches the BRK's (ESR_ELx.ISS comment). okprobes registers two hooks on that
 * list, one per immediate of its own (arch/arm64/insn_plan.h says why 0x6b0/0x6b1 clash with
 * no one), so it is reached as directly as the kernel's kprobes are, and a BRK of anyone else
 * never reaches it. The hooks run with interrupts masked in debug-exception (NMI-like)
 * context: the core does the rest without locks (src/core/hit.cpp).
 *
 * register_kernel_break_hook() is not exported: symbols.c found it in /proc/kallsyms and
 * proved it is that function (okp_arm64_ksyms).
 *
 * Kernels with the arm64 debug-exception rework (upstream 6.17, backported into Debian's
 * 6.12.95) have no break-hook list: do_el1_brk64 -> call_el1_break_hook dispatches a fixed
 * switch of the kernel's own immediates (BUG, CFI, fault, KASAN, UBSAN, kgdb, kprobes,
 * kretprobes) and gives any other to die("Oops - BRK"), which oopses: no module's BRK can be
 * handled there. Kbuild tells from the headers (OKP_ARM64_BREAK_HOOKS: struct break_hook in
 * asm/debug-monitors.h); without the list okprobes never writes a BRK: every probe off an
 * ftrace site is armed as a `b` to its detour at once (core/optimizer/jump_optimizer.h,
 * arm_jump), or refused with the reason below and why no branch can be placed; function
 * entries on ftrace sites and return probes work as everywhere.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>
#include <asm/debug-monitors.h>

#include "kernel/okp_glue.h"
#include "okp_arm64.h"

#ifdef OKP_ARM64_BREAK_HOOKS

/* arch/arm64/insn_plan.h: okp::arm64::kBrkProbeImm and kBrkStepImm. */
#define OKP_BRK_PROBE_IMM 0x6b0
#define OKP_BRK_STEP_IMM 0x6b1
#define OKP_BRK(imm) (0xd4200000u | ((u32)(imm) << 5))

/*
 * A BRK with our immediate where okprobes has no site: if our BRK is no longer there, it was
 * taken out between this CPU's fetch and the lookup; what is there now runs. Otherwise the
 * kernel reports it (a BRK of ours nobody planted: a bug). The core tail-calls it by name
 * (okp_seam.h). Out of line: its local, whose address the copy takes, would give the core's
 * entry a stack protector.
 */
noinline int notrace okp_seam_break_not_ours(struct okp_regs *okp_regs)
{
	struct pt_regs *regs = (struct pt_regs *)okp_regs;
	u32 insn;

	if (copy_from_kernel_nofault(&insn, (void *)regs->pc, sizeof(insn)) == 0 &&
	    le32_to_cpu(insn) != OKP_BRK(OKP_BRK_PROBE_IMM) &&
	    le32_to_cpu(insn) != OKP_BRK(OKP_BRK_STEP_IMM))
		return DBG_HOOK_HANDLED;
	return DBG_HOOK_ERROR;
}
NOKPROBE_SYMBOL(okp_seam_break_not_ours);

/*
 * The hooks only find this CPU's state and tail-call the core, which answers in the hook's
 * convention: okprobes is reached as directly as the kernel's kprobes are (their handler is
 * the hook itself), at the cost of these four instructions and the branch. They save no x30
 * (a tail call), so they are built without the return-address signing the kernel's
 * pac-ret+leaf puts in every function (paciasp/autiasp: two instructions per BRK for nothing
 * to protect); with a BTI kernel the landing pad stays (the list walk calls them indirectly).
 * notrace: the hit path is neither probed nor traced.
 */
#ifdef CONFIG_ARM64_BTI_KERNEL
#define OKP_HOOK_BRANCH_PROTECTION __attribute__((target("branch-protection=bti")))
#else
#define OKP_HOOK_BRANCH_PROTECTION __attribute__((target("branch-protection=none")))
#endif

/* A probe's BRK: a hit (or re-entry, or a BRK of ours already taken out). */
static int notrace OKP_HOOK_BRANCH_PROTECTION okp_brk_hook(struct pt_regs *regs,
							    unsigned long esr)
{
	BUILD_BUG_ON(DBG_HOOK_HANDLED != 0 || DBG_HOOK_ERROR != 1);
	return okp_core_on_break_hook((struct okp_regs *)regs, this_cpu_ptr(&okp_cpu_state));
}
NOKPROBE_SYMBOL(okp_brk_hook);

/* A slot's step-ending BRK: only a step ends there, so the core skips the lookup. */
static int notrace OKP_HOOK_BRANCH_PROTECTION okp_brk_step_hook(struct pt_regs *regs,
								 unsigned long esr)
{
	return okp_core_on_step_break_hook((struct okp_regs *)regs, this_cpu_ptr(&okp_cpu_state));
}
NOKPROBE_SYMBOL(okp_brk_step_hook);

static struct break_hook okp_probe_hook = {
	.fn = okp_brk_hook,
	.imm = OKP_BRK_PROBE_IMM,
};

static struct break_hook okp_step_hook = {
	.fn = okp_brk_step_hook,
	.imm = OKP_BRK_STEP_IMM,
};

/* Where okprobes' own code is entered from a breakpoint trap: a root of the trap path. */
okp_addr_t okp_trap_entry_point(void)
{
	return (okp_addr_t)okp_brk_hook;
}

/* The step's own hook: a root of its own. */
okp_addr_t okp_trap_step_entry_point(void)
{
	return (okp_addr_t)okp_brk_step_hook;
}

/* The core tail-calls it (a direct branch a walk follows; a root all the same). */
okp_addr_t okp_trap_not_ours_entry_point(void)
{
	return (okp_addr_t)okp_seam_break_not_ours;
}

int okp_trap_init(void)
{
	/* symbols.c's okp_arch_symbols_check() refused to load without these. */
	okp_arm64_ksyms.register_kernel_break_hook(&okp_step_hook);
	okp_arm64_ksyms.register_kernel_break_hook(&okp_probe_hook);
	return 0;
}

void okp_trap_exit(void)
{
	/* Each waits for an RCU grace period: no CPU is inside either hook afterwards. */
	okp_arm64_ksyms.unregister_kernel_break_hook(&okp_probe_hook);
	okp_arm64_ksyms.unregister_kernel_break_hook(&okp_step_hook);
}

#else /* !OKP_ARM64_BREAK_HOOKS: the debug-exception rework, no break-hook list */

/*
 * A static string: the core keeps the pointer and refuses every breakpoint probe with it (and
 * copies it into okp_kprobe's okp_reason: within OKP_REASON_MAX).
 */
static const char okp_reason_no_break_hooks[] =
	"no breakpoint trap on this kernel: it dispatches kernel BRKs only to its own handlers "
	"(arm64 debug-exception rework, no break-hook list)";

/* No breakpoint trap reaches okprobes here: nothing to walk from. */
okp_addr_t okp_trap_entry_point(void)
{
	return 0;
}

int okp_trap_init(void)
{
	okp_set_no_breakpoint_trap(okp_reason_no_break_hooks);
	/* (Not the die() message's text: the guest harness rightly takes that for an oops.) */
	pr_warn("%s: a BRK of any other immediate goes to die(), so okprobes writes none; a probe is a branch to its detour (refused where none can be placed), function entries use ftrace\n",
		okp_reason_no_break_hooks);
	return 0;
}

void okp_trap_exit(void)
{
}

#endif /* OKP_ARM64_BREAK_HOOKS */
