// SPDX-License-Identifier: GPL-2.0
// x86-64: how a probed instruction executes (plan) and what its slot holds (build_slot). See
// insn_plan.h. What an emulated instruction does at the hit is insn_emulate.cpp's.
//
// Decisions are made on Zydis' decoding, never on opcode bytes alone: prefixes, ModRM and
// operand sizes change what an opcode means, and Zydis already knows all of them.
#include "arch/x86/insn_plan.h"

#include <Zydis/Decoder.h>
#include <Zydis/Mnemonic.h>

namespace okp::x86 {
namespace {

constexpr u8 kJmpRel32 = 0xe9;
constexpr usize kJmpRel32Length = 5;

// A 64-bit general-purpose register as its okp_regs index; false for anything else (a
// 32-bit register means 32-bit addressing, which emulation does not do).
bool regs_index_of(ZydisRegister reg, u8* index) {
  switch (reg) {
    case ZYDIS_REGISTER_RAX: *index = kRegIndexAx; return true;
    case ZYDIS_REGISTER_RCX: *index = kRegIndexCx; return true;
    case ZYDIS_REGISTER_RDX: *index = kRegIndexDx; return true;
    case ZYDIS_REGISTER_RBX: *index = kRegIndexBx; return true;
    case ZYDIS_REGISTER_RSP: *index = kRegIndexSp; return true;
    case ZYDIS_REGISTER_RBP: *index = kRegIndexBp; return true;
    case ZYDIS_REGISTER_RSI: *index = kRegIndexSi; return true;
    case ZYDIS_REGISTER_RDI: *index = kRegIndexDi; return true;
    case ZYDIS_REGISTER_R8: *index = kRegIndexR8; return true;
    case ZYDIS_REGISTER_R9: *index = kRegIndexR9; return true;
    case ZYDIS_REGISTER_R10: *index = kRegIndexR10; return true;
    case ZYDIS_REGISTER_R11: *index = kRegIndexR11; return true;
    case ZYDIS_REGISTER_R12: *index = kRegIndexR12; return true;
    case ZYDIS_REGISTER_R13: *index = kRegIndexR13; return true;
    case ZYDIS_REGISTER_R14: *index = kRegIndexR14; return true;
    case ZYDIS_REGISTER_R15: *index = kRegIndexR15; return true;
    default: return false;
  }
}

// Addresses wrap modulo 2^64; a displacement fits when the wrapped difference, read as
// signed, is a sign-extended 32-bit value.
bool fits_i32(u64 value) {
  const i64 v = static_cast<i64>(value);
  return v >= -(i64{1} << 31) && v < (i64{1} << 31);
}

void store_le32(u8* where, u32 value) {
  for (int i = 0; i < 4; ++i) where[i] = static_cast<u8>(value >> (8 * i));
}

i32 load_le32(const u8* where) {
  u32 v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<u32>(where[i]) << (8 * i);
  return static_cast<i32>(v);
}

// One instruction and its visible operands (the hidden ones, such as push's [rsp], are never
// rip-relative and are not needed): ~730 bytes of stack, on registration paths only.
struct Decoded {
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];
};

ErrorOr<void> decode_full(const u8* bytes, usize avail, Decoded& out) {
  // Per call, like decode(): no decoder state shared between CPUs registering probes.
  ZydisDecoder decoder;
  if (ZYAN_FAILED(ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
    return Error(Errno::kInval, "decoder initialisation failed");
  ZydisDecoderContext context;
  if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&decoder, &context, bytes, avail, &out.insn)))
    return Error(Errno::kIlSeq, "bytes do not decode to an x86-64 instruction");
  if (ZYAN_FAILED(ZydisDecoderDecodeOperands(&decoder, &context, &out.insn, out.operands,
                                             out.insn.operand_count_visible)))
    return Error(Errno::kIlSeq, "operands of the instruction do not decode");
  return {};
}

