// SPDX-License-Identifier: GPL-2.0
// The x86 decoder wrapper on Zydis, built with the module's freestanding configuration.
#include <gtest/gtest.h>

#include <cstring>

#include "arch/x86/decoder.h"
#include "seam/okp_seam.h"

namespace {

okp::x86::DecodedInsn decode_ok(std::initializer_list<okp::u8> bytes) {
  okp::u8 buf[16] = {};
  std::memcpy(buf, bytes.begin(), bytes.size());
  auto r = okp::x86::decode(buf, bytes.size());
  EXPECT_FALSE(r.is_error()) << (r.is_error() ? r.error().reason() : "");
  return r.is_error() ? okp::x86::DecodedInsn{} : r.value();
}

TEST(X86Decoder, Endbr64IsFourBytes) {
  auto i = decode_ok({0xf3, 0x0f, 0x1e, 0xfa});
  EXPECT_EQ(i.length, 4);
  EXPECT_STREQ(i.mnemonic, "endbr64");
}

TEST(X86Decoder, RipRelativeLoad) {
  auto i = decode_ok({0x48, 0x8b, 0x05, 0x78, 0x56, 0x34, 0x12});  // mov rax, [rip+0x12345678]
  EXPECT_EQ(i.length, 7);
  EXPECT_TRUE(i.rip_relative);
  EXPECT_FALSE(i.relative_branch);
}

TEST(X86Decoder, RelativeBranches) {
  auto call = decode_ok({0xe8, 0x10, 0x00, 0x00, 0x00});
  EXPECT_EQ(call.length, 5);
  EXPECT_TRUE(call.relative_branch);
  EXPECT_STREQ(call.mnemonic, "call");
  auto jcc = decode_ok({0x0f, 0x85, 0x00, 0x01, 0x00, 0x00});  // jnz rel32
  EXPECT_EQ(jcc.length, 6);
  EXPECT_TRUE(jcc.relative_branch);
}

TEST(X86Decoder, PlainInstructions) {
  EXPECT_EQ(decode_ok({0x55}).length, 1);                          // push rbp
  EXPECT_EQ(decode_ok({0x48, 0x89, 0xe5}).length, 3);              // mov rbp, rsp
  EXPECT_EQ(decode_ok({0x0f, 0x1f, 0x44, 0x00, 0x00}).length, 5);  // 5-byte nop
  EXPECT_FALSE(decode_ok({0x48, 0x89, 0xe5}).rip_relative);
}

TEST(X86Decoder, TruncatedInstructionIsEilseq) {
  const okp::u8 call[] = {0xe8, 0x10, 0x00};
  auto r = okp::x86::decode(call, sizeof(call));
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -84);
}

TEST(X86Decoder, InvalidOpcodeIsEilseq) {
  const okp::u8 bad[] = {0x06};  // push es: invalid in 64-bit mode
  auto r = okp::x86::decode(bad, sizeof(bad));
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -84);
}

TEST(X86Decoder, SelfCheckPasses) { EXPECT_EQ(okp_arch_decoder_selfcheck(), 0); }

}  // namespace
