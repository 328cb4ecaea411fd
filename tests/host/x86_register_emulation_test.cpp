// SPDX-License-Identifier: GPL-2.0
// x86 register moves and address arithmetic emulated in the trap (one trap, no slot):
// each against what this CPU computes for the same instruction.
#include <gtest/gtest.h>

#include "x86_plan_test_helpers.h"

namespace {

using namespace x86_plan_test;


// Each emulated move against what this CPU computes for the same instruction.
TEST(X86InsnPlan, MovRegisterToRegister) {
  InsnPlan p = plan_ok({0x48, 0x89, 0xf8});  // mov %rdi,%rax
  ASSERT_EQ(p.emulation, Emulation::kMovReg);
  EXPECT_FALSE(p.boostable);
  Frame f;
  f.regs.di = 0x1122334455667788ul;
  f.regs.ax = 1;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ax, 0x1122334455667788ul);
  EXPECT_EQ(f.regs.di, 0x1122334455667788ul);
  EXPECT_EQ(f.regs.ip, kAddr + 3);
  EXPECT_EQ(f.regs.sp, f.initial_sp());
  EXPECT_EQ(f.regs.flags, 0x202u);

  // The 8b form, extended registers on both sides.
  InsnPlan q = plan_ok({0x4d, 0x8b, 0xfc});  // mov %r12,%r15
  ASSERT_EQ(q.emulation, Emulation::kMovReg);
  Frame g;
  g.regs.r12 = 42;
  emulate_ok(q, g);
  EXPECT_EQ(g.regs.r15, 42u);
}

TEST(X86InsnPlan, MovOf32BitsZeroExtends) {
  unsigned long cpu_result;
  asm("mov $-1, %0\n\tmov %%esi, %k0" : "=&r"(cpu_result) : "S"(0xdeadbeefcafef00dul));
  InsnPlan p = plan_ok({0x89, 0xf0});  // mov %esi,%eax
  ASSERT_EQ(p.emulation, Emulation::kMovReg);
  Frame f;
  f.regs.ax = ~0ul;
  f.regs.si = 0xdeadbeefcafef00dul;
  emulate_ok(p, f);
  EXPECT_EQ(f.regs.ax, cpu_result);
  EXPECT_EQ(f.regs.ax, 0xcafef00dul);
  EXPECT_EQ(f.regs.ip, kAddr + 2);
}

TEST(X86InsnPlan, MovFromAndToTheStackPointer) {
  InsnPlan prologue = plan_ok({0x48, 0x89, 0xe5});  // mov %rsp,%rbp
  ASSERT_EQ(prologue.emulation, Emulation::kMovReg);
  Frame f;
  emulate_ok(prologue, f);
  EXPECT_EQ(f.regs.bp, f.initial_sp());

  InsnPlan epilogue = plan_ok({0x48, 0x89, 0xec});  // mov %rbp,%rsp
  ASSERT_EQ(epilogue.emulation, Emulation::kMovReg);
  Frame g;
  g.regs.bp = g.initial_sp() - 64;
  emulate_ok(epilogue, g);
  EXPECT_EQ(g.regs.sp, g.initial_sp() - 64);
}

