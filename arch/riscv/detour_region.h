// SPDX-License-Identifier: GPL-2.0
// The riscv64 jump probe's region check: may the instructions under an 8-byte
// `auipc R, hi; jalr x0, lo(R)` at a probe address move into a detour, and which register R
// may the pair (and the detour's ways out) clobber? Decided on the whole containing function,
// decoded from its start (arch/riscv/function_flow.h), bytes recovered from under okprobes'
// breakpoints:
//
//  - the region is the whole instructions covering 8 bytes from the probe (2 to 4 of them,
//    compressed ones counted), inside the function's code; the whole function decodes (bar
//    zero padding at its end: past bytes that do not decode, branches nobody sees);
//  - no direct jump, branch or call anywhere in the function, and no hidden edge (a jump
//    label's target, an exception-table fixup), lands strictly inside the region (on its
//    first byte is fine: that is the jump itself);
//  - no indirect jump in the function other than a return (`jalr x0, 0(ra)`), the
//    assembler's far jump (`auipc rX, hi; jalr x0, lo(rX)`, as direct as a `j`) and a jump
//    table's dispatch whose targets came with the function (arch/riscv/jump_table.h):
//    riscv kernels are built with jump tables (no -fno-jump-tables, unlike x86's retpoline
//    kernels), so any other `jr a5` may land anywhere in the function, and a tail call
//    through a function pointer cannot be told from a table's dispatch by its bytes. Refused;
//  - nothing in the region opens, ends or sits inside an LR/SC sequence;
//  - no instruction of the region is named by the kernel's tables (a jump label's site is
//    patched at its address; an exception-table entry is keyed by the faulting address; a
//    BUG/WARN's ebreak is looked up by its address);
//  - a call only as the region's last instruction (the callee returns to the original code
//    after it, never into the detour, which may be freed while the callee sleeps);
//  - a register is dead at the region's start and wherever it leaves
//    (arch/riscv/dead_register.h).
// Each refusal's reason starts "not optimized: " and names the offsets.
#pragma once

#include "arch/riscv/function_flow.h"
#include "core/error_or.h"

namespace okp::riscv {

constexpr usize kJumpSize = 8;        // auipc + jalr
constexpr usize kMaxRegionInsns = 4;  // 8 bytes are at most four compressed instructions

struct RegionInsn {
  u32 offset;  // from the probe address
  u8 length;
  Flow flow;
  bool pc_relative;
  okp_addr_t target;  // kJump/kBranch/kCall: where it goes (0: through a register)
  u8 bytes[4];
};

struct DetourRegion {
  okp_addr_t addr = 0;  // the probe address: the region's first byte
  u8 length = 0;        // >= kJumpSize
  u8 count = 0;
  u8 dead = 0;          // the register the jump and the detour clobber
  RegSet dead_set = 0;  // every register that could be R (the tests, the survey)
  RegionInsn insns[kMaxRegionInsns] = {};
};

// The function's flow (decoded, liveness computed) as the region check reads it: one decode
// serves every probe address of a function (the survey checks them all).
ErrorOr<DetourRegion> check_detour_region(const FunctionFlow& flow, okp_addr_t addr);

// Decodes fn, computes its liveness and checks the region at addr.
ErrorOr<DetourRegion> check_detour_region(const FunctionText& fn, okp_addr_t addr);

}  // namespace okp::riscv
