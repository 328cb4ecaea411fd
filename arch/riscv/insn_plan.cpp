// SPDX-License-Identifier: GPL-2.0
// riscv64 decoding and planning (RV64GC as the kernel is built: base, M, A, F/D, C, Zicsr,
// Zifencei; anything else runs in the slot when its major opcode is an ordinary one).
#include "arch/riscv/insn_plan.h"

#include "arch/riscv/insn_fields.h"

namespace okp::riscv {

namespace {

using namespace fields;  // arch/riscv/insn_fields.h

// Major opcodes.
constexpr u32 kOpLoad = 0x03, kOpLoadFp = 0x07, kOpMiscMem = 0x0f, kOpImm = 0x13, kOpAuipc = 0x17,
              kOpImm32 = 0x1b, kOpStore = 0x23, kOpStoreFp = 0x27, kOpAmo = 0x2f, kOpOp = 0x33,
              kOpLui = 0x37, kOpOp32 = 0x3b, kOpMadd = 0x43, kOpMsub = 0x47, kOpNmsub = 0x4b,
              kOpNmadd = 0x4f, kOpFp = 0x53, kOpV = 0x57, kOpBranch = 0x63, kOpJalr = 0x67,
              kOpJal = 0x6f, kOpSystem = 0x73;

// --- What one instruction is ------------------------------------------------------------------

// The planner's view: the plan (kind and fields), or the refusal with its errno.
struct Verdict {
  InsnPlan plan;
  Errno refusal = Errno::kInval;
  const char* reason = nullptr;  // set: refused
  bool lr = false, sc = false;
};

Verdict simulated(Kind kind, const char* mnemonic, u8 rd, u8 rs1, u8 rs2, i64 imm) {
  Verdict v;
  v.plan.kind = kind;
  v.plan.mnemonic = mnemonic;
  v.plan.rd = rd;
  v.plan.rs1 = rs1;
  v.plan.rs2 = rs2;
  v.plan.imm = imm;
  return v;
}
Verdict stepped(const char* mnemonic) { return simulated(Kind::kSlot, mnemonic, 0, 0, 0, 0); }
Verdict refused(Errno code, const char* mnemonic, const char* reason) {
  Verdict v;
  v.plan.mnemonic = mnemonic;
  v.refusal = code;
  v.reason = reason;
  return v;
}
Verdict branch(const char* mnemonic, u8 cond, u8 rs1, u8 rs2, okp_addr_t target) {
  Verdict v = simulated(Kind::kBranch, mnemonic, 0, rs1, rs2, static_cast<i64>(target));
  v.plan.cond = cond;
  return v;
}

constexpr const char* kIllegal = "cannot decode: not an instruction";

// CSRs whose value the step itself changes or whose write would change what the trap restores
// (interrupt enable, trap state, the address space): never accessed from a slot. Named as the
// instruction that accesses them, for the reason.
struct TrapStateCsr {
  u32 csr;
  const char* write;
  const char* read;
};
constexpr TrapStateCsr kTrapStateCsrs[] = {
    {0x100, "csrw sstatus", "csrr sstatus"}, {0x104, "csrw sie", "csrr sie"},
    {0x105, "csrw stvec", "csrr stvec"},     {0x140, "csrw sscratch", "csrr sscratch"},
    {0x141, "csrw sepc", "csrr sepc"},       {0x142, "csrw scause", "csrr scause"},
    {0x143, "csrw stval", "csrr stval"},     {0x144, "csrw sip", "csrr sip"},
    {0x180, "csrw satp", "csrr satp"},
};

Verdict decode_system(u32 insn) {
  const u32 f3 = funct3_of(insn);
  if (f3 == 0) {
    switch (insn) {
      case 0x00000073: return refused(Errno::kInval, "ecall", "ecall traps to the SBI or the kernel: it cannot run out of line");
      case kEbreak: return refused(Errno::kBusy, "ebreak", "an ebreak is already there (another tool's breakpoint, or a BUG/WARN)");
      case 0x10200073: return refused(Errno::kInval, "sret", "sret returns from a trap: it cannot run out of line");
      case 0x30200073: return refused(Errno::kInval, "mret", "mret is machine-mode only");
      case 0x10500073: return refused(Errno::kInval, "wfi", "wfi waits for an interrupt the step keeps disabled");
      default: break;
    }
    if (bits(insn, 31, 25) == 0x09)
      return refused(Errno::kInval, "sfence.vma", "sfence.vma changes translation under the step");
    return refused(Errno::kInval, "system", "a privileged system instruction cannot run out of line");
  }
  if (f3 == 4) return refused(Errno::kInval, "hlv/hsv", "hypervisor loads and stores are not stepped");
  static constexpr const char* kCsrOps[8] = {nullptr, "csrrw", "csrrs", "csrrc", nullptr,
                                             "csrrwi", "csrrsi", "csrrci"};
  const u32 csr = bits(insn, 31, 20);
  // csrrw(i) always writes; csrrs/c(i) write unless their rs1/uimm field is 0.
  const bool writes = (f3 & 3) == 1 || rs1_of(insn) != 0;
  for (const TrapStateCsr& t : kTrapStateCsrs) {
    if (t.csr != csr) continue;
    if (writes)
      return refused(Errno::kInval, t.write, "a write to trap or interrupt state is undone or "
                                             "corrupted by the step's own trap");
    return refused(Errno::kInval, t.read, "from a slot it reads the step's trap or interrupt "
                                          "state, not the probed code's");
  }
  if (writes)
    return refused(Errno::kInval, kCsrOps[f3], "a CSR write is not stepped: the trap around "
                                               "the slot may depend on it");
  return stepped(kCsrOps[f3]);
}

Verdict decode_amo(u32 insn) {
  const u32 f3 = funct3_of(insn);
  if (f3 != 2 && f3 != 3) return refused(Errno::kIlSeq, "amo", kIllegal);
  const bool d = f3 == 3;
  switch (bits(insn, 31, 27)) {
    case 0x02: {
      Verdict v = refused(Errno::kInval, d ? "lr.d" : "lr.w",
                          "lr opens a reservation a step's trap breaks (the sc would always fail)");
      v.lr = true;
      return v;
    }
    case 0x03: {
      Verdict v = refused(Errno::kInval, d ? "sc.d" : "sc.w",
                          "sc ends a reservation the probe's trap breaks (it would always fail)");
      v.sc = true;
      return v;
    }
    case 0x01: return stepped(d ? "amoswap.d" : "amoswap.w");
    case 0x00: return stepped(d ? "amoadd.d" : "amoadd.w");
    case 0x04: return stepped(d ? "amoxor.d" : "amoxor.w");
    case 0x0c: return stepped(d ? "amoand.d" : "amoand.w");
    case 0x08: return stepped(d ? "amoor.d" : "amoor.w");
    case 0x10: return stepped(d ? "amomin.d" : "amomin.w");
    case 0x14: return stepped(d ? "amomax.d" : "amomax.w");
    case 0x18: return stepped(d ? "amominu.d" : "amominu.w");
    case 0x1c: return stepped(d ? "amomaxu.d" : "amomaxu.w");
    default: return refused(Errno::kIlSeq, "amo", kIllegal);
  }
}

Verdict decode_32(u32 insn, okp_addr_t addr) {
  const u32 f3 = funct3_of(insn);
  const u8 rd = rd_of(insn), rs1 = rs1_of(insn), rs2 = rs2_of(insn);
  switch (insn & 0x7f) {
    case kOpLui:
      return simulated(Kind::kAddImm, "lui", rd, 0, 0, imm_u(insn));
    case kOpAuipc:
      return simulated(Kind::kAuipc, "auipc", rd, 0, 0, static_cast<i64>(addr + imm_u(insn)));
    case kOpJal:
      return simulated(Kind::kJal, "jal", rd, 0, 0, static_cast<i64>(addr + imm_j(insn)));
    case kOpJalr:
      if (f3 != 0) return refused(Errno::kIlSeq, "jalr", kIllegal);
      return simulated(Kind::kJalr, "jalr", rd, rs1, 0, imm_i(insn));
    case kOpBranch: {
      static constexpr const char* kNames[8] = {"beq", "bne", nullptr, nullptr,
                                                "blt", "bge", "bltu", "bgeu"};
      if (!kNames[f3]) return refused(Errno::kIlSeq, "branch", kIllegal);
      return branch(kNames[f3], static_cast<u8>(f3), rs1, rs2, addr + imm_b(insn));
    }
    case kOpImm:
      if (f3 == 0) {
        // addi: nop, li and mv are its aliases; a register move needs no slot.
        const char* name = rd == 0 ? "nop" : rs1 == 0 ? "li" : imm_i(insn) == 0 ? "mv" : "addi";
        return simulated(Kind::kAddImm, name, rd, rs1, 0, imm_i(insn));
      }
      {
        static constexpr const char* kNames[8] = {nullptr, "slli", "slti", "sltiu",
                                                  "xori", "srli/srai", "ori", "andi"};
        return stepped(kNames[f3]);
      }
    case kOpImm32:
      if (f3 == 0)
        return simulated(Kind::kAddImmW, imm_i(insn) == 0 ? "sext.w" : "addiw", rd, rs1, 0,
                         imm_i(insn));
      return stepped(f3 == 1 ? "slliw" : "srliw/sraiw");
    case kOpOp:
      if (f3 == 0 && bits(insn, 31, 25) == 0)
        return simulated(Kind::kAdd, "add", rd, rs1, rs2, 0);
      return stepped(bits(insn, 31, 25) == 1 ? "mul/div" : "alu");
    case kOpOp32:
      return stepped(bits(insn, 31, 25) == 1 ? "mulw/divw" : "aluw");
    case kOpLoad: {
      static constexpr const char* kNames[8] = {"lb", "lh", "lw", "ld", "lbu", "lhu", "lwu", nullptr};
      if (!kNames[f3]) return refused(Errno::kIlSeq, "load", kIllegal);
      return stepped(kNames[f3]);
    }
    case kOpStore: {
      static constexpr const char* kNames[8] = {"sb", "sh", "sw", "sd", nullptr, nullptr, nullptr, nullptr};
      if (!kNames[f3]) return refused(Errno::kIlSeq, "store", kIllegal);
      return stepped(kNames[f3]);
    }
    case kOpMiscMem:
      if (f3 == 0) return stepped("fence");  // orders this hart's accesses, wherever it runs
      if (f3 == 1)
        return refused(Errno::kInval, "fence.i",
                       "fence.i synchronizes this hart's instruction fetch; out of line it "
                       "would not order the probed code's fetches");
      if (f3 == 2) return stepped("cbo");
      return refused(Errno::kIlSeq, "misc-mem", kIllegal);
    case kOpAmo:
      return decode_amo(insn);
    case kOpSystem:
      return decode_system(insn);
    case kOpLoadFp: return stepped("fload");
    case kOpStoreFp: return stepped("fstore");
    case kOpFp: case kOpMadd: case kOpMsub: case kOpNmsub: case kOpNmadd: return stepped("fp");
    case kOpV: return stepped("vector");
    default:
      return refused(Errno::kIlSeq, "?", kIllegal);
  }
}

Verdict decode_16(u32 h, okp_addr_t addr) {
  const u32 f3 = bits(h, 15, 13);
  switch (h & 3) {
    case 0:
      switch (f3) {
        case 0: {
          const u32 imm = c_addi4spn_imm(h);
          if (h == 0 || imm == 0) return refused(Errno::kIlSeq, "c.unimp", kIllegal);
          return simulated(Kind::kAddImm, "c.addi4spn", c_rdp(h), kRegSp, 0, imm);
        }
        case 1: return stepped("c.fld");
        case 2: return stepped("c.lw");
        case 3: return stepped("c.ld");
        case 5: return stepped("c.fsd");
        case 6: return stepped("c.sw");
        case 7: return stepped("c.sd");
        default: return refused(Errno::kIlSeq, "c.reserved", kIllegal);
      }
    case 1:
      switch (f3) {
        case 0:
          return simulated(Kind::kAddImm, c_rd(h) == 0 ? "c.nop" : "c.addi", c_rd(h), c_rd(h), 0,
                           c_imm6(h));
        case 1:
          if (c_rd(h) == 0) return refused(Errno::kIlSeq, "c.addiw", kIllegal);
          return simulated(Kind::kAddImmW, "c.addiw", c_rd(h), c_rd(h), 0, c_imm6(h));
        case 2:
          return simulated(Kind::kAddImm, "c.li", c_rd(h), 0, 0, c_imm6(h));
        case 3:
          if (c_rd(h) == kRegSp) {
            if (c_addi16sp_imm(h) == 0) return refused(Errno::kIlSeq, "c.addi16sp", kIllegal);
            return simulated(Kind::kAddImm, "c.addi16sp", kRegSp, kRegSp, 0, c_addi16sp_imm(h));
          }
          if (c_imm6(h) == 0) return refused(Errno::kIlSeq, "c.lui", kIllegal);
          return simulated(Kind::kAddImm, "c.lui", c_rd(h), 0, 0, c_imm6(h) << 12);
        case 4: {
          static constexpr const char* kNames[4] = {"c.srli", "c.srai", "c.andi", "c.alu"};
          return stepped(kNames[bits(h, 11, 10)]);
        }
        case 5:
          return simulated(Kind::kJal, "c.j", 0, 0, 0, static_cast<i64>(addr + c_j_offset(h)));
        case 6:
          return branch("c.beqz", kBeq, c_rs1p(h), 0, addr + c_b_offset(h));
        default:
          return branch("c.bnez", kBne, c_rs1p(h), 0, addr + c_b_offset(h));
      }
    default:  // quadrant 2 (3 is a 32-bit instruction, never here)
      switch (f3) {
        case 0: return stepped("c.slli");
        case 1: return stepped("c.fldsp");
        case 2: return stepped("c.lwsp");
        case 3: return stepped("c.ldsp");
        case 4: {
          const u8 rd = c_rd(h), rs2 = c_rs2(h);
          if (!bits(h, 12, 12)) {
            if (rs2) return simulated(Kind::kAdd, "c.mv", rd, 0, rs2, 0);
            if (!rd) return refused(Errno::kIlSeq, "c.jr", kIllegal);
            return simulated(Kind::kJalr, "c.jr", 0, rd, 0, 0);
          }
          if (!rd && !rs2)
            return refused(Errno::kBusy, "c.ebreak",
                           "a c.ebreak is already there (another tool's breakpoint, or a BUG/WARN)");
          if (!rs2) return simulated(Kind::kJalr, "c.jalr", kRegRa, rd, 0, 0);
          return simulated(Kind::kAdd, "c.add", rd, rd, rs2, 0);
        }
        case 5: return stepped("c.fsdsp");
        case 6: return stepped("c.swsp");
        default: return stepped("c.sdsp");
      }
  }
}

// Decodes the whole instruction at addr, or says why there is none.
Verdict decode_any(const u8* bytes, usize avail, okp_addr_t addr, u8* length) {
  *length = 0;
  if (avail < 2) return refused(Errno::kIlSeq, "?", "the function ends inside an instruction");
  const u16 parcel = static_cast<u16>(bytes[0] | bytes[1] << 8);
  const usize len = insn_length_of(parcel);
  if (!len) return refused(Errno::kIlSeq, "?", "an instruction longer than 32 bits (not RV64GC)");
  if (len > avail) return refused(Errno::kIlSeq, "?", "the function ends inside an instruction");
  *length = static_cast<u8>(len);
  if (len == 2) return decode_16(parcel, addr);
  const u32 insn = parcel | static_cast<u32>(bytes[2]) << 16 | static_cast<u32>(bytes[3]) << 24;
  return decode_32(insn, addr);
}

}  // namespace

ErrorOr<Decoded> decode(const u8* bytes, usize avail, okp_addr_t addr) {
  u8 length = 0;
  Verdict v = decode_any(bytes, avail, addr, &length);
  if (!length || (v.reason && v.refusal == Errno::kIlSeq))
    return Error(Errno::kIlSeq, v.reason);
  Decoded d;
  d.length = length;
  d.mnemonic = v.plan.mnemonic;
  d.lr = v.lr;
  d.sc = v.sc;
  if (!v.reason && (v.plan.kind == Kind::kJal || v.plan.kind == Kind::kBranch))
    d.direct_target = static_cast<okp_addr_t>(v.plan.imm);
  return d;
}

ErrorOr<InsnPlan> plan_insn(okp_addr_t addr, const u8* bytes, usize avail) {
  u8 length = 0;
  Verdict v = decode_any(bytes, avail, addr, &length);
  if (v.reason) return Error(v.refusal, v.reason);
  InsnPlan plan = v.plan;
  plan.length = length;
  // c.ebreak on a compressed instruction, ebreak on a 4-byte one: the breakpoint keeps the
  // instruction's length, so every tool that walks the text by length (the kernel's own
  // kprobes' boundary check reads the live text) still finds the same boundaries. A 4-byte
  // ebreak that is only 2-byte aligned is written in steps that each trap (see the glue's
  // okp_seam_patch_text).
  plan.breakpoint_size = length;
  for (usize i = 0; i < length; ++i) plan.original[i] = bytes[i];
  return plan;
}

void build_slot(const InsnPlan& plan, const u8* bytes, u8 (&image)[kSlotSize]) {
  for (usize i = 0; i < kSlotSize; ++i) image[i] = 0;  // 0x0000: illegal, compressed or not
  for (usize i = 0; i < plan.length; ++i) image[i] = bytes[i];
  // The slot's cells are 16-byte aligned: the breakpoint after a 4-byte copy is too.
  if (plan.length == 4) {
    image[4] = kEbreak & 0xff;
    image[5] = (kEbreak >> 8) & 0xff;
    image[6] = (kEbreak >> 16) & 0xff;
    image[7] = (kEbreak >> 24) & 0xff;
  } else {
    image[2] = kCEbreak & 0xff;
    image[3] = kCEbreak >> 8;
  }
}

}  // namespace okp::riscv
