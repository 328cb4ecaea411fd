// SPDX-License-Identifier: GPL-2.0
// Regressions found by the fuzz targets (tests/fuzz): each case is a minimised input that once
// crashed, tripped a sanitizer or broke a checked property, kept as a plain GoogleTest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arch/x86/detour_region.h"
#include "arch/x86/detour_relocate.h"
#include "x86_plan_test_helpers.h"

namespace {

using okp::x86::FunctionText;

constexpr okp_addr_t kBase = 0xffffffff81000000ul;

std::string refusal(const std::vector<okp::u8>& bytes, size_t at) {
  FunctionText fn{kBase, bytes.data(), bytes.size()};
  auto r = okp::x86::check_detour_region(fn, kBase + at, nullptr, 0);
  return r.is_error() ? r.error().reason() : "accepted";
}

// fuzz_detour: `sub $0x7fffffff,%rsp` twice overflowed the tracked stack depth (an i32: UBSan
// "signed integer overflow" in track_stack). Wrapped, as the kernel's -fno-strict-overflow
// would wrap it, 2^32 bytes of stack read as depth 0 and the indirect jump below passed for a
// tail call. A depth that leaves i32 is now unknown.
TEST(X86FuzzRegressions, StackDepthOverflowIsUnknownNotATailCall) {
  const std::vector<okp::u8> f = {
      0x48, 0x81, 0xec, 0xff, 0xff, 0xff, 0x7f,  // sub $0x7fffffff,%rsp
      0x48, 0x81, 0xec, 0xff, 0xff, 0xff, 0x7f,  // sub $0x7fffffff,%rsp
      0x48, 0x83, 0xec, 0x02,                    // sub $2,%rsp: 2^32 bytes in all
      0xff, 0xe0,                                // jmp *%rax
  };
  EXPECT_NE(refusal(f, 0).find("not provably a tail call (stack depth unknown)"), std::string::npos)
      << refusal(f, 0);
}

// The same family without overflow: `add $-0x80000000,%rsp` pushes 2^31 bytes, but its
// negated imm32 was cast to i32 with the wrong sign (-2^31), so 2^31 more bytes of sub
// brought the depth "back" to 0 at the indirect jump.
TEST(X86FuzzRegressions, AddOfMinusTwoGiBToRspIsNotAPop) {
  const std::vector<okp::u8> f = {
      0x48, 0x81, 0xc4, 0x00, 0x00, 0x00, 0x80,  // add $-0x80000000,%rsp
      0x48, 0x81, 0xec, 0xff, 0xff, 0xff, 0x7f,  // sub $0x7fffffff,%rsp
      0x48, 0x83, 0xec, 0x01,                    // sub $1,%rsp
      0xff, 0xe0,                                // jmp *%rax
  };
  EXPECT_NE(refusal(f, 0).find("not provably a tail call"), std::string::npos) << refusal(f, 0);
  // lea -0x80000000(%rsp),%rsp is the same push of 2^31 bytes.
  const std::vector<okp::u8> g = {
      0x48, 0x8d, 0xa4, 0x24, 0x00, 0x00, 0x00, 0x80,  // lea -0x80000000(%rsp),%rsp
      0x48, 0x81, 0xec, 0xff, 0xff, 0xff, 0x7f,        // sub $0x7fffffff,%rsp
      0x48, 0x83, 0xec, 0x01,                          // sub $1,%rsp
      0xff, 0xe0,                                      // jmp *%rax
  };
  EXPECT_NE(refusal(g, 0).find("not provably a tail call"), std::string::npos) << refusal(g, 0);
  // An ordinary frame still proves its tail call: sub $0x18; add $0x18; jmp *%rax.
  const std::vector<okp::u8> ok = {0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0xf8,
                                   0x48, 0x83, 0xc4, 0x18, 0xff, 0xe0};
  EXPECT_EQ(refusal(ok, 0), "accepted");
}

// fuzz_detour: Zydis decodes c5 48 85 rel32 as jknzd (a VEX-encoded Knights Corner mask
// branch), a relative branch the region check lets through; the relocator re-encoded it as
// `jnz rel32`, another instruction. Only legacy jmp/jcc are re-encoded now.
TEST(X86FuzzRegressions, OnlyJmpAndJccAreReencoded) {
  const std::vector<okp::u8> f = {0xc5, 0x48, 0x85, 0x10, 0x00, 0x00, 0x00,  // jknzd k?, +0x10
                                  0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                  0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3};
  FunctionText fn{kBase, f.data(), f.size()};
  auto region = okp::x86::check_detour_region(fn, kBase, nullptr, 0);
  ASSERT_FALSE(region.is_error()) << region.error().reason();
  auto code = okp::x86::relocate_region(region.value(), f.data(), kBase + 0x1000000);
  ASSERT_TRUE(code.is_error());
  EXPECT_NE(std::string(code.error().reason()).find("cannot relocate the branch at +0x0"),
            std::string::npos) << code.error().reason();
  // A legacy jnz rel32 still is.
  const std::vector<okp::u8> g = {0x0f, 0x85, 0x10, 0x00, 0x00, 0x00, 0x90, 0x90, 0x90, 0x90,
                                  0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                  0x90, 0x90, 0xc3};
  FunctionText gn{kBase, g.data(), g.size()};
  auto r2 = okp::x86::check_detour_region(gn, kBase, nullptr, 0);
  ASSERT_FALSE(r2.is_error()) << r2.error().reason();
  auto c2 = okp::x86::relocate_region(r2.value(), g.data(), kBase + 0x1000000);
  ASSERT_FALSE(c2.is_error()) << c2.error().reason();
  EXPECT_EQ(c2.value().bytes[0], 0x0f);
  EXPECT_EQ(c2.value().bytes[1], 0x85);
}

// fuzz_emulate_diff (on an AMD host): 66 0f 81 rel32 was emulated as a 64-bit jno with a
// rel32, while AMD runs 66 0f 81 rel16 (5 bytes) and truncates rip to 16 bits. A 66 prefix on
// any emulated branch is now refused: its meaning depends on the vendor.
TEST(X86FuzzRegressions, BranchWithOperandSizePrefixIsRefused) {
  using namespace x86_plan_test;
  for (const Code& c : {Code{0x66, 0x0f, 0x81, 0x10, 0x00, 0x0f, 0x0b}, Code{0x66, 0x74, 0x10},
                        Code{0x66, 0xe8, 0x00, 0x01, 0x00, 0x00}, Code{0x66, 0xe9, 0x00, 0x01, 0x00, 0x00},
                        Code{0x66, 0xeb, 0x10}, Code{0x66, 0xc3}, Code{0x66, 0xc2, 0x08, 0x00},
                        Code{0x66, 0xff, 0xe0}, Code{0x66, 0xff, 0x10}, Code{0x66, 0xe2, 0x10}}) {
    const char* reason = nullptr;
    EXPECT_EQ(plan_errno(c, &reason), -22) << "first bytes " << std::hex << int(c.bytes[1]);
  }
  // The forms compilers emit are emulated as before, rep ret included.
  EXPECT_EQ(plan_ok({0x0f, 0x81, 0x10, 0x00, 0x00, 0x00}).emulation, Emulation::kJcc);
  EXPECT_EQ(plan_ok({0xe8, 0x00, 0x01, 0x00, 0x00}).emulation, Emulation::kCallRel);
  EXPECT_EQ(plan_ok({0xf3, 0xc3}).emulation, Emulation::kRet);
  EXPECT_EQ(plan_ok({0x3e, 0xff, 0xe0}).emulation, Emulation::kJmpIndirect);  // notrack jmp
}

// fuzz_emulate_diff (AMD host): f3 e0 (rep loopne) ran as loope on the CPU, f2 e1 as loopne;
// okprobes emulated the opcode's condition. Rep-prefixed loops are refused.
TEST(X86FuzzRegressions, RepPrefixedLoopIsRefused) {
  using namespace x86_plan_test;
  for (const Code& c : {Code{0xf3, 0xe0, 0x10}, Code{0xf2, 0xe1, 0x10}, Code{0xf3, 0xe2, 0x10},
                        Code{0xf2, 0xe3, 0x10}, Code{0x67, 0xf3, 0xe0, 0x10}})
    EXPECT_EQ(plan_errno(c), -22);
  EXPECT_EQ(plan_ok({0xe0, 0x10}).emulation, Emulation::kLoop);
  EXPECT_EQ(plan_ok({0x67, 0xe3, 0x10}).emulation, Emulation::kLoop);
  EXPECT_EQ(plan_ok({0xf3, 0x74, 0x10}).emulation, Emulation::kJcc);  // the CPU agrees there
}

// fuzz_emulate_diff (AMD host): 0f 0d ff, which Zydis names NOP (reserved-NOP space), is #UD
// on the CPU but was emulated as a nop. Only 90 and 0f 1f are emulated nops now; the rest run
// from the slot, where the CPU itself decides.
TEST(X86FuzzRegressions, OnlyRealNopsAreEmulatedAsNops) {
  using namespace x86_plan_test;
  EXPECT_EQ(plan_ok({0x0f, 0x0d, 0xff}).emulation, Emulation::kNone);
  EXPECT_EQ(plan_ok({0x90}).emulation, Emulation::kNop);
  EXPECT_EQ(plan_ok({0x66, 0x90}).emulation, Emulation::kNop);
  EXPECT_EQ(plan_ok({0x0f, 0x1f, 0x44, 0x00, 0x00}).emulation, Emulation::kNop);
  EXPECT_EQ(plan_ok({0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}).emulation,
            Emulation::kNop);
}

}  // namespace
