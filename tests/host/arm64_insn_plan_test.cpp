// SPDX-License-Identifier: GPL-2.0
// The arm64 planner (arch/arm64/insn_plan.cpp) on the host: each class's plan, its simulation
// on a frame (arm64::Regs), and the refusals with their errno. Encodings are the assembler's
// (aarch64-linux-gnu-as -march=armv8.8-a+pauth+lse, objdump -d).
#include <gtest/gtest.h>

#include <cstring>

#include "arch/arm64/insn_plan.h"

using namespace okp;
using namespace okp::arm64;

namespace {

constexpr okp_addr_t kAt = 0xffffffc008001000ul;

InsnPlan ok(ErrorOr<InsnPlan> p) {
  EXPECT_FALSE(p.is_error()) << (p.is_error() ? p.error().reason() : "");
  return p.is_error() ? InsnPlan{} : p.release_value();
}

// The errno of a refusal, and its reason contains `part`.
void refused(u32 insn, Errno code, const char* part) {
  auto p = plan_insn(kAt, insn);
  ASSERT_TRUE(p.is_error()) << std::hex << insn << " was planned as " << p.value().mnemonic;
  EXPECT_EQ(p.error().code(), code) << std::hex << insn;
  EXPECT_NE(std::strstr(p.error().reason(), part), nullptr)
      << std::hex << insn << ": " << p.error().reason();
}

void stepped(u32 insn) {
  auto p = ok(plan_insn(kAt, insn));
  EXPECT_EQ(p.sim, Sim::kNone) << std::hex << insn << " " << p.mnemonic;
}

Regs frame() {
  Regs r{};
  for (int i = 0; i < 31; ++i) r.x[i] = 0x1000 + i;
  r.sp = 0xffffffc00a00f000ul;
  r.pc = kAt;
  r.pstate = 0x5;  // EL1h, flags clear, DAIF clear
  return r;
}

Regs run(u32 insn, Regs r, okp_addr_t at = kAt) {
  auto p = ok(plan_insn(at, insn));
  EXPECT_NE(p.sim, Sim::kNone) << std::hex << insn;
  r.pc = at;
  EXPECT_TRUE(emulate(p, at, &r));
  return r;
}

}  // namespace

TEST(Arm64Plan, DirectBranchTargets) {
  EXPECT_EQ(direct_branch_target(kAt, 0x14000004), kAt + 16);        // b .+16
  EXPECT_EQ(direct_branch_target(kAt, 0x97fffffc), kAt - 16);        // bl .-16
  EXPECT_EQ(direct_branch_target(kAt, 0x54000040), kAt + 8);         // b.eq .+8
  EXPECT_EQ(direct_branch_target(kAt, 0x54000010), kAt);             // bc.eq .
  EXPECT_EQ(direct_branch_target(kAt, 0xb4000060), kAt + 12);        // cbz x0, .+12
  EXPECT_EQ(direct_branch_target(kAt, 0x37080040), kAt + 8);         // tbnz w0, #1, .+8
  EXPECT_EQ(direct_branch_target(kAt, 0x17ffffff), kAt - 4);         // b .-4
  EXPECT_EQ(direct_branch_target(kAt, 0xd65f03c0), 0ul);             // ret: not direct
  EXPECT_EQ(direct_branch_target(kAt, 0xaa0103e0), 0ul);             // mov x0, x1
}

TEST(Arm64Plan, BranchesSimulated) {
  Regs r = run(0x14000004, frame());  // b .+16
  EXPECT_EQ(r.pc, kAt + 16);
  r = run(0x97fffffc, frame());  // bl .-16
  EXPECT_EQ(r.pc, kAt - 16);
  EXPECT_EQ(r.x[30], kAt + 4);
  // blr x30 branches to the old x30, then links.
  Regs f = frame();
  f.x[30] = 0xffffffc008123450ul;
  r = run(0xd63f03c0, f);  // blr x30
  EXPECT_EQ(r.pc, 0xffffffc008123450ul);
  EXPECT_EQ(r.x[30], kAt + 4);
  f.x[5] = 0xffffffc008555550ul;
  r = run(0xd65f00a0, f);  // ret x5
  EXPECT_EQ(r.pc, 0xffffffc008555550ul);
  EXPECT_EQ(r.x[30], f.x[30]);
  r = run(0xd61f00a0, f);  // br x5
  EXPECT_EQ(r.pc, 0xffffffc008555550ul);
}

