// SPDX-License-Identifier: GPL-2.0
// arm64 instruction planning and simulation (see insn_plan.h for the classes and why).
#include "arch/arm64/insn_plan.h"

#include "core/hit_path.h"

namespace okp::arm64 {

namespace {

constexpr u32 field(u32 insn, unsigned lsb, unsigned width) {
  return (insn >> lsb) & ((1u << width) - 1);
}

constexpr i64 sign_extend(u64 value, unsigned bits) {
  const u64 sign = 1ull << (bits - 1);
  return static_cast<i64>((value ^ sign) - sign);
}

// A system register's encoding as MRS/MSR carry it in bits 19..5: op0's low bit, op1, CRn,
// CRm, op2 (op0 is 2 or 3, so its high bit is always set).
constexpr u32 sysreg(u32 op0, u32 op1, u32 crn, u32 crm, u32 op2) {
  return ((op0 & 1) << 14) | (op1 << 11) | (crn << 7) | (crm << 3) | op2;
}
constexpr u32 kDaif = sysreg(3, 3, 4, 2, 1);

// System registers the step itself changes or depends on: the probe's BRK exception wrote
// ELR/SPSR/ESR/FAR_EL1 before a slot could read them, and the step-ending BRK overwrites
// anything a slot wrote there; SPSel picks the stack the exception return uses.
struct NamedSysreg {
  u32 encoding;
  const char* mrs;
  const char* msr;
};
constexpr NamedSysreg kExceptionState[] = {
    {sysreg(3, 0, 4, 0, 0), "mrs spsr_el1", "msr spsr_el1"},
    {sysreg(3, 0, 4, 0, 1), "mrs elr_el1", "msr elr_el1"},
    {sysreg(3, 0, 4, 2, 0), "mrs spsel", "msr spsel"},
    {sysreg(3, 0, 5, 2, 0), "mrs esr_el1", "msr esr_el1"},
    {sysreg(3, 0, 6, 0, 0), "mrs far_el1", "msr far_el1"},
};

Error refuse(Errno code, const char* mnemonic, u32 insn, const char* why) {
  return Error::formatted(code, "'%s' (%#010x) cannot be probed: %s", mnemonic, insn, why);
}

InsnPlan simulated(u32 insn, Sim sim, const char* mnemonic) {
  InsnPlan p;
  p.insn = insn;
  p.sim = sim;
  p.mnemonic = mnemonic;
  return p;
}

InsnPlan stepped(u32 insn, const char* mnemonic) { return simulated(insn, Sim::kNone, mnemonic); }

// HINT space (nop, pointer authentication, BTI, wait-for-event...): by CRm:op2.
ErrorOr<InsnPlan> plan_hint(u32 insn) {
  const u32 imm = field(insn, 5, 7);
  switch (imm) {
    case 0: return simulated(insn, Sim::kNop, "nop");
    // A wait may end at any moment for no reason (the architecture allows a spurious wake-up)
    // and yield is only advice: as a nop they keep their meaning and cost no step.
    case 1: return simulated(insn, Sim::kNop, "yield");
    case 2: return simulated(insn, Sim::kNop, "wfe");
    case 3: return simulated(insn, Sim::kNop, "wfi");
    // Pointer authentication: the result depends on x30/x16/x17, sp and the keys, all the
    // same in a slot. (The kernel's kprobes refuse the aut* forms; a failed authentication
    // corrupts x30 identically wherever it runs, and with FEAT_FPAC faults as it would.)
    case 7: return stepped(insn, "xpaclri");
    case 8: return stepped(insn, "pacia1716");
    case 10: return stepped(insn, "pacib1716");
    case 12: return stepped(insn, "autia1716");
    case 14: return stepped(insn, "autib1716");
    case 24: return stepped(insn, "paciaz");
    case 25: return stepped(insn, "paciasp");
    case 26: return stepped(insn, "pacibz");
    case 27: return stepped(insn, "pacibsp");
    case 28: return stepped(insn, "autiaz");
    case 29: return stepped(insn, "autiasp");
    case 30: return stepped(insn, "autibz");
    case 31: return stepped(insn, "autibsp");
    // BTI only constrains the target of an indirect branch: a trap's return is not one.
    case 32: case 34: case 36: case 38: return simulated(insn, Sim::kNop, "bti");
    case 20: return stepped(insn, "csdb");
    default:
      return refuse(Errno::kOpNotSupp, imm == 4 ? "sev" : imm == 5 ? "sevl" : "hint", insn,
                    "a hint outside the stepped set may raise an exception or signal other CPUs "
                    "in ways a slot cannot reproduce");
  }
}

ErrorOr<InsnPlan> plan_system(u32 insn) {
  const u32 l = field(insn, 21, 1), op0 = field(insn, 19, 2), crn = field(insn, 12, 4);
  if (op0 == 0 && l == 0) {
    if (crn == 2 && field(insn, 0, 5) == 31) return plan_hint(insn);
    if (crn == 3) return stepped(insn, "barrier (dsb/dmb/isb/clrex/sb)");
    if (crn == 4 && field(insn, 0, 5) == 31) {
      const u32 op1 = field(insn, 16, 3), op2 = field(insn, 5, 3);
      InsnPlan p;
      if (op1 == 3 && (op2 == 6 || op2 == 7)) {
        // Masking or unmasking interrupts: the step restores DAIF afterwards, undoing a copy's
        // change, so it is done to the frame the exception return loads.
        p = simulated(insn, op2 == 6 ? Sim::kMsrDaifSet : Sim::kMsrDaifClr,
                      op2 == 6 ? "msr daifset" : "msr daifclr");
        p.bit = static_cast<u8>(field(insn, 8, 4));
        return p;
      }
      if (op1 == 0 && op2 == 5)
        return refuse(Errno::kOpNotSupp, "msr spsel", insn,
                      "it switches the stack pointer the exception return relies on");
      return refuse(Errno::kOpNotSupp, "msr <pstate field>, #imm", insn,
                    "the kernel's kprobes refuse every msr: a PSTATE change in a slot "
                    "is not proven to survive the step-ending exception");
    }
    return refuse(Errno::kOpNotSupp, "system instruction", insn, "unallocated encoding");
  }
  if (op0 == 1) return stepped(insn, l ? "sysl" : "sys (dc/ic/tlbi/at)");
  // mrs / msr (register)
  const u32 reg = field(insn, 5, 15);
  const u8 rt = static_cast<u8>(field(insn, 0, 5));
  if (reg == kDaif) {
    // The slot runs with DAIF masked: a copy would read the step's mask, and a write would be
    // undone when the step restores DAIF. The trap frame holds the truth.
    InsnPlan p = simulated(insn, l ? Sim::kMrsDaif : Sim::kMsrDaif, l ? "mrs daif" : "msr daif");
    p.rd = rt;
    return p;
  }
  for (const auto& s : kExceptionState)
    if (s.encoding == reg)
      return refuse(Errno::kOpNotSupp, l ? s.mrs : s.msr, insn,
                    "exception state: the probe's and the step's BRK exceptions write "
                    "ELR/SPSR/ESR/FAR_EL1, and SPSel picks the stack their return uses");
  if (!l)
    return refuse(Errno::kOpNotSupp, "msr (register)", insn,
                  "a system-register write may change what the step-ending exception does "
                  "(the kernel's kprobes refuse it too)");
  return stepped(insn, "mrs");
}

ErrorOr<InsnPlan> plan_branch_register(u32 insn) {
  const u32 opc = field(insn, 21, 4), op2 = field(insn, 16, 5), op3 = field(insn, 10, 6),
            op4 = field(insn, 0, 5);
  const u8 rn = static_cast<u8>(field(insn, 5, 5));
  if (op2 == 31 && op3 == 0 && op4 == 0 && opc <= 2) {
    static constexpr Sim kSims[] = {Sim::kBr, Sim::kBlr, Sim::kRet};
    static constexpr const char* kNames[] = {"br", "blr", "ret"};
    InsnPlan p = simulated(insn, kSims[opc], kNames[opc]);
    p.rn = rn;
    return p;
  }
  if (opc == 4 || opc == 5)
    return refuse(Errno::kOpNotSupp, opc == 4 ? "eret" : "drps", insn,
                  "an exception return leaves the probed context");
  return refuse(Errno::kOpNotSupp, "braa/blraa/retaa (pointer-authenticated branch)", insn,
                "it authenticates with a key okprobes does not hold, so it can be neither "
                "simulated nor run from a slot (its target is pc-independent only in form)");
}

ErrorOr<InsnPlan> plan_exception(u32 insn) {
  const u32 opc = field(insn, 21, 3), ll = field(insn, 0, 2);
  const char* name = "exception generation";
  if (opc == 0) name = ll == 1 ? "svc" : ll == 2 ? "hvc" : ll == 3 ? "smc" : name;
  if (opc == 1) name = "brk";
  if (opc == 2) name = "hlt";
  if (opc == 5) name = "dcps";
  if (opc == 1) {
    const u16 imm = static_cast<u16>(field(insn, 5, 16));
    if (imm == kBrkProbeImm || imm == kBrkStepImm)
      return refuse(Errno::kBusy, name, insn, "okprobes' own breakpoint, not an instruction");
  }
  return refuse(Errno::kOpNotSupp, name, insn,
                "it raises an exception on purpose, which must not happen inside the probe's "
                "own exception or from a slot");
}

}  // namespace

bool is_load_exclusive(u32 insn) {
  // size 001000 o2 L o1 Rs o0 Rt2 Rn Rt: exclusive when o2 = 0, except casp (o1 = 1, bit 31 = 0).
  if ((insn & 0x3f000000) != 0x08000000 || (insn & (1u << 23))) return false;
  if ((insn & (1u << 21)) && !(insn & (1u << 31))) return false;
  return insn & (1u << 22);
}

bool is_store_exclusive(u32 insn) {
  if ((insn & 0x3f000000) != 0x08000000 || (insn & (1u << 23))) return false;
  if ((insn & (1u << 21)) && !(insn & (1u << 31))) return false;
  return !(insn & (1u << 22));
}

bool branch_back_reaches(okp_addr_t addr, okp_addr_t slot) {
  const i64 d = static_cast<i64>((addr + kInsnSize) - (slot + kInsnSize));
  return d >= -(i64{1} << 27) && d < (i64{1} << 27);
}

u32 branch_back(okp_addr_t addr, okp_addr_t slot) {
  const i64 d = static_cast<i64>((addr + kInsnSize) - (slot + kInsnSize));
  return 0x14000000u | (static_cast<u32>(d >> 2) & 0x3ffffff);
}

bool is_brk(u32 insn, u16* imm) {
  if ((insn & 0xffe0001f) != 0xd4200000) return false;
  *imm = static_cast<u16>(field(insn, 5, 16));
  return true;
}

okp_addr_t direct_branch_target(okp_addr_t addr, u32 insn) {
  if ((insn & 0x7c000000) == 0x14000000)  // b, bl
    return addr + (sign_extend(field(insn, 0, 26), 26) << 2);
  if ((insn & 0xff000000) == 0x54000000 ||  // b.cond (bc.cond)
      (insn & 0x7e000000) == 0x34000000)    // cbz, cbnz
    return addr + (sign_extend(field(insn, 5, 19), 19) << 2);
  if ((insn & 0x7e000000) == 0x36000000)  // tbz, tbnz
    return addr + (sign_extend(field(insn, 5, 14), 14) << 2);
  return 0;
}

usize ftrace_ops_literal_bytes(const u8* last8) {
  u64 value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | last8[i];
  return value >> 52 == 0xfff ? 8 : 0;
}

namespace {
// emulate() inlines it: a call would cost emulate a stack frame on every simulated hit.
[[gnu::always_inline]] inline bool condition_holds_inline(u8 cond, u64 pstate) {
  const bool n = pstate & kPstateN, z = pstate & kPstateZ, c = pstate & kPstateC,
             v = pstate & kPstateV;
  bool r = true;
  switch (cond >> 1) {
    case 0: r = z; break;             // eq / ne
    case 1: r = c; break;             // cs / cc
    case 2: r = n; break;             // mi / pl
    case 3: r = v; break;             // vs / vc
    case 4: r = c && !z; break;       // hi / ls
    case 5: r = n == v; break;        // ge / lt
    case 6: r = n == v && !z; break;  // gt / le
    default: r = true; break;         // al / nv (both always)
  }
  return (cond & 1) && cond != 15 ? !r : r;
}
}  // namespace

OKP_HIT_PATH bool condition_holds(u8 cond, u64 pstate) { return condition_holds_inline(cond, pstate); }

ErrorOr<InsnPlan> plan_insn(okp_addr_t addr, u32 insn) {
  // Top-level op0 (bits 28..25) 0000-0011: udf, unallocated, SVE. The kernel has none of it.
  if ((insn & 0x18000000) == 0)
    return refuse(Errno::kOpNotSupp, insn >> 16 == 0 ? "udf" : "sve/unallocated", insn,
                  "not a base A64 instruction the kernel runs");
  if ((insn & 0x7c000000) == 0x14000000) {
    InsnPlan p = simulated(insn, insn >> 31 ? Sim::kBl : Sim::kB, insn >> 31 ? "bl" : "b");
    p.target = direct_branch_target(addr, insn);
    p.rd = 30;
    return p;
  }
  if ((insn & 0xff000000) == 0x54000000) {
    InsnPlan p = simulated(insn, Sim::kBCond, "b.cond");
    p.cond = static_cast<u8>(field(insn, 0, 4));
    p.target = direct_branch_target(addr, insn);
    return p;
  }
  if ((insn & 0x7e000000) == 0x34000000) {
    const bool nz = insn & (1u << 24);
    InsnPlan p = simulated(insn, Sim::kCbz, nz ? "cbnz" : "cbz");
    p.cond = nz;
    p.rn = static_cast<u8>(field(insn, 0, 5));
    p.size = insn >> 31 ? 8 : 4;
    p.target = direct_branch_target(addr, insn);
    return p;
  }
  if ((insn & 0x7e000000) == 0x36000000) {
    const bool nz = insn & (1u << 24);
    InsnPlan p = simulated(insn, Sim::kTbz, nz ? "tbnz" : "tbz");
    p.cond = nz;
    p.rn = static_cast<u8>(field(insn, 0, 5));
    p.bit = static_cast<u8>((insn >> 31) << 5 | field(insn, 19, 5));
    p.target = direct_branch_target(addr, insn);
    return p;
  }
  if ((insn & 0x1f000000) == 0x10000000) {
    const bool page = insn >> 31;
    InsnPlan p = simulated(insn, Sim::kAdr, page ? "adrp" : "adr");
    const i64 imm = sign_extend(field(insn, 5, 19) << 2 | field(insn, 29, 2), 21);
    p.rd = static_cast<u8>(field(insn, 0, 5));
    p.target = page ? (addr & ~okp_addr_t{0xfff}) + (imm << 12) : addr + imm;
    return p;
  }
  if ((insn & 0x3b000000) == 0x18000000) {  // load register (literal)
    const u32 opc = field(insn, 30, 2);
    if (insn & (1u << 26))
      return refuse(Errno::kOpNotSupp, "ldr (literal, FP/SIMD)", insn,
                    "it reads pc-relative into a register the trap frame does not hold");
    InsnPlan p = simulated(insn, opc == 3 ? Sim::kNop : Sim::kLdrLit,
                           opc == 0 ? "ldr (literal, 32-bit)" : opc == 1 ? "ldr (literal)"
                           : opc == 2 ? "ldrsw (literal)" : "prfm (literal)");
    p.rd = static_cast<u8>(field(insn, 0, 5));
    p.size = opc == 0 ? 4 : opc == 1 ? 8 : 0x84;
    p.target = addr + (sign_extend(field(insn, 5, 19), 19) << 2);
    return p;
  }
  if ((insn & 0xfe000000) == 0xd6000000) return plan_branch_register(insn);
  if ((insn & 0xff000000) == 0xd4000000) return plan_exception(insn);
  if ((insn & 0xffc00000) == 0xd5000000) return plan_system(insn);
  if (is_load_exclusive(insn) || is_store_exclusive(insn))
    return refuse(Errno::kOpNotSupp, is_load_exclusive(insn) ? "ldxr/ldaxr/ldxp" : "stxr/stlxr/stxp",
                  insn, "the exception return after a step clears the exclusive monitor, so the "
                  "sequence would never succeed");
  if ((insn & 0x7fe0ffe0) == 0x2a0003e0) {  // orr Rd, zr, Rm: mov (register)
    InsnPlan p = simulated(insn, Sim::kMovReg, "mov (register)");
    p.rd = static_cast<u8>(field(insn, 0, 5));
    p.rn = static_cast<u8>(field(insn, 16, 5));
    p.size = insn >> 31 ? 8 : 4;
    return p;
  }
  if ((insn & 0x3f800000) == 0x11000000 && field(insn, 0, 5) != 31) {
    // add/sub (immediate) without flags into a general register (an sp destination is left to
    // the slot: the exception return restores sp from the stack, not from the frame).
    const bool sub = insn & (1u << 30);
    InsnPlan p = simulated(insn, Sim::kAddImm, sub ? "sub (immediate)" : "add (immediate)");
    p.rd = static_cast<u8>(field(insn, 0, 5));
    p.rn = static_cast<u8>(field(insn, 5, 5));
    p.size = insn >> 31 ? 8 : 4;
    u64 imm = field(insn, 10, 12);
    if (insn & (1u << 22)) imm <<= 12;
    p.imm = sub ? 0 - imm : imm;
    return p;
  }
  return stepped(insn, "(stepped)");
}

namespace {

[[gnu::always_inline]] inline u64 read_x(const Regs* regs, u8 r) { return r == 31 ? 0 : regs->x[r]; }
[[gnu::always_inline]] inline void write_x(Regs* regs, u8 r, u64 v) {
  if (r != 31) regs->x[r] = v;  // 31 is the zero register here
}

// ldr/ldrsw (literal): Xt = *target, read without faulting, then pc = next. Out of line (and
// tail-called): the word it reads into has its address taken, which would give all of
// emulate() a stack frame and a stack protector's check.
[[gnu::noinline]] OKP_HIT_PATH bool load_literal(const InsnPlan& p, okp_addr_t next, Regs* regs) {
  if (p.size == 8) {
    u64 v;
    if (okp_seam_read_nofault(&v, p.target, sizeof(v))) return false;
    write_x(regs, p.rd, v);
  } else {
    u32 v;
    if (okp_seam_read_nofault(&v, p.target, sizeof(v))) return false;
    write_x(regs, p.rd, p.size == 4 ? u64{v} : static_cast<u64>(static_cast<i64>(static_cast<i32>(v))));
  }
  regs->pc = next;
  return true;
}

}  // namespace

OKP_HIT_PATH bool emulate(const InsnPlan& p, okp_addr_t addr, Regs* regs) {
  const okp_addr_t next = addr + kInsnSize;
  switch (p.sim) {
    case Sim::kNone:
      return false;  // planning never asks it (needs_slot)
    case Sim::kNop:
      regs->pc = next;
      return true;
    case Sim::kMovReg: {
      const u64 v = read_x(regs, p.rn);
      write_x(regs, p.rd, p.size == 4 ? static_cast<u32>(v) : v);
      regs->pc = next;
      return true;
    }
    case Sim::kAddImm: {
      const u64 v = (p.rn == 31 ? regs->sp : regs->x[p.rn]) + p.imm;
      regs->x[p.rd] = p.size == 4 ? static_cast<u32>(v) : v;
      regs->pc = next;
      return true;
    }
    case Sim::kB:
      regs->pc = p.target;
      return true;
    case Sim::kBl:
      regs->x[30] = next;
      regs->pc = p.target;
      return true;
    case Sim::kBCond:
      regs->pc = condition_holds_inline(p.cond, regs->pstate) ? p.target : next;
      return true;
    case Sim::kCbz: {
      u64 v = read_x(regs, p.rn);
      if (p.size == 4) v = static_cast<u32>(v);
      regs->pc = (v != 0) == static_cast<bool>(p.cond) ? p.target : next;
      return true;
    }
    case Sim::kTbz:
      regs->pc = ((read_x(regs, p.rn) >> p.bit) & 1) == p.cond ? p.target : next;
      return true;
    case Sim::kAdr:
      write_x(regs, p.rd, p.target);
      regs->pc = next;
      return true;
    case Sim::kLdrLit:
      return load_literal(p, next, regs);
    case Sim::kBr:
    case Sim::kRet:
      regs->pc = read_x(regs, p.rn);
      return true;
    case Sim::kBlr: {
      const u64 target = read_x(regs, p.rn);  // blr x30 branches to the old x30
      regs->x[30] = next;
      regs->pc = target;
      return true;
    }
    case Sim::kMrsDaif:
      write_x(regs, p.rd, regs->pstate & kPstateDaif);
      regs->pc = next;
      return true;
    case Sim::kMsrDaif:
      regs->pstate = (regs->pstate & ~kPstateDaif) | (read_x(regs, p.rd) & kPstateDaif);
      regs->pc = next;
      return true;
    case Sim::kMsrDaifSet:
      regs->pstate |= static_cast<u64>(p.bit) << 6;
      regs->pc = next;
      return true;
    case Sim::kMsrDaifClr:
      regs->pstate &= ~(static_cast<u64>(p.bit) << 6);
      regs->pc = next;
      return true;
  }
  return false;
}

}  // namespace okp::arm64
