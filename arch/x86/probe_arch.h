// SPDX-License-Identifier: GPL-2.0
// x86-64's definitions of the arch contract (arch/arch_contract.h declares each piece and
// checks it; the core includes only that header).
#pragma once

#define OKP_ARCH_NAME "x86-64"

#include "arch/common/arch_types.h"
#include "arch/common/return_stubs.h"
#include "arch/x86/decoder.h"
#include "arch/x86/insn_emulate.h"
#include "arch/x86/insn_plan.h"
#include "arch/x86/kernel_walk.h"
#include "core/error_or.h"
#include "seam/kernel_services.h"

namespace okp::arch {

using Plan = x86::InsnPlan;
constexpr usize kSlotSize = x86::kSlotSize;
constexpr usize kMaxInsnLength = 15;
constexpr usize kBreakpointSize = 1;
constexpr usize kMaxBreakpointSize = kBreakpointSize;
constexpr usize kMaxPatchSize = 5;  // jmp rel32: a jump probe's site covers 5 bytes
inline Breakpoint breakpoint_of(const Plan&) { return Breakpoint{{x86::kInt3}, kBreakpointSize}; }
constexpr unsigned long kInterruptFlag = 0x200;
// `call __fentry__` (or its nop) at function entry: the ftrace call site.
constexpr usize kFtraceCallSize = 5;

inline okp_addr_t instruction_pointer(const okp_regs* regs) { return regs->ip; }
inline void set_instruction_pointer(okp_regs* regs, okp_addr_t ip) { regs->ip = ip; }

// The probe address a breakpoint trap reports (the trap leaves ip after the int3).
inline okp_addr_t breakpoint_address(const okp_regs* regs) { return regs->ip - kBreakpointSize; }

// A probe asked at a function's first byte goes after its ENDBR64 landing pad (as kprobes
// does): the pad must stay, or indirect calls to the function #CP under IBT.
okp_addr_t skip_landing_pad(okp_addr_t addr, okp_addr_t func_start);

// Proves addr is an instruction boundary by decoding from func_start, then plans how the
// instruction runs under a breakpoint. The error's reason says why not.
ErrorOr<Plan> check_and_plan(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                             okp_addr_t slot, RecoverFn recover);

inline bool needs_slot(const Plan& plan) { return plan.emulation == x86::Emulation::kNone; }
inline bool boostable(const Plan& plan) { return plan.boostable; }
inline usize insn_length(const Plan& plan) { return plan.length; }
inline const char* mnemonic(const Plan& plan) { return plan.mnemonic; }

inline void build_slot(const Plan& plan, okp_addr_t addr, const u8* original, okp_addr_t slot,
                       bool boost, u8 (&image)[kSlotSize]) {
  x86::build_slot(plan, addr, original, slot, boost, image);
}

// Sends the CPU into the slot with interrupts off, so nothing can migrate or interleave
// between this trap and the one ending the slot (NMIs aside, which nest cleanly).
inline void begin_step(okp_regs* regs, okp_addr_t slot, unsigned long* saved_flags) {
  *saved_flags = regs->flags & kInterruptFlag;
  regs->flags &= ~kInterruptFlag;
  regs->ip = slot;
}
inline bool is_step_exit(const Plan& plan, okp_addr_t slot, okp_addr_t bp) {
  return bp == slot + plan.length;
}
inline void end_step(const Plan& plan, okp_addr_t addr, okp_regs* regs, unsigned long saved_flags) {
  x86::resume_after_step(plan, addr, regs);
  regs->flags |= saved_flags;
}
// Leaves the frame as the trap delivered it (after the breakpoint).
inline void restore_trap_ip(okp_regs* regs, okp_addr_t addr) { regs->ip = addr + kBreakpointSize; }
inline void enter_boosted(okp_regs* regs, okp_addr_t slot) { regs->ip = slot; }
inline ErrorOr<void> emulate(const Plan& plan, okp_addr_t addr, okp_regs* regs) {
  if (x86::emulate_register_move(plan, addr, regs)) return {};  // the common case, no call
  if (plan.emulation == x86::Emulation::kAlu) {  // one call, no ErrorOr frame (insn_emulate.h)
    x86::emulate_alu(plan, addr, regs);
    return {};
  }
  return x86::emulate(plan, addr, regs);
}

// The kernel-mode branch of the kernel's int3 entry (exc_int3, itself .noinstr.text): what it
// calls on the way to the die notifiers and back, and the ftrace entry, which okprobes' function
// entry probes are reached through. core/trap_path.h walks every direct call from these on the
// live text. exc_int3 itself is not a root: its user-mode branch (do_int3_user, do_trap, signal
// delivery) is never on the path of a kernel-mode breakpoint.
constexpr const char* kTrapEntryFunctions[] = {
    "poke_int3_handler", "irqentry_nmi_enter", "kgdb_ll_trap", "do_int3", "kprobe_int3_handler",
    "notify_die", "atomic_notifier_call_chain", "irqentry_nmi_exit",
    "ftrace_regs_caller", "ftrace_caller", "arch_ftrace_ops_list_func", "ftrace_ops_list_func",
    "ftrace_ops_assist_func",
};

// No data ends a function's extent here: padding before a function is code (nop, int3).
constexpr usize kTrailingDataWindow = 0;
inline usize trailing_data_bytes(const u8*) { return 0; }
inline ErrorOr<BranchStep> direct_branch(const u8* bytes, usize avail, okp_addr_t addr) {
  auto d = OKP_TRY(x86::decode(bytes, avail));
  okp_addr_t target = d.relative_branch ? addr + d.length + static_cast<okp_addr_t>(d.branch_displacement) : 0;
  return BranchStep{d.length, target};
}

// Return probes: arch/common/return_stubs.h, arch/x86/return_stubs.S.
// At a function's entry (breakpoint after ENDBR64, or its ftrace site) the return address is
// the word at the stack pointer, on this task's own stack; that slot's address names the frame.
inline okp_addr_t return_frame(const okp_regs* regs) { return regs->sp; }
inline okp_addr_t return_address(const okp_regs* regs) {
  return *reinterpret_cast<const unsigned long*>(regs->sp);
}
inline void set_return_address(okp_regs* regs, okp_addr_t addr) {
  *reinterpret_cast<unsigned long*>(regs->sp) = addr;
}
// The kernel's current, read as its get_current() reads it: one %gs-relative load of the
// per-CPU symbol Kbuild names (current_task, in pcpu_hot from 6.2 on, where layout_checks.c
// checks it comes first), not a call into the glue on every return probe's entry. The host
// tests' build (no %gs, no such symbol) asks the seam.
#ifdef OKP_X86_CURRENT_TASK
#define OKP_X86_SYMBOL_NAME(s) #s
#define OKP_X86_SYMBOL(s) OKP_X86_SYMBOL_NAME(s)
inline void* current_task() {
  void* task;
  asm("movq %%gs:" OKP_X86_SYMBOL(OKP_X86_CURRENT_TASK) ", %0" : "=r"(task));
  return task;
}
#else
inline void* current_task() { return okp_seam_current_task(); }
#endif
// The slot still holds the stub (or, once the stub ran, the index it pushed there): the frame
// may still return through it. Unreadable: the stack is gone, so is the frame.
inline bool frame_may_return(okp_addr_t frame, u32 index) {
  unsigned long word = 0;
  if (okp_seam_read_nofault(&word, frame, sizeof(word)) != 0) return false;
  return word == return_stub_address(index) || word == index;
}
// x86-64 functions that return into another task or never return to their caller.
constexpr UnsafeFunction kReturnProbeUnsafe[] = {
    {"__switch_to", "it returns into the next task (context switch)"},
    {"__switch_to_asm", "it returns into the next task (context switch)"},
    {"rewind_stack_and_make_dead", "it never returns to its caller"},
};

// The kprobes convention for a function-entry probe served by ftrace: handlers see ip as if
// the breakpoint had trapped (pre) and as if the call site had run (post).
inline okp_addr_t ftrace_pre_ip(okp_addr_t site) { return site + kBreakpointSize; }
inline okp_addr_t ftrace_post_ip(okp_addr_t site) { return site + kFtraceCallSize; }

}  // namespace okp::arch
