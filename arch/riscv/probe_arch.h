// SPDX-License-Identifier: GPL-2.0
// riscv64's definitions of the arch contract (arch/arch_contract.h declares each piece and
// checks it; the core includes only that header).
//
// A probe is a c.ebreak or an ebreak (arch/riscv/insn_plan.h says which); the trap reaches
// okprobes through the die notifier (DIE_TRAP), which riscv kernels raise only when built with
// KGDB (src/kernel/arch/riscv/trap.c). Instructions are simulated on the trap frame or
// single-stepped from a slot ended by a breakpoint of its own. No boosting (a slot cannot jump
// back to the kernel's text without a scratch register). Jump optimization: an auipc/jalr pair
// through a dead register (or a jal) into a detour (arch/riscv/jump_probe_arch.h); without a
// breakpoint trap a probe is that jump or nothing. Return probes replace ra at entry by a stub
// of okprobes' own (arch/riscv/return_stubs.S).
#pragma once

#define OKP_ARCH_NAME "riscv64"

#include "arch/common/arch_types.h"
#include "arch/common/no_breakpoint_trap.h"
#include "arch/common/return_stubs.h"
#include "arch/riscv/ftrace_ops_literal.h"
#include "arch/riscv/insn_plan.h"
#include "arch/riscv/kernel_walk.h"
#include "core/error_or.h"
#include "seam/kernel_services.h"

