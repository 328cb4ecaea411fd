// SPDX-License-Identifier: GPL-2.0
// The types the arch contract (arch/arch_contract.h) speaks in, shared by every arch's
// definitions and the core. Plain data only.
#pragma once

#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp::arch {

// Room for the longest breakpoint of any arch (arm64 BRK, riscv64 ebreak: 4 bytes).
constexpr usize kBreakpointCapacity = 4;

// A function a return probe must not go on (by its name, a compiler suffix ignored), and why.
struct UnsafeFunction {
  const char* name;
  const char* why;
};

// The breakpoint one site is armed with.
struct Breakpoint {
  u8 bytes[kBreakpointCapacity];
  u8 size;
};

// One instruction of a function the trap-path walk decodes: its length, and the target of a
// direct call or jump (0 when it has none).
struct BranchStep {
  usize length;
  okp_addr_t target;
};

// Room for the longest detour buffer of any arch with jump probes (arch/jump_contract.h):
// riscv64's (a branch with post handlers, then three more; arch/riscv/detour.h).
constexpr usize kDetourCapacity = 192;
// Longest jump a jump-optimized site is patched with.
constexpr usize kJumpCapacity = 8;

// A jump-optimized probe, planned (registration side): the detour buffer's image, where its
// relocated copy of the region starts (an int3 hit at a site waiting for its jump resumes
// there), and the jump that replaces the breakpoint.
struct DetourPlan {
  u8 image[kDetourCapacity] = {};
  u16 size = 0;
  okp_addr_t buffer = 0;
  okp_addr_t copy = 0;
  u8 region_length = 0;  // bytes of original instructions the copy runs
  u8 region_insns = 0;   // how many: with one, the region has no boundary inside it
  bool post = false;     // the copy calls the post entry after the first instruction
  u8 jump[kJumpCapacity] = {};
  u8 jump_size = 0;
};

// One site of a batch the jump optimizer switches between its breakpoint and its jump
// (arch::switch_jumps): what the text holds in either state. The optimizer links the batch.
struct JumpSwitch {
  okp_addr_t addr = 0;
  Breakpoint breakpoint = {};
  const u8* jump = nullptr;      // the jump's bytes, jump_size of them
  const u8* original = nullptr;  // the original bytes the jump covers (jump_size)
  u8 jump_size = 0;
  bool failed = false;  // out: the text was not what it should be; left as it was found
  // out, with failed: not written now, and why (riscv64: no proof that no task is stopped
  // inside the region); a later try may write it. A static string.
  const char* busy = nullptr;
  JumpSwitch* next = nullptr;
};

// Puts back the original bytes of okprobes' own breakpoints within [start, start+n).
using RecoverFn = void (*)(okp_addr_t start, u8* bytes, usize n);

// Bytes the kernel's own kprobes must be kept off while okprobes' patch is at a site
// (arch::kernel_kprobe_fences): [start, end).
struct KernelFence {
  okp_addr_t start = 0, end = 0;
};
constexpr usize kMaxKernelFences = 4;  // per patch: the misread bytes and hidden branch targets

}  // namespace okp::arch
