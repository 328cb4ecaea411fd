// SPDX-License-Identifier: GPL-2.0
// The register a riscv64 jump probe may clobber: dead at the probe's region, i.e. on every
// path from there written before it is read (liveness over the whole function's control
// flow, arch/riscv/function_flow.h; a call writes the caller-saved registers and reads its
// arguments a0-a7; a return reads a0, a1, ra, s0-s11, sp, gp, tp; an indirect jump or an
// instruction not understood reads everything).
//
// Where R must be dead: the jump pair (`auipc R, hi; jalr x0, lo(R)`) writes R before the
// region's relocated instructions run, so R must be dead at the region's start, the region's
// own instructions included (they read nothing of R before writing it on any path). The
// detour then runs them in their order without touching R, and writes R again only where it
// leaves them: a way out is `auipc R, hi; jalr x0, lo(R)` to the instruction after the
// region, to a branch's or jump's target, or to a callee (detour.h). So R must also be dead
// at every place the region leaves for. A register the region writes and then reads
// (`li t0, 5; add a0, a0, t0`) is dead at its start and may be R, as long as it is dead again
// where the region is left.
//
// The way back therefore needs no live register: it goes through R, which is still dead
// where it lands, or is a `jal x0` where one reaches (no register at all). Neither does the
// way in: R is dead at the probe (or the jump is a jal, detour.h).
//
// Never chosen: x0, sp, gp, tp (state of the whole kernel), s0 (the frame pointer: the
// unwinder reads it at any instruction, from an interrupt's pt_regs too). Preferred: t0-t6
// (no function expects to keep them), then a7..a0, s11..s1, and ra last (its value is the
// return address only until it is saved; an unwinder's guess for a leaf frame reads it).
#pragma once

#include "arch/riscv/function_flow.h"
#include "arch/riscv/register_use.h"

namespace okp::riscv {

constexpr RegSet kNeverDead = reg_bit(0) | kFixedRegs | reg_bit(kS0);

// The candidates in order of preference (register_use.h's numbers).
constexpr u8 kDeadCandidates[] = {5, 6, 7, 28, 29, 30, 31,              // t0-t6
                                  17, 16, 15, 14, 13, 12, 11, 10,       // a7..a0
                                  27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 9,  // s11..s2, s1
                                  1};                                   // ra

// The instructions [first, first + n) of flow (n >= 1) as a region: the registers dead at its
// start and at every place it leaves for. flow.compute_liveness() first.
RegSet dead_in_region(const FunctionFlow& flow, u32 first, u32 n);

// The preferred register of dead (0: none).
u8 pick_dead_register(RegSet dead);

// ABI name of xn, for reasons and the survey ("t0", "a5", ...).
const char* register_name(u8 n);

}  // namespace okp::riscv
