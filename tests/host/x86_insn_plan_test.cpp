// SPDX-License-Identifier: GPL-2.0
// x86 probe planning and slot building (arch/x86/insn_plan.cpp): rip-relative re-aiming, slot
// exits, what may be boosted, refusals, and where emulation ends and stepping begins. What is
// emulated in the trap: x86_branch_emulation_test.cpp (control transfers),
// x86_flags_emulation_test.cpp (flags), x86_register_emulation_test.cpp (register moves).
#include <gtest/gtest.h>

#include <Zydis/Decoder.h>
#include <Zydis/Utils.h>

#include <cstring>
#include <initializer_list>

#include "arch/x86/decoder.h"
#include "arch/x86/insn_emulate.h"
#include "arch/x86/insn_plan.h"
#include "host_seam.h"
#include "x86_plan_test_helpers.h"

namespace {

using namespace x86_plan_test;

okp::i32 le32(const u8* p) {
  okp::i32 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// The absolute address the [rip+disp32] operand of the instruction at code refers to when it
// executes at runtime_addr, computed by Zydis itself (not by the code under test).
u64 rip_operand_target(const u8* code, usize size, okp_addr_t runtime_addr) {
  ZydisDecoder decoder;
  ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  EXPECT_TRUE(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, code, size, &insn, ops)));
  for (int i = 0; i < insn.operand_count_visible; ++i) {
    if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[i].mem.base == ZYDIS_REGISTER_RIP) {
      ZyanU64 target = 0;
      EXPECT_TRUE(ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &ops[i], runtime_addr, &target)));
      return target;
    }
  }
  ADD_FAILURE() << "no rip-relative operand";
  return 0;
}

struct Slot {
  u8 image[kSlotSize];
};

Slot build(const InsnPlan& p, const Code& c, bool boost, okp_addr_t addr = kAddr,
           okp_addr_t slot = kSlot) {
  Slot s;
  std::memset(s.image, 0x5a, sizeof(s.image));  // build_slot must fill every byte
  okp::x86::build_slot(p, addr, c.bytes, slot, boost, s.image);
  return s;
}

void expect_int3_padding(const Slot& s, usize from) {
  for (usize i = from; i < kSlotSize; ++i) EXPECT_EQ(s.image[i], 0xcc) << "slot byte " << i;
}


// --- Out of line: rip-relative re-aiming ---------------------------------------------------

void expect_reaimed(const Code& c, okp_addr_t addr, okp_addr_t slot_addr) {
  InsnPlan p = plan_ok(c, addr, slot_addr);
  EXPECT_EQ(p.emulation, Emulation::kNone);
  EXPECT_TRUE(p.rip_relative);
  for (bool boost : {false, true}) {
    Slot s = build(p, c, boost, addr, slot_addr);
    auto d = okp::x86::decode(s.image, kSlotSize);
    ASSERT_FALSE(d.is_error());
    EXPECT_EQ(d.value().length, c.size);
    EXPECT_TRUE(d.value().rip_relative);
    EXPECT_EQ(rip_operand_target(s.image, kSlotSize, slot_addr),
              rip_operand_target(c.bytes, c.size, addr));
    // Only the displacement changed.
    for (usize i = 0; i < c.size; ++i) {
      const bool in_disp = i >= p.disp_offset && i < p.disp_offset + 4u;
      if (!in_disp) {
        EXPECT_EQ(s.image[i], c.bytes[i]) << i;
      }
    }
  }
}

TEST(X86InsnPlan, RipRelativeLoadIsReaimed) {
  expect_reaimed({0x48, 0x8b, 0x05, 0x78, 0x56, 0x34, 0x12}, kAddr, kSlot);  // mov 0x12345678(%rip),%rax
}

TEST(X86InsnPlan, RipRelativeStoreIsReaimed) {
  expect_reaimed({0x48, 0x89, 0x05, 0xf0, 0xff, 0xff, 0xff}, kAddr, kSlot);  // mov %rax,-0x10(%rip)
}

