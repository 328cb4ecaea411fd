// SPDX-License-Identifier: GPL-2.0
// Derives the trap-path blacklist from the running kernel's text (see trap_path.h).
#include "core/trap_path.h"

namespace okp {

namespace {

// Not reached from the trap: when these run, the trap is already lost (fatal reporting), or
// they cannot run in the breakpoint trap's NMI context (preemption points, the scheduler,
// might_sleep checks), or they are the work of a return to user mode, which a breakpoint in
// kernel text never makes. A preemption point reached from the ftrace entry or a return stub
// (process context) reschedules once; it does not re-enter that path.
constexpr const char* kNotReached[] = {
    // fatal reporting
    "die", "die_addr", "__die", "__die_body", "oops_begin", "oops_end", "panic", "nmi_panic",
    "__stack_chk_fail", "_printk", "printk", "vprintk", "vprintk_emit", "vprintk_default",
    "_printk_deferred", "__warn_printk", "warn_slowpath_fmt", "__warn", "report_bug",
    "dump_stack", "dump_stack_lvl", "show_regs", "kasan_report", "__kasan_report",
    "lockdep_rcu_suspicious", "debug_locks_off", "usercopy_abort", "fortify_panic",
    "__fortify_panic", "__ubsan_handle_out_of_bounds", "__ubsan_handle_shift_out_of_bounds",
    "__ubsan_handle_load_invalid_value", "__ubsan_handle_builtin_unreachable",
    // preemption points and the scheduler
    "preempt_schedule", "preempt_schedule_notrace", "preempt_schedule_thunk",
    "preempt_schedule_notrace_thunk", "__SCT__preempt_schedule",
    "__SCT__preempt_schedule_notrace", "preempt_schedule_irq", "schedule", "__schedule",
    "__cond_resched", "__SCT__cond_resched", "__SCT__might_resched", "__might_sleep",
    "__might_resched", "__might_fault",
    // the return to user mode (signal delivery, core dumps, task work): an entry that serves
    // both user and kernel traps in one function (riscv's do_trap_break) calls it on its
    // user-mode branch only; the ftrace entry and okprobes' entries return to their caller
    "exit_to_user_mode_loop", "exit_to_user_mode_prepare", "irqentry_exit_to_user_mode",
    "syscall_exit_to_user_mode", "arch_do_signal_or_restart",
    // the same branch's own work, inlined into such an entry: the signal of a user-mode ebreak
    // (handle_break asks user_mode() first), the nohz_full flush on the way to user mode (its
    // one other caller is the idle loop), and context tracking's user-mode enter and exit
    "force_sig_fault", "rcu_nocb_flush_deferred_wakeup", "__ct_user_enter", "__ct_user_exit",
};

// Listed, not followed: each returns before calling anything when in_nmi() (the RCU ones), or
// when the trap came from kernel mode (the uprobe notifiers: riscv 6.1's do_trap_break calls
// them for every ebreak, and they look for a uprobe of the current user task; since 6.6
// riscv's handle_break calls them only for a user-mode ebreak).
constexpr const char* kEntryOnly[] = {
    "rcu_read_unlock_special",
    "__rcu_irq_enter_check_tick",
    "uprobe_pre_sstep_notifier",
    "uprobe_post_sstep_notifier",
};

}  // namespace

bool same_function(const char* name, const char* base) {
  usize i = 0;
  for (; base[i]; ++i)
    if (name[i] != base[i]) return false;
  return name[i] == '\0' || name[i] == '.';
}

CallRule trap_path_rule(const char* name) {
  for (const char* n : kNotReached)
    if (same_function(name, n)) return CallRule::kNotReached;
  for (const char* n : kEntryOnly)
    if (same_function(name, n)) return CallRule::kEntryOnly;
  return CallRule::kFollow;
}

}  // namespace okp
