// SPDX-License-Identifier: GPL-2.0
// Which integer registers one riscv64 instruction reads and writes, and where control goes
// after it: what the dead-register proof (arch/riscv/dead_register.h) is made of.
//
// RV64GC as the kernel is built (base, M, A, F/D, C, Zicsr, Zifencei) and the ratified
// extensions whose encodings stay inside the ordinary major opcodes (Zba/Zbb/Zbs/Zbc/Zicond in
// OP/OP-IMM, Zicbom in MISC-MEM). The rule that keeps it sound: a register may be missing
// from `writes` (the proof only gets weaker) but never from `reads`; whatever is not
// understood is Flow::kUnknown, after which every register counts as read.
//
// Freestanding and pure: the host tests run it, the registration path calls it.
#pragma once

#include "core/error_or.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp::riscv {

// Integer registers as a bit set: bit n is xn. x0 is never in a set (it reads as zero and
// ignores writes).
using RegSet = u32;
constexpr RegSet reg_bit(unsigned n) { return n ? RegSet{1} << n : 0; }
constexpr RegSet kAllRegs = 0xfffffffe;

// ABI names of the registers the proof speaks about.
constexpr u8 kRa = 1, kSp = 2, kGp = 3, kTp = 4, kT0 = 5, kT1 = 6, kT2 = 7, kS0 = 8, kS1 = 9,
             kA0 = 10, kA1 = 11, kA2 = 12, kA3 = 13, kA4 = 14, kA5 = 15, kA6 = 16, kA7 = 17,
             kS2 = 18, kS11 = 27, kT3 = 28, kT6 = 31;

constexpr RegSet range_bits(unsigned lo, unsigned hi) {
  RegSet s = 0;
  for (unsigned n = lo; n <= hi; ++n) s |= reg_bit(n);
  return s;
}
constexpr RegSet kArgRegs = range_bits(kA0, kA7);                       // a0-a7
constexpr RegSet kTempRegs = range_bits(kT0, kT2) | range_bits(kT3, kT6);  // t0-t6
constexpr RegSet kSavedRegs = range_bits(kS0, kS1) | range_bits(kS2, kS11);  // s0-s11
// Never dead to this proof: sp, gp, tp hold state across the whole kernel (the stack, the
// global pointer the linker relaxes against, the current task), whatever a function does.
constexpr RegSet kFixedRegs = reg_bit(kSp) | reg_bit(kGp) | reg_bit(kTp);
// The psABI's caller-saved registers: a call may leave anything in them.
constexpr RegSet kCallClobbered = reg_bit(kRa) | kTempRegs | kArgRegs;
// What a call is taken to read: its arguments (up to eight in registers; which of them a
// callee reads is not known here, so all), and what stays the caller's through it.
constexpr RegSet kCallReads = kArgRegs | kFixedRegs;
// What a return hands back to the caller: the return value (a0, a1), the registers the
// callee had to preserve (s0-s11, sp, gp, tp) and ra itself (read by the return).
constexpr RegSet kReturnReads = reg_bit(kA0) | reg_bit(kA1) | reg_bit(kRa) | kSavedRegs |
                                kFixedRegs;

enum class Flow : u8 {
  kNext,      // falls through to the next instruction
  kJump,      // jal x0 / c.j: to target only
  kBranch,    // beq..bgeu, c.beqz/c.bnez: to target or the next instruction
  kCall,      // jal ra / jalr ra / c.jalr: to a callee that returns to the next instruction;
              // reads kCallReads (and the jalr's base), writes kCallClobbered
  kReturn,    // jalr x0, 0(ra) / c.jr ra: reads kReturnReads
  kIndirect,  // jalr x0 through any other register: a tail call or a jump table; the target
              // is known only when it runs (a far `auipc rX; jr rX` is resolved by the caller)
  kUnknown,   // anything else that leaves or might: ecall, ebreak, sret, a link register
              // other than ra, an encoding not understood. Proves nothing.
};

struct RegisterUse {
  u8 length = 0;  // 2 or 4
  RegSet reads = 0;
  RegSet writes = 0;
  Flow flow = Flow::kUnknown;
  okp_addr_t target = 0;  // kJump, kBranch, kCall by jal: the direct target
  // Reads the pc (auipc, jal, branches, c.j, c.beqz/c.bnez): its copy elsewhere is rewritten.
  bool pc_relative = false;
  bool lr = false, sc = false;  // opens / ends an LR/SC reservation
  // May fault on a memory access (loads, stores, AMOs, cache-block ops): what the kernel's
  // exception table can name.
  bool memory = false;
  u8 rd = 0, rs1 = 0, rs2 = 0;  // the instruction's own fields, expanded for compressed ones
  i64 imm = 0;                  // auipc: the value written; jalr: the offset
  const char* mnemonic = "?";   // static
};

// The use of the instruction at addr from its bytes (avail of them). -EILSEQ when there is no
// whole instruction there (too short, longer than 32 bits, the all-zero parcel); every other
// encoding gives a use, kUnknown when not understood.
ErrorOr<RegisterUse> register_use(const u8* bytes, usize avail, okp_addr_t addr);

}  // namespace okp::riscv
