// SPDX-License-Identifier: GPL-2.0
// How one probed riscv64 instruction runs once its first parcel holds a breakpoint: simulated
// on the trap frame (control flow, pc-relative arithmetic, register moves) or copied into a
// slot of okprobes' text and single-stepped there, ended by a breakpoint of its own.
//
// Everything here is freestanding and pure: decode, plan and build_slot run at registration;
// emulate() runs in the trap (inline, no call) and touches nothing but the frame.
#pragma once

#include "core/error_or.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp::riscv {

// A slot holds the copied instruction (2 or 4 bytes) and the breakpoint ending the step, then
// illegal-instruction filler (0x0000). 16 bytes: room for a 4-byte copy and a 4-byte ebreak,
// with the cells 16-byte aligned so every breakpoint in them is a naturally aligned store.
constexpr usize kSlotSize = 16;
constexpr usize kMaxInsnLength = 4;

constexpr u32 kEbreak = 0x00100073;  // ebreak
constexpr u16 kCEbreak = 0x9002;     // c.ebreak

// struct okp_regs is pt_regs: epc, then x1..x31 in order, then status. So xN (N >= 1) is the
// frame's word N; word 0 is epc, which is why x0 is never read or written through the array.
constexpr u8 kRegRa = 1;
constexpr u8 kRegSp = 2;
constexpr usize kEpcWord = 0;
constexpr usize kStatusWord = 32;

// sstatus bits the step keeps off while the slot runs (SIE, and SPIE which sret copies into it).
constexpr unsigned long kStatusSie = 0x2;
constexpr unsigned long kStatusSpie = 0x20;

enum class Kind : u8 {
  kSlot = 0,   // runs out of line in the slot, then the step-ending breakpoint
  kAddImm,     // addi/c.addi/c.li/li/mv/lui/c.lui/c.addi16sp/c.addi4spn/nop: rd = x[rs1] + imm
  kAddImmW,    // addiw/c.addiw/sext.w: rd = sext32(x[rs1] + imm)
  kAdd,        // add/c.add/c.mv: rd = x[rs1] + x[rs2]
  kAuipc,      // rd = target (addr + imm, fixed at plan time)
  kJal,        // jal/c.j: rd = next; pc = target
  kJalr,       // jalr/c.jr/c.jalr: t = (x[rs1] + imm) & ~1; rd = next; pc = t
  kBranch,     // beq..bgeu, c.beqz/c.bnez: pc = cond(x[rs1], x[rs2]) ? target : next
};

// Branch conditions: the funct3 of the BRANCH opcode.
constexpr u8 kBeq = 0, kBne = 1, kBlt = 4, kBge = 5, kBltu = 6, kBgeu = 7;

struct InsnPlan {
  u8 length = 0;  // 2 (compressed) or 4
  Kind kind = Kind::kSlot;
  u8 rd = 0, rs1 = 0, rs2 = 0;
  u8 cond = 0;         // kBranch: funct3
  i64 imm = 0;         // kAddImm/kAddImmW/kJalr: the immediate; kAuipc/kJal/kBranch: the target
  u8 breakpoint_size = 0;  // 2: c.ebreak, 4: ebreak: the instruction's own length
  u8 original[4] = {};     // the instruction's bytes (the "breakpoint" without a trap)
  const char* mnemonic = nullptr;  // static string, for reasons and debugfs
};

// The length of the instruction whose first parcel is `parcel` (the RISC-V length rules):
// 2 if the low two bits are not 11, 4 if bits 4:2 are not 111, else longer (0: not supported).
constexpr usize insn_length_of(u16 parcel) {
  if ((parcel & 0x3) != 0x3) return 2;
  if ((parcel & 0x1c) != 0x1c) return 4;
  return 0;
}

