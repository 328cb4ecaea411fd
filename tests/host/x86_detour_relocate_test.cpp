// SPDX-License-Identifier: GPL-2.0
// The jump optimizer's relocator (arch/x86/detour_relocate.h): the relocated code, decoded
// at the detour's address, reaches exactly what the original reached.
#include <gtest/gtest.h>

#include <Zydis/Decoder.h>

#include <string>
#include <vector>

#include "arch/x86/detour_relocate.h"

namespace {

using okp::x86::DetourCode;
using okp::x86::DetourRegion;

constexpr okp_addr_t kBase = 0xffffffff81000000ul;
constexpr okp_addr_t kNear = kBase + 0x200000;       // detours live near the text
constexpr okp_addr_t kFar = kBase - 0x100000000ul;   // 4 GiB below: out of rel32 reach

DetourRegion region_of(const std::vector<okp::u8>& f, size_t at) {
  okp::x86::FunctionText fn{kBase, f.data(), f.size()};
  auto r = okp::x86::check_detour_region(fn, kBase + at, nullptr, 0);
  EXPECT_FALSE(r.is_error()) << (r.is_error() ? r.error().reason() : "");
  return r.is_error() ? DetourRegion{} : r.value();
}

struct Decoded {
  okp_addr_t addr;
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
};

std::vector<Decoded> decode_all(const DetourCode& code, okp_addr_t at) {
  ZydisDecoder d;
  ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  std::vector<Decoded> out;
  for (size_t off = 0; off < code.length;) {
    Decoded x{at + off, {}, {}};
    EXPECT_TRUE(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, code.bytes + off, code.length - off, &x.insn, x.ops)));
    off += x.insn.length;
    out.push_back(x);
  }
  return out;
}

okp_addr_t branch_target(const Decoded& x) {
  return x.addr + x.insn.length + static_cast<okp_addr_t>(x.ops[0].imm.value.s);
}

TEST(DetourRelocate, PlainInstructionsAreCopiedAndTheJumpBackFollows) {
  // mov rbp,rsp; mov rax,rdi; ret
  std::vector<okp::u8> f = {0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0xc3};
  auto region = region_of(f, 0);
  auto code = okp::x86::relocate_region(region, f.data(), kNear);
  ASSERT_FALSE(code.is_error()) << code.error().reason();
  auto insns = decode_all(code.value(), kNear);
  ASSERT_EQ(insns.size(), 3u);
  EXPECT_EQ(insns[0].insn.mnemonic, ZYDIS_MNEMONIC_MOV);
  EXPECT_EQ(insns[2].insn.mnemonic, ZYDIS_MNEMONIC_JMP);
  EXPECT_EQ(branch_target(insns[2]), kBase + 6) << "back right after the region";
}

TEST(DetourRelocate, RipRelativeOperandsStillNameTheSameAddress) {
  // mov rax,[rip+0x1000]; ret
  std::vector<okp::u8> f = {0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0xc3};
  auto region = region_of(f, 0);
  auto code = okp::x86::relocate_region(region, f.data(), kNear);
  ASSERT_FALSE(code.is_error()) << code.error().reason();
  auto insns = decode_all(code.value(), kNear);
  const okp_addr_t orig = kBase + 7 + 0x1000;
  okp_addr_t now = insns[0].addr + insns[0].insn.length + static_cast<okp_addr_t>(insns[0].ops[1].mem.disp.value);
  EXPECT_EQ(now, orig);
  auto far = okp::x86::relocate_region(region, f.data(), kFar);
  ASSERT_TRUE(far.is_error());
  EXPECT_EQ(far.error().code(), okp::Errno::kRange);
}

TEST(DetourRelocate, ShortJccBecomesRel32ToTheSameTarget) {
  // 0: test rdi,rdi  3: jne +0x20 (-> 0x25)  5: ... (region 0..5)
  std::vector<okp::u8> f(0x30, 0x90);
  const okp::u8 head[] = {0x48, 0x85, 0xff, 0x75, 0x20};
  std::copy(std::begin(head), std::end(head), f.begin());
  f.back() = 0xc3;
  auto region = region_of(f, 0);
  auto code = okp::x86::relocate_region(region, f.data(), kNear);
  ASSERT_FALSE(code.is_error()) << code.error().reason();
  auto insns = decode_all(code.value(), kNear);
  ASSERT_GE(insns.size(), 2u);
  EXPECT_EQ(insns[1].insn.mnemonic, ZYDIS_MNEMONIC_JNZ);
  EXPECT_EQ(insns[1].insn.length, 6) << "jcc rel32";
  EXPECT_EQ(branch_target(insns[1]), kBase + 0x25);
}

TEST(DetourRelocate, ACallPushesTheOriginalReturnAddress) {
  // 0: xor eax,eax  2: call +0x100 (-> 0x107)  7: nop ... ret
  std::vector<okp::u8> f = {0x31, 0xc0, 0xe8, 0x00, 0x01, 0x00, 0x00, 0x90, 0xc3};
  auto region = region_of(f, 0);
  auto code = okp::x86::relocate_region(region, f.data(), kNear);
  ASSERT_FALSE(code.is_error()) << code.error().reason();
  auto insns = decode_all(code.value(), kNear);
  ASSERT_GE(insns.size(), 3u);
  EXPECT_EQ(insns[1].insn.mnemonic, ZYDIS_MNEMONIC_PUSH);
  EXPECT_EQ(static_cast<okp_addr_t>(insns[1].ops[0].imm.value.s), kBase + 7) << "return address";
  EXPECT_EQ(insns[2].insn.mnemonic, ZYDIS_MNEMONIC_JMP);
  EXPECT_EQ(branch_target(insns[2]), kBase + 7 + 0x100);
}

TEST(DetourRelocate, AnIndirectCallBecomesAJumpThroughTheSameOperand) {
  // 0: mov rax,rdi  3: call *%rax (ff d0)  5: ret
  std::vector<okp::u8> f = {0x48, 0x89, 0xf8, 0xff, 0xd0, 0xc3};
  auto region = region_of(f, 0);
  auto code = okp::x86::relocate_region(region, f.data(), kNear);
  ASSERT_FALSE(code.is_error()) << code.error().reason();
  auto insns = decode_all(code.value(), kNear);
  ASSERT_GE(insns.size(), 3u);
  EXPECT_EQ(static_cast<okp_addr_t>(insns[1].ops[0].imm.value.s), kBase + 5);
  EXPECT_EQ(insns[2].insn.mnemonic, ZYDIS_MNEMONIC_JMP);
  EXPECT_EQ(insns[2].ops[0].reg.value, ZYDIS_REGISTER_RAX);
  // call *0x8(%rsp) would read one push too low
  std::vector<okp::u8> g = {0x48, 0x89, 0xf8, 0xff, 0x54, 0x24, 0x08, 0xc3};
  auto rg = region_of(g, 0);
  auto bad = okp::x86::relocate_region(rg, g.data(), kNear);
  ASSERT_TRUE(bad.is_error());
  EXPECT_NE(std::string(bad.error().reason()).find("reads its target from the stack"), std::string::npos);
}

}  // namespace