struct Refusal {
  ZydisMnemonic mnemonic;
  Errno code;
  const char* reason;
};

// Instructions a probe must not take over. A stepped copy runs with IF cleared and comes
// back through an int3, so anything that waits for an interrupt, changes privilege level or
// returns through a frame the int3 handler does not own cannot run from a slot, and none of
// them is worth emulating.
constexpr Refusal kRefusals[] = {
    // Someone else already owns the address.
    {ZYDIS_MNEMONIC_INT3, Errno::kBusy, "an int3 is already there (kprobes, kgdb or another tool)"},
    {ZYDIS_MNEMONIC_UD2, Errno::kBusy, "BUG/WARN site (ud2)"},
    {ZYDIS_MNEMONIC_UD1, Errno::kBusy, "BUG/UBSAN trap site (ud1)"},
    {ZYDIS_MNEMONIC_UD0, Errno::kBusy, "trap site (ud0)"},
    // Software interrupts: enter the IDT with a frame of their own.
    {ZYDIS_MNEMONIC_INT, Errno::kInval, "cannot single-step int n"},
    {ZYDIS_MNEMONIC_INT1, Errno::kInval, "cannot single-step int1 (icebp)"},
    {ZYDIS_MNEMONIC_INTO, Errno::kInval, "cannot single-step into"},
    // Returns through frames or MSRs, and privilege transitions.
    {ZYDIS_MNEMONIC_IRET, Errno::kInval, "cannot single-step iret"},
    {ZYDIS_MNEMONIC_IRETD, Errno::kInval, "cannot single-step iretd"},
    {ZYDIS_MNEMONIC_IRETQ, Errno::kInval, "cannot single-step iretq"},
    {ZYDIS_MNEMONIC_UIRET, Errno::kInval, "cannot single-step uiret"},
    {ZYDIS_MNEMONIC_SYSCALL, Errno::kInval, "cannot single-step syscall"},
    {ZYDIS_MNEMONIC_SYSRET, Errno::kInval, "cannot single-step sysret"},
    {ZYDIS_MNEMONIC_SYSENTER, Errno::kInval, "cannot single-step sysenter"},
    {ZYDIS_MNEMONIC_SYSEXIT, Errno::kInval, "cannot single-step sysexit"},
    {ZYDIS_MNEMONIC_RSM, Errno::kInval, "cannot single-step rsm"},
    // The int3 that ends the step would run on the user GS base.
    {ZYDIS_MNEMONIC_SWAPGS, Errno::kInval, "cannot single-step swapgs"},
    // A VM exit resumes at the VMCS host rip, never at the int3 that ends the step.
    {ZYDIS_MNEMONIC_VMLAUNCH, Errno::kInval, "cannot single-step vmlaunch"},
    {ZYDIS_MNEMONIC_VMRESUME, Errno::kInval, "cannot single-step vmresume"},
    // Waits: with IF cleared nothing ends hlt, and these are idle-loop instructions, where
    // RCU is not watching and no probe handler may run anyway.
    {ZYDIS_MNEMONIC_HLT, Errno::kInval, "cannot single-step hlt"},
    {ZYDIS_MNEMONIC_MONITOR, Errno::kInval, "cannot single-step monitor"},
    {ZYDIS_MNEMONIC_MWAIT, Errno::kInval, "cannot single-step mwait"},
    {ZYDIS_MNEMONIC_MONITORX, Errno::kInval, "cannot single-step monitorx"},
    {ZYDIS_MNEMONIC_MWAITX, Errno::kInval, "cannot single-step mwaitx"},
    {ZYDIS_MNEMONIC_UMONITOR, Errno::kInval, "cannot single-step umonitor"},
    {ZYDIS_MNEMONIC_UMWAIT, Errno::kInval, "cannot single-step umwait"},
    {ZYDIS_MNEMONIC_TPAUSE, Errno::kInval, "cannot single-step tpause"},
    // RTM: the int3 aborts any transaction, and xbegin's abort target is relative.
    {ZYDIS_MNEMONIC_XBEGIN, Errno::kInval, "cannot single-step xbegin"},
    {ZYDIS_MNEMONIC_XEND, Errno::kInval, "cannot single-step xend"},
    {ZYDIS_MNEMONIC_XABORT, Errno::kInval, "cannot single-step xabort"},
};