TEST(Arm64Plan, CompareAndTestBranches) {
  Regs f = frame();
  f.x[0] = 1ul << 32;  // w0 == 0, x0 != 0
  EXPECT_EQ(run(0xb4000060, f).pc, kAt + 4);   // cbz x0: not taken
  EXPECT_EQ(run(0x34000060, f).pc, kAt + 12);  // cbz w0: taken
  EXPECT_EQ(run(0xb5000060, f).pc, kAt + 12);  // cbnz x0: taken
  EXPECT_EQ(run(0x35000060, f).pc, kAt + 4);   // cbnz w0: not taken
  f.x[3] = 1ul << 33;
  EXPECT_EQ(run(0xb6080043, f).pc, kAt + 4);   // tbz x3, #33, .+8: bit set, not taken
  EXPECT_EQ(run(0xb7080043, f).pc, kAt + 8);   // tbnz x3, #33, .+8: taken
  f.x[3] = 0;
  EXPECT_EQ(run(0xb6080043, f).pc, kAt + 8);
  EXPECT_EQ(run(0xb7080043, f).pc, kAt + 4);
  f.x[0] = 0;
  EXPECT_EQ(run(0xb4000060, f).pc, kAt + 12);  // xzr source: cbz xzr is always taken
}

TEST(Arm64Plan, ConditionsMatchTheArchitecture) {
  for (u32 nzcv = 0; nzcv < 16; ++nzcv) {
    const bool n = nzcv & 8, z = nzcv & 4, c = nzcv & 2, v = nzcv & 1;
    const bool expect[16] = {z, !z, c, !c, n, !n, v, !v, c && !z, !(c && !z), n == v, n != v,
                             !z && n == v, !(!z && n == v), true, true};
    for (u8 cond = 0; cond < 16; ++cond) {
      EXPECT_EQ(condition_holds(cond, static_cast<u64>(nzcv) << 28), expect[cond])
          << "cond " << int(cond) << " nzcv " << nzcv;
      Regs f = frame();
      f.pstate |= static_cast<u64>(nzcv) << 28;
      EXPECT_EQ(run(0x54000040 | cond, f).pc, expect[cond] ? kAt + 8 : kAt + 4);
    }
  }
}

TEST(Arm64Plan, PcRelativeAddresses) {
  EXPECT_EQ(run(0x10000020, frame()).x[0], kAt + 4);          // adr x0, .+4
  EXPECT_EQ(run(0x10ffffe0, frame()).x[0], kAt - 4);          // adr x0, .-4
  EXPECT_EQ(run(0x90000000, frame(), kAt + 0x123).x[0], kAt);  // adrp x0, . (page)
  EXPECT_EQ(run(0xb0000001, frame()).x[1], kAt + 0x1000);     // adrp x1, .+4096
  Regs r = run(0x1000003f, frame());                           // adr xzr: discarded
  EXPECT_EQ(r.x[30], frame().x[30]);
  EXPECT_EQ(r.pc, kAt + 4);
}

TEST(Arm64Plan, LiteralLoads) {
  alignas(8) static u64 literal[2] = {0xffffffff80000005ul, 0};
  const okp_addr_t at = reinterpret_cast<okp_addr_t>(literal) - 8;  // literal at .+8
  EXPECT_EQ(run(0x58000042, frame(), at).x[2], 0xffffffff80000005ul);  // ldr x2, .+8
  EXPECT_EQ(run(0x18000042, frame(), at).x[2], 0x80000005ul);          // ldr w2: zero-extends
  EXPECT_EQ(run(0x98000042, frame(), at).x[2], 0xffffffff80000005ul);  // ldrsw x2: sign-extends
  Regs r = run(0xd8000040, frame(), at);                               // prfm pldl1keep, .+8
  EXPECT_EQ(r.pc, at + 4);
  EXPECT_EQ(ok(plan_insn(at, 0xd8000040)).sim, Sim::kNop);
  // An unreadable literal is the original instruction's fault: emulate reports it.
  auto p = ok(plan_insn(8, 0x58000042));
  Regs f = frame();
  EXPECT_FALSE(emulate(p, 8, &f));
  refused(0x9c000000, Errno::kOpNotSupp, "FP/SIMD");  // ldr q0, .
  refused(0x5c000001, Errno::kOpNotSupp, "FP/SIMD");  // ldr d1, .
}