// One decoded instruction: its length, mnemonic and, for the walk of the trap path, the target
// of a direct jump or call (jal/c.j, branches; 0 when none).
struct Decoded {
  u8 length = 0;
  const char* mnemonic = nullptr;
  okp_addr_t direct_target = 0;
  bool lr = false;  // lr.w/lr.d: opens a reservation
  bool sc = false;  // sc.w/sc.d: ends one
};

// Decodes the instruction at addr from its bytes (avail of them). -EILSEQ when it is not one
// (too short, longer than 32 bits, an illegal encoding).
ErrorOr<Decoded> decode(const u8* bytes, usize avail, okp_addr_t addr);

// Plans the instruction at addr: -EILSEQ undecodable; -EBUSY an ebreak (another tool's
// breakpoint, or a BUG/WARN); -EINVAL cannot be stepped nor simulated (the reason names it).
// The reason is a static string.
ErrorOr<InsnPlan> plan_insn(okp_addr_t addr, const u8* bytes, usize avail);

// The slot's image: the original instruction, then the step-ending breakpoint (c.ebreak after
// a compressed one, ebreak after a 4-byte one), then illegal filler.
void build_slot(const InsnPlan& plan, const u8* bytes, u8 (&image)[kSlotSize]);

// The trap frame as words: word 0 is epc, word N is xN (1..31), word 32 status (struct okp_regs
// on riscv64, checked in arch/riscv/probe_arch.h). Plain words, so the host tests run this too.
[[gnu::always_inline]] inline unsigned long reg(const unsigned long* frame, u8 r) {
  return r ? frame[r] : 0;
}
[[gnu::always_inline]] inline void set_reg(unsigned long* frame, u8 r, unsigned long v) {
  if (r) frame[r] = v;  // x0 stays zero
}

[[gnu::always_inline]] inline bool branch_taken(u8 cond, unsigned long a, unsigned long b) {
  switch (cond) {
    case kBeq: return a == b;
    case kBne: return a != b;
    case kBlt: return static_cast<long>(a) < static_cast<long>(b);
    case kBge: return static_cast<long>(a) >= static_cast<long>(b);
    case kBltu: return a < b;
    default: return a >= b;  // kBgeu: plan_insn admits no other
  }
}

// [hit] At the probe's own breakpoint (epc == addr): performs a simulated instruction on the
// frame. Every source register is read before rd is written (jalr ra, 0(ra)).
[[gnu::always_inline]] inline void emulate(const InsnPlan& plan, okp_addr_t addr,
                                           unsigned long* frame) {
  const unsigned long next = addr + plan.length;
  unsigned long pc = next;
  switch (plan.kind) {
    case Kind::kAddImm:
      set_reg(frame, plan.rd, reg(frame, plan.rs1) + static_cast<unsigned long>(plan.imm));
      break;
    case Kind::kAddImmW:
      set_reg(frame, plan.rd, static_cast<unsigned long>(static_cast<long>(
                                  static_cast<int>(reg(frame, plan.rs1) + plan.imm))));
      break;
    case Kind::kAdd:
      set_reg(frame, plan.rd, reg(frame, plan.rs1) + reg(frame, plan.rs2));
      break;
    case Kind::kAuipc:
      set_reg(frame, plan.rd, static_cast<unsigned long>(plan.imm));
      break;
    case Kind::kJal:
      pc = static_cast<unsigned long>(plan.imm);
      set_reg(frame, plan.rd, next);
      break;
    case Kind::kJalr:
      pc = (reg(frame, plan.rs1) + static_cast<unsigned long>(plan.imm)) & ~1ul;
      set_reg(frame, plan.rd, next);
      break;
    case Kind::kBranch:
      if (branch_taken(plan.cond, reg(frame, plan.rs1), reg(frame, plan.rs2)))
        pc = static_cast<unsigned long>(plan.imm);
      break;
    case Kind::kSlot:
      break;  // never asked: needs_slot() sends these to the slot
  }
  frame[kEpcWord] = pc;
}

}  // namespace okp::riscv