TEST(X86InsnPlan, MovImmediate) {
  struct Case {
    Code code;
    unsigned long before, after;
  } cases[] = {
      {{0xb8, 0x78, 0x56, 0x34, 0x12}, ~0ul, 0x12345678ul},                    // mov $imm32,%eax
      {{0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff}, 0, ~0ul},                   // mov $-1,%rax
      {{0x48, 0xc7, 0xc0, 0x00, 0x00, 0x00, 0x80}, 0, 0xffffffff80000000ul},   // sign-extended
      {{0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, 0, 0x1122334455667788ul},
      {{0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff}, ~0ul, 0xfffffffful},              // 32-bit c7
  };
  for (const Case& c : cases) {
    InsnPlan p = plan_ok(c.code);
    ASSERT_EQ(p.emulation, Emulation::kMovImm) << p.mnemonic;
    Frame f;
    f.regs.ax = c.before;
    emulate_ok(p, f);
    EXPECT_EQ(f.regs.ax, c.after);
    EXPECT_EQ(f.regs.ip, kAddr + c.code.size);
  }
  unsigned long cpu_result = 0;
  asm("mov $0, %0\n\tmovq $0xffffffff80000000, %0" : "=r"(cpu_result));
  EXPECT_EQ(cpu_result, 0xffffffff80000000ul);
}

TEST(X86InsnPlan, PushAndPopRegisters) {
  InsnPlan push = plan_ok({0x55});          // push %rbp
  InsnPlan push15 = plan_ok({0x41, 0x57});  // push %r15
  InsnPlan pop = plan_ok({0x5d});           // pop %rbp
  InsnPlan pop15 = plan_ok({0x41, 0x5f});   // pop %r15
  ASSERT_EQ(push.emulation, Emulation::kPushReg);
  ASSERT_EQ(push15.emulation, Emulation::kPushReg);
  ASSERT_EQ(pop.emulation, Emulation::kPopReg);
  ASSERT_EQ(pop15.emulation, Emulation::kPopReg);
  Frame f;
  f.regs.bp = 0xb0b0;
  f.regs.r15 = 0xf15;
  emulate_ok(push, f);
  EXPECT_EQ(f.regs.ip, kAddr + 1);
  emulate_ok(push15, f);
  EXPECT_EQ(f.regs.ip, kAddr + 2);
  EXPECT_EQ(f.regs.sp, f.initial_sp() - 16);
  EXPECT_EQ(f.top(), 0xf15u);
  f.regs.bp = f.regs.r15 = 0;
  emulate_ok(pop, f);  // pops what push %r15 pushed
  emulate_ok(pop15, f);
  EXPECT_EQ(f.regs.bp, 0xf15u);
  EXPECT_EQ(f.regs.r15, 0xb0b0u);
  EXPECT_EQ(f.regs.sp, f.initial_sp());
}

TEST(X86InsnPlan, PushAndPopOfTheStackPointerAgreeWithThisCpu) {
  // push %rsp pushes the value before the decrement; pop %rsp leaves rsp = the popped word.
  unsigned long pushed = 0, sp_before = 0, popped_sp = 0;
  asm volatile("mov %%rsp, %1\n\tpush %%rsp\n\tpop %0" : "=r"(pushed), "=&r"(sp_before));
  EXPECT_EQ(pushed, sp_before);
  asm volatile("mov %%rsp, %%rax\n\tpushq $0x1234\n\tpop %%rsp\n\tmov %%rsp, %0\n\tmov %%rax, %%rsp"
               : "=r"(popped_sp) : : "rax", "memory");
  EXPECT_EQ(popped_sp, 0x1234u);

  Frame f;
  emulate_ok(plan_ok({0x54}), f);  // push %rsp
  EXPECT_EQ(f.top(), f.initial_sp());
  EXPECT_EQ(f.regs.sp, f.initial_sp() - 8);
  Frame g;
  g.stack[32] = g.initial_sp() + 40;
  emulate_ok(plan_ok({0x5c}), g);  // pop %rsp
  EXPECT_EQ(g.regs.sp, g.initial_sp() + 40);
}

TEST(X86InsnPlan, PopFromAnUnreadableStackIsEfaultAndChangesNothing) {
  InsnPlan p = plan_ok({0x5b});  // pop %rbx
  Frame f;
  f.regs.sp = 0x100;
  f.regs.bx = 7;
  auto r = okp::x86::emulate(p, kAddr, &f.regs);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -14);
  EXPECT_EQ(f.regs.bx, 7u);
  EXPECT_EQ(f.regs.sp, 0x100u);
  EXPECT_EQ(f.regs.ip, kAddr + 1);
}