TEST(Arm64Plan, RegisterMovesInTheTrap) {
  Regs f = frame();
  f.x[1] = 0x1234567890abcdeful;
  EXPECT_EQ(run(0xaa0103e0, f).x[0], f.x[1]);                    // mov x0, x1
  EXPECT_EQ(run(0x2a0103e0, f).x[0], 0x90abcdeful);              // mov w0, w1
  EXPECT_EQ(run(0xaa1f03e0, f).x[0], 0ul);                       // mov x0, xzr
  EXPECT_EQ(run(0x2a1f03e3, f).x[3], 0ul);                       // mov w3, wzr
  EXPECT_EQ(run(0x910003fd, f).x[29], f.sp);                     // mov x29, sp
  EXPECT_EQ(run(0x11001041, f).x[1], (f.x[2] + 4) & 0xffffffff);  // add w1, w2, #4
  EXPECT_EQ(run(0xd1004020, f).x[0], f.x[1] - 16);               // sub x0, x1, #16
  EXPECT_EQ(run(0x91400420, f).x[0], f.x[1] + 0x1000);           // add x0, x1, #1, lsl #12
  EXPECT_EQ(run(0xd503201f, f).pc, kAt + 4);                     // nop
  // Not simulated: sp written (the exception return restores sp from the stack), flags set,
  // a shifted register.
  stepped(0x910043ff);  // add sp, sp, #16
  stepped(0xb1000420);  // adds x0, x1, #1
  stepped(0xaa0107e0);  // orr x0, xzr, x1, lsl #1
  stepped(0xf2800020);  // movk x0, #1
  stepped(0xf94007e0);  // ldr x0, [sp, #8]
  stepped(0xa9bf7bfd);  // stp x29, x30, [sp, #-16]!
}

TEST(Arm64Plan, DaifInTheFrame) {
  Regs f = frame();
  f.pstate |= 0x80;  // I masked
  EXPECT_EQ(run(0xd53b4220, f).x[0], 0x80ul);                 // mrs x0, daif
  f.x[0] = 0x3c0 | 0xf0000000;                                // only DAIF bits are taken
  EXPECT_EQ(run(0xd51b4220, f).pstate, 0x5ul | 0x3c0);        // msr daif, x0
  EXPECT_EQ(run(0xd50342df, frame()).pstate, 0x5ul | 0x80);   // msr daifset, #2
  EXPECT_EQ(run(0xd50342df, frame()).pc, kAt + 4);
  EXPECT_EQ(run(0xd50343ff, f).pstate, 0x5ul);                // msr daifclr, #3 (I, F)
}

TEST(Arm64Plan, Hints) {
  EXPECT_EQ(ok(plan_insn(kAt, 0xd503205f)).sim, Sim::kNop);  // wfe: may wake at any time
  EXPECT_EQ(ok(plan_insn(kAt, 0xd503203f)).sim, Sim::kNop);  // yield
  EXPECT_EQ(ok(plan_insn(kAt, 0xd503245f)).sim, Sim::kNop);  // bti c
  stepped(0xd503233f);                                        // paciasp
  stepped(0xd50323bf);                                        // autiasp
  refused(0xd503209f, Errno::kOpNotSupp, "'sev'");
}