const Refusal* find_refusal(ZydisMnemonic mnemonic) {
  for (const Refusal& r : kRefusals)
    if (r.mnemonic == mnemonic) return &r;
  return nullptr;
}

// Far transfers (lret, lcall/ljmp through memory) load CS: there is nothing to emulate them
// with on a kernel-to-kernel int3 frame, and a copy would not come back.
ErrorOr<void> refuse_far_branch(const ZydisDecodedInstruction& insn) {
  if (insn.meta.branch_type != ZYDIS_BRANCH_TYPE_FAR) return {};
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_RET: return Error(Errno::kInval, "cannot single-step lret (far return)");
    case ZYDIS_MNEMONIC_CALL: return Error(Errno::kInval, "cannot emulate lcall (far indirect call)");
    case ZYDIS_MNEMONIC_JMP: return Error(Errno::kInval, "cannot emulate ljmp (far indirect jmp)");
    default: return Error(Errno::kInval, "cannot single-step a far control transfer");
  }
}

okp_addr_t relative_target(const ZydisDecodedInstruction& insn, okp_addr_t addr) {
  return addr + insn.length + static_cast<u64>(insn.raw.imm[0].value.s);
}

// The operand of call/jmp FF /2, /4, resolved to registers of the trap frame.
ErrorOr<IndirectOperand> indirect_operand(const Decoded& d) {
  const ZydisDecodedOperand& op = d.operands[0];
  IndirectOperand out;
  if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
    if (!regs_index_of(op.reg.value, &out.reg))
      return Error(Errno::kInval, "indirect branch through a register emulation does not know");
    out.is_register = true;
    return out;
  }
  if (op.type != ZYDIS_OPERAND_TYPE_MEMORY)
    return Error(Errno::kInval, "indirect branch operand is neither a register nor memory");
  // %gs:/%fs: would need the segment base, which the trap frame does not have (per-CPU
  // variables live behind %gs).
  if (op.mem.segment == ZYDIS_REGISTER_FS || op.mem.segment == ZYDIS_REGISTER_GS)
    return Error(Errno::kInval, "cannot emulate an indirect branch through a %fs/%gs operand");
  if (d.insn.address_width != 64)
    return Error(Errno::kInval, "cannot emulate an indirect branch with 32-bit addressing");
  if (op.mem.base == ZYDIS_REGISTER_RIP) {
    out.rip_relative = true;
  } else if (op.mem.base != ZYDIS_REGISTER_NONE && !regs_index_of(op.mem.base, &out.reg)) {
    return Error(Errno::kInval, "indirect branch through a base register emulation does not know");
  }
  if (op.mem.index != ZYDIS_REGISTER_NONE) {
    if (!regs_index_of(op.mem.index, &out.index))
      return Error(Errno::kInval, "indirect branch through an index register emulation does not know");
    out.scale = op.mem.scale;
  }
  out.disp = op.mem.disp.has_displacement ? op.mem.disp.value : 0;
  return out;
}

// A general-purpose register of 64 or 32 bits as the okp_regs index of its 64-bit register;
// false for 8/16-bit and non-GPR registers (their partial writes are left to the slot).
bool gpr_index_of(ZydisRegister reg, u8* index, bool* width32) {
  const ZydisRegisterClass cls = ZydisRegisterGetClass(reg);
  if (cls != ZYDIS_REGCLASS_GPR64 && cls != ZYDIS_REGCLASS_GPR32) return false;
  *width32 = cls == ZYDIS_REGCLASS_GPR32;
  return regs_index_of(ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg), index);
}

