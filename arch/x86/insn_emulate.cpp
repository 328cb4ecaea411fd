// SPDX-License-Identifier: GPL-2.0
// x86-64: what an emulated instruction does to the trap frame (emulate, emulate_alu): the
// instructions plan_insn() (insn_plan.cpp) gave an Emulation instead of a slot. See
// insn_emulate.h.
//
// Everything here runs in the breakpoint trap: each function is OKP_HIT_PATH (.kprobes.text,
// refused to the kernel's kprobes) and the file is built without ftrace's entry hooks (Kbuild).
// No decoding happens here: the plan holds everything, so this file needs no Zydis.
#include "arch/x86/insn_emulate.h"
#include "core/hit_path.h"

namespace okp::x86 {
namespace {

// RFLAGS bits (Intel SDM vol. 1, 3.4.3).
constexpr unsigned long kFlagCF = 1ul << 0;
constexpr unsigned long kFlagPF = 1ul << 2;
constexpr unsigned long kFlagAF = 1ul << 4;
constexpr unsigned long kFlagZF = 1ul << 6;
constexpr unsigned long kFlagSF = 1ul << 7;
constexpr unsigned long kFlagTF = 1ul << 8;
constexpr unsigned long kFlagIF = 1ul << 9;
constexpr unsigned long kFlagDF = 1ul << 10;
constexpr unsigned long kFlagOF = 1ul << 11;
constexpr unsigned long kFlagNT = 1ul << 14;
constexpr unsigned long kFlagRF = 1ul << 16;
constexpr unsigned long kFlagVM = 1ul << 17;
constexpr unsigned long kFlagAC = 1ul << 18;
constexpr unsigned long kFlagID = 1ul << 21;

// What an emulated popfq may change: what a CPL-0 popfq changes, except IOPL. RF is cleared by
// hardware popf but is never set in an int3 frame; VM, VIF and VIP are never touched by a
// 64-bit popf; IOPL is left alone because Linux keeps it 0 in the kernel (iopl() is emulated
// with the I/O bitmap since 5.5) and a stray stack word must not raise it. TF is included:
// a kernel popf that sets TF starts single-stepping on hardware too, and one that clears it
// must clear it here as well.
constexpr unsigned long kPopfMask = kFlagCF | kFlagPF | kFlagAF | kFlagZF | kFlagSF | kFlagTF |
                                    kFlagIF | kFlagDF | kFlagOF | kFlagNT | kFlagAC | kFlagID;

// okp_regs is read by kRegIndex*: tie the constants to the struct the kernel layout check
// (src/kernel/arch/x86/layout_checks.c) ties to pt_regs.
constexpr bool reg_index_is(usize offset, u8 index) { return offset == index * sizeof(unsigned long); }
static_assert(reg_index_is(__builtin_offsetof(okp_regs, r15), kRegIndexR15));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, r14), kRegIndexR14));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, r13), kRegIndexR13));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, r12), kRegIndexR12));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, bp), kRegIndexBp));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, bx), kRegIndexBx));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, r11), kRegIndexR11));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, r10), kRegIndexR10));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, r9), kRegIndexR9));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, r8), kRegIndexR8));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, ax), kRegIndexAx));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, cx), kRegIndexCx));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, dx), kRegIndexDx));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, si), kRegIndexSi));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, di), kRegIndexDi));
static_assert(reg_index_is(__builtin_offsetof(okp_regs, sp), kRegIndexSp));

// okp_regs is nothing but unsigned longs, so a register is the word at its index (the
// static_asserts above tie each kRegIndex* to its field's offset). One load instead of a
// switch: this runs on every hit of an emulated instruction.
constexpr bool is_gpr_index(u8 index) { return index <= kRegIndexDi || index == kRegIndexSp; }

OKP_HIT_PATH unsigned long* register_slot(okp_regs& regs, u8 index) {
  return reinterpret_cast<unsigned long*>(&regs) + index;
}

OKP_HIT_PATH unsigned long register_value(const okp_regs& regs, u8 index) {
  // kNoReg (an absent base or index) contributes nothing.
  return is_gpr_index(index) ? *register_slot(const_cast<okp_regs&>(regs), index) : 0;
}

OKP_HIT_PATH void set_register(okp_regs& regs, u8 index, unsigned long value) {
  if (is_gpr_index(index)) *register_slot(regs, index) = value;
}