TEST(Arm64Plan, SystemInstructions) {
  stepped(0xd5033f9f);  // dsb sy
  stepped(0xd50b7e20);  // dc civac, x0
  stepped(0xd538d080);  // mrs x0, tpidr_el1
  stepped(0xd5384100);  // mrs x0, sp_el0 (current)
  refused(0xd5184021, Errno::kOpNotSupp, "msr elr_el1");
  refused(0xd5385202, Errno::kOpNotSupp, "mrs esr_el1");
  refused(0xd5386003, Errno::kOpNotSupp, "mrs far_el1");
  refused(0xd5184000, Errno::kOpNotSupp, "msr spsr_el1");
  refused(0xd50041bf, Errno::kOpNotSupp, "msr spsel");
  refused(0xd500419f, Errno::kOpNotSupp, "pstate field");   // msr pan, #1
  refused(0xd5181000, Errno::kOpNotSupp, "msr (register)");  // msr sctlr_el1, x0
}

TEST(Arm64Plan, Exclusives) {
  const u32 loads[] = {0xc85f7c20 /* ldxr */, 0xc85ffc20 /* ldaxr */, 0xc87f8440 /* ldaxp */,
                       0x085f7c20 /* ldxrb */};
  const u32 stores[] = {0xc8027c20 /* stxr */, 0xc8238440 /* stlxp */, 0x48027c20 /* stxrh */};
  const u32 neither[] = {0xc8dffc20 /* ldar */, 0xc89ffc20 /* stlr */, 0xc8a07c41 /* cas */,
                         0x48207c82 /* casp */, 0xf94007e0 /* ldr */};
  for (u32 i : loads) {
    EXPECT_TRUE(is_load_exclusive(i)) << std::hex << i;
    EXPECT_FALSE(is_store_exclusive(i)) << std::hex << i;
    refused(i, Errno::kOpNotSupp, "ldxr");
  }
  for (u32 i : stores) {
    EXPECT_TRUE(is_store_exclusive(i)) << std::hex << i;
    EXPECT_FALSE(is_load_exclusive(i)) << std::hex << i;
    refused(i, Errno::kOpNotSupp, "stxr");
  }
  for (u32 i : neither) {
    EXPECT_FALSE(is_load_exclusive(i) || is_store_exclusive(i)) << std::hex << i;
    stepped(i);
  }
}

TEST(Arm64Plan, RefusedByName) {
  refused(0xd4000001, Errno::kOpNotSupp, "'svc'");
  refused(0xd4000022, Errno::kOpNotSupp, "'hvc'");
  refused(0xd4000003, Errno::kOpNotSupp, "'smc'");
  refused(0xd4400000, Errno::kOpNotSupp, "'hlt'");
  refused(0xd4200080, Errno::kOpNotSupp, "'brk'");  // brk #4: the kernel's kprobes'
  refused(kBrkProbe, Errno::kBusy, "okprobes' own");
  refused(kBrkStep, Errno::kBusy, "okprobes' own");
  refused(0xd69f03e0, Errno::kOpNotSupp, "'eret'");
  refused(0xd69f0bff, Errno::kOpNotSupp, "'eret'");  // eretaa
  refused(0xd71f0822, Errno::kOpNotSupp, "pointer-authenticated");  // braa x1, x2
  refused(0xd63f087f, Errno::kOpNotSupp, "pointer-authenticated");  // blraaz x3
  refused(0xd65f0fff, Errno::kOpNotSupp, "pointer-authenticated");  // retab
  refused(0x00000000, Errno::kOpNotSupp, "'udf'");
  refused(0x04a00000, Errno::kOpNotSupp, "sve");  // an SVE encoding (op0 0010)
}

TEST(Arm64Plan, BreakpointImmediates) {
  u16 imm = 0;
  EXPECT_TRUE(is_brk(kBrkProbe, &imm));
  EXPECT_EQ(imm, kBrkProbeImm);
  EXPECT_TRUE(is_brk(kBrkStep, &imm));
  EXPECT_EQ(imm, kBrkStepImm);
  EXPECT_EQ(kBrkProbe, 0xd420d600u);  // brk #0x6b0
  EXPECT_EQ(kBrkStep, 0xd420d620u);   // brk #0x6b1
  EXPECT_FALSE(is_brk(0xd4000001, &imm));
  // Clear of the kernel's immediates and their masks (asm/brk-imm.h, 6.1..6.12).
  struct Range { u16 lo, hi; } taken[] = {{0x004, 0x007}, {0x100, 0x100}, {0x3e8, 0x3e8},
                                          {0x400, 0x401}, {0x800, 0x800}, {0x900, 0x9ff},
                                          {0x5500, 0x55ff}, {0x8000, 0xffff}};
  for (const auto& r : taken) {
    EXPECT_FALSE(kBrkProbeImm >= r.lo && kBrkProbeImm <= r.hi);
    EXPECT_FALSE(kBrkStepImm >= r.lo && kBrkStepImm <= r.hi);
  }
}