// The register-only moves worth a trap-time emulation (see Emulation::kMovReg). Anything
// with a memory operand, a segment register, a partial register or a flags effect stays in
// the slot, where the CPU itself executes it.
Emulation plan_register_move(const Decoded& d, InsnPlan& plan) {
  const ZydisDecodedInstruction& insn = d.insn;
  const ZydisDecodedOperand* ops = d.operands;
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_NOP:
      // 90 and 0f 1f (nopw/nopl, the padding compilers and the kernel's patching emit). Zydis
      // also names reserved-NOP hint space NOP (0f 0d with a register operand, 0f 18 /4..7,
      // 0f 19..1e), which CPUs may decode otherwise: 0f 0d ff is #UD on AMD (found by
      // tests/fuzz/fuzz_emulate_diff). Those run from the slot, where the CPU decides.
      if ((insn.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && insn.opcode == 0x90) ||
          (insn.opcode_map == ZYDIS_OPCODE_MAP_0F && insn.opcode == 0x1f))
        return Emulation::kNop;
      break;
    case ZYDIS_MNEMONIC_MOV: {
      if (insn.operand_count_visible != 2 || ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER) break;
      bool dst32 = false, src32 = false;
      if (!gpr_index_of(ops[0].reg.value, &plan.reg_dst, &dst32)) break;
      plan.result_mask = dst32 ? 0xfffffffful : ~0ul;
      if (ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER) {
        if (!gpr_index_of(ops[1].reg.value, &plan.reg_src, &src32) || src32 != dst32) break;
        return Emulation::kMovReg;
      }
      if (ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
        // Zydis sign-extends imm32 of REX.W c7 to 64 bits, as the CPU does.
        plan.rel_target = static_cast<i64>(ops[1].imm.value.u);
        return Emulation::kMovImm;
      }
      break;
    }
    case ZYDIS_MNEMONIC_LEA: {
      // 16-bit destinations merge into the register and 32-bit addressing (0x67) truncates:
      // both are left to the slot (compilers emit neither in kernel code).
      const ZydisDecodedOperand& m = ops[1];
      bool dst32 = false;
      if (insn.operand_count_visible != 2 || insn.address_width != 64 ||
          ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER || m.type != ZYDIS_OPERAND_TYPE_MEMORY ||
          !gpr_index_of(ops[0].reg.value, &plan.reg_dst, &dst32))
        break;
      IndirectOperand& out = plan.indirect;
      out = IndirectOperand{};
      if (m.mem.base == ZYDIS_REGISTER_RIP)
        out.rip_relative = true;
      else if (m.mem.base != ZYDIS_REGISTER_NONE && !regs_index_of(m.mem.base, &out.reg))
        break;
      if (m.mem.index != ZYDIS_REGISTER_NONE) {
        if (!regs_index_of(m.mem.index, &out.index)) break;
        out.scale = m.mem.scale;
      }
      out.disp = m.mem.disp.has_displacement ? m.mem.disp.value : 0;
      plan.result_mask = dst32 ? 0xfffffffful : ~0ul;
      return Emulation::kLea;
    }
    case ZYDIS_MNEMONIC_PUSH:
    case ZYDIS_MNEMONIC_POP: {
      // 66 50+r would move 16 bits; push/pop of segment registers are not GPRs.
      bool width32 = false;
      if (insn.operand_width != 64 || ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
          !gpr_index_of(ops[0].reg.value, &plan.reg_dst, &width32) || width32)
        break;
      return insn.mnemonic == ZYDIS_MNEMONIC_PUSH ? Emulation::kPushReg : Emulation::kPopReg;
    }
    default:
      break;
  }
  plan.reg_dst = plan.reg_src = kNoReg;
  plan.result_mask = ~0ul;
  plan.rel_target = 0;
  plan.indirect = IndirectOperand{};
  return Emulation::kNone;
}