// Intel SDM vol. 1, appendix B: conditions come in pairs, the odd code negating the even.
OKP_HIT_PATH bool condition_holds(u8 cond, unsigned long flags) {
  const bool cf = flags & kFlagCF;
  const bool pf = flags & kFlagPF;
  const bool zf = flags & kFlagZF;
  const bool sf = flags & kFlagSF;
  const bool of = flags & kFlagOF;
  bool holds = false;
  switch ((cond >> 1) & 7) {
    case 0: holds = of; break;                 // o / no
    case 1: holds = cf; break;                 // b / ae
    case 2: holds = zf; break;                 // e / ne
    case 3: holds = cf || zf; break;           // be / a
    case 4: holds = sf; break;                 // s / ns
    case 5: holds = pf; break;                 // p / np
    case 6: holds = sf != of; break;           // l / ge
    case 7: holds = zf || (sf != of); break;   // le / g
  }
  return (cond & 1) ? !holds : holds;
}

OKP_HIT_PATH bool loop_taken(const InsnPlan& plan, okp_regs* regs) {
  const bool zf = regs->flags & kFlagZF;
  if (plan.cond == kLoopKindJrcxz)
    return (plan.addr32 ? static_cast<u32>(regs->cx) : regs->cx) == 0;
  // The count is decremented without touching flags. With 0x67 it is ecx, and writing it
  // zero-extends into rcx like every 32-bit register write in 64-bit mode (as Bochs and
  // QEMU model it).
  bool count_left;
  if (plan.addr32) {
    const u32 count = static_cast<u32>(regs->cx) - 1;
    regs->cx = count;
    count_left = count != 0;
  } else {
    regs->cx -= 1;
    count_left = regs->cx != 0;
  }
  switch (plan.cond) {
    case kLoopKindNe: return count_left && !zf;
    case kLoopKindE: return count_left && zf;
    default: return count_left;
  }
}

// PF: set when the low byte of the result has an even number of 1 bits. 0x6996 is the
// odd-parity table of a nibble, indexed by the byte's two nibbles folded together.
OKP_HIT_PATH unsigned long parity_flag(unsigned long result) {
  const unsigned long nibble = (result ^ (result >> 4)) & 0xf;
  return ((0x6996u >> nibble) & 1) ? 0 : kFlagPF;
}

// The int3 entry from kernel mode leaves a gap below the frame so that an emulated push
// lands on the interrupted stack without overwriting the frame (int3_emulate_push).
OKP_HIT_PATH void push(okp_regs* regs, unsigned long value) {
  regs->sp -= sizeof(unsigned long);
  *reinterpret_cast<unsigned long*>(regs->sp) = value;
}

OKP_HIT_PATH ErrorOr<unsigned long> read_word(okp_addr_t where) {
  unsigned long value = 0;
  if (okp_seam_read_nofault(&value, where, sizeof(value)) != 0)
    return Error(Errno::kFault, "cannot read the stack or the memory operand");
  return value;
}

OKP_HIT_PATH ErrorOr<unsigned long> indirect_target(const IndirectOperand& op, okp_addr_t next,
                                       const okp_regs& regs) {
  if (op.is_register) return register_value(regs, op.reg);
  // Evaluated before any push, as the hardware does: call *8(%rsp) reads the old rsp.
  const okp_addr_t base = op.rip_relative ? next : register_value(regs, op.reg);
  const okp_addr_t where = base + register_value(regs, op.index) * op.scale +
                           static_cast<u64>(op.disp);
  return read_word(where);
}

}  // namespace