TEST(Arm64Plan, BoostedSlotBranchesBack) {
  // The slot's second word branches to the instruction after the probe.
  const okp_addr_t slot = kAt + 0x100000;
  const u32 b = branch_back(kAt, slot);
  EXPECT_EQ(b & 0xfc000000u, 0x14000000u);
  EXPECT_EQ(direct_branch_target(slot + 4, b), kAt + 4);
  EXPECT_EQ(direct_branch_target(kAt - 0x1000 + 4, branch_back(kAt, kAt - 0x1000)), kAt + 4);
  // b reaches [-128 MiB, +128 MiB - 4] from the slot's second word.
  EXPECT_TRUE(branch_back_reaches(kAt, kAt + (1ul << 27)));
  EXPECT_TRUE(branch_back_reaches(kAt, kAt - (1ul << 27) + 4));
  EXPECT_FALSE(branch_back_reaches(kAt, kAt - (1ul << 27)));
  EXPECT_FALSE(branch_back_reaches(kAt, kAt + (1ul << 27) + 4));
  EXPECT_EQ(direct_branch_target(kAt + (1ul << 27) + 4, branch_back(kAt, kAt + (1ul << 27))),
            kAt + 4);
}

// The two words before a traceable function on a CALL_OPS kernel hold a pointer to an
// ftrace_ops. One boot in a few dozen its low word, placed by KASLR, reads as a bl: the trap
// path walk followed it into the BPF JIT (build_body) and overflowed on Debian's arm64 6.12.
TEST(Arm64FtraceOpsLiteral, AKernelPointerAtTheEndOfAnExtentIsData) {
  const u64 ops = 0xffffa2c5'9467'1c28ull;  // low word 0x94671c28: bl
  u8 last8[8];
  for (int i = 0; i < 8; ++i) last8[i] = static_cast<u8>(ops >> (8 * i));
  const u32 low = static_cast<u32>(ops);
  ASSERT_NE(okp::arm64::direct_branch_target(0xffff800080010000ull, low), 0u)
      << "the low word must read as a branch for this test to mean anything";
  EXPECT_EQ(okp::arm64::ftrace_ops_literal_bytes(last8), 8u);
  const u64 linear_52bit = 0xfff0'0000'1234'5678ull;  // a kmalloc'd ops, 52-bit VA
  for (int i = 0; i < 8; ++i) last8[i] = static_cast<u8>(linear_52bit >> (8 * i));
  EXPECT_EQ(okp::arm64::ftrace_ops_literal_bytes(last8), 8u);
}

TEST(Arm64FtraceOpsLiteral, CodeThatEndsAFunctionIsCode) {
  const u32 endings[][2] = {
      {0xa8c17bfd, 0xd65f03c0},  // ldp x29, x30, [sp], #16; ret
      {0x17ffff00, 0xd503201f},  // b <tail call>; nop (padding)
      {0xd65f03c0, 0xd503201f},  // ret; nop
      {0xd503201f, 0xd503201f},  // the two NOPs ftrace has not yet given a pointer
      {0x00000000, 0x00000000},
      {0xd4200000, 0xd4200000},  // brk #0
  };
  for (auto& e : endings) {
    u8 last8[8];
    for (int w = 0; w < 2; ++w)
      for (int i = 0; i < 4; ++i) last8[4 * w + i] = static_cast<u8>(e[w] >> (8 * i));
    EXPECT_EQ(okp::arm64::ftrace_ops_literal_bytes(last8), 0u) << std::hex << e[0] << " " << e[1];
  }
}
