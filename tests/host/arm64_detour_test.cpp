// SPDX-License-Identifier: GPL-2.0
// The arm64 detour (arch/arm64/detour.cpp) on the host: the image's words for each kind of
// instruction, decoded back (every way out lands where the original would have gone), the
// entries reached by bl or through a literal, and the refusals with their reasons.
#include <gtest/gtest.h>

#include <cstring>

#include "arch/arm64/detour.h"

using namespace okp;
using namespace okp::arm64;

namespace {

constexpr okp_addr_t kAt = 0xffffffc008101000ul;      // the probe
constexpr okp_addr_t kBuffer = 0xffffffc008f00000ul;  // its detour, 14 MiB on
constexpr okp_addr_t kEntry = 0xffffffc008f80000ul;
constexpr okp_addr_t kPost = 0xffffffc008f80100ul;
constexpr okp_addr_t kFarEntry = 0xffffffc0f0000000ul;  // 3.7 GiB on: no bl reaches it

u32 word(const arch::DetourPlan& p, usize at) {
  u32 w;
  std::memcpy(&w, p.image + at, 4);
  return w;
}
u64 quad(const arch::DetourPlan& p, usize at) {
  u64 v;
  std::memcpy(&v, p.image + at, 8);
  return v;
}
i64 sext(u64 v, unsigned bits) { return static_cast<i64>(v << (64 - bits)) >> (64 - bits); }
bool is_b(u32 w) { return (w & 0xfc000000) == 0x14000000; }
bool is_bl(u32 w) { return (w & 0xfc000000) == 0x94000000; }
// Where a b/bl at byte `at` of the detour goes.
okp_addr_t b_target(const arch::DetourPlan& p, usize at) {
  return kBuffer + at + (sext(word(p, at) & 0x3ffffff, 26) << 2);
}
// The value an ldr (literal) at byte `at` loads, and its register.
u64 literal(const arch::DetourPlan& p, usize at, unsigned* rt) {
  const u32 w = word(p, at);
  EXPECT_EQ(w & 0xff000000, 0x58000000u) << std::hex << w;
  *rt = w & 31;
  return quad(p, at + (sext((w >> 5) & 0x7ffff, 19) << 2));
}

arch::DetourPlan ok(u32 insn, DetourEnv env = {kEntry, 0, false}) {
  auto p = plan_detour(kAt, insn, kBuffer, env);
  EXPECT_FALSE(p.is_error()) << std::hex << insn << ": " << (p.is_error() ? p.error().reason() : "");
  return p.is_error() ? arch::DetourPlan{} : p.release_value();
}

TEST(Arm64Detour, PlainInstructionRunsThenBranchesBack) {
  const auto p = ok(0x91000400);  // add x0, x0, #1
  EXPECT_EQ(quad(p, 0), kAt);
  EXPECT_EQ(word(p, 16), 0xa9bf7be0u);  // stp x0, x30, [sp, #-16]!
  EXPECT_EQ(word(p, 20), 0xd503201fu);  // nop
  ASSERT_TRUE(is_bl(word(p, 24)));
  EXPECT_EQ(b_target(p, 24), kEntry);
  EXPECT_EQ(word(p, 28), 0xa8c17be0u);  // ldp x0, x30, [sp], #16
  EXPECT_EQ(p.copy, kBuffer + kDetourCopyOffset);
  EXPECT_EQ(word(p, 32), 0x91000400u);
  ASSERT_TRUE(is_b(word(p, 36)));
  EXPECT_EQ(b_target(p, 36), kAt + 4);
  // The jump at the probe reaches the detour's code.
  u32 jump;
  std::memcpy(&jump, p.jump, 4);
  ASSERT_TRUE(is_b(jump));
  EXPECT_EQ(kAt + (sext(jump & 0x3ffffff, 26) << 2), kBuffer + kDetourCallOffset);
  EXPECT_EQ(p.region_length, 4);
  EXPECT_EQ(p.region_insns, 1);
  EXPECT_EQ(p.size, 40u) << "the header, the call, the copy and its way back: no pool";
}

TEST(Arm64Detour, ConditionalBranchHasTwoWaysOut) {
  const okp_addr_t target = kAt + 0x40;
  const u32 insn = 0x54000000u | ((0x40 / 4) << 5) | 0x1;  // b.ne +0x40
  const auto p = ok(insn);
  const u32 c = word(p, 32);
  EXPECT_EQ(c & 0xff00001f, 0x54000001u) << "still b.ne";
  const usize taken = 32 + (sext((c >> 5) & 0x7ffff, 19) << 2);
  ASSERT_TRUE(is_b(word(p, 36)));
  EXPECT_EQ(b_target(p, 36), kAt + 4) << "not taken: the next instruction";
  ASSERT_TRUE(is_b(word(p, taken)));
  EXPECT_EQ(b_target(p, taken), target) << "taken: the original target";
}

TEST(Arm64Detour, CbzAndTbzKeepTheirRegisterAndBit) {
  const auto cb = ok(0xb5000000u | ((0x80 / 4) << 5) | 3);  // cbnz x3, +0x80
  EXPECT_EQ(word(cb, 32) & 0xff00001f, 0xb5000003u);
  const usize cb_taken = 32 + (sext((word(cb, 32) >> 5) & 0x7ffff, 19) << 2);
  EXPECT_EQ(b_target(cb, cb_taken), kAt + 0x80);
  const auto tb = ok(0x37000000u | (5u << 19) | ((0x20 / 4) << 5) | 7);  // tbnz w7, #5, +0x20
  EXPECT_EQ(word(tb, 32) & 0xfff8001f, 0x37280007u);
  const usize tb_taken = 32 + (sext((word(tb, 32) >> 5) & 0x3fff, 14) << 2);
  EXPECT_EQ(b_target(tb, tb_taken), kAt + 0x20);
}

TEST(Arm64Detour, BlSetsTheOriginalReturnAddress) {
  const auto p = ok(0x94000000u | (0x1000 / 4));  // bl +0x1000
  unsigned rt = 0;
  EXPECT_EQ(literal(p, 32, &rt), kAt + 4);
  EXPECT_EQ(rt, 30u);
  ASSERT_TRUE(is_b(word(p, 36)));
  EXPECT_EQ(b_target(p, 36), kAt + 0x1000);
}

TEST(Arm64Detour, AdrAndLiteralLoadsGetTheirValues) {
  const auto adr = ok(0x10000000u | ((0x40 / 4) << 5) | 2);  // adr x2, +0x40
  unsigned rt = 0;
  EXPECT_EQ(literal(adr, 32, &rt), kAt + 0x40);
  EXPECT_EQ(rt, 2u);
  EXPECT_EQ(b_target(adr, 36), kAt + 4);
  const auto ldr = ok(0x58000000u | ((0x100 / 4) << 5) | 9);  // ldr x9, +0x100
  EXPECT_EQ(literal(ldr, 32, &rt), kAt + 0x100);
  EXPECT_EQ(rt, 9u);
  EXPECT_EQ(word(ldr, 36), 0xf9400129u);  // ldr x9, [x9]
  EXPECT_EQ(b_target(ldr, 40), kAt + 4);
  const auto ldrsw = ok(0x98000000u | ((0x100 / 4) << 5) | 9);  // ldrsw x9, +0x100
  EXPECT_EQ(word(ldrsw, 36), 0xb9800129u);  // ldrsw x9, [x9]
}

TEST(Arm64Detour, IndirectBranchesRunAsTheyAre) {
  const auto ret = ok(0xd65f03c0);  // ret
  EXPECT_EQ(word(ret, 32), 0xd65f03c0u);
  const auto blr = ok(0xd63f0100);  // blr x8
  unsigned rt = 0;
  EXPECT_EQ(literal(blr, 32, &rt), kAt + 4);
  EXPECT_EQ(rt, 30u);
  EXPECT_EQ(word(blr, 36), 0xd61f0100u);  // br x8
}

TEST(Arm64Detour, PostHandlersRunOnEveryWayOut) {
  const auto p = ok(0x54000000u | ((0x40 / 4) << 5), {kEntry, kPost, false});  // b.eq +0x40
  EXPECT_TRUE(p.post);
  // Not taken: stp; nop; bl post; ldp; b next. The post entry's return address is the ldp.
  EXPECT_EQ(word(p, 36), 0xa9bf7be0u);
  ASSERT_TRUE(is_bl(word(p, 44)));
  EXPECT_EQ(b_target(p, 44), kPost);
  EXPECT_EQ(word(p, 48), 0xa8c17be0u);
  EXPECT_EQ(b_target(p, 52), kAt + 4);
  const usize taken = 32 + (sext((word(p, 32) >> 5) & 0x7ffff, 19) << 2);
  ASSERT_TRUE(is_bl(word(p, taken + 8)));
  EXPECT_EQ(b_target(p, taken + 8), kPost);
  EXPECT_EQ(b_target(p, taken + 16), kAt + 0x40);
  EXPECT_LE(p.size, kMaxDetourSize);
}

TEST(Arm64Detour, FarEntriesAreCalledThroughALiteral) {
  const auto p = ok(0x94000000u | (0x1000 / 4), {kFarEntry, kFarEntry + 0x100, false});
  unsigned rt = 0;
  EXPECT_EQ(literal(p, 20, &rt), kFarEntry);
  EXPECT_EQ(rt, 30u);
  EXPECT_EQ(word(p, 24), 0xd63f03c0u);  // blr x30
  EXPECT_EQ(word(p, 28), 0xa8c17be0u);
  EXPECT_LE(p.size, kMaxDetourSize);
  // The pool follows the code: a plain instruction's detour near the kernel's text (the entry
  // out of a bl's reach) is the 40 bytes above and the entry's literal.
  const auto plain = ok(0x91000400, {kFarEntry, 0, false});
  EXPECT_EQ(literal(plain, 20, &rt), kFarEntry);
  EXPECT_EQ(plain.size, 48u);
  EXPECT_EQ(quad(plain, 40), kFarEntry);
}

void refused(okp_addr_t at, u32 insn, DetourEnv env, const char* part) {
  auto p = plan_detour(at, insn, kBuffer, env);
  ASSERT_TRUE(p.is_error()) << std::hex << insn;
  EXPECT_NE(std::strstr(p.error().reason(), part), nullptr) << p.error().reason();
  EXPECT_EQ(std::strncmp(p.error().reason(), "not optimized: ", 15), 0) << p.error().reason();
}

TEST(Arm64Detour, Refusals) {
  refused(kBuffer + (200ul << 20), 0x91000400, {kEntry, 0, false}, "out of a b's reach");
  refused(kAt, 0x14000000u | 0x2000000u, {kEntry, 0, false}, "out of a branch's reach");  // b -128 MiB
  refused(kAt, 0xd63f0100, {kEntry, 0, true}, "BTI");            // blr x8 under BTI
  refused(kAt, 0xd503245f, {kEntry, 0, true}, "landing pad");    // bti c under BTI
  refused(kAt, 0xd65f03c0, {kEntry, kPost, false}, "indirect branch");  // ret with post
  refused(kAt, 0xd63f03c0, {kEntry, 0, false}, "blr x30");
  ok(0xd503233f);  // paciasp without BTI: runs in the copy
}

TEST(Arm64Detour, HitPathReadsTheSiteAndThePostIp) {
  auto p = ok(0x91000400, {kEntry, kPost, false});
  set_detour_site(&p, 0x1238);
  // Lay the image out at a host address as the kernel would at kBuffer.
  alignas(8) static u8 text[kMaxDetourSize];
  std::memcpy(text, p.image, sizeof(text));
  const okp_addr_t copy = reinterpret_cast<okp_addr_t>(text) + kDetourCopyOffset;
  EXPECT_EQ(detour_site(copy), 0x1238u);
  EXPECT_TRUE(detour_has_post(copy));
  // The post call after the add: its return address is the ldp at 48, the b after it goes on.
  const okp_addr_t ret = reinterpret_cast<okp_addr_t>(text) + 48;
  EXPECT_EQ(detour_post_next_ip(ret) - reinterpret_cast<okp_addr_t>(text),
            (kAt + 4) - kBuffer);
}

}  // namespace