// Emulation::kAlu on the frame: the result as the CPU computes it at the operand size, and
// CF PF AF ZF SF OF as the CPU sets them (Intel SDM vol. 1, 3.4.3.1; vol. 2 per instruction).
// No memory access, no error: see insn_plan.h.
OKP_HIT_PATH void emulate_alu(const InsnPlan& plan, okp_addr_t addr, okp_regs* regs) {
  unsigned long* word = reinterpret_cast<unsigned long*>(regs);
  const unsigned long mask = plan.result_mask;
  const unsigned long sign = mask ^ (mask >> 1);  // the top bit of the operand size
  const unsigned long a = word[plan.reg_dst] & mask;
  unsigned long b = (plan.reg_src != kNoReg ? word[plan.reg_src]
                                            : static_cast<unsigned long>(plan.rel_target)) & mask;
  unsigned long result = 0;
  unsigned long changed = kFlagCF | kFlagPF | kFlagAF | kFlagZF | kFlagSF | kFlagOF;
  unsigned long flags = 0;
  bool writes = true;
  switch (plan.alu_op) {
    case AluOp::kInc:
      changed &= ~kFlagCF;
      b = 1;
      [[fallthrough]];
    case AluOp::kAdd:
      result = (a + b) & mask;
      if (result < a) flags |= kFlagCF;                     // unsigned carry out
      if ((a ^ result) & (b ^ result) & sign) flags |= kFlagOF;  // both signs differ from the sum's
      flags |= (a ^ b ^ result) & kFlagAF;                  // carry out of bit 3 (AF is bit 4)
      break;
    case AluOp::kDec:
      changed &= ~kFlagCF;
      b = 1;
      [[fallthrough]];
    case AluOp::kCmp:
    case AluOp::kSub:
      writes = plan.alu_op != AluOp::kCmp;
      result = (a - b) & mask;
      if (a < b) flags |= kFlagCF;                          // unsigned borrow
      if ((a ^ b) & (a ^ result) & sign) flags |= kFlagOF;  // signs differ, result's flipped
      flags |= (a ^ b ^ result) & kFlagAF;                  // borrow into bit 3
      break;
    case AluOp::kTest:
      writes = false;
      [[fallthrough]];
    case AluOp::kAnd:
      result = a & b;  // CF = OF = AF = 0
      break;
    case AluOp::kOr:
      result = a | b;
      break;
    case AluOp::kXor:
      result = a ^ b;
      break;
  }
  flags |= parity_flag(result);
  if (result == 0) flags |= kFlagZF;
  if (result & sign) flags |= kFlagSF;
  if (writes) word[plan.reg_dst] = result;  // masked: a 32-bit result zero-extends
  regs->flags = (regs->flags & ~changed) | (flags & changed);
  regs->ip = addr + plan.length;
}

OKP_HIT_PATH ErrorOr<void> emulate(const InsnPlan& plan, okp_addr_t addr, okp_regs* regs) {
  const okp_addr_t next = addr + plan.length;
  const okp_addr_t target = static_cast<okp_addr_t>(plan.rel_target);
  switch (plan.emulation) {
    case Emulation::kNone:
      return Error(Errno::kInval, "instruction runs out of line, not emulated");
    case Emulation::kJmpRel:
      regs->ip = target;
      return {};
    case Emulation::kJcc:
      regs->ip = condition_holds(plan.cond, regs->flags) ? target : next;
      return {};
    case Emulation::kCallRel:
      push(regs, next);
      regs->ip = target;
      return {};
    case Emulation::kRet: {
      // Read before changing anything: a fault leaves the frame as the int3 found it.
      const unsigned long return_address = OKP_TRY(read_word(regs->sp));
      regs->sp += sizeof(unsigned long) + static_cast<u64>(plan.rel_target);
      regs->ip = return_address;
      return {};
    }
    case Emulation::kLoop:
      regs->ip = loop_taken(plan, regs) ? target : next;
      return {};
    case Emulation::kCallIndirect: {
      const unsigned long to = OKP_TRY(indirect_target(plan.indirect, next, *regs));
      push(regs, next);
      regs->ip = to;
      return {};
    }
    case Emulation::kJmpIndirect:
      regs->ip = OKP_TRY(indirect_target(plan.indirect, next, *regs));
      return {};
    case Emulation::kPushf:
      // The hardware pushes RFLAGS with RF and VM cleared.
      push(regs, regs->flags & ~(kFlagRF | kFlagVM));
      regs->ip = next;
      return {};
    case Emulation::kPopf: {
      const unsigned long popped = OKP_TRY(read_word(regs->sp));
      regs->sp += sizeof(unsigned long);
      regs->flags = (regs->flags & ~kPopfMask) | (popped & kPopfMask);
      regs->ip = next;
      return {};
    }
    case Emulation::kCli:
      regs->flags &= ~kFlagIF;
      regs->ip = next;
      return {};
    case Emulation::kSti:
      // Unlike the hardware's, this sti has no interrupt shadow: an interrupt may arrive
      // before the next instruction (sti; hlt idle code is __cpuidle, never probed).
      regs->flags |= kFlagIF;
      regs->ip = next;
      return {};
    case Emulation::kMovReg:
    case Emulation::kMovImm:
    case Emulation::kLea:
    case Emulation::kNop:
      emulate_register_move(plan, addr, regs);
      return {};
    case Emulation::kAlu:
      emulate_alu(plan, addr, regs);
      return {};
    case Emulation::kPushReg:
      push(regs, register_value(*regs, plan.reg_dst));  // read before sp moves
      regs->ip = next;
      return {};
    case Emulation::kPopReg: {
      const unsigned long popped = OKP_TRY(read_word(regs->sp));
      regs->sp += sizeof(unsigned long);
      set_register(*regs, plan.reg_dst, popped);  // pop %rsp: the popped word wins
      regs->ip = next;
      return {};
    }
  }
  return Error(Errno::kInval, "unknown emulation");
}

}  // namespace okp::x86