namespace okp::arch {

using Plan = riscv::InsnPlan;
constexpr usize kSlotSize = riscv::kSlotSize;
constexpr usize kMaxInsnLength = riscv::kMaxInsnLength;
constexpr usize kMaxBreakpointSize = 4;
// A breakpoint, or the jump: auipc/jalr (8 bytes) or a jal (4).
constexpr usize kMaxPatchSize = 8;

// Where the kernel delivers no breakpoint to okprobes (no_breakpoint_trap: no KGDB), a site's
// "breakpoint" is its own instruction: arming writes nothing, and the jump optimizer puts the
// site's jump over it at once (arch/jump_contract.h, breakpoints_missing).
inline Breakpoint breakpoint_of(const Plan& plan) {
  if (no_breakpoint_trap())
    return Breakpoint{{plan.original[0], plan.original[1], plan.original[2], plan.original[3]},
                      plan.length};
  if (plan.breakpoint_size == 4)
    return Breakpoint{{riscv::kEbreak & 0xff, (riscv::kEbreak >> 8) & 0xff,
                       (riscv::kEbreak >> 16) & 0xff, riscv::kEbreak >> 24}, 4};
  return Breakpoint{{riscv::kCEbreak & 0xff, riscv::kCEbreak >> 8, 0, 0}, 2};
}

inline okp_addr_t instruction_pointer(const okp_regs* regs) { return regs->epc; }
inline void set_instruction_pointer(okp_regs* regs, okp_addr_t ip) { regs->epc = ip; }

// The trap leaves epc at the breakpoint itself.
inline okp_addr_t breakpoint_address(const okp_regs* regs) { return regs->epc; }

// No landing pads on riscv64 (6.1 has no Zicfilp).
inline okp_addr_t skip_landing_pad(okp_addr_t addr, okp_addr_t) { return addr; }
// kernel_kprobe_fences (arch/riscv/kernel_walk.h): the kernel's kprobes kept off okprobes'
// jump (they would accept its auipc, jalr or jal) and the bytes after it their walk misreads.

// Proves addr is an instruction boundary by decoding from func_start (the RVC length rules),
// refuses it inside an LR/SC sequence, then plans the instruction. The error's reason says why
// not. Where the kernel delivers no breakpoint trap to modules, planned all the same: the jump
// optimizer then arms the site as its jump, or refuses it (arch/jump_contract.h).
ErrorOr<Plan> check_and_plan(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                             okp_addr_t slot, RecoverFn recover);

inline bool needs_slot(const Plan& plan) { return plan.kind == riscv::Kind::kSlot; }
inline bool boostable(const Plan&) { return false; }
inline usize insn_length(const Plan& plan) { return plan.length; }
inline const char* mnemonic(const Plan& plan) { return plan.mnemonic; }

inline void build_slot(const Plan& plan, okp_addr_t, const u8* original, okp_addr_t, bool,
                       u8 (&image)[kSlotSize]) {
  riscv::build_slot(plan, original, image);
}

// Sends the hart into the slot with interrupts off (sret copies SPIE into SIE), so nothing can
// migrate or interleave between this trap and the one ending the slot. saved_flags keeps both
// interrupt bits exactly as the trap delivered them.
inline void begin_step(okp_regs* regs, okp_addr_t slot, unsigned long* saved_flags) {
  constexpr unsigned long kMask = riscv::kStatusSie | riscv::kStatusSpie;
  *saved_flags = regs->status & kMask;
  regs->status &= ~kMask;
  regs->epc = slot;
}
inline bool is_step_exit(const Plan& plan, okp_addr_t slot, okp_addr_t bp) {
  return bp == slot + plan.length;
}
inline void end_step(const Plan& plan, okp_addr_t addr, okp_regs* regs, unsigned long saved_flags) {
  constexpr unsigned long kMask = riscv::kStatusSie | riscv::kStatusSpie;
  regs->epc = addr + plan.length;
  regs->status = (regs->status & ~kMask) | saved_flags;
}
// Leaves the frame as the trap delivered it (at the breakpoint).
inline void restore_trap_ip(okp_regs* regs, okp_addr_t addr) { regs->epc = addr; }
inline void enter_boosted(okp_regs* regs, okp_addr_t slot) { regs->epc = slot; }  // never: no boost
// The frame riscv::emulate() works on as words (its layout, checked here against okp_regs,
// which src/kernel/arch/riscv/layout_checks.c checks against pt_regs).
static_assert(__builtin_offsetof(okp_regs, epc) == riscv::kEpcWord * sizeof(unsigned long) &&
              __builtin_offsetof(okp_regs, ra) == riscv::kRegRa * sizeof(unsigned long) &&
              __builtin_offsetof(okp_regs, sp) == riscv::kRegSp * sizeof(unsigned long) &&
              __builtin_offsetof(okp_regs, t6) == 31 * sizeof(unsigned long) &&
              __builtin_offsetof(okp_regs, status) == riscv::kStatusWord * sizeof(unsigned long),
              "okp_regs is epc, x1..x31, status: riscv::emulate() indexes it so");
inline ErrorOr<void> emulate(const Plan& plan, okp_addr_t addr, okp_regs* regs) {
  riscv::emulate(plan, addr, reinterpret_cast<unsigned long*>(regs));  // reads no memory
  return {};
}

// The kernel's breakpoint entry on the way to okprobes (kernel-mode ebreak): handle_exception
// dispatches to do_trap_break through its vector table, which calls the kernel's kprobes and
// uprobes handlers, then the die notifiers; and the ftrace entry, which function-entry probes
// are reached through. core/trap_path.h walks every direct call from these on the live text.
constexpr const char* kTrapEntryFunctions[] = {
    "do_trap_break", "kprobe_single_step_handler", "kprobe_breakpoint_handler",
    "uprobe_single_step_handler", "uprobe_breakpoint_handler", "notify_die",
    "atomic_notifier_call_chain", "ftrace_regs_caller", "ftrace_caller",
    "arch_ftrace_ops_list_func", "ftrace_ops_list_func", "ftrace_ops_assist_func",
};

// One instruction of the trap-path walk: its length, and the target of a direct jump or call
// (jal, c.j, branches, and auipc+jalr pairs: the far `call`).
ErrorOr<BranchStep> direct_branch(const u8* bytes, usize avail, okp_addr_t addr);
// The next function's ftrace_ops pointer at the end of an extent (CALL_OPS kernels,
// arch/riscv/ftrace_ops_literal.h).
constexpr usize kTrailingDataWindow = 8;
inline usize trailing_data_bytes(const u8* last) { return riscv::ftrace_ops_literal_bytes(last); }

// Return probes: arch/common/return_stubs.h, arch/riscv/return_stubs.S.
// At a function's entry (its ftrace site: 6.1's auipc/jalr t0 call leaves ra alone, and
// ftrace_regs_caller reloads ra from the frame; or a breakpoint on its first instruction) the
// return address is ra, in the saved frame. The entry stack pointer names the frame: live
// frames of one task differ in it.
inline okp_addr_t return_frame(const okp_regs* regs) { return regs->sp; }
inline okp_addr_t return_address(const okp_regs* regs) { return regs->ra; }
inline void set_return_address(okp_regs* regs, okp_addr_t addr) { regs->ra = addr; }
inline void* current_task() { return okp_seam_current_task(); }
// ra lives in a register, then wherever the function spills it: nothing on the stack proves a
// frame gone. Such frames are reclaimed when their task is freed (sched_process_free), never
// guessed.
inline bool frame_may_return(okp_addr_t, u32) { return true; }
// riscv64 functions that return into another task.
constexpr UnsafeFunction kReturnProbeUnsafe[] = {
    {"__switch_to", "it returns into the next task (context switch)"},
};

// The kprobes convention for a function-entry probe served by ftrace (riscv's
// kprobe_ftrace_handler): pre handlers see the site, post handlers the site after the 8-byte
// auipc/jalr call ftrace patches there.
constexpr usize kFtraceCallSize = 8;
inline okp_addr_t ftrace_pre_ip(okp_addr_t site) { return site; }
inline okp_addr_t ftrace_post_ip(okp_addr_t site) { return site + kFtraceCallSize; }

}  // namespace okp::arch