TEST(X86InsnPlan, RipRelativeWithSlotBelowTheProbe) {
  // mov 0x1000(%rip),%rdi
  expect_reaimed({0x48, 0x8b, 0x3d, 0x00, 0x10, 0x00, 0x00}, kAddr, kAddr - 0x40000000);
}

TEST(X86InsnPlan, RipRelativeWithImmediateAfterDisplacement) {
  // cmpl $0x11223344,0x100(%rip): the immediate follows the disp32 and must stay intact.
  expect_reaimed({0x81, 0x3d, 0x00, 0x01, 0x00, 0x00, 0x44, 0x33, 0x22, 0x11}, kAddr, kSlot);
}

TEST(X86InsnPlan, RipRelativeTargetOutOfReachIsErange) {
  const Code mov{0x48, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00};
  auto r = plan(mov, kAddr, kAddr + 0x90000000ul);  // 2.25 GiB away
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -34);
  // The same distance is fine when the target itself lies towards the slot.
  const Code toward{0x48, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x70};  // disp 0x70000000
  InsnPlan p = plan_ok(toward, kAddr, kAddr + 0x90000000ul);
  EXPECT_TRUE(p.rip_relative);
}

TEST(X86InsnPlan, EipRelativeIsRefused) {
  EXPECT_EQ(plan_errno({0x67, 0x48, 0x8d, 0x05, 0x01, 0x00, 0x00, 0x00}), -22);
}

// --- Out of line: slot exits -----------------------------------------------------------------

TEST(X86InsnPlan, SteppedSlotEndsInInt3) {
  const Code cltd{0x99};  // one byte, runs out of line
  InsnPlan p = plan_ok(cltd);
  Slot s = build(p, cltd, false);
  EXPECT_EQ(s.image[0], 0x99);
  expect_int3_padding(s, 1);
}

TEST(X86InsnPlan, BoostedSlotJumpsBackAfterTheInstruction) {
  const Code mov{0x48, 0x8b, 0x44, 0x24, 0x10};  // mov 0x10(%rsp),%rax
  InsnPlan p = plan_ok(mov);
  ASSERT_TRUE(p.boostable);
  Slot s = build(p, mov, true);
  EXPECT_EQ(std::memcmp(s.image, mov.bytes, mov.size), 0);
  ASSERT_EQ(s.image[5], 0xe9);
  const u64 jmp_end = kSlot + 5 + 5;
  EXPECT_EQ(jmp_end + static_cast<u64>(static_cast<okp::i64>(le32(&s.image[6]))), kAddr + 5);
  // The exit decodes as the jmp it is meant to be.
  auto d = okp::x86::decode(s.image + 5, kSlotSize - 5);
  ASSERT_FALSE(d.is_error());
  EXPECT_STREQ(d.value().mnemonic, "jmp");
  expect_int3_padding(s, 10);
}

TEST(X86InsnPlan, BoostedSlotBelowTheProbe) {
  const Code cltd{0x99};
  const okp_addr_t slot = kAddr - 0x100000;
  InsnPlan p = plan_ok(cltd, kAddr, slot);
  ASSERT_TRUE(p.boostable);
  Slot s = build(p, cltd, true, kAddr, slot);
  ASSERT_EQ(s.image[1], 0xe9);
  EXPECT_EQ(slot + 1 + 5 + static_cast<u64>(static_cast<okp::i64>(le32(&s.image[2]))), kAddr + 1);
}

TEST(X86InsnPlan, NotBoostableWhenTheJmpBackCannotReach) {
  InsnPlan p = plan_ok({0x99}, kAddr, kAddr + 0x100000000ul);  // slot 4 GiB away
  EXPECT_EQ(p.emulation, Emulation::kNone);
  EXPECT_FALSE(p.boostable);
}

TEST(X86InsnPlan, BoostingAPlanThatIsNotBoostableIsAnInvariantFailure) {
  const Code cpuid{0x0f, 0xa2};
  InsnPlan p = plan_ok(cpuid);
  ASSERT_FALSE(p.boostable);
  long before = okp_host::seam_counters().invariant_failures;
  Slot s = build(p, cpuid, true);
  EXPECT_EQ(okp_host::seam_counters().invariant_failures, before + 1);
  expect_int3_padding(s, 0);
}