// The flag-setting register arithmetic worth a trap-time emulation (see Emulation::kAlu): 64
// and 32-bit register or immediate operands only. A memory operand, a lock prefix (#UD on a
// register destination: the CPU must raise it) or an 8/16-bit operand (a partial register
// write) stays in the slot, where the CPU itself executes it.
Emulation plan_alu(const Decoded& d, InsnPlan& plan) {
  const ZydisDecodedInstruction& insn = d.insn;
  const ZydisDecodedOperand* ops = d.operands;
  bool unary = false;
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_ADD: plan.alu_op = AluOp::kAdd; break;
    case ZYDIS_MNEMONIC_SUB: plan.alu_op = AluOp::kSub; break;
    case ZYDIS_MNEMONIC_CMP: plan.alu_op = AluOp::kCmp; break;
    case ZYDIS_MNEMONIC_AND: plan.alu_op = AluOp::kAnd; break;
    case ZYDIS_MNEMONIC_OR: plan.alu_op = AluOp::kOr; break;
    case ZYDIS_MNEMONIC_XOR: plan.alu_op = AluOp::kXor; break;
    case ZYDIS_MNEMONIC_TEST: plan.alu_op = AluOp::kTest; break;
    case ZYDIS_MNEMONIC_INC: plan.alu_op = AluOp::kInc; unary = true; break;
    case ZYDIS_MNEMONIC_DEC: plan.alu_op = AluOp::kDec; unary = true; break;
    default: return Emulation::kNone;
  }
  bool dst32 = false, src32 = false;
  if ((insn.attributes & ZYDIS_ATTRIB_HAS_LOCK) ||
      insn.operand_count_visible != (unary ? 1 : 2) ||
      ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
      !gpr_index_of(ops[0].reg.value, &plan.reg_dst, &dst32))
    return Emulation::kNone;
  plan.result_mask = dst32 ? 0xfffffffful : ~0ul;
  if (unary) return Emulation::kAlu;
  if (ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER) {
    if (!gpr_index_of(ops[1].reg.value, &plan.reg_src, &src32) || src32 != dst32)
      return Emulation::kNone;
    return Emulation::kAlu;
  }
  if (ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
    // Zydis sign-extends imm8/imm32 to 64 bits, as the CPU does to the operand size; the
    // emulation masks it to 32 bits for a 32-bit operation.
    plan.rel_target = static_cast<i64>(ops[1].imm.value.u);
    return Emulation::kAlu;
  }
  return Emulation::kNone;
}

