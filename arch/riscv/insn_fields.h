// SPDX-License-Identifier: GPL-2.0
// The fields of riscv64 instructions (the unprivileged spec's encodings, compressed ones
// included), shared by the planner (insn_plan.cpp) and the register-use decoder
// (register_use.cpp). Freestanding and constexpr.
#pragma once

#include "arch/common/arch_types.h"

namespace okp::riscv::fields {

constexpr u32 bits(u32 v, unsigned hi, unsigned lo) { return (v >> lo) & ((1u << (hi - lo + 1)) - 1); }
constexpr i64 sext(u64 v, unsigned width) {
  const u64 sign = 1ull << (width - 1);
  return static_cast<i64>((v ^ sign) - sign);
}

constexpr u8 rd_of(u32 insn) { return static_cast<u8>(bits(insn, 11, 7)); }
constexpr u8 rs1_of(u32 insn) { return static_cast<u8>(bits(insn, 19, 15)); }
constexpr u8 rs2_of(u32 insn) { return static_cast<u8>(bits(insn, 24, 20)); }
constexpr u32 funct3_of(u32 insn) { return bits(insn, 14, 12); }
constexpr i64 imm_i(u32 insn) { return sext(bits(insn, 31, 20), 12); }
constexpr i64 imm_u(u32 insn) { return sext(insn & 0xfffff000u, 32); }
constexpr i64 imm_b(u32 insn) {
  return sext((bits(insn, 31, 31) << 12) | (bits(insn, 7, 7) << 11) | (bits(insn, 30, 25) << 5) |
                  (bits(insn, 11, 8) << 1), 13);
}
constexpr i64 imm_j(u32 insn) {
  return sext((bits(insn, 31, 31) << 20) | (bits(insn, 19, 12) << 12) | (bits(insn, 20, 20) << 11) |
                  (bits(insn, 30, 21) << 1), 21);
}

// Compressed fields.
constexpr u8 c_rd(u32 h) { return static_cast<u8>(bits(h, 11, 7)); }       // rd/rs1, full
constexpr u8 c_rs2(u32 h) { return static_cast<u8>(bits(h, 6, 2)); }       // rs2, full
constexpr u8 c_rs1p(u32 h) { return static_cast<u8>(bits(h, 9, 7) + 8); }  // rs1'/rd', x8..x15
constexpr u8 c_rdp(u32 h) { return static_cast<u8>(bits(h, 4, 2) + 8); }   // rd'/rs2'
constexpr i64 c_imm6(u32 h) { return sext((bits(h, 12, 12) << 5) | bits(h, 6, 2), 6); }
constexpr i64 c_j_offset(u32 h) {
  return sext((bits(h, 12, 12) << 11) | (bits(h, 11, 11) << 4) | (bits(h, 10, 9) << 8) |
                  (bits(h, 8, 8) << 10) | (bits(h, 7, 7) << 6) | (bits(h, 6, 6) << 7) |
                  (bits(h, 5, 3) << 1) | (bits(h, 2, 2) << 5), 12);
}
constexpr i64 c_b_offset(u32 h) {
  return sext((bits(h, 12, 12) << 8) | (bits(h, 11, 10) << 3) | (bits(h, 6, 5) << 6) |
                  (bits(h, 4, 3) << 1) | (bits(h, 2, 2) << 5), 9);
}
constexpr i64 c_addi16sp_imm(u32 h) {
  return sext((bits(h, 12, 12) << 9) | (bits(h, 6, 6) << 4) | (bits(h, 5, 5) << 6) |
                  (bits(h, 4, 3) << 7) | (bits(h, 2, 2) << 5), 10);
}
constexpr u32 c_addi4spn_imm(u32 h) {
  return (bits(h, 12, 11) << 4) | (bits(h, 10, 7) << 6) | (bits(h, 6, 6) << 2) | (bits(h, 5, 5) << 3);
}

}  // namespace okp::riscv::fields
