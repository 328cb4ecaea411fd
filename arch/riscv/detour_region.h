// SPDX-License-Identifier: GPL-2.0
// The riscv64 jump probe's region check: may the instructions under an 8-byte
// `auipc R, hi; jalr x0, lo(R)` at a probe address move into a detour, and which register R
// may the pair (and the detour's ways out) clobber? Or, where the detour is within a `jal`'s
// reach of the probe (+-1 MiB), under a 4-byte `jal x0, detour`, which needs no register (a
// region of one 4-byte instruction has no inside at all). Decided on the whole containing function,
// decoded from its start (arch/riscv/function_flow.h), bytes recovered from under okprobes'
// breakpoints:
//
//  - the region is the whole instructions covering the jump's 8 (or 4) bytes from the probe
//    (2 to 4 of them, compressed ones counted; 1 or 2 under a jal), inside the function's code; the whole function decodes (bar
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
//    (arch/riscv/dead_register.h); under a jal only the detour's ways out out of a jal's
//    reach need one, which plan_detour finds out (dead stays 0 when there is none).
// Each refusal's reason starts "not optimized: " and names the offsets.
#pragma once

#include "arch/riscv/function_flow.h"
#include "core/error_or.h"

namespace okp::riscv {

constexpr usize kJumpSize = 8;        // auipc + jalr
constexpr usize kJalSize = 4;         // jal x0, when the detour is within +-1 MiB
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
  u8 length = 0;        // >= the jump's size
  u8 count = 0;
  u8 dead = 0;          // the register the jump and the detour clobber
  RegSet dead_set = 0;  // every register that could be R (the tests, the survey)
  RegionInsn insns[kMaxRegionInsns] = {};
};

// The function's flow (decoded, liveness computed) as the region check reads it: one decode
// serves every probe address of a function (the survey checks them all). jump_size: kJumpSize
// (the pair: a dead register is required) or kJalSize (a jal: dead may stay 0).
ErrorOr<DetourRegion> check_detour_region(const FunctionFlow& flow, okp_addr_t addr,
                                          usize jump_size = kJumpSize);

// Decodes fn, computes its liveness and checks the region at addr.
ErrorOr<DetourRegion> check_detour_region(const FunctionText& fn, okp_addr_t addr,
                                          usize jump_size = kJumpSize);

}  // namespace okp::riscv
