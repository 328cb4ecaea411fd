// SPDX-License-Identifier: GPL-2.0
// Jump tables in the region check (arch/x86/jump_table.h): crafted switch dispatches whose
// table lives in fake kernel memory (okp_host::map_fake_memory), read through
// okp_seam_read_nofault as in the kernel. Every function keeps %rbx pushed at the jump, so
// the tail-call rule alone would refuse it: an accepted region is the table resolved.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arch/x86/detour_region.h"
#include "host_seam.h"

namespace {

using okp::x86::FunctionText;
using Bytes = std::vector<okp::u8>;

constexpr okp_addr_t kBase = 0xffffffff81000000ul;
constexpr okp_addr_t kTable = 0xffffffff82000000ul;  // disp32 -0x7e000000, sign-extended
constexpr okp_addr_t kThunks = kBase + 0x1000;       // __x86_indirect_thunk_array
constexpr okp_addr_t kThunkRcx = kThunks + 0x20;

// 0: nopl (%rax,%rax,1)  4: push %rbx  5: cmp $3,%edi  8: ja +0x29  a: mov %edi,%edi
// c: jmp *T(,%rdi,8)  13: c0: mov $10,%eax; pop %rbx; ret  1a: c1: mov $11,%eax; pop; ret
// 21: c2: add $5,%edi  24: c3: lea 7(%rdi),%eax; pop; ret  29: xor %eax,%eax; pop; ret
const Bytes kPlain = {0x0f, 0x1f, 0x04, 0x00, 0x53, 0x83, 0xff, 0x03, 0x77, 0x1f, 0x89, 0xff,
                      0xff, 0x24, 0xfd, 0x00, 0x00, 0x00, 0x82, 0xb8, 0x0a, 0x00, 0x00, 0x00,
                      0x5b, 0xc3, 0xb8, 0x0b, 0x00, 0x00, 0x00, 0x5b, 0xc3, 0x83, 0xc7, 0x05,
                      0x8d, 0x47, 0x07, 0x5b, 0xc3, 0x31, 0xc0, 0x5b, 0xc3};
const std::vector<okp_addr_t> kPlainCases = {0x13, 0x1a, 0x21, 0x24};

// The same with `cmp $3,%rdi; ja; mov T(,%rdi,8),%rax; jmp *%rax` (b: the load, 13: the jmp).
const Bytes kLoad = {0x0f, 0x1f, 0x04, 0x00, 0x53, 0x48, 0x83, 0xff, 0x03, 0x77, 0x20, 0x48,
                     0x8b, 0x04, 0xfd, 0x00, 0x00, 0x00, 0x82, 0xff, 0xe0, 0xb8, 0x0a, 0x00,
                     0x00, 0x00, 0x5b, 0xc3, 0xb8, 0x0b, 0x00, 0x00, 0x00, 0x5b, 0xc3, 0x83,
                     0xc7, 0x05, 0x8d, 0x47, 0x07, 0x5b, 0xc3, 0x31, 0xc0, 0x5b, 0xc3};
const std::vector<okp_addr_t> kLoadCases = {0x15, 0x1c, 0x23, 0x26};

// `cmp $4,%edi; jae; mov %edi,%ecx; mov T(,%rcx,8),%rcx; jmp __x86_indirect_thunk_rcx`
// (14: the jmp, to kThunkRcx).
const Bytes kThunk = {0x0f, 0x1f, 0x04, 0x00, 0x53, 0x83, 0xff, 0x04, 0x73, 0x25, 0x89,
                      0xf9, 0x48, 0x8b, 0x0c, 0xcd, 0x00, 0x00, 0x00, 0x82, 0xe9, 0x07,
                      0x10, 0x00, 0x00, 0xb8, 0x0a, 0x00, 0x00, 0x00, 0x5b, 0xc3, 0xb8,
                      0x0b, 0x00, 0x00, 0x00, 0x5b, 0xc3, 0x83, 0xc7, 0x05, 0x8d, 0x47,
                      0x07, 0x5b, 0xc3, 0x31, 0xc0, 0x5b, 0xc3};
const std::vector<okp_addr_t> kThunkCases = {0x19, 0x20, 0x27, 0x2a};
// The retpoline for rcx: call 1f; 2: pause; lfence; jmp 2b; 1: mov %rcx,(%rsp); ret
const Bytes kRetpolineRcx = {0xe8, 0x07, 0x00, 0x00, 0x00, 0xf3, 0x90, 0x0f, 0xae,
                             0xe8, 0xeb, 0xf9, 0x48, 0x89, 0x0c, 0x24, 0xc3};

struct Check {
  bool ok;
  std::string reason;
};

class JumpTable : public ::testing::Test {
 protected:
  void TearDown() override { okp_host::map_fake_memory(0, nullptr, 0); }

