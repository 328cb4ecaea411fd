// SPDX-License-Identifier: GPL-2.0
// Derives the trap-path blacklist from the running kernel's text (see trap_path.h).
#include "core/trap_path.h"

namespace okp {

namespace {

// Not reached from the trap: when these run, the trap is already lost (fatal reporting), or
// they cannot run in the breakpoint trap's NMI context (preemption points, the scheduler,
// might_sleep checks). A preemption point reached from the ftrace entry or a return stub
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
};

// Listed, not followed: each returns before calling anything when in_nmi().
constexpr const char* kEntryOnly[] = {
    "rcu_read_unlock_special",
    "__rcu_irq_enter_check_tick",
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
