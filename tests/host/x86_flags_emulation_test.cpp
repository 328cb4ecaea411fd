// SPDX-License-Identifier: GPL-2.0
// x86 flags instructions emulated in the trap (arch/x86/insn_plan.cpp), one trap and no slot:
// pushf, popf, cli, sti. Emulation runs on a frame whose sp points into a local array, so
// pushes and pops are checked in real memory.
#include <gtest/gtest.h>

#include "arch/x86/insn_plan.h"
#include "host_seam.h"
#include "x86_plan_test_helpers.h"

namespace {

using namespace x86_plan_test;

// --- Emulation: flags ------------------------------------------------------------------------

TEST(X86InsnPlan, PushfPushesTheFlags) {
  InsnPlan p = plan_ok({0x9c});
  ASSERT_EQ(p.emulation, Emulation::kPushf);
  EXPECT_FALSE(p.boostable);
  Frame f;
  f.regs.flags = 0x246 | kRF;  // RF is never part of the pushed image
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.sp, f.initial_sp() - 8);
  EXPECT_EQ(f.top(), 0x246u);
  EXPECT_EQ(f.regs.ip, kAddr + 1);
  EXPECT_EQ(f.regs.flags, 0x246 | kRF);
}

TEST(X86InsnPlan, PopfChangesWhatACpl0PopfMayChange) {
  InsnPlan p = plan_ok({0x9d});
  ASSERT_EQ(p.emulation, Emulation::kPopf);
  const unsigned long changeable =
      kCF | kPF | kAF | kZF | kSF | kTF | kIF | kDF | kOF | kNT | kAC | kID;
  const unsigned long kept = kIOPL | kRF | kVM | kVIF | kVIP;

  Frame f;
  f.regs.flags = 0x2;
  f.stack[32] = ~0ul;  // every bit set
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.flags, 0x2 | changeable);
  EXPECT_EQ(f.regs.sp, f.initial_sp() + 8);
  EXPECT_EQ(f.regs.ip, kAddr + 1);

  Frame g;
  g.regs.flags = 0x2 | changeable | kept;
  g.stack[32] = 0;  // every bit clear
  emulate_ok(p, g);
  EXPECT_EQ(g.regs.flags, 0x2 | kept);
}

TEST(X86InsnPlan, PushfThenPopfRoundTrips) {
  InsnPlan pushf = plan_ok({0x9c}), popf = plan_ok({0x9d});
  Frame f;
  f.regs.flags = 0x2 | kCF | kZF | kIF | kAC;
  emulate_ok(pushf, f);
  f.regs.flags = 0x2;
  emulate_ok(popf, f);
  EXPECT_EQ(f.regs.flags, 0x2 | kCF | kZF | kIF | kAC);
  EXPECT_EQ(f.regs.sp, f.initial_sp());
}

TEST(X86InsnPlan, CliAndSti) {
  InsnPlan cli = plan_ok({0xfa}), sti = plan_ok({0xfb});
  ASSERT_EQ(cli.emulation, Emulation::kCli);
  ASSERT_EQ(sti.emulation, Emulation::kSti);
  Frame f;
  f.regs.flags = 0x2 | kIF | kZF;
  emulate_ok(cli, f);
  EXPECT_EQ(f.regs.flags, 0x2 | kZF);
  EXPECT_EQ(f.regs.ip, kAddr + 1);
  emulate_ok(sti, f);
  EXPECT_EQ(f.regs.flags, 0x2 | kIF | kZF);
  EXPECT_EQ(f.regs.sp, f.initial_sp());
}

}  // namespace