// Sets plan.emulation (and its operands) for the instructions that are emulated; leaves it
// kNone for everything else. Only legacy-encoded opcodes are branches or flag modifiers.
ErrorOr<void> plan_emulation(const Decoded& d, okp_addr_t addr, InsnPlan& plan) {
  const ZydisDecodedInstruction& insn = d.insn;
  if (insn.encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY) return {};
  const u8 op = insn.opcode;
  const bool one_byte = insn.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT;
  const bool two_byte = insn.opcode_map == ZYDIS_OPCODE_MAP_0F;
  Emulation e = Emulation::kNone;

  if ((one_byte && op >= 0x70 && op <= 0x7f) || (two_byte && op >= 0x80 && op <= 0x8f)) {
    e = Emulation::kJcc;
    plan.cond = op & 0x0f;
    plan.rel_target = static_cast<i64>(relative_target(insn, addr));
  } else if (one_byte && (op == 0xeb || op == 0xe9)) {
    e = Emulation::kJmpRel;
    plan.rel_target = static_cast<i64>(relative_target(insn, addr));
  } else if (one_byte && op == 0xe8) {
    e = Emulation::kCallRel;
    plan.rel_target = static_cast<i64>(relative_target(insn, addr));
  } else if (one_byte && op >= 0xe0 && op <= 0xe3) {
    // A rep prefix on loope/loopne picks the ZF condition on AMD (f3 e0 runs as loope, f2 e1
    // as loopne; found by tests/fuzz/fuzz_emulate_diff on an AMD host). Compilers never
    // emit one: refused rather than emulated one vendor's way.
    for (u8 i = 0; i < insn.raw.prefix_count; ++i)
      if (insn.raw.prefixes[i].value == 0xf2 || insn.raw.prefixes[i].value == 0xf3)
        return Error(Errno::kInval, "cannot emulate a rep-prefixed loop/jrcxz (vendor-specific)");
    e = Emulation::kLoop;
    plan.cond = op & 0x03;
    plan.addr32 = insn.address_width == 32;  // 0x67: the count register is ecx
    plan.rel_target = static_cast<i64>(relative_target(insn, addr));
  } else if (one_byte && (op == 0xc3 || op == 0xc2)) {
    // bnd/rep prefixes (f2/f3 c3) change nothing a ret does.
    e = Emulation::kRet;
    plan.rel_target = op == 0xc2 ? static_cast<i64>(insn.raw.imm[0].value.u & 0xffff) : 0;
  } else if (one_byte && op == 0xff && (insn.raw.modrm.reg == 2 || insn.raw.modrm.reg == 4)) {
    e = insn.raw.modrm.reg == 2 ? Emulation::kCallIndirect : Emulation::kJmpIndirect;
    plan.indirect = OKP_TRY(indirect_operand(d));
  } else if (one_byte && (op == 0x9c || op == 0x9d)) {
    // 66 9c/9d move 16 bits of flags: never emitted by compilers, not worth emulating, and
    // a copy would see (pushf) or set (popf) IF while stepping with IF cleared.
    if (insn.operand_width != 64) return Error(Errno::kInval, "cannot single-step 16-bit pushf/popf");
    e = op == 0x9c ? Emulation::kPushf : Emulation::kPopf;
  } else if (one_byte && op == 0xfa) {
    e = Emulation::kCli;
  } else if (one_byte && op == 0xfb) {
    e = Emulation::kSti;
  } else {
    // Not a branch: a register move or register arithmetic is emulated, everything else
    // runs from the slot.
    plan.emulation = plan_register_move(d, plan);
    if (plan.emulation == Emulation::kNone) {
      plan.emulation = plan_alu(d, plan);
      if (plan.emulation == Emulation::kNone) {
        plan.reg_dst = plan.reg_src = kNoReg;
        plan.result_mask = ~0ul;
        plan.rel_target = 0;
        plan.alu_op = AluOp::kAdd;
      }
    }
    return {};
  }

  // Near branches are 64-bit in long mode on Intel whatever the prefixes (Zydis decodes
  // Intel's rule); anything else would truncate rip and is refused rather than guessed at.
  if (e != Emulation::kPushf && e != Emulation::kPopf && e != Emulation::kCli &&
      e != Emulation::kSti && insn.operand_width != 64)
    return Error(Errno::kInval, "cannot emulate a branch with a 16-bit operand size");
  // On AMD a 66 prefix does make a near branch 16-bit: rip truncated to 16 bits, rel16 for
  // jcc/jmp/call rel (66 0f 8x is 5 bytes there, 7 on Intel), a 16-bit return address. Found
  // by tests/fuzz/fuzz_emulate_diff on an AMD host: 66 0f 81 rel32 was emulated as a 64-bit
  // jno while the CPU jumped to a 16-bit ip. Compilers never emit it: refused on both.
  if (e != Emulation::kPushf && e != Emulation::kPopf && e != Emulation::kCli &&
      e != Emulation::kSti && (insn.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE))
    return Error(Errno::kInval, "cannot emulate a branch with an operand-size prefix (16-bit on "
                 "AMD, ignored on Intel)");
  plan.emulation = e;
  return {};
}

