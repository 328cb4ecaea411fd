// SPDX-License-Identifier: GPL-2.0
// Carrying out an x86-64 InsnPlan (insn_plan.h) at the hit: the emulated instructions' effect
// on the trap frame (registers, flags, ip, the stack), and the resume after a stepped slot.
//
// emulate() is the only function that touches memory: the stack below regs->sp (the int3
// entry leaves a gap for exactly this, see int3_emulate_push) and the memory operands of
// indirect branches, read through okp_seam_read_nofault(). Everything else writes the frame
// only. The out-of-line functions are in insn_emulate.cpp, all in .kprobes.text.
#pragma once

#include "arch/x86/insn_plan.h"
#include "core/error_or.h"
#include "seam/kernel_services.h"

namespace okp::x86 {

// At the probe's own int3 (regs->ip == addr + 1): performs an emulated instruction on the
// frame (ip, sp, flags, stack). -EFAULT if a memory operand or the stack cannot be read.
ErrorOr<void> emulate(const InsnPlan& plan, okp_addr_t addr, okp_regs* regs);

// kMovReg, kMovImm, kLea and kNop, inline for the hit path: no call, a few loads and one
// store. False for every other plan. okp_regs is nothing but unsigned longs, and plan_insn()
// only puts GPR indices in reg_dst/reg_src/indirect (insn_emulate.cpp ties them to the fields).
inline bool emulate_register_move(const InsnPlan& plan, okp_addr_t addr, okp_regs* regs) {
  unsigned long* word = reinterpret_cast<unsigned long*>(regs);
  switch (plan.emulation) {
    case Emulation::kLea: {
      // The address arithmetic wraps modulo 2^64, as the CPU's does; lea reads no memory.
      const IndirectOperand& m = plan.indirect;
      unsigned long ea = m.rip_relative ? addr + plan.length : m.reg != kNoReg ? word[m.reg] : 0;
      if (m.index != kNoReg) ea += word[m.index] * m.scale;
      ea += static_cast<unsigned long>(m.disp);
      word[plan.reg_dst] = ea & plan.result_mask;
      break;
    }
    case Emulation::kMovReg:
      word[plan.reg_dst] = word[plan.reg_src] & plan.result_mask;
      break;
    case Emulation::kMovImm:
      word[plan.reg_dst] = static_cast<unsigned long>(plan.rel_target) & plan.result_mask;
      break;
    case Emulation::kNop:
      break;
    default:
      return false;
  }
  regs->ip = addr + plan.length;
  return true;
}

// kAlu: the result and CF PF AF ZF SF OF on the frame, ip past the instruction. Out of line
// but called straight from the hit (probe_arch.h), not through emulate(): emulate()'s
// ErrorOr<void> result costs a large frame and a stack protector on every call, and this
// cannot fail (registers only). plan.emulation must be kAlu.
void emulate_alu(const InsnPlan& plan, okp_addr_t addr, okp_regs* regs);

// At the int3 that ends a stepped slot (regs->ip == slot_addr + length + 1): resumes the
// original flow after the instruction.
inline void resume_after_step(const InsnPlan& plan, okp_addr_t addr, okp_regs* regs) {
  regs->ip = addr + plan.length;
}

}  // namespace okp::x86
