// SPDX-License-Identifier: GPL-2.0
// How one probed x86-64 instruction is executed once its first byte is an int3: run a copy
// out of line in a slot (with rip-relative operands re-aimed at the original targets), or
// emulate it on the trap frame when a copy cannot run elsewhere (control flow, IF/flags).
// This header is the plan (InsnPlan, plan_insn, build_slot), freestanding and pure; carrying
// a plan out at the hit is insn_emulate.h's.
#pragma once

#include "core/error_or.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp::x86 {

// A slot holds the copied instruction (<= 15 bytes) and its exit: an int3 (stepped: the
// trap brings us back for the post handler) or a jmp rel32 back to addr+length (boosted).
constexpr usize kSlotSize = 32;
constexpr u8 kInt3 = 0xcc;

// The general-purpose registers as indices into struct okp_regs (the kernel's pt_regs order,
// one unsigned long each); IndirectOperand names registers by them. insn_emulate.cpp checks
// them against the struct's field offsets.
constexpr u8 kRegIndexR15 = 0;
constexpr u8 kRegIndexR14 = 1;
constexpr u8 kRegIndexR13 = 2;
constexpr u8 kRegIndexR12 = 3;
constexpr u8 kRegIndexBp = 4;
constexpr u8 kRegIndexBx = 5;
constexpr u8 kRegIndexR11 = 6;
constexpr u8 kRegIndexR10 = 7;
constexpr u8 kRegIndexR9 = 8;
constexpr u8 kRegIndexR8 = 9;
constexpr u8 kRegIndexAx = 10;
constexpr u8 kRegIndexCx = 11;
constexpr u8 kRegIndexDx = 12;
constexpr u8 kRegIndexSi = 13;
constexpr u8 kRegIndexDi = 14;
constexpr u8 kRegIndexSp = 19;
constexpr u8 kNoReg = 0xff;  // a memory operand without base or index

// The kinds of kLoop (InsnPlan::cond): the low two bits of opcodes E0..E3.
constexpr u8 kLoopKindNe = 0;     // loopne: count-- ; taken if count != 0 && !ZF
constexpr u8 kLoopKindE = 1;      // loope:  count-- ; taken if count != 0 && ZF
constexpr u8 kLoopKindPlain = 2;  // loop:   count-- ; taken if count != 0
constexpr u8 kLoopKindJrcxz = 3;  // jrcxz/jecxz: taken if count == 0, count unchanged

enum class Emulation : u8 {
  kNone = 0,      // runs out of line in the slot
  kJmpRel,        // jmp rel8/rel32: ip = target
  kJcc,           // jcc rel8/rel32: ip = target if cond(flags) else next
  kCallRel,       // call rel32: push next; ip = target
  kRet,           // ret / ret imm16: ip = pop; sp += imm
  kLoop,          // loop/loope/loopne/jrcxz/jecxz
  kCallIndirect,  // call *reg / call *mem
  kJmpIndirect,   // jmp *reg / jmp *mem
  kPushf,         // pushfq: push regs->flags
  kPopf,          // popfq: flags = pop (system bits kept as the kernel allows)
  kCli,           // flags.IF = 0
  kSti,           // flags.IF = 1
  // Register moves and address arithmetic: no memory access and no flags effect, emulated in
  // the trap so that the hit costs one trap and no slot: the common function-body instructions.
  kMovReg,        // mov %src,%dst (64-bit; 32-bit zero-extends): dst = src
  kMovImm,        // mov $imm,%dst (64-bit imm64/sign-extended imm32; 32-bit zero-extends)
  kPushReg,       // push %reg (64-bit): push value of reg (push %rsp pushes the old rsp)
  kPopReg,        // pop %reg (64-bit): reg = pop (pop %rsp: rsp = the popped word)
  kNop,           // nop, nopl/nopw with any operands: ip = next
  kLea,           // lea mem,%dst (64/32-bit dst, 64-bit addressing): dst = the address
  // Flag-setting arithmetic on registers (InsnPlan::alu_op): the compare/test and the
  // add/sub/logic that feed most of a function's branches. Emulated in the trap, out of line
  // (emulate(), not emulate_register_move()), so that a stepped hit on them is one trap.
  kAlu,           // add/sub/cmp/and/or/xor/test %src or $imm,%dst; inc/dec %dst (64/32-bit)
};

