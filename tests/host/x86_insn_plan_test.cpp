// SPDX-License-Identifier: GPL-2.0
// x86 probe planning, slot building and the emulation of control transfers and flags
// instructions (arch/x86/insn_plan.cpp; register moves: x86_register_emulation_test.cpp).
// Emulation runs on a frame whose sp points into a local array, so pushes and pops are checked
// in real memory; jcc conditions and loop's 32-bit count are also checked against this CPU.
#include <gtest/gtest.h>

#include <Zydis/Decoder.h>
#include <Zydis/Utils.h>

#include <cstring>
#include <initializer_list>

#include "arch/x86/decoder.h"
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
                        Code{0x48, 0x83, 0xec, 0x28},          // sub $0x28,%rsp
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
                        Code{0x48, 0x01, 0xf8},                // add %rdi,%rax (flags)
                        Code{0x31, 0xc0},                      // xor %eax,%eax (flags)
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
