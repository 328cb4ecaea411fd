// SPDX-License-Identifier: GPL-2.0
// arm64 (A64) instruction planning: how one probed instruction runs under okprobes' BRK.
//
// Every A64 instruction is one little-endian 32-bit word on a 4-byte boundary, so the decoder
// needs no length decoding, only classes:
//  - simulated in the trap (they read or write the PC, so a copy elsewhere computes the wrong
//    thing): b, bl, b.cond, cbz/cbnz, tbz/tbnz, adr/adrp, ldr/ldrsw/prfm (literal),
//    br/blr/ret; and, because a second exception costs more than the work, nop, mov (register),
//    add/sub (immediate) into a general register, and the DAIF moves (mrs/msr daif,
//    msr daifset/daifclr), which a slot would get wrong anyway (the step runs with DAIF masked);
//  - refused, with the instruction named: exclusives and everything between a load-exclusive
//    and its store-exclusive (the step's exception return clears the exclusive monitor, so the
//    store would fail forever), eret and the pointer-authenticated branches (their keys are not
//    ours to use), svc/hvc/smc/brk/hlt/dcps, moves of exception and debug state the step itself
//    overwrites (SPSel, ELR/SPSR/ESR/FAR_EL1, MDSCR_EL1), literal loads into FP/SIMD registers,
//    and encodings that are not base A64 (udf, SVE, unallocated);
//  - everything else runs out of line: copied into a slot of okprobes' own text, followed by
//    the step-ending BRK (kBrkStep).
//
// Freestanding and independent of the build's arch, so the host tests compile it on x86-64:
// the register frame is Regs, which probe_arch.h proves is struct okp_regs on arm64.
#pragma once

#include "core/error_or.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp::arm64 {

constexpr usize kInsnSize = 4;

// okprobes' BRK immediates. The kernel's (6.1 asm/brk-imm.h, unchanged through 6.12 but for
// additions in the low range) are: 0x004 kprobes, 0x005 uprobes, 0x006 kprobes' step,
// (0x007 kretprobes from 6.3), 0x100 faults, 0x400/0x401 kgdb, 0x800 BUG/WARN, 0x900-0x9ff
// KASAN, 0x5500-0x55ff UBSAN, 0x8000-0x83ff kCFI (base | type << 5 | target); GCC's
// __builtin_trap() is 0x3e8. 0x6b0/0x6b1 ("okp") lie in none of those ranges nor their masks,
// so the kernel's break-hook list hands them to okprobes' hook and nobody else's.
constexpr u16 kBrkProbeImm = 0x6b0;  // at a probed address
constexpr u16 kBrkStepImm = 0x6b1;   // after the copy in a slot: the step is over
constexpr u32 brk(u16 imm) { return 0xd4200000u | (static_cast<u32>(imm) << 5); }
constexpr u32 kBrkProbe = brk(kBrkProbeImm);
constexpr u32 kBrkStep = brk(kBrkStepImm);

// PSTATE bits the planner and the step touch.
constexpr u64 kPstateN = 1ull << 31, kPstateZ = 1ull << 30, kPstateC = 1ull << 29,
              kPstateV = 1ull << 28;
constexpr u64 kPstateDaif = 0xfull << 6;  // D A I F, bits 9..6

// The register frame a trap delivers (struct pt_regs' head on arm64).
struct Regs {
  u64 x[31];
  u64 sp, pc, pstate;
};

enum class Sim : u8 {
  kNone = 0,   // runs out of line in a slot
  kNop,        // nop, prfm (literal): pc += 4
  kMovReg,     // mov Xd|Wd, Xm|Wm (orr with the zero register)
  kAddImm,     // add/sub Xd, Xn|SP, #imm (no flags, Xd not SP)
  kB,          // b: pc = target
  kBl,         // bl: x30 = pc + 4; pc = target
  kBCond,      // b.cond: pc = cond ? target : pc + 4
  kCbz,        // cbz/cbnz (cond: 1 for cbnz)
  kTbz,        // tbz/tbnz (cond: 1 for tbnz; bit: the bit tested)
  kAdr,        // adr/adrp: Xd = target (computed at planning)
  kLdrLit,     // ldr Wt|Xt / ldrsw Xt (literal): Xt = *target
  kBr,         // br Xn
  kBlr,        // blr Xn: x30 = pc + 4 (after reading Xn)
  kRet,        // ret Xn
  kMrsDaif,    // mrs Xt, daif
  kMsrDaif,    // msr daif, Xt
  kMsrDaifSet, // msr daifset, #imm (imm in bit)
  kMsrDaifClr, // msr daifclr, #imm
};

