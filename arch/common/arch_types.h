// SPDX-License-Identifier: GPL-2.0
// The types the arch contract (arch/arch_contract.h) speaks in, shared by every arch's
// definitions and the core. Plain data only.
#pragma once

#include "core/utility.h"
#include "seam/okp_seam.h"

namespace okp::arch {

// Room for the longest breakpoint of any arch (arm64 BRK, riscv64 ebreak: 4 bytes).
constexpr usize kBreakpointCapacity = 4;

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

// Puts back the original bytes of okprobes' own breakpoints within [start, start+n).
using RecoverFn = void (*)(okp_addr_t start, u8* bytes, usize n);

}  // namespace okp::arch