  // The table: the cases' offsets as absolute addresses in the function at kBase.
  static void map_table(const std::vector<okp_addr_t>& offsets) {
    std::vector<okp::u64> table;
    for (okp_addr_t off : offsets) table.push_back(kBase + off);
    okp_host::map_fake_memory(kTable, table.data(), table.size() * 8);
  }
  static void map_absolute_table(const std::vector<okp::u64>& table) {
    okp_host::map_fake_memory(kTable, table.data(), table.size() * 8);
  }

  static Check check(const Bytes& f, size_t at, bool with_thunks = false) {
    static const okp::x86::AddrRange thunks[] = {{kThunks, kThunks + 0x200}};
    FunctionText fn{kBase, f.data(), f.size(), with_thunks ? thunks : nullptr, with_thunks ? 1u : 0u};
    auto r = okp::x86::check_detour_region(fn, kBase + at, nullptr, 0);
    if (r.is_error()) return {false, r.error().reason()};
    return {true, ""};
  }
};

#define EXPECT_REASON(c, text)                                                   \
  do {                                                                           \
    EXPECT_FALSE((c).ok);                                                        \
    EXPECT_NE((c).reason.find(text), std::string::npos) << (c).reason;           \
  } while (0)

TEST_F(JumpTable, BoundedPlainTableAcceptsARegionNoEntryEnters) {
  map_table(kPlainCases);
  auto head = check(kPlain, 0);  // nopl + push: no entry there
  EXPECT_TRUE(head.ok) << head.reason;
  auto on_entry = check(kPlain, 0x13);  // mov $10,%eax: entry 0 lands on its first byte
  EXPECT_TRUE(on_entry.ok) << on_entry.reason;
}

TEST_F(JumpTable, AnEntryInsideTheRegionIsRefusedAndNamed) {
  map_table(kPlainCases);
  // c2: add $5,%edi (3) + c3: lea 7(%rdi),%eax (3): entry 3 lands on the lea.
  EXPECT_REASON(check(kPlain, 0x21),
                "jump table at +0xc: entry 3 targets +0x24, inside the region +0x21..+0x26");
}

TEST_F(JumpTable, WithoutItsTableTheJumpIsRefused) {
  EXPECT_REASON(check(kPlain, 0), "indirect jump at +0xc: cannot read its jump table at 0xffffffff82000000");
}

TEST_F(JumpTable, LoadThenJumpForm) {
  map_table(kLoadCases);
  auto head = check(kLoad, 0);
  EXPECT_TRUE(head.ok) << head.reason;
  EXPECT_REASON(check(kLoad, 0x23),
                "jump table at +0x13: entry 3 targets +0x26, inside the region +0x23..+0x28");
}

TEST_F(JumpTable, RetpolineThunkForm) {
  map_table(kThunkCases);
  Bytes thunk_text = kRetpolineRcx;
  thunk_text.resize(32, 0xcc);  // the thunk's 32-byte slot, int3-padded
  okp_host::map_fake_memory(kThunkRcx, thunk_text.data(), thunk_text.size());
  auto head = check(kThunk, 0, true);
  EXPECT_TRUE(head.ok) << head.reason;
  EXPECT_REASON(check(kThunk, 0x27, true),
                "jump table at +0x14: entry 3 targets +0x2a, inside the region +0x27..+0x2c");
  // A thunk jumping through another register than the one loaded: no table, and with %rbx
  // pushed no tail call either.
  Bytes jmp_rax = {0xff, 0xe0};
  jmp_rax.resize(32, 0xcc);
  okp_host::map_fake_memory(kThunkRcx, jmp_rax.data(), jmp_rax.size());
  EXPECT_REASON(check(kThunk, 0, true), "indirect jump at +0x14 is not a tail call (8 bytes");
}

TEST_F(JumpTable, NoCmpIsUnbounded) {
  // 0: nopl  4: push %rbx  5: mov %edi,%eax  7: jmp *T(,%rax,8)  e: c0: mov $10,%eax; pop; ret
  const Bytes f = {0x0f, 0x1f, 0x04, 0x00, 0x53, 0x89, 0xf8, 0xff, 0x24, 0xc5, 0x00,
                   0x00, 0x00, 0x82, 0xb8, 0x0a, 0x00, 0x00, 0x00, 0x5b, 0xc3};
  map_table({0xe});
  EXPECT_REASON(check(f, 0), "indirect jump at +0x7: jump table not bounded by a cmp on %rax");
}

TEST_F(JumpTable, CmpOnAnotherRegisterIsUnbounded) {
  // 5: cmp $3,%rsi  9: ja  b: jmp *T(,%rdi,8)  12: c0
  const Bytes f = {0x0f, 0x1f, 0x04, 0x00, 0x53, 0x48, 0x83, 0xfe, 0x03, 0x77,
                   0x0e, 0xff, 0x24, 0xfd, 0x00, 0x00, 0x00, 0x82, 0xb8, 0x0a,
                   0x00, 0x00, 0x00, 0x5b, 0xc3, 0x31, 0xc0, 0x5b, 0xc3};
  map_table({0x12, 0x12, 0x12, 0x12});
  EXPECT_REASON(check(f, 0), "indirect jump at +0xb: jump table not bounded by a cmp on %rdi "
                             "(the cmp is on another register)");
}

TEST_F(JumpTable, CmpOnTheLowerHalfWithoutZeroExtensionIsUnbounded) {
  // 5: cmp $3,%edi  8: ja  a: jmp *T(,%rdi,8): the upper half of %rdi is unknown
  const Bytes f = {0x0f, 0x1f, 0x04, 0x00, 0x53, 0x83, 0xff, 0x03, 0x77, 0x0e,
                   0xff, 0x24, 0xfd, 0x00, 0x00, 0x00, 0x82, 0xb8, 0x0a, 0x00,
                   0x00, 0x00, 0x5b, 0xc3, 0x31, 0xc0, 0x5b, 0xc3};
  map_table({0x11, 0x11, 0x11, 0x11});
  EXPECT_REASON(check(f, 0), "jump table not bounded by a cmp on %rdi (the cmp is on its 32-bit "
                             "half, with no zero-extending mov)");
}

TEST_F(JumpTable, ABranchBetweenTheCmpAndTheJumpUnboundsIt) {
  // 5: test %rsi,%rsi  8: jne +0x10  a: cmp $3,%rdi  e: ja  10: jmp *T(,%rdi,8)  17: c0
  const Bytes f = {0x0f, 0x1f, 0x04, 0x00, 0x53, 0x48, 0x85, 0xf6, 0x75, 0x06, 0x48, 0x83,
                   0xff, 0x03, 0x77, 0x0e, 0xff, 0x24, 0xfd, 0x00, 0x00, 0x00, 0x82, 0xb8,
                   0x0a, 0x00, 0x00, 0x00, 0x5b, 0xc3, 0x31, 0xc0, 0x5b, 0xc3};
  map_table({0x17, 0x17, 0x17, 0x17});
  EXPECT_REASON(check(f, 0x17), "indirect jump at +0x10: jump table not bounded: +0x10, after its "
                                "cmp at +0xa, is a branch target");
  // Without the jne (two nops instead) the same dispatch is bounded.
  Bytes g = f;
  g[8] = g[9] = 0x90;
  auto ok = check(g, 0x17);
  EXPECT_TRUE(ok.ok) << ok.reason;
}

TEST_F(JumpTable, EntriesOutsideTheFunctionAreRefused) {
  map_absolute_table({kBase + 0x13, kBase + 0x1a, kBase + 0x5000, kBase + 0x24});
  EXPECT_REASON(check(kPlain, 0), "jump table at +0xc: entry 2 targets 0xffffffff81005000, "
                                  "outside the function");
}

TEST_F(JumpTable, AnEntryOffAnInstructionBoundaryIsRefused) {
  map_table({0x13, 0x1b, 0x21, 0x24});
  EXPECT_REASON(check(kPlain, 0), "jump table at +0xc: entry 1 targets +0x1b, not an instruction "
                                  "boundary");
}

TEST_F(JumpTable, ANegativeBoundIsNoTableSize) {
  map_table(kPlainCases);
  Bytes f = kPlain;
  f[7] = 0xff;  // cmp $-1,%edi: every index passes
  EXPECT_REASON(check(f, 0), "jump table not bounded by a cmp on %rdi (its bound is not a table "
                             "size the check reads)");
}

TEST_F(JumpTable, ATableOfFunctionPointersIsATailCall) {
  // 0: nopl  4: mov T(,%rdi,8),%rax  c: jmp *%rax -- no frame: `return handlers[i](...)`
  const Bytes f = {0x0f, 0x1f, 0x04, 0x00, 0x48, 0x8b, 0x04, 0xfd,
                   0x00, 0x00, 0x00, 0x82, 0xff, 0xe0};
  map_absolute_table({0xffffffff81234560ul});
  auto tail = check(f, 0);
  EXPECT_TRUE(tail.ok) << tail.reason;
  // Unbounded, and its first entry is inside the function: a computed goto, not a tail call.
  map_table({0x4});
  EXPECT_REASON(check(f, 0), "indirect jump at +0xc: jump table not bounded by a cmp on %rdi");
}

}  // namespace