// What kAlu computes (InsnPlan::alu_op). cmp and test write only the flags; inc and dec
// keep CF; and/or/xor/test clear CF, OF and AF (AF is undefined in the SDM: Intel, AMD and
// QEMU all clear it, and tests/fuzz's emulate_diff holds the emulation to the host CPU's).
enum class AluOp : u8 { kAdd, kSub, kCmp, kAnd, kOr, kXor, kTest, kInc, kDec };

// The memory or register operand of an indirect branch, resolved at the hit.
struct IndirectOperand {
  bool is_register = false;
  u8 reg = kNoReg;     // okp_regs index (kRegIndex*) when is_register, else base (or kNoReg)
  u8 index = kNoReg;   // kNoReg if none
  u8 scale = 1;
  bool rip_relative = false;  // base is the next instruction's address
  i64 disp = 0;
};

struct InsnPlan {
  u8 length = 0;             // of the original instruction
  Emulation emulation = Emulation::kNone;
  bool boostable = false;    // may exit the slot with a jmp back (no trap) when no post handler
  bool rip_relative = false; // the slot copy's disp32 was re-aimed
  u8 cond = 0;               // kJcc: the condition code (low nibble of the opcode); kLoop: kind
  i64 rel_target = 0;      // kJmpRel/kJcc/kCallRel/kLoop: absolute target; kRet: imm16
  IndirectOperand indirect;  // kCallIndirect/kJmpIndirect
  bool addr32 = false;       // kLoop: 0x67 prefix (jecxz/loopl use ecx)
  // kMovReg/kMovImm/kPushReg/kPopReg/kLea: okp_regs indices (kRegIndex*, always a GPR) of
  // the destination and source (kMovReg), and the mask of the result (32-bit results
  // zero-extend); kMovImm's value is in rel_target, kLea's address operand in indirect.
  u8 reg_dst = kNoReg;
  u8 reg_src = kNoReg;
  unsigned long result_mask = ~0ul;
  // kAlu: the operation; reg_dst is the destination (and first source), reg_src the second
  // source or kNoReg for an immediate (in rel_target, sign-extended as the CPU does);
  // result_mask is the operand size (32-bit results zero-extend the destination).
  AluOp alu_op = AluOp::kAdd;
  u8 disp_offset = 0;        // rip_relative: where the disp32 sits in the instruction
  const char* mnemonic = nullptr;  // static string, for reasons and debugfs
};

// Decides how the instruction at addr executes under a probe. bytes are the original bytes
// at addr (avail of them, at most what is left of the function). -EILSEQ: not decodable;
// -EBUSY: an int3 or a BUG/WARN ud2 (another user owns it); -EINVAL: can be neither stepped
// nor emulated (reason names the instruction); -ERANGE: a rip-relative target is out of
// +-2 GiB of slot_addr. The reason is a static string.
ErrorOr<InsnPlan> plan_insn(okp_addr_t addr, const u8* bytes, usize avail, okp_addr_t slot_addr);

// Fills slot_image[0..kSlotSize) with what the slot at slot_addr must contain for a plan
// with emulation kNone: the copy (disp32 fixed up) and then an int3, or, when boost is true
// (plan.boostable and no post handler), a jmp rel32 to addr+length. The rest is int3 padding.
void build_slot(const InsnPlan& plan, okp_addr_t addr, const u8* bytes, okp_addr_t slot_addr,
                bool boost, u8 (&slot_image)[kSlotSize]);

}  // namespace okp::x86
