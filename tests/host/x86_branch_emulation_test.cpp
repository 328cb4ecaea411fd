// SPDX-License-Identifier: GPL-2.0
// x86 control transfers emulated in the trap (arch/x86/insn_plan.cpp), one trap and no slot:
// relative branches, the loop family, indirect branches. Emulation runs on a frame whose sp
// points into a local array, so pushes and pops are checked in real memory; jcc conditions and
// loop's 32-bit count are also checked against this CPU.
#include <gtest/gtest.h>

#include <initializer_list>

#include "arch/x86/insn_emulate.h"
#include "arch/x86/insn_plan.h"
#include "host_seam.h"
#include "x86_plan_test_helpers.h"

namespace {

using namespace x86_plan_test;

// --- Emulation: relative branches ------------------------------------------------------------

TEST(X86InsnPlan, JmpRel8AndRel32) {
  InsnPlan short_fwd = plan_ok({0xeb, 0x10});
  EXPECT_EQ(short_fwd.emulation, Emulation::kJmpRel);
  EXPECT_FALSE(short_fwd.boostable);
  Frame f;
  emulate_ok(short_fwd, f);
  EXPECT_EQ(f.regs.ip, kAddr + 2 + 0x10);

  InsnPlan short_back = plan_ok({0xeb, 0xfe});  // jmp . (to itself)
  Frame g;
  emulate_ok(short_back, g);
  EXPECT_EQ(g.regs.ip, kAddr);

  InsnPlan near = plan_ok({0xe9, 0x00, 0xff, 0xff, 0xff});  // jmp -0x100
  EXPECT_EQ(near.emulation, Emulation::kJmpRel);
  EXPECT_EQ(static_cast<okp_addr_t>(near.rel_target), kAddr + 5 - 0x100);
  Frame h;
  emulate_ok(near, h);
  EXPECT_EQ(h.regs.ip, kAddr + 5 - 0x100);
  EXPECT_EQ(h.regs.sp, h.initial_sp());

  InsnPlan bnd = plan_ok({0xf2, 0xe9, 0x10, 0x00, 0x00, 0x00});  // bnd jmp
  EXPECT_EQ(bnd.emulation, Emulation::kJmpRel);
  EXPECT_EQ(static_cast<okp_addr_t>(bnd.rel_target), kAddr + 6 + 0x10);
}

struct JccCase {
  unsigned long flags;
  bool taken;
};

// Intel SDM vol. 2, Jcc: one row per condition code, with flag sets on both sides.
const std::initializer_list<JccCase> kJccCases[16] = {
    /* 0 jo  */ {{kOF, true}, {0, false}, {kCF | kZF | kSF | kPF, false}},
    /* 1 jno */ {{0, true}, {kOF, false}, {kCF | kZF, true}},
    /* 2 jb  */ {{kCF, true}, {0, false}, {kZF, false}},
    /* 3 jae */ {{0, true}, {kCF, false}, {kZF | kSF, true}},
    /* 4 je  */ {{kZF, true}, {0, false}, {kCF | kSF | kOF, false}},
    /* 5 jne */ {{0, true}, {kZF, false}, {kCF, true}},
    /* 6 jbe */ {{kCF, true}, {kZF, true}, {0, false}, {kSF | kOF | kPF, false}},
    /* 7 ja  */ {{0, true}, {kCF, false}, {kZF, false}, {kSF | kOF, true}},
    /* 8 js  */ {{kSF, true}, {0, false}, {kOF, false}},
    /* 9 jns */ {{0, true}, {kSF, false}, {kOF | kZF, true}},
    /* a jp  */ {{kPF, true}, {0, false}, {kCF, false}},
    /* b jnp */ {{0, true}, {kPF, false}, {kZF, true}},
    /* c jl  */ {{kSF, true}, {kOF, true}, {0, false}, {kSF | kOF, false}, {kZF, false}},
    /* d jge */ {{0, true}, {kSF | kOF, true}, {kSF, false}, {kOF, false}, {kZF, true}},
    /* e jle */ {{kZF, true}, {kSF, true}, {kOF, true}, {0, false}, {kSF | kOF, false},
                 {kZF | kSF | kOF, true}},
    /* f jg  */ {{0, true}, {kSF | kOF, true}, {kZF, false}, {kSF, false}, {kOF, false},
                 {kZF | kSF | kOF, false}},
};

TEST(X86InsnPlan, EveryJccConditionTakenAndNotTaken) {
  for (u8 cc = 0; cc < 16; ++cc) {
    const Code rel8{static_cast<u8>(0x70 | cc), 0x20};
    const Code rel32{0x0f, static_cast<u8>(0x80 | cc), 0x00, 0xf0, 0xff, 0xff};  // -0x1000
    for (const Code* code : {&rel8, &rel32}) {
      InsnPlan p = plan_ok(*code);
      ASSERT_EQ(p.emulation, Emulation::kJcc);
      EXPECT_EQ(p.cond, cc);
      EXPECT_FALSE(p.boostable);
      const okp_addr_t next = kAddr + code->size;
      const okp_addr_t target = code == &rel8 ? next + 0x20 : next - 0x1000;
      EXPECT_EQ(static_cast<okp_addr_t>(p.rel_target), target);
      for (const JccCase& c : kJccCases[cc]) {
        // IF, AF, DF and TF never matter to a condition.
        for (unsigned long noise : {0ul, kIF | kAF | kDF | kTF | 0x2}) {
          Frame f;
          f.regs.flags = c.flags | noise;
          emulate_ok(p, f);
          EXPECT_EQ(f.regs.ip, c.taken ? target : next)
              << "cc " << int(cc) << " flags " << std::hex << f.regs.flags;
          EXPECT_EQ(f.regs.flags, c.flags | noise);
        }
      }
    }
  }
}

// This CPU's own verdict on condition cc for flags, through setcc (same condition encoding).
// The red zone is stepped over before pushing: the compiler may keep locals there.
#define OKP_HW_SETCC(cc)                                                                 \
  [](unsigned long flags) {                                                              \
    unsigned char r;                                                                     \
    __asm__ volatile("sub $128, %%rsp\n\tpushq %1\n\tpopfq\n\tset" #cc " %0\n\tadd $128, %%rsp" \
                     : "=q"(r)                                                           \
                     : "r"(flags)                                                        \
                     : "cc", "memory");                                                  \
    return r != 0;                                                                       \
  }

TEST(X86InsnPlan, JccAgreesWithThisCpuForAllFlagCombinations) {
  bool (*const hw[16])(unsigned long) = {
      OKP_HW_SETCC(o), OKP_HW_SETCC(no), OKP_HW_SETCC(b),  OKP_HW_SETCC(ae),
      OKP_HW_SETCC(e), OKP_HW_SETCC(ne), OKP_HW_SETCC(be), OKP_HW_SETCC(a),
      OKP_HW_SETCC(s), OKP_HW_SETCC(ns), OKP_HW_SETCC(p),  OKP_HW_SETCC(np),
      OKP_HW_SETCC(l), OKP_HW_SETCC(ge), OKP_HW_SETCC(le), OKP_HW_SETCC(g)};
  const unsigned long bits[] = {kCF, kPF, kZF, kSF, kOF};
  for (u8 cc = 0; cc < 16; ++cc) {
    InsnPlan p = plan_ok({static_cast<u8>(0x70 | cc), 0x08});
    for (unsigned combo = 0; combo < 32; ++combo) {
      unsigned long flags = 0x202;  // reserved bit 1 and IF (which popfq at CPL 3 keeps)
      for (int b = 0; b < 5; ++b)
        if (combo & (1u << b)) flags |= bits[b];
      Frame f;
      f.regs.flags = flags;
      emulate_ok(p, f);
      EXPECT_EQ(f.regs.ip == kAddr + 2 + 8, hw[cc](flags))
          << "cc " << int(cc) << " flags " << std::hex << flags;
    }
  }
}

TEST(X86InsnPlan, CallRel32PushesTheReturnAddress) {
  InsnPlan p = plan_ok({0xe8, 0x00, 0x10, 0x00, 0x00});
  EXPECT_EQ(p.emulation, Emulation::kCallRel);
  EXPECT_FALSE(p.boostable);
  Frame f;
  f.stack[31] = 0xdead;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ip, kAddr + 5 + 0x1000);
  EXPECT_EQ(f.regs.sp, f.initial_sp() - 8);
  EXPECT_EQ(f.stack[31], kAddr + 5);
  EXPECT_EQ(f.stack[32], 0u);  // nothing above the old top touched
}