// A control transfer that reached here is one plan_emulation() does not know: a copy would
// branch away from the slot, or relative to it. Fail closed.
bool transfers_control(const ZydisDecodedInstruction& insn) {
  for (const auto& imm : insn.raw.imm)
    if (imm.is_relative) return true;
  switch (insn.meta.category) {
    case ZYDIS_CATEGORY_CALL:
    case ZYDIS_CATEGORY_COND_BR:
    case ZYDIS_CATEGORY_UNCOND_BR:
    case ZYDIS_CATEGORY_RET:
    case ZYDIS_CATEGORY_SYSCALL:
    case ZYDIS_CATEGORY_SYSRET:
    case ZYDIS_CATEGORY_INTERRUPT:
      return true;
    default:
      return false;
  }
}

bool loads_segment_register(const Decoded& d) {
  switch (d.insn.mnemonic) {
    case ZYDIS_MNEMONIC_LFS:
    case ZYDIS_MNEMONIC_LGS:
    case ZYDIS_MNEMONIC_LSS:
      return true;
    case ZYDIS_MNEMONIC_MOV:
    case ZYDIS_MNEMONIC_POP:
      return d.insn.operand_count_visible > 0 &&
             d.operands[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
             ZydisRegisterGetClass(d.operands[0].reg.value) == ZYDIS_REGCLASS_SEGMENT;
    default:
      return false;
  }
}

// Boosting (leaving the slot by a jmp instead of an int3) is an optimisation, so it is kept
// to instructions whose effects are registers, flags and memory. Instructions that talk to
// the platform may trap by design: I/O and MSR accesses (#GP fixed up for the *_safe
// variants, #VE/#VC emulation under TDX/SEV), cpuid, timestamp and performance counters,
// hypercalls, segment loads (#GP on a stale selector, fixed up by loadsegment), and
// everything CPL-0-only (Zydis' "privileged": mov to cr/dr, lgdt, invlpg, wbinvd, ...).
// Stepped, such a trap arrives while the probe is current and the fault path can map the
// slot ip back to the probed address; boosted, nothing would. Control transfers, pushf,
// popf, cli and sti never get here: they are emulated.
bool may_boost(const Decoded& d) {
  const ZydisDecodedInstruction& insn = d.insn;
  if (insn.attributes & ZYDIS_ATTRIB_IS_PRIVILEGED) return false;
  if (insn.meta.category == ZYDIS_CATEGORY_IO || insn.meta.category == ZYDIS_CATEGORY_IOSTRINGOP)
    return false;
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_CPUID:
    case ZYDIS_MNEMONIC_RDMSR:
    case ZYDIS_MNEMONIC_WRMSR:
    case ZYDIS_MNEMONIC_RDTSC:
    case ZYDIS_MNEMONIC_RDTSCP:
    case ZYDIS_MNEMONIC_RDPMC:
    case ZYDIS_MNEMONIC_VMCALL:
    case ZYDIS_MNEMONIC_VMMCALL:
      return false;
    default:
      return !loads_segment_register(d);
  }
}

// Where the copy's [rip+disp32] operand is, re-aimed from the slot; kNone instructions only.
ErrorOr<void> plan_rip_relative(const Decoded& d, okp_addr_t addr, okp_addr_t slot_addr,
                                InsnPlan& plan) {
  bool rip_relative = false;
  for (u8 i = 0; i < d.insn.operand_count_visible; ++i) {
    const ZydisDecodedOperand& op = d.operands[i];
    if (op.type != ZYDIS_OPERAND_TYPE_MEMORY) continue;
    // [eip+disp32] (0x67) truncates the address to 32 bits: meaningless in the kernel.
    if (op.mem.base == ZYDIS_REGISTER_EIP)
      return Error(Errno::kInval, "cannot single-step an eip-relative (32-bit) operand");
    if (op.mem.base == ZYDIS_REGISTER_RIP) rip_relative = true;
  }
  if (!rip_relative) return {};
  // Rip-relative addressing is always ModRM mod=00 rm=101 with a disp32.
  if (d.insn.raw.disp.size != 32)
    return Error(Errno::kInval, "rip-relative operand without a disp32");
  // target = addr + length + disp must equal slot_addr + length + new_disp.
  const u64 new_disp = static_cast<u64>(d.insn.raw.disp.value) + (addr - slot_addr);
  if (!fits_i32(new_disp))
    return Error(Errno::kRange, "rip-relative target is out of reach of the slot (+-2 GiB)");
  plan.rip_relative = true;
  plan.disp_offset = d.insn.raw.disp.offset;
  return {};
}