// --- Out of line: what runs from a slot and what may be boosted ------------------------------

TEST(X86InsnPlan, StackRelativeInstructionsRunOutOfLine) {
  for (const Code& c : {Code{0xff, 0x74, 0x24, 0x08},          // push 0x8(%rsp)
                        Code{0x48, 0x8b, 0x44, 0x24, 0x10},    // mov 0x10(%rsp),%rax
                        Code{0x48, 0x83, 0x6c, 0x24, 0x08, 0x28},  // subq $0x28,0x8(%rsp)
                        Code{0x8f, 0x44, 0x24, 0x08},          // pop 0x8(%rsp)
                        Code{0xc9}}) {                         // leave
    InsnPlan p = plan_ok(c);
    EXPECT_EQ(p.emulation, Emulation::kNone) << p.mnemonic;
    EXPECT_TRUE(p.boostable) << p.mnemonic;
    EXPECT_FALSE(p.rip_relative) << p.mnemonic;
    EXPECT_EQ(p.length, c.size);
  }
}

TEST(X86InsnPlan, OrdinaryInstructionsAreBoostable) {
  for (const Code& c : {Code{0xf3, 0x0f, 0x1e, 0xfa},          // endbr64
                        Code{0xf3, 0xa4},                      // rep movsb
                        Code{0xf0, 0x48, 0x0f, 0xb1, 0x17},    // lock cmpxchg %rdx,(%rdi)
                        Code{0x48, 0x11, 0xf8},                // adc %rdi,%rax (reads CF)
                        Code{0x30, 0xc0},                      // xor %al,%al (partial)
                        Code{0x66, 0x89, 0xc8},                // mov %cx,%ax (partial)
                        Code{0x88, 0xc8},                      // mov %cl,%al (partial)
                        Code{0x66, 0x50},                      // push %ax (16-bit)
                        Code{0x48, 0x8b, 0x07},                // mov (%rdi),%rax (memory)
                        Code{0x48, 0x8b, 0x05, 0, 0, 0, 0}}) { // rip-relative load
    InsnPlan p = plan_ok(c);
    EXPECT_EQ(p.emulation, Emulation::kNone) << p.mnemonic;
    EXPECT_TRUE(p.boostable) << p.mnemonic;
  }
}

TEST(X86InsnPlan, PlatformInstructionsAreSteppedNotBoosted) {
  for (const Code& c : {Code{0x0f, 0xa2},              // cpuid
                        Code{0x0f, 0x32},              // rdmsr
                        Code{0x0f, 0x30},              // wrmsr
                        Code{0x0f, 0x31},              // rdtsc
                        Code{0x0f, 0x33},              // rdpmc
                        Code{0xe4, 0x60},              // in $0x60,%al
                        Code{0xee},                    // out %al,(%dx)
                        Code{0x6c},                    // insb
                        Code{0xf3, 0x6e},              // rep outsb
                        Code{0x0f, 0x22, 0xd8},        // mov %rax,%cr3
                        Code{0x0f, 0x01, 0x38},        // invlpg (%rax)
                        Code{0x0f, 0x01, 0xc1},        // vmcall
                        Code{0x0f, 0x01, 0xcb},        // stac (CPL 0 only)
                        Code{0x8e, 0xd8},              // mov %eax,%ds
                        Code{0x0f, 0xa9}}) {           // pop %gs
    InsnPlan p = plan_ok(c);
    EXPECT_EQ(p.emulation, Emulation::kNone) << p.mnemonic;
    EXPECT_FALSE(p.boostable) << p.mnemonic;
  }
}

// --- Refusals --------------------------------------------------------------------------------

TEST(X86InsnPlan, AnotherOwnerIsEbusy) {
  const char* reason = nullptr;
  EXPECT_EQ(plan_errno({0xcc}, &reason), -16);
  EXPECT_NE(std::strstr(reason, "int3"), nullptr);
  EXPECT_EQ(plan_errno({0x0f, 0x0b}, &reason), -16);  // ud2
  EXPECT_NE(std::strstr(reason, "ud2"), nullptr);
  EXPECT_EQ(plan_errno({0x0f, 0xb9, 0x40, 0x10}), -16);  // ud1 0x10(%rax),%eax
  EXPECT_EQ(plan_errno({0x0f, 0xff, 0xc0}), -16);        // ud0
}