TEST(X86InsnPlan, RetPopsTheReturnAddress) {
  for (const Code& c : {Code{0xc3}, Code{0xf3, 0xc3}, Code{0xf2, 0xc3}}) {  // ret, rep ret, bnd ret
    InsnPlan p = plan_ok(c);
    ASSERT_EQ(p.emulation, Emulation::kRet);
    Frame f;
    f.stack[32] = 0xffffffff81999999ul;
    emulate_ok(p, f);
    EXPECT_EQ(f.regs.ip, 0xffffffff81999999ul);
    EXPECT_EQ(f.regs.sp, f.initial_sp() + 8);
  }
}

TEST(X86InsnPlan, RetImm16ReleasesTheArguments) {
  InsnPlan p = plan_ok({0xc2, 0x10, 0x00});
  ASSERT_EQ(p.emulation, Emulation::kRet);
  EXPECT_EQ(p.rel_target, 0x10);
  Frame f;
  f.stack[32] = 0x1234000;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ip, 0x1234000u);
  EXPECT_EQ(f.regs.sp, f.initial_sp() + 8 + 0x10);
}

TEST(X86InsnPlan, RetFromAnUnreadableStackIsEfaultAndChangesNothing) {
  InsnPlan p = plan_ok({0xc3});
  Frame f;
  f.regs.sp = 0x100;
  auto r = okp::x86::emulate(p, kAddr, &f.regs);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -14);
  EXPECT_EQ(f.regs.sp, 0x100u);
  EXPECT_EQ(f.regs.ip, kAddr + 1);
}

