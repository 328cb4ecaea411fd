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

// Xen's and KVM's emulate prefix (ud2; .ascii "xen"/"kvm") and the instruction the hypervisor
// emulates are one instruction, as for the kernel's decoder: the letters are no boundaries.
// xen_cpuid+0x1d of Debian's 6.1 kernel: 0f 0b 78 65 6e 0f a2.
TEST(X86Decoder, XenEmulatePrefixIsPartOfTheNextInstruction) {
  auto xen = decode_ok({0x0f, 0x0b, 'x', 'e', 'n', 0x0f, 0xa2});  // ud2; "xen"; cpuid
  EXPECT_EQ(xen.length, 7);
  EXPECT_STREQ(xen.mnemonic, "ud2");  // what runs: the planner refuses it as a BUG/WARN site
  auto kvm = decode_ok({0x0f, 0x0b, 'k', 'v', 'm', 0x0f, 0x01, 0xc1});  // ud2; "kvm"; vmcall
  EXPECT_EQ(kvm.length, 8);
}

TEST(X86Decoder, PlainUd2IsTwoBytes) {
  EXPECT_EQ(decode_ok({0x0f, 0x0b, 'x', 'e', 'x', 0x90}).length, 2);
  EXPECT_EQ(decode_ok({0x0f, 0x0b, 0x48, 0x89, 0xe5}).length, 2);
}

TEST(X86Decoder, EmulatePrefixBeforeBadBytesIsEilseq) {
  const okp::u8 bad[] = {0x0f, 0x0b, 'x', 'e', 'n', 0x06};  // push es: invalid in 64-bit mode
  auto r = okp::x86::decode(bad, sizeof(bad));
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.error().kernel_errno(), -84);
}
