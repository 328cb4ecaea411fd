// SPDX-License-Identifier: GPL-2.0
// riscv64 register use per instruction (register_use.h says the rule: reads are never
// missed; what is not understood is kUnknown).
#include "arch/riscv/register_use.h"

#include "arch/riscv/insn_fields.h"
#include "arch/riscv/insn_plan.h"

namespace okp::riscv {

namespace {

using namespace fields;  // arch/riscv/insn_fields.h

// A use under construction.
struct Use {
  RegisterUse u;
  Use(const char* m, Flow f = Flow::kNext) {
    u.mnemonic = m;
    u.flow = f;
  }
  Use& r(unsigned n) {
    u.reads |= reg_bit(n);
    return *this;
  }
  Use& w(unsigned n) {
    u.writes |= reg_bit(n);
    return *this;
  }
  Use& mem() {
    u.memory = true;
    return *this;
  }
  Use& fields(u8 rd, u8 rs1, u8 rs2) {
    u.rd = rd;
    u.rs1 = rs1;
    u.rs2 = rs2;
    return *this;
  }
};

Use unknown(const char* m) { return Use(m, Flow::kUnknown); }

// jal / jalr by their link register: x0 a jump, ra a call, anything else (t0 is the psABI's
// alternate link register, used for millicode and ftrace's entry call) a convention this
// proof does not know.
Use jal(u8 rd, okp_addr_t target, const char* m) {
  Use x(m, rd == 0 ? Flow::kJump : rd == kRa ? Flow::kCall : Flow::kUnknown);
  if (rd == kRa) x.u.reads |= kCallReads, x.u.writes |= kCallClobbered;
  x.w(rd).fields(rd, 0, 0);
  x.u.target = target;
  x.u.pc_relative = true;
  return x;
}
Use jalr(u8 rd, u8 rs1, i64 imm, const char* m) {
  Flow f = Flow::kUnknown;
  if (rd == 0) f = rs1 == kRa && imm == 0 ? Flow::kReturn : Flow::kIndirect;
  else if (rd == kRa) f = Flow::kCall;
  Use x(m, f);
  x.r(rs1).w(rd).fields(rd, rs1, 0);
  x.u.imm = imm;
  if (f == Flow::kReturn) x.u.reads |= kReturnReads;
  if (f == Flow::kCall) x.u.reads |= kCallReads, x.u.writes |= kCallClobbered;
  return x;
}
Use branch(const char* m, u8 rs1, u8 rs2, okp_addr_t target) {
  Use x(m, Flow::kBranch);
  x.r(rs1).r(rs2).fields(0, rs1, rs2);
  x.u.target = target;
  x.u.pc_relative = true;
  return x;
}

Use system(u32 insn) {
  const u32 f3 = bits(insn, 14, 12);
  const u8 rd = static_cast<u8>(bits(insn, 11, 7)), rs1 = static_cast<u8>(bits(insn, 19, 15));
  if (f3 == 0) {
    if (insn == 0x10500073) return Use("wfi");
    if (bits(insn, 31, 25) == 0x09 && rd == 0)  // sfence.vma rs1, rs2
      return Use("sfence.vma").r(rs1).r(static_cast<u8>(bits(insn, 24, 20)));
    // ecall, ebreak (a BUG/WARN, or another tool's breakpoint over an unknown instruction),
    // sret, mret and the rest leave for a trap handler.
    return unknown(insn == kEbreak ? "ebreak" : insn == 0x00000073 ? "ecall" : "system");
  }
  if (f3 == 4) return unknown("hlv/hsv");
  // Zicsr: the register forms read rs1, the immediate forms (f3 & 4) read nothing; all write rd.
  Use x("csr");
  if (!(f3 & 4)) x.r(rs1);
  return x.w(rd).fields(rd, rs1, 0);
}

Use amo(u32 insn) {
  const u32 f3 = bits(insn, 14, 12);
  const u8 rd = static_cast<u8>(bits(insn, 11, 7)), rs1 = static_cast<u8>(bits(insn, 19, 15)),
           rs2 = static_cast<u8>(bits(insn, 24, 20));
  if (f3 != 2 && f3 != 3) return unknown("amo");
  switch (bits(insn, 31, 27)) {
    case 0x02: {  // lr: rs2 field is 0
      Use x("lr");
      x.r(rs1).w(rd).mem().fields(rd, rs1, 0);
      x.u.lr = true;
      return x;
    }
    case 0x03: {
      Use x("sc");
      x.r(rs1).r(rs2).w(rd).mem().fields(rd, rs1, rs2);
      x.u.sc = true;
      return x;
    }
    case 0x00: case 0x01: case 0x04: case 0x08: case 0x0c:
    case 0x10: case 0x14: case 0x18: case 0x1c:
      return Use("amo").r(rs1).r(rs2).w(rd).mem().fields(rd, rs1, rs2);
    default:
      return unknown("amo");
  }
}

// OP-FP: only the moves and conversions between the register files touch integer registers.
Use fp(u32 insn) {
  const u8 rd = static_cast<u8>(bits(insn, 11, 7)), rs1 = static_cast<u8>(bits(insn, 19, 15));
  switch (bits(insn, 31, 27)) {
    case 0x00: case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: case 0x08: case 0x0b:
      return Use("fp");  // fadd fsub fmul fdiv fsgnj fmin/fmax fcvt.s.d/d.s fsqrt
    case 0x14: case 0x18: case 0x1c:  // feq/flt/fle, fcvt.{w,l}[u].{s,d}, fmv.x.{w,d}/fclass
      return Use("fp->x").w(rd).fields(rd, 0, 0);
    case 0x1a: case 0x1e:  // fcvt.{s,d}.{w,l}[u], fmv.{w,d}.x
      return Use("x->fp").r(rs1).fields(0, rs1, 0);
    default:
      return unknown("fp");
  }
}

Use decode_32(u32 insn, okp_addr_t addr) {
  const u32 f3 = bits(insn, 14, 12);
  const u8 rd = static_cast<u8>(bits(insn, 11, 7)), rs1 = static_cast<u8>(bits(insn, 19, 15)),
           rs2 = static_cast<u8>(bits(insn, 24, 20));
  switch (insn & 0x7f) {
    case 0x37:
      return Use("lui").w(rd).fields(rd, 0, 0);
    case 0x17: {
      Use x("auipc");
      x.w(rd).fields(rd, 0, 0);
      x.u.imm = static_cast<i64>(addr + imm_u(insn));
      x.u.pc_relative = true;
      return x;
    }
    case 0x6f:
      return jal(rd, addr + imm_j(insn), "jal");
    case 0x67:
      if (f3) return unknown("jalr");
      return jalr(rd, rs1, imm_i(insn), "jalr");
    case 0x63:
      if (f3 == 2 || f3 == 3) return unknown("branch");
      return branch("branch", rs1, rs2, addr + imm_b(insn));
    // Every encoding of these major opcodes, in every ratified extension, reads rs1 (and rs2
    // in the register forms) and writes rd: base ALU, M, Zba, Zbb, Zbs, Zbc, Zicond.
    case 0x13: case 0x1b:
      return Use("alu-imm").r(rs1).w(rd).fields(rd, rs1, 0);
    case 0x33: case 0x3b:
      return Use("alu").r(rs1).r(rs2).w(rd).fields(rd, rs1, rs2);
    case 0x03:
      if (f3 == 7) return unknown("load");
      return Use("load").r(rs1).w(rd).mem().fields(rd, rs1, 0);
    case 0x23:
      if (f3 > 3) return unknown("store");
      return Use("store").r(rs1).r(rs2).mem().fields(0, rs1, rs2);
    case 0x07: case 0x27: {
      // Widths 1-4 are the scalar FP loads and stores (h, w, d, q): the base only. The others
      // are vector ones, whose rs2 field may be an integer stride: read as well.
      const bool store = (insn & 0x7f) == 0x27;
      Use x(store ? "fstore" : "fload");
      x.r(rs1).mem().fields(0, rs1, 0);
      if (f3 == 0 || f3 > 4) x.r(rs2);
      return x;
    }
    case 0x43: case 0x47: case 0x4b: case 0x4f:
      return Use("fma");
    case 0x53:
      return fp(insn);
    case 0x0f:
      if (f3 == 0) return Use("fence");
      if (f3 == 1) return Use("fence.i");
      if (f3 == 2) return Use("cbo").r(rs1).mem().fields(0, rs1, 0);
      return unknown("misc-mem");
    case 0x2f:
      return amo(insn);
    case 0x73:
      return system(insn);
    default:
      return unknown("?");  // vector, custom, reserved
  }
}

Use decode_16(u32 h, okp_addr_t addr) {
  const u32 f3 = bits(h, 15, 13);
  const u8 rd = static_cast<u8>(bits(h, 11, 7)), rs2 = static_cast<u8>(bits(h, 6, 2));
  const u8 rs1p = static_cast<u8>(bits(h, 9, 7) + 8), rdp = static_cast<u8>(bits(h, 4, 2) + 8);
  switch (h & 3) {
    case 0:
      switch (f3) {
        case 0:
          if (!bits(h, 12, 5)) return unknown("c.addi4spn");  // reserved (imm 0)
          return Use("c.addi4spn").r(kSp).w(rdp).fields(rdp, kSp, 0);
        case 1: return Use("c.fld").r(rs1p).mem().fields(0, rs1p, 0);
        case 2: case 3: return Use("c.lw/c.ld").r(rs1p).w(rdp).mem().fields(rdp, rs1p, 0);
        case 5: return Use("c.fsd").r(rs1p).mem().fields(0, rs1p, 0);
        case 6: case 7: return Use("c.sw/c.sd").r(rs1p).r(rdp).mem().fields(0, rs1p, rdp);
        default: return unknown("c.reserved");  // Zcb, not in the kernel's -march
      }
    case 1:
      switch (f3) {
        case 0: return Use("c.addi").r(rd).w(rd).fields(rd, rd, 0);
        case 1:
          if (!rd) return unknown("c.addiw");
          return Use("c.addiw").r(rd).w(rd).fields(rd, rd, 0);
        case 2: return Use("c.li").w(rd).fields(rd, 0, 0);
        case 3:
          if (rd == kSp) return Use("c.addi16sp").r(kSp).w(kSp).fields(kSp, kSp, 0);
          return Use("c.lui").w(rd).fields(rd, 0, 0);
        case 4: {
          const u32 op = bits(h, 11, 10);
          if (op != 3) return Use("c.srli/srai/andi").r(rs1p).w(rs1p).fields(rs1p, rs1p, 0);
          // c.sub c.xor c.or c.and (bit 12 clear), c.subw c.addw (set); the rest is Zcb's.
          if (bits(h, 12, 12) && bits(h, 6, 5) >= 2) return unknown("c.reserved");
          return Use("c.alu").r(rs1p).r(rdp).w(rs1p).fields(rs1p, rs1p, rdp);
        }
        case 5: {
          Use x = jal(0, addr + c_j_offset(h), "c.j");
          return x;
        }
        case 6: return branch("c.beqz", rs1p, 0, addr + c_b_offset(h));
        default: return branch("c.bnez", rs1p, 0, addr + c_b_offset(h));
      }
    default:
      switch (f3) {
        case 0: return Use("c.slli").r(rd).w(rd).fields(rd, rd, 0);
        case 1: return Use("c.fldsp").r(kSp).mem().fields(0, kSp, 0);
        case 2: case 3:
          if (!rd) return unknown("c.lwsp/c.ldsp");
          return Use("c.lwsp/c.ldsp").r(kSp).w(rd).mem().fields(rd, kSp, 0);
        case 4:
          if (!bits(h, 12, 12)) {
            if (rs2) return Use("c.mv").r(rs2).w(rd).fields(rd, 0, rs2);
            if (!rd) return unknown("c.jr");
            return jalr(0, rd, 0, "c.jr");
          }
          if (!rd && !rs2) return unknown("c.ebreak");
          if (!rs2) return jalr(kRa, rd, 0, "c.jalr");
          return Use("c.add").r(rd).r(rs2).w(rd).fields(rd, rd, rs2);
        case 5: return Use("c.fsdsp").r(kSp).mem().fields(0, kSp, 0);
        default: return Use("c.swsp/c.sdsp").r(kSp).r(rs2).mem().fields(0, kSp, rs2);
      }
  }
}

}  // namespace

ErrorOr<RegisterUse> register_use(const u8* bytes, usize avail, okp_addr_t addr) {
  if (avail < 2) return Error(Errno::kIlSeq, "the function ends inside an instruction");
  const u16 parcel = static_cast<u16>(bytes[0] | bytes[1] << 8);
  const usize len = insn_length_of(parcel);
  if (!len) return Error(Errno::kIlSeq, "an instruction longer than 32 bits (not RV64GC)");
  if (len > avail) return Error(Errno::kIlSeq, "the function ends inside an instruction");
  if (parcel == 0) return Error(Errno::kIlSeq, "the all-zero parcel (padding, not code)");
  Use x = len == 2 ? decode_16(parcel, addr)
                   : decode_32(parcel | static_cast<u32>(bytes[2]) << 16 |
                                   static_cast<u32>(bytes[3]) << 24, addr);
  x.u.length = static_cast<u8>(len);
  x.u.reads &= kAllRegs;
  x.u.writes &= kAllRegs;
  return x.u;
}

}  // namespace okp::riscv