TEST(X86InsnPlan, NopsOfEveryLengthOnlyAdvance) {
  for (const Code& c : {Code{0x90}, Code{0x66, 0x90}, Code{0x0f, 0x1f, 0x00},
                        Code{0x0f, 0x1f, 0x44, 0x00, 0x00},
                        Code{0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
                        Code{0x66, 0x0f, 0x1f, 0x00}}) {  // the 6.1 ENDBR poison
    InsnPlan p = plan_ok(c);
    ASSERT_EQ(p.emulation, Emulation::kNop) << p.mnemonic;
    Frame f;
    okp_regs before = f.regs;
    emulate_ok(p, f);
    EXPECT_EQ(f.regs.ip, kAddr + c.size);
    f.regs.ip = before.ip;
    EXPECT_EQ(std::memcmp(&f.regs, &before, sizeof(before)), 0);
  }
}

TEST(X86InsnPlan, MovesInvolvingSystemRegistersAreNotEmulated) {
  for (const Code& c : {Code{0x8c, 0xd8},          // mov %ds,%eax
                        Code{0x0f, 0x20, 0xc0},    // mov %cr0,%rax
                        Code{0x0f, 0x21, 0xc0},    // mov %dr0,%rax
                        Code{0x41, 0x90}}) {       // xchg %eax,%r8d (not a nop)
    auto r = plan(c);
    if (r.is_error()) continue;  // refused outright is fine too
    EXPECT_EQ(r.value().emulation, Emulation::kNone) << r.value().mnemonic;
  }
}

// lea: the address, never a memory access, against this CPU's own lea for the same operands.
TEST(X86InsnPlan, LeaComputesTheAddressAsThisCpuDoes) {
  const unsigned long di = 0x1000, si = 0xfffffffffffffff0ul;
  unsigned long base_scaled, disp_only, wrapped, narrow;
  asm("lea 7(%%rdi,%%rdi,2), %0" : "=r"(base_scaled) : "D"(di));
  asm("lea -8(%%rsi), %0" : "=r"(disp_only) : "S"(si));
  asm("lea 0x20(%%rsi,%%rdi,8), %0" : "=r"(wrapped) : "S"(si), "D"(di));
  asm("mov $-1, %0\n\tlea 1(%%rsi), %k0" : "=&r"(narrow) : "S"(0x00000001fffffffful));
  struct Case {
    Code code;
    unsigned long di, si, want;
  } cases[] = {
      {{0x48, 0x8d, 0x44, 0x7f, 0x07}, di, 0, base_scaled},              // lea 7(%rdi,%rdi,2),%rax
      {{0x48, 0x8d, 0x46, 0xf8}, 0, si, disp_only},                      // lea -8(%rsi),%rax
      {{0x48, 0x8d, 0x44, 0xfe, 0x20}, di, si, wrapped},                 // lea 0x20(%rsi,%rdi,8),%rax
      {{0x8d, 0x46, 0x01}, 0, 0x00000001fffffffful, narrow},             // lea 1(%rsi),%eax
  };
  for (const Case& c : cases) {
    InsnPlan p = plan_ok(c.code);
    ASSERT_EQ(p.emulation, Emulation::kLea) << p.mnemonic;
    EXPECT_FALSE(p.boostable);
    Frame f;
    f.regs.ax = ~0ul;
    f.regs.di = c.di;
    f.regs.si = c.si;
    emulate_ok(p, f);
    EXPECT_EQ(f.regs.ax, c.want);
    EXPECT_EQ(f.regs.ip, kAddr + c.code.size);
    EXPECT_EQ(f.regs.flags, 0x202u);  // lea changes no flag
    EXPECT_EQ(f.regs.sp, f.initial_sp());
  }
  EXPECT_EQ(narrow, 0u);  // 32-bit lea zero-extends (and wraps in 32 bits)
}

TEST(X86InsnPlan, LeaOfTheStackPointerAndRipRelative) {
  InsnPlan sp = plan_ok({0x48, 0x8d, 0x6c, 0x24, 0x10});  // lea 0x10(%rsp),%rbp
  ASSERT_EQ(sp.emulation, Emulation::kLea);
  Frame f;
  emulate_ok(sp, f);
  EXPECT_EQ(f.regs.bp, f.initial_sp() + 0x10);

  // lea 0x100(%rip),%r11: relative to the instruction after the probed one, at its own
  // address (the original one: nothing runs from a slot).
  InsnPlan rip = plan_ok({0x4c, 0x8d, 0x1d, 0x00, 0x01, 0x00, 0x00});
  ASSERT_EQ(rip.emulation, Emulation::kLea);
  Frame g;
  emulate_ok(rip, g);
  EXPECT_EQ(g.regs.r11, kAddr + 7 + 0x100);
}

TEST(X86InsnPlan, LeaFormsThatMergeOrTruncateRunOutOfLine) {
  for (const Code& c : {Code{0x66, 0x8d, 0x46, 0x01},          // lea 1(%rsi),%ax (merges)
                        Code{0x67, 0x48, 0x8d, 0x46, 0x01}}) { // lea 1(%esi),%rax (addr32)
    InsnPlan p = plan_ok(c);
    EXPECT_EQ(p.emulation, Emulation::kNone) << p.mnemonic;
    EXPECT_TRUE(p.boostable) << p.mnemonic;
  }
}

}  // namespace
