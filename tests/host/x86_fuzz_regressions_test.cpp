// SPDX-License-Identifier: GPL-2.0
// Regressions found by the fuzz targets (tests/fuzz): each case is a minimised input that once
// crashed, tripped a sanitizer or broke a checked property, kept as a plain GoogleTest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arch/x86/detour_region.h"

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

}  // namespace