TEST(X86InsnPlan, UnsteppableInstructionsAreEinvalWithTheirName) {
  struct Case {
    Code code;
    const char* name;
  };
  const Case cases[] = {
      {{0x48, 0xcf}, "iretq"},         {{0xf4}, "hlt"},
      {{0x0f, 0x05}, "syscall"},       {{0xcd, 0x80}, "int n"},
      {{0xcd, 0x03}, "int n"},         {{0xf1}, "int1"},
      {{0x48, 0x0f, 0x07}, "sysret"},  {{0x0f, 0x34}, "sysenter"},
      {{0x0f, 0x35}, "sysexit"},       {{0x0f, 0x01, 0xf8}, "swapgs"},
      {{0x0f, 0x01, 0xc9}, "mwait"},   {{0x0f, 0x01, 0xc8}, "monitor"},
      {{0x0f, 0x01, 0xfb}, "mwaitx"},  {{0xc7, 0xf8, 0, 0, 0, 0}, "xbegin"},
      {{0x0f, 0x01, 0xd5}, "xend"},    {{0xc6, 0xf8, 0x01}, "xabort"},
      {{0xcb}, "lret"},                {{0xca, 0x08, 0x00}, "lret"},
      {{0xff, 0x1f}, "lcall"},         {{0xff, 0x2f}, "ljmp"},
      {{0x0f, 0x01, 0xc2}, "vmlaunch"}, {{0x0f, 0x01, 0xc3}, "vmresume"},
  };
  for (const Case& c : cases) {
    const char* reason = nullptr;
    EXPECT_EQ(plan_errno(c.code, &reason), -22) << c.name;
    ASSERT_NE(reason, nullptr) << c.name;
    EXPECT_NE(std::strstr(reason, c.name), nullptr) << reason;
  }
}

TEST(X86InsnPlan, SixteenBitFlagsTransfersAreEinval) {
  EXPECT_EQ(plan_errno({0x66, 0x9c}), -22);  // pushfw
  EXPECT_EQ(plan_errno({0x66, 0x9d}), -22);  // popfw
}

TEST(X86InsnPlan, SegmentRelativeIndirectBranchIsEinval) {
  EXPECT_EQ(plan_errno({0x65, 0xff, 0x14, 0x25, 0x00, 0x00, 0x00, 0x00}), -22);  // call *%gs:0
  EXPECT_EQ(plan_errno({0x64, 0xff, 0x20}), -22);                                // jmp *%fs:(%rax)
}

TEST(X86InsnPlan, UndecodableBytesAreEilseq) {
  EXPECT_EQ(plan_errno({0xe8, 0x10, 0x00}), -84);        // call rel32, truncated
  EXPECT_EQ(plan_errno({0x48, 0x8b, 0x05, 0x00}), -84);  // mov rip-relative, truncated
  EXPECT_EQ(plan_errno({0x06}), -84);                    // push %es: invalid in 64-bit mode
  auto r = okp::x86::plan_insn(kAddr, nullptr, 0, kSlot);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -84);
}

// --- Emulation and stepping meet ------------------------------------------------------------

TEST(X86InsnPlan, EmulatingAnOutOfLinePlanIsRefused) {
  InsnPlan p = plan_ok({0x99});
  Frame f;
  auto r = okp::x86::emulate(p, kAddr, &f.regs);
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -22);
  EXPECT_EQ(f.regs.ip, kAddr + 1);
}

TEST(X86InsnPlan, ResumeAfterStepContinuesAfterTheOriginal) {
  InsnPlan p = plan_ok({0x48, 0x89, 0xe5});
  Frame f;
  f.regs.ip = kSlot + 3 + 1;
  okp::x86::resume_after_step(p, kAddr, &f.regs);
  EXPECT_EQ(f.regs.ip, kAddr + 3);
}

}  // namespace