// --- Emulation: loop family ------------------------------------------------------------------

struct LoopRun {
  okp_addr_t ip;
  unsigned long cx;
};

LoopRun run_loop(const Code& c, unsigned long cx, unsigned long flags = 0x202) {
  InsnPlan p = plan_ok(c);
  EXPECT_EQ(p.emulation, Emulation::kLoop);
  Frame f;
  f.regs.cx = cx;
  f.regs.flags = flags;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.flags, flags);  // no loop instruction writes flags
  return {f.regs.ip, f.regs.cx};
}

TEST(X86InsnPlan, Loop) {
  const Code loop{0xe2, 0xf0};  // loop -0x10
  const okp_addr_t next = kAddr + 2, target = kAddr + 2 - 0x10;
  LoopRun r = run_loop(loop, 3);
  EXPECT_EQ(r.ip, target);
  EXPECT_EQ(r.cx, 2u);
  r = run_loop(loop, 1);
  EXPECT_EQ(r.ip, next);
  EXPECT_EQ(r.cx, 0u);
  r = run_loop(loop, 0);  // wraps: 2^64 - 1 iterations to go
  EXPECT_EQ(r.ip, target);
  EXPECT_EQ(r.cx, ~0ul);
  r = run_loop(loop, 0x100000001ul);  // 64-bit count: upper half matters
  EXPECT_EQ(r.ip, target);
  EXPECT_EQ(r.cx, 0x100000000ul);
}

TEST(X86InsnPlan, LoopeAndLoopne) {
  const Code loope{0xe1, 0x10}, loopne{0xe0, 0x10};
  const okp_addr_t next = kAddr + 2, target = kAddr + 2 + 0x10;
  EXPECT_EQ(run_loop(loope, 3, 0x202 | kZF).ip, target);
  EXPECT_EQ(run_loop(loope, 3, 0x202).ip, next);
  EXPECT_EQ(run_loop(loope, 3, 0x202).cx, 2u);  // decremented even when not taken
  EXPECT_EQ(run_loop(loope, 1, 0x202 | kZF).ip, next);
  EXPECT_EQ(run_loop(loopne, 3, 0x202).ip, target);
  EXPECT_EQ(run_loop(loopne, 3, 0x202 | kZF).ip, next);
  EXPECT_EQ(run_loop(loopne, 1, 0x202).ip, next);
  EXPECT_EQ(run_loop(loopne, 1, 0x202).cx, 0u);
}