// The boosted slot's exit: jmp rel32 from the end of the copy back to addr + length.
u64 jmp_back_rel(const InsnPlan& plan, okp_addr_t addr, okp_addr_t slot_addr) {
  return (addr + plan.length) - (slot_addr + plan.length + kJmpRel32Length);
}

}  // namespace

ErrorOr<InsnPlan> plan_insn(okp_addr_t addr, const u8* bytes, usize avail, okp_addr_t slot_addr) {
  if (avail == 0) return Error(Errno::kIlSeq, "bytes do not decode to an x86-64 instruction");
  if (bytes[0] == kInt3)
    return Error(Errno::kBusy, "an int3 is already there (kprobes, kgdb or another tool)");
  Decoded d;
  OKP_TRY(decode_full(bytes, avail, d));

  InsnPlan plan;
  plan.length = d.insn.length;
  plan.mnemonic = ZydisMnemonicGetString(d.insn.mnemonic);
  if (const Refusal* r = find_refusal(d.insn.mnemonic)) return Error(r->code, r->reason);
  OKP_TRY(refuse_far_branch(d.insn));

  OKP_TRY(plan_emulation(d, addr, plan));
  if (plan.emulation != Emulation::kNone) return plan;  // never boosted: no slot at all

  if (transfers_control(d.insn))
    return Error(Errno::kInval, "cannot single-step or emulate this control transfer");
  OKP_TRY(plan_rip_relative(d, addr, slot_addr, plan));
  plan.boostable = may_boost(d) && fits_i32(jmp_back_rel(plan, addr, slot_addr));
  return plan;
}

void build_slot(const InsnPlan& plan, okp_addr_t addr, const u8* bytes, okp_addr_t slot_addr,
                bool boost, u8 (&slot_image)[kSlotSize]) {
  for (u8& b : slot_image) b = kInt3;
  // plan_insn() checked both displacements for this slot_addr; a caller that plans for one
  // slot and builds for another, or boosts what is not boostable, gets a slot of int3s
  // (an oops at the first hit) rather than a copy that reads or jumps somewhere else.
  if (plan.emulation != Emulation::kNone || plan.length == 0 ||
      plan.length + kJmpRel32Length > kSlotSize || (boost && !plan.boostable)) {
    okp_seam_invariant_failed("x86 slot built for a plan that cannot run out of line",
                              __FILE__, __LINE__);
    return;
  }
  const u64 new_disp =
      plan.rip_relative ? static_cast<u64>(load_le32(bytes + plan.disp_offset)) + (addr - slot_addr)
                        : 0;
  const u64 back = jmp_back_rel(plan, addr, slot_addr);
  if ((plan.rip_relative && !fits_i32(new_disp)) || (boost && !fits_i32(back))) {
    okp_seam_invariant_failed("x86 slot out of reach of the probed address", __FILE__, __LINE__);
    return;
  }

  for (u8 i = 0; i < plan.length; ++i) slot_image[i] = bytes[i];
  if (plan.rip_relative) store_le32(slot_image + plan.disp_offset, static_cast<u32>(new_disp));
  if (boost) {
    slot_image[plan.length] = kJmpRel32;
    store_le32(slot_image + plan.length + 1, static_cast<u32>(back));
  }
  // else: slot_image[plan.length] is already the int3 that ends the step.
}

}  // namespace okp::x86