struct InsnPlan {
  u32 insn = 0;            // the original word
  Sim sim = Sim::kNone;
  u8 rd = 0;               // destination (kMovReg/kAddImm/kAdr/kLdrLit/kMrsDaif/kBl: x30)
  u8 rn = 0;               // source / tested / branch register
  u8 cond = 0;             // kBCond: condition; kCbz/kTbz: 1 for the "not" form
  u8 bit = 0;              // kTbz: bit number; kMsrDaif*: the DAIF immediate
  u8 size = 8;             // kLdrLit: 4 (ldr Wt), 8 (ldr Xt), 0x84 (ldrsw: 4 bytes, signed);
                           // kMovReg/kCbz/kAddImm: 4 (32-bit) or 8
  u64 imm = 0;             // kAddImm: the signed addend
  okp_addr_t target = 0;   // branch target, adr result, literal address
  // kNone: the slot this plan was made for can end in `b <addr + 4>` (within ±128 MiB) instead
  // of the step BRK, so a probe without a post_handler costs one exception (boosted).
  bool boostable = false;
  const char* mnemonic = "?";  // static string, for reasons and debugfs
};

// The `b` from a slot's second word back to the instruction after addr, if in reach.
bool branch_back_reaches(okp_addr_t addr, okp_addr_t slot);
u32 branch_back(okp_addr_t addr, okp_addr_t slot);

// Plans the instruction word insn found at addr. The error names the instruction and why.
ErrorOr<InsnPlan> plan_insn(okp_addr_t addr, u32 insn);

// The exclusive monitor's instructions: ldxr/ldaxr/ldxp/ldaxp and stxr/stlxr/stxp/stlxp (not
// ldar/stlr/cas/casp, which share their encoding group and need no monitor).
bool is_load_exclusive(u32 insn);
bool is_store_exclusive(u32 insn);
// Any BRK (whose immediate is returned in *imm).
bool is_brk(u32 insn, u16* imm);

// The direct branch target of b/bl/b.cond/cbz/tbz at addr (0 when insn is none of them).
okp_addr_t direct_branch_target(okp_addr_t addr, u32 insn);

// With DYNAMIC_FTRACE_WITH_CALL_OPS (arm64, Linux 6.4+) the two words before each traceable
// function's entry are no code but a pointer to the ftrace_ops its call site uses (ftrace
// stores &ftrace_nop_ops there at boot): in a symbol's extent, which runs up to the next
// symbol, they are its last 8 bytes. Decoded as instructions, the low word of a KASLR-placed
// kernel address reads as a b or bl to a random place one boot in a few dozen. Given the 8
// bytes that end an extent (little endian), how many of them are such a pointer: 8 when they
// hold a kernel address (top 12 bits set: 48- and 52-bit VA; no A64 instruction a compiler
// ends a function with has them all set in its upper word), else 0.
usize ftrace_ops_literal_bytes(const u8* last8);

// Does condition code cond (0..15) hold for the flags in pstate?
bool condition_holds(u8 cond, u64 pstate);

// [hit] Runs a simulated instruction on the frame. False: the literal could not be read (the
// original instruction would have faulted the same way). A bool, not an ErrorOr: an ErrorOr
// (~190 bytes, returned through memory) cost the trap a stack frame and a stack-protector
// check on every simulated hit; probe_arch.h's emulate() turns false into the Error.
bool emulate(const InsnPlan& plan, okp_addr_t addr, Regs* regs);

}  // namespace okp::arm64
