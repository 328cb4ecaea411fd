// SPDX-License-Identifier: GPL-2.0
// arm64's definitions of the arch contract (arch/arch_contract.h declares each piece and
// checks it; the core includes only that header).
//
// A probe is a BRK #0x6b0 (arm64::kBrkProbe) over the instruction, reached through the kernel's
// break-hook list (src/kernel/arch/arm64/trap.c). The instruction is simulated in the trap or
// copied into a slot followed by BRK #0x6b1 (kBrkStep); see arch/arm64/insn_plan.h.
#pragma once

#define OKP_ARCH_NAME "arm64"

#include "arch/arm64/insn_plan.h"
#include "arch/common/arch_types.h"
#include "arch/common/no_breakpoint_trap.h"
#include "arch/common/return_stubs.h"
#include "core/error_or.h"
#include "seam/kernel_services.h"

namespace okp::arch {

using Plan = arm64::InsnPlan;
constexpr usize kSlotSize = 8;  // the copy and the step-ending BRK
constexpr usize kMaxInsnLength = arm64::kInsnSize;
constexpr usize kMaxBreakpointSize = arm64::kInsnSize;
constexpr usize kMaxPatchSize = arm64::kInsnSize;  // no jump optimization: a BRK is the patch

// Where the kernel delivers no BRK to okprobes (no_breakpoint_trap: the debug-exception
// rework), a site's "breakpoint" is its own instruction: arming writes nothing, and the jump
// optimizer puts the site's b over it at once (arch/jump_contract.h, breakpoints_missing).
inline Breakpoint breakpoint_of(const Plan& plan) {
  // A64 text is little-endian in both kernel endiannesses.
  const u32 w = no_breakpoint_trap() ? plan.insn : arm64::kBrkProbe;
  return Breakpoint{{static_cast<u8>(w), static_cast<u8>(w >> 8), static_cast<u8>(w >> 16),
                     static_cast<u8>(w >> 24)}, arm64::kInsnSize};
}

#if defined(__aarch64__)
// The trap frame is arm64::Regs (the planner's view, which the host tests build on x86-64)
// laid out as okp_regs.
static_assert(sizeof(okp_regs) == sizeof(arm64::Regs) &&
              __builtin_offsetof(okp_regs, sp) == __builtin_offsetof(arm64::Regs, sp) &&
              __builtin_offsetof(okp_regs, pc) == __builtin_offsetof(arm64::Regs, pc) &&
              __builtin_offsetof(okp_regs, pstate) == __builtin_offsetof(arm64::Regs, pstate),
              "arm64::Regs mirrors struct okp_regs");
#endif
inline arm64::Regs* frame(okp_regs* regs) { return reinterpret_cast<arm64::Regs*>(regs); }
inline const arm64::Regs* frame(const okp_regs* regs) {
  return reinterpret_cast<const arm64::Regs*>(regs);
}

inline okp_addr_t instruction_pointer(const okp_regs* regs) { return frame(regs)->pc; }
inline void set_instruction_pointer(okp_regs* regs, okp_addr_t ip) { frame(regs)->pc = ip; }

// A BRK exception leaves the PC on the BRK itself (ELR_EL1 = its address).
inline okp_addr_t breakpoint_address(const okp_regs* regs) { return frame(regs)->pc; }

// A probe asked at a function's first byte goes past its BTI landing pad, and onto the
// ftrace call site (the second of the patchable-function-entry NOPs: the first is ftrace's
// `mov x9, x30`), which ftrace serves.
okp_addr_t skip_landing_pad(okp_addr_t addr, okp_addr_t func_start);
// The kernel's kprobes here decode no further than the instruction they probe, so no walk of
// theirs is misled; but they accept a b (they simulate it), and one of theirs over okprobes'
// jump would outlive the detour it leads to: the patched word itself is kept off.
inline usize kernel_kprobe_fences(okp_addr_t addr, usize patch_len, usize, okp_addr_t,
                                  unsigned long, RecoverFn, KernelFence (&out)[kMaxKernelFences]) {
  out[0] = {addr, addr + patch_len};
  return 1;
}

// Proves addr is an instruction (4-byte aligned, inside the function, not inside an exclusive
// sequence: the function is scanned from its start, okprobes' breakpoints recovered) and plans
// it. The error's reason names the instruction.
ErrorOr<Plan> check_and_plan(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                             okp_addr_t slot, RecoverFn recover);

inline bool needs_slot(const Plan& plan) { return plan.sim == arm64::Sim::kNone; }
// Boosted: the slot ends in `b` back (when okprobes' text is within ±128 MiB of the probe, as
// module text and the kernel's usually are), so a probe without a post_handler takes one
// exception; the copy then runs with the probed context's own DAIF, as the original would,
// and may be interrupted or preempted there (the core retires boosted slots after an RCU-tasks
// grace period). Out of reach, or with a post_handler, the slot ends in the step BRK.
inline bool boostable(const Plan& plan) { return plan.boostable; }
inline usize insn_length(const Plan&) { return arm64::kInsnSize; }
inline const char* mnemonic(const Plan& plan) { return plan.mnemonic; }

inline void build_slot(const Plan&, okp_addr_t addr, const u8* original, okp_addr_t slot,
                       bool boost, u8 (&image)[kSlotSize]) {
  for (usize i = 0; i < arm64::kInsnSize; ++i) image[i] = original[i];
  const u32 end = boost ? arm64::branch_back(addr, slot) : arm64::kBrkStep;
  for (usize i = 0; i < 4; ++i) image[arm64::kInsnSize + i] = static_cast<u8>(end >> (8 * i));
}

// Sends the CPU into the slot with D, A, I and F masked, so that nothing (an interrupt, a
// debug exception, an SError) runs between this trap and the step's own, and nothing migrates
// the task away from its per-CPU frame. end_step puts back exactly the bits the trap found.
// saved_flags holds DAIF as the 4-bit field (PSTATE bits 9:6), so that end_step puts it back
// with one bit-field insert (arm64 bfi) instead of mask, mask and or.
constexpr unsigned kPstateDaifShift = 6;
static_assert(arm64::kPstateDaif == 0xfull << kPstateDaifShift, "DAIF is PSTATE[9:6]");
inline void begin_step(okp_regs* regs, okp_addr_t slot, unsigned long* saved_flags) {
  auto* f = frame(regs);
  const u64 pstate = f->pstate;  // read once: the saved_flags store may alias it, for the compiler
  *saved_flags = (pstate & arm64::kPstateDaif) >> kPstateDaifShift;
  f->pstate = pstate | arm64::kPstateDaif;
  f->pc = slot;
}
inline bool is_step_exit(const Plan&, okp_addr_t slot, okp_addr_t bp) {
  return bp == slot + arm64::kInsnSize;
}
// The copy ran (it is never a branch: those are simulated): resume after the original. The
// flags the copy computed stay; DAIF is the trap's again.
inline void end_step(const Plan&, okp_addr_t addr, okp_regs* regs, unsigned long saved_flags) {
  auto* f = frame(regs);
  f->pc = addr + arm64::kInsnSize;
  f->pstate = (f->pstate & ~arm64::kPstateDaif) |
              ((saved_flags << kPstateDaifShift) & arm64::kPstateDaif);
}
// Leaves the frame as the trap delivered it (on the BRK).
inline void restore_trap_ip(okp_regs* regs, okp_addr_t addr) { frame(regs)->pc = addr; }
inline void enter_boosted(okp_regs* regs, okp_addr_t slot) { frame(regs)->pc = slot; }
inline ErrorOr<void> emulate(const Plan& plan, okp_addr_t addr, okp_regs* regs) {
  if (arm64::emulate(plan, addr, frame(regs))) return {};
  return Error(Errno::kFault, "the literal is unreadable");
}

// The kernel's way from a kernel-mode BRK to the break hooks: el1h_64_sync_handler -> el1_dbg
// (noinstr: unprobeable already) -> do_debug_exception -> brk_handler -> call_break_hook ->
// okprobes' hook. The roots are what that path runs when a BRK is handled: el1_dbg's entry
// and exit helpers and their context tracking, do_debug_exception's enter/exit, the hook list
// walk, and the ftrace entry (okprobes' function-entry probes). do_debug_exception and
// brk_handler themselves are not roots (both are on okprobes' built-in blacklist, which holds
// them on a kernel without CONFIG_KPROBES too, where their NOKPROBE_SYMBOL() is gone): their
// other callees run only for a BRK nobody handled (arm64_notify_die, die) or one from user
// mode (signals), never for a BRK of okprobes; following them would blacklist signal
// delivery, the page allocator and workqueues through arm64_notify_die.
// core/trap_path.h walks every direct branch from these.
constexpr const char* kTrapEntryFunctions[] = {
    "arm64_enter_el1_dbg", "arm64_exit_el1_dbg", "ct_nmi_enter", "ct_nmi_exit",
    "debug_exception_enter", "debug_exception_exit", "call_break_hook",
    "ftrace_caller", "ftrace_regs_caller", "ftrace_common",
    "arch_ftrace_ops_list_func", "ftrace_ops_list_func", "ftrace_ops_assist_func",
};

inline ErrorOr<BranchStep> direct_branch(const u8* bytes, usize avail, okp_addr_t addr) {
  if (avail < arm64::kInsnSize) return Error(Errno::kIlSeq, "a partial instruction");
  const u32 insn = static_cast<u32>(bytes[0]) | static_cast<u32>(bytes[1]) << 8 |
                   static_cast<u32>(bytes[2]) << 16 | static_cast<u32>(bytes[3]) << 24;
  return BranchStep{arm64::kInsnSize, arm64::direct_branch_target(addr, insn)};
}
// The next function's ftrace-ops pointer at the end of an extent (arm64/insn_plan.h).
constexpr usize kTrailingDataWindow = 8;
inline usize trailing_data_bytes(const u8* last) { return arm64::ftrace_ops_literal_bytes(last); }

// Return probes: arch/common/return_stubs.h, arch/arm64/return_stubs.S.
// At a function's entry (its ftrace call site, whose frame holds the caller's x30 as
// regs[30] and puts it back on the way out, or the BRK after its landing pad) the return
// address is x30, not yet signed by the function's paciasp; the entry stack pointer names
// the frame (nested live frames of one task have lower ones).
inline okp_addr_t return_frame(const okp_regs* regs) { return frame(regs)->sp; }
inline okp_addr_t return_address(const okp_regs* regs) { return frame(regs)->x[30]; }
inline void set_return_address(okp_regs* regs, okp_addr_t addr) { frame(regs)->x[30] = addr; }
inline void* current_task() { return okp_seam_current_task(); }
// Where the function keeps x30 (a register, or a frame record at an offset only its code
// knows, signed by paciasp) is not known here, so only a stack that is gone (unreadable: the
// task exited and its stack was freed) proves the frame will never return. Otherwise the
// instance stays until its return or its task's free (core/stub_life.cpp).
inline bool frame_may_return(okp_addr_t frame, u32) {
  unsigned long word = 0;
  return okp_seam_read_nofault(&word, frame - sizeof(word), sizeof(word)) == 0;
}
// arm64 functions that return into another task or never return to their caller.
constexpr UnsafeFunction kReturnProbeUnsafe[] = {
    {"cpu_switch_to", "it returns into the next task (context switch)"},
    {"__switch_to", "it returns into the next task (context switch)"},
    {"ret_from_fork", "it never returns to a caller"},
    {"call_on_irq_stack", "it switches stacks"},
};

// Handlers of a function-entry probe served by ftrace see pc at the probed instruction (pre)
// and after it (post), as a BRK probe's handlers would.
inline okp_addr_t ftrace_pre_ip(okp_addr_t site) { return site; }
inline okp_addr_t ftrace_post_ip(okp_addr_t site) { return site + arm64::kInsnSize; }

}  // namespace okp::arch