TEST(X86InsnPlan, Jrcxz) {
  const Code jrcxz{0xe3, 0x10};
  const okp_addr_t next = kAddr + 2, target = kAddr + 2 + 0x10;
  EXPECT_EQ(run_loop(jrcxz, 0).ip, target);
  EXPECT_EQ(run_loop(jrcxz, 0).cx, 0u);
  EXPECT_EQ(run_loop(jrcxz, 1).ip, next);
  EXPECT_EQ(run_loop(jrcxz, 0x100000000ul).ip, next);  // rcx, not ecx
}

TEST(X86InsnPlan, AddressSizePrefixCountsInEcx) {
  const Code jecxz{0x67, 0xe3, 0x10}, loopl{0x67, 0xe2, 0x10};
  const okp_addr_t next = kAddr + 3, target = kAddr + 3 + 0x10;
  InsnPlan p = plan_ok(jecxz);
  EXPECT_TRUE(p.addr32);
  EXPECT_EQ(p.cond, okp::x86::kLoopKindJrcxz);
  EXPECT_EQ(run_loop(jecxz, 0x100000000ul).ip, target);  // ecx is 0
  EXPECT_EQ(run_loop(jecxz, 0x100000000ul).cx, 0x100000000ul);
  EXPECT_EQ(run_loop(jecxz, 1).ip, next);
  LoopRun r = run_loop(loopl, 0x100000001ul);  // ecx 1 -> 0: not taken
  EXPECT_EQ(r.ip, next);
  EXPECT_EQ(r.cx, 0u);  // the 32-bit write zero-extends
  r = run_loop(loopl, 0xffffffff00000000ul);  // ecx 0 -> 0xffffffff: taken
  EXPECT_EQ(r.ip, target);
  EXPECT_EQ(r.cx, 0xfffffffful);
}

unsigned long hw_loopl(unsigned long rcx) {
  __asm__ volatile(".byte 0x67\n\tloop 1f\n1:" : "+c"(rcx));
  return rcx;
}

TEST(X86InsnPlan, AddressSizeLoopAgreesWithThisCpu) {
  for (unsigned long cx : {0x100000002ul, 0x100000001ul, 0xffffffff00000000ul, 5ul, 0ul}) {
    EXPECT_EQ(run_loop({0x67, 0xe2, 0x00}, cx).cx, hw_loopl(cx)) << std::hex << cx;
  }
}

// --- Emulation: indirect branches ------------------------------------------------------------

TEST(X86InsnPlan, CallAndJmpThroughARegister) {
  InsnPlan call = plan_ok({0xff, 0xd0});  // call *%rax
  ASSERT_EQ(call.emulation, Emulation::kCallIndirect);
  EXPECT_TRUE(call.indirect.is_register);
  EXPECT_EQ(call.indirect.reg, okp::x86::kRegIndexAx);
  Frame f;
  f.regs.ax = 0xffffffff81abcdeful;
  emulate_ok(call, f);
  EXPECT_EQ(f.regs.ip, 0xffffffff81abcdeful);
  EXPECT_EQ(f.regs.sp, f.initial_sp() - 8);
  EXPECT_EQ(f.top(), kAddr + 2);

  InsnPlan jmp = plan_ok({0x41, 0xff, 0xe3});  // jmp *%r11
  ASSERT_EQ(jmp.emulation, Emulation::kJmpIndirect);
  EXPECT_EQ(jmp.indirect.reg, okp::x86::kRegIndexR11);
  Frame g;
  g.regs.r11 = 0xffffffff81000010ul;
  emulate_ok(jmp, g);
  EXPECT_EQ(g.regs.ip, 0xffffffff81000010ul);
  EXPECT_EQ(g.regs.sp, g.initial_sp());

  InsnPlan notrack = plan_ok({0x3e, 0xff, 0xe0});  // notrack jmp *%rax
  EXPECT_EQ(notrack.emulation, Emulation::kJmpIndirect);
}

TEST(X86InsnPlan, CallThroughBasePlusDisplacement) {
  unsigned long function_pointer = 0xffffffff81fedcbaul;
  InsnPlan p = plan_ok({0xff, 0x57, 0x10});  // call *0x10(%rdi)
  ASSERT_EQ(p.emulation, Emulation::kCallIndirect);
  EXPECT_FALSE(p.indirect.is_register);
  EXPECT_EQ(p.indirect.reg, okp::x86::kRegIndexDi);
  EXPECT_EQ(p.indirect.index, okp::x86::kNoReg);
  EXPECT_EQ(p.indirect.disp, 0x10);
  Frame f;
  f.regs.di = reinterpret_cast<unsigned long>(&function_pointer) - 0x10;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ip, function_pointer);
  EXPECT_EQ(f.top(), kAddr + 3);
}

