// SPDX-License-Identifier: GPL-2.0
// riscv64 jump tables: riscv kernels are built with them (no -fno-jump-tables), and their
// dispatch is a `jr` the region check cannot see through. GCC's form for the kernel (medany,
// entries relative to the table, in .rodata):
//
//     auipc rB, %pcrel_hi(.LT)
//     addi  rB, rB, %pcrel_lo(.LT)      rB = the table
//     ...                               (the bound check, the index scaled by 4 into rI)
//     add   rP, rI, rB
//     lw    rL, 0(rP)                   a signed 32-bit entry
//     add   rT, rL, rB                  the target: the table plus the entry
//     jr    rT
//
// with other instructions scheduled in between and either operand order. table_base()
// recognizes it on straight-line code (nothing lands between the auipc and the jr, none of
// the registers is written again in between), and gives the table's address; the caller
// reads the entries (the glue, from the kernel's .rodata) and table_targets() turns them
// into the dispatch's targets: entries are taken while each lands on an instruction of the
// function (the decode checked against the function's own branches first). Every real entry
// does (a table's entries are labels of its function), so the list holds all of them, and
// maybe data after them that happens to look like entries: more targets make the proof
// only more conservative, never less. They go back to the flow as HiddenEdges with `table`
// set, and the dispatch counts as a multi-way jump to exactly them.
#pragma once

#include "arch/riscv/function_flow.h"

namespace okp::riscv {

constexpr usize kMaxTableEntries = 1024;  // a larger table is refused (its function is)

// The table's address when the indirect jump at index jr is a relative jump table's
// dispatch; 0 when it is not recognized.
okp_addr_t table_base(const FunctionFlow& flow, u32 jr);

// The targets of the table at base whose entries (little-endian s32 each) are entries[0,
// n_bytes): the leading entries that land on an instruction of flow's function, at most max.
// 0 (not resolved) when the decode disagrees with a branch of the function, or no entry
// after them ends the table within n_bytes or max.
usize table_targets(const FunctionFlow& flow, okp_addr_t base, const u8* entries, usize n_bytes,
                    okp_addr_t* out, usize max);

// Reads n bytes of the kernel at addr into out (okp_seam_read_nofault in the module, the
// image in the survey); false when it cannot.
using ReadFn = bool (*)(void* ctx, okp_addr_t addr, u8* out, usize n);

// Every dispatch of flow that table_base() recognizes, its table read through read a few
// entries at a time: its targets appended to out as table HiddenEdges (at most cap in all).
// How many were appended; a table that cannot be read or does not end within
// kMaxTableEntries or cap is left out (its dispatch stays an unresolved indirect jump).
// The caller decodes the function again with them (FunctionText::hidden).
usize resolve_jump_tables(const FunctionFlow& flow, ReadFn read, void* ctx, HiddenEdge* out,
                          usize cap);

}  // namespace okp::riscv
