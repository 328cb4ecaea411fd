// SPDX-License-Identifier: GPL-2.0
// Jump tables for the x86-64 region check (detour_region.h): where an indirect jump is a
// switch dispatch, resolve every target it can take, so the function is accepted when none
// lands inside the detour region instead of refused for holding an indirect jump.
//
// x86-64 kernel code is non-PIC (-mcmodel=kernel): a table is 8-byte absolute entries at a
// sign-extended disp32 address. The two forms resolved:
//   cmp $N-1,%reg ; ja default ; [mov %e_src,%e_idx] ; jmp *table(,%idx,8)
//   cmp $N-1,%reg ; ja default ; [mov %e_src,%e_idx] ; mov table(,%idx,8),%r ; [lfence] ;
//       jmp *%r  |  jmp __x86_indirect_thunk_r
// (jae with cmp $N). The bound holds only because nothing else enters the sequence: no branch
// of the function, exception fixup or table entry lands after the cmp and up to the jump, and
// a cmp on a 32-bit register bounds the 64-bit index only through the zero-extending mov.
// Anything else with a table operand refuses, naming why; table memory is read through
// okp_seam_read_nofault (the core never dereferences a kernel address).
#pragma once

#include "arch/x86/detour_region.h"
#include "core/error_or.h"

namespace okp::x86 {

// Per-byte marks of a function's linear decode (one byte per text byte).
enum : u8 {
  kMarkInsnStart = 1,     // an instruction starts here
  kMarkBranchTarget = 2,  // a direct branch, exception fixup or table entry lands here
};

constexpr u32 kMaxJumpTableEntries = 4096;

enum class JumpTableVerdict : u8 {
  kNotATable,       // not a table form: the caller's other rules apply
  kLeavesFunction,  // its entries all leave the function: a tail call through a table
  kResolved,        // bounded, every entry inside the function and none inside the region
};

// The indirect jump at fn.start + jump_off against the region [region_start, region_end).
// mark_entries: set kMarkBranchTarget on every entry of a resolved table (a first pass, so
// that the second sees every table's entries when it checks the sequences' guards).
ErrorOr<JumpTableVerdict> check_jump_table(const FunctionText& fn, u8* marks, usize jump_off,
                                           okp_addr_t region_start, okp_addr_t region_end,
                                           bool mark_entries);

}  // namespace okp::x86
