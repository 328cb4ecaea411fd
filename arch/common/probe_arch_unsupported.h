// SPDX-License-Identifier: GPL-2.0
// The arch traits of an architecture whose breakpoint backend is not written yet: the core
// builds and its table works, and every registration is refused with -EOPNOTSUPP and a
// reason naming the arch. Included by arch/<arch>/probe_arch.h until the backend lands.
#pragma once

#include "arch/common/arch_types.h"
#include "core/error_or.h"
#include "seam/kernel_services.h"

namespace okp::arch {

struct Plan {
  u8 length = 0;
};
constexpr usize kSlotSize = 32;
constexpr usize kMaxInsnLength = 4;
constexpr usize kMaxBreakpointSize = 4;
constexpr usize kMaxPatchSize = 4;
inline Breakpoint breakpoint_of(const Plan&) { return Breakpoint{{}, 0}; }

inline okp_addr_t instruction_pointer(const okp_regs*) { return 0; }
inline void set_instruction_pointer(okp_regs*, okp_addr_t) {}
inline okp_addr_t breakpoint_address(const okp_regs*) { return 0; }
inline okp_addr_t skip_landing_pad(okp_addr_t addr, okp_addr_t) { return addr; }
// No breakpoints here: nothing to keep the kernel's kprobes off.
inline usize kernel_kprobe_fences(okp_addr_t, usize, usize, okp_addr_t, unsigned long, RecoverFn,
                                  KernelFence (&)[kMaxKernelFences]) {
  return 0;
}
inline ErrorOr<Plan> check_and_plan(okp_addr_t, okp_addr_t, unsigned long, okp_addr_t, RecoverFn) {
  return Error::formatted(Errno::kOpNotSupp, "breakpoint probes are not implemented on %s yet",
                          OKP_ARCH_NAME);
}
inline bool needs_slot(const Plan&) { return false; }
inline bool boostable(const Plan&) { return false; }
inline usize insn_length(const Plan& p) { return p.length; }
inline const char* mnemonic(const Plan&) { return "?"; }
inline void build_slot(const Plan&, okp_addr_t, const u8*, okp_addr_t, bool, u8 (&)[kSlotSize]) {}
inline void begin_step(okp_regs*, okp_addr_t, unsigned long*) {}
inline bool is_step_exit(const Plan&, okp_addr_t, okp_addr_t) { return false; }
inline void end_step(const Plan&, okp_addr_t, okp_regs*, unsigned long) {}
inline void restore_trap_ip(okp_regs*, okp_addr_t) {}
inline void enter_boosted(okp_regs*, okp_addr_t) {}
inline ErrorOr<void> emulate(const Plan&, okp_addr_t, okp_regs*) {
  return Error(Errno::kOpNotSupp, "arch backend missing");
}
// No trap path to derive until the backend says how its trap arrives.
constexpr const char* kTrapEntryFunctions[] = {""};
inline ErrorOr<BranchStep> direct_branch(const u8*, usize, okp_addr_t) {
  return Error(Errno::kOpNotSupp, "arch backend missing");
}
constexpr u32 kReturnStubs = 0;  // return probes: -EOPNOTSUPP
constexpr usize kReturnStubSize = 16;
inline okp_addr_t return_stub_address(u32) { return 0; }
inline okp_addr_t return_frame(const okp_regs*) { return 0; }
inline okp_addr_t return_address(const okp_regs*) { return 0; }
inline void set_return_address(okp_regs*, okp_addr_t) {}
inline void* current_task() { return nullptr; }
inline bool frame_may_return(okp_addr_t, u32) { return false; }
constexpr UnsafeFunction kReturnProbeUnsafe[] = {{"", nullptr}};
inline okp_addr_t ftrace_pre_ip(okp_addr_t site) { return site; }
inline okp_addr_t ftrace_post_ip(okp_addr_t site) { return site; }

}  // namespace okp::arch