TEST(X86InsnPlan, CallThroughTheStackReadsBeforePushing) {
  InsnPlan p = plan_ok({0xff, 0x54, 0x24, 0x08});  // call *0x8(%rsp)
  ASSERT_EQ(p.emulation, Emulation::kCallIndirect);
  Frame f;
  f.stack[33] = 0xffffffff81111111ul;  // at old rsp + 8
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ip, 0xffffffff81111111ul);
  EXPECT_EQ(f.stack[31], kAddr + 4);
}

TEST(X86InsnPlan, JmpThroughAJumpTable) {
  alignas(8) unsigned long table[4] = {1, 2, 0xffffffff81333333ul, 4};
  // jmp *0x10(,%rax,8) with rax chosen so that the entry read is table[2].
  InsnPlan p = plan_ok({0xff, 0x24, 0xc5, 0x10, 0x00, 0x00, 0x00});
  ASSERT_EQ(p.emulation, Emulation::kJmpIndirect);
  EXPECT_EQ(p.indirect.reg, okp::x86::kNoReg);
  EXPECT_EQ(p.indirect.index, okp::x86::kRegIndexAx);
  EXPECT_EQ(p.indirect.scale, 8);
  Frame f;
  f.regs.ax = (reinterpret_cast<unsigned long>(&table[2]) - 0x10) / 8;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ip, 0xffffffff81333333ul);
}

TEST(X86InsnPlan, CallThroughBaseAndScaledIndex) {
  unsigned long table[3] = {0, 0, 0xffffffff81444444ul};
  InsnPlan p = plan_ok({0xff, 0x14, 0xcf});  // call *(%rdi,%rcx,8)
  ASSERT_EQ(p.emulation, Emulation::kCallIndirect);
  Frame f;
  f.regs.di = reinterpret_cast<unsigned long>(table);
  f.regs.cx = 2;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ip, 0xffffffff81444444ul);
}

TEST(X86InsnPlan, CallAndJmpThroughRipRelativeMemory) {
  unsigned long function_pointer = 0xffffffff81555555ul;
  const Code call{0xff, 0x15, 0x00, 0x01, 0x00, 0x00};  // call *0x100(%rip)
  // Place the probed instruction so that its next-instruction address + 0x100 is the variable.
  const okp_addr_t addr = reinterpret_cast<okp_addr_t>(&function_pointer) - 0x100 - call.size;
  InsnPlan p = plan_ok(call, addr, addr);
  ASSERT_EQ(p.emulation, Emulation::kCallIndirect);
  EXPECT_TRUE(p.indirect.rip_relative);
  EXPECT_FALSE(p.rip_relative);  // nothing is copied to a slot
  Frame f(addr);
  emulate_ok(p, f, addr);
  EXPECT_EQ(f.regs.ip, function_pointer);
  EXPECT_EQ(f.top(), addr + call.size);

  const Code jmp{0xff, 0x25, 0x00, 0xff, 0xff, 0xff};  // jmp *-0x100(%rip)
  const okp_addr_t jaddr = reinterpret_cast<okp_addr_t>(&function_pointer) + 0x100 - jmp.size;
  InsnPlan q = plan_ok(jmp, jaddr, jaddr);
  ASSERT_EQ(q.emulation, Emulation::kJmpIndirect);
  Frame g(jaddr);
  emulate_ok(q, g, jaddr);
  EXPECT_EQ(g.regs.ip, function_pointer);
  EXPECT_EQ(g.regs.sp, g.initial_sp());
}

TEST(X86InsnPlan, IndirectBranchThroughUnreadableMemoryIsEfaultAndChangesNothing) {
  InsnPlan p = plan_ok({0xff, 0x57, 0x10});  // call *0x10(%rdi)
  Frame f;
  f.regs.di = 0;
  auto r = okp::x86::emulate(p, kAddr, &f.regs);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -14);
  EXPECT_EQ(f.regs.sp, f.initial_sp());
  EXPECT_EQ(f.regs.ip, kAddr + 1);
}

}  // namespace
