// SPDX-License-Identifier: GPL-2.0
// The riscv64 decoder and planner (arch/riscv/insn_plan.cpp) on the host: lengths, the plan of
// each simulated class and its emulation on a frame of words, the slot image, and the
// refusals with their errno. Encodings are the assembler's (riscv64-linux-gnu-as, rv64gc).
#include <gtest/gtest.h>

#include "arch/riscv/insn_plan.h"

using namespace okp;
using namespace okp::riscv;

namespace {

constexpr okp_addr_t kAt = 0xffffffff80001000ul;

ErrorOr<InsnPlan> plan16(u16 h, okp_addr_t at = kAt) {
  const u8 b[2] = {static_cast<u8>(h), static_cast<u8>(h >> 8)};
  return plan_insn(at, b, sizeof(b));
}
ErrorOr<InsnPlan> plan32(u32 w, okp_addr_t at = kAt) {
  const u8 b[4] = {static_cast<u8>(w), static_cast<u8>(w >> 8), static_cast<u8>(w >> 16),
                   static_cast<u8>(w >> 24)};
  return plan_insn(at, b, sizeof(b));
}

struct Frame {
  unsigned long w[33] = {};
  unsigned long& x(int n) { return w[n]; }
  unsigned long epc() const { return w[0]; }
};

InsnPlan ok(ErrorOr<InsnPlan> p) {
  EXPECT_FALSE(p.is_error()) << (p.is_error() ? p.error().reason() : "");
  return p.is_error() ? InsnPlan{} : p.release_value();
}

}  // namespace

TEST(RiscvLength, RvcRules) {
  EXPECT_EQ(insn_length_of(0x0001), 2u);  // c.nop
  EXPECT_EQ(insn_length_of(0x8082), 2u);  // c.jr ra
  EXPECT_EQ(insn_length_of(0x0013), 4u);  // addi
  EXPECT_EQ(insn_length_of(0x001f), 0u);  // 48-bit
  EXPECT_EQ(insn_length_of(0x003f), 0u);  // 64-bit
}

TEST(RiscvPlan, BreakpointPerSiteAlignment) {
  EXPECT_EQ(ok(plan16(0x0001)).breakpoint_size, 2);                   // compressed
  EXPECT_EQ(ok(plan32(0x00000013)).breakpoint_size, 4);               // 4-byte, aligned
  EXPECT_EQ(ok(plan32(0x00000013, kAt + 2)).breakpoint_size, 4);      // 4-byte, 2 mod 4
}

TEST(RiscvPlan, JalLinksAndJumps) {
  auto p = ok(plan32(0x008000ef));  // jal ra, .+8
  EXPECT_EQ(p.kind, Kind::kJal);
  EXPECT_EQ(p.length, 4);
  Frame f;
  emulate(p, kAt, f.w);
  EXPECT_EQ(f.epc(), kAt + 8);
  EXPECT_EQ(f.x(1), kAt + 4);
}

TEST(RiscvPlan, CjBackwardNoLink) {
  auto p = ok(plan16(0xbffd));  // c.j .-2
  EXPECT_EQ(p.kind, Kind::kJal);
  Frame f;
  f.x(1) = 77;
  emulate(p, kAt, f.w);
  EXPECT_EQ(f.epc(), kAt - 2);
  EXPECT_EQ(f.x(1), 77u);
}

TEST(RiscvPlan, JalrReadsBeforeLinking) {
  auto p = ok(plan32(0x000282e7));  // jalr t0, 0(t0)
  EXPECT_EQ(p.kind, Kind::kJalr);
  Frame f;
  f.x(5) = 0x1235;  // bit 0 cleared by jalr
  emulate(p, kAt, f.w);
  EXPECT_EQ(f.epc(), 0x1234u);
  EXPECT_EQ(f.x(5), kAt + 4);
}

TEST(RiscvPlan, CjrAndCjalr) {
  auto jr = ok(plan16(0x8582));  // c.jr a1
  auto jalr = ok(plan16(0x9582));  // c.jalr a1
  Frame f;
  f.x(11) = 0x4000;
  f.x(1) = 5;
  emulate(jr, kAt, f.w);
  EXPECT_EQ(f.epc(), 0x4000u);
  EXPECT_EQ(f.x(1), 5u);
  emulate(jalr, kAt, f.w);
  EXPECT_EQ(f.epc(), 0x4000u);
  EXPECT_EQ(f.x(1), kAt + 2);
}

TEST(RiscvPlan, BranchesSignedUnsigned) {
  // blt a0, a1, .+8 / bltu a0, a1, .+8
  auto blt = ok(plan32(0x00b54463));
  auto bltu = ok(plan32(0x00b56463));
  Frame f;
  f.x(10) = static_cast<unsigned long>(-1);
  f.x(11) = 1;
  emulate(blt, kAt, f.w);
  EXPECT_EQ(f.epc(), kAt + 8);
  emulate(bltu, kAt, f.w);
  EXPECT_EQ(f.epc(), kAt + 4);
}

TEST(RiscvPlan, CbeqzCbnez) {
  auto beqz = ok(plan16(0xc111));  // c.beqz a0, .+4
  auto bnez = ok(plan16(0xe111));  // c.bnez a0, .+4
  Frame f;
  emulate(beqz, kAt, f.w);
  EXPECT_EQ(f.epc(), kAt + 4);
  emulate(bnez, kAt, f.w);
  EXPECT_EQ(f.epc(), kAt + 2);
}

TEST(RiscvPlan, AuipcAndX0) {
  auto p = ok(plan32(0x00001297));  // auipc t0, 1
  Frame f;
  emulate(p, kAt, f.w);
  EXPECT_EQ(f.x(5), kAt + 0x1000);
  EXPECT_EQ(f.epc(), kAt + 4);
  auto hint = ok(plan32(0x00001017));  // auipc x0, 1: a hint, x0 stays 0
  emulate(hint, kAt, f.w);
  EXPECT_EQ(f.w[0], kAt + 4);  // word 0 is epc, never x0
}

TEST(RiscvPlan, RegisterMoves) {
  Frame f;
  f.x(2) = 0x1000;
  emulate(ok(plan16(0x1141)), kAt, f.w);  // c.addi sp, -16
  EXPECT_EQ(f.x(2), 0xff0u);
  emulate(ok(plan16(0x7139)), kAt, f.w);  // c.addi16sp sp, -64
  EXPECT_EQ(f.x(2), 0xfb0u);
  emulate(ok(plan16(0x0808)), kAt, f.w);  // c.addi4spn a0, sp, 16
  EXPECT_EQ(f.x(10), 0xfc0u);
  emulate(ok(plan16(0x85aa)), kAt, f.w);  // c.mv a1, a0
  EXPECT_EQ(f.x(11), 0xfc0u);
  emulate(ok(plan16(0x557d)), kAt, f.w);  // c.li a0, -1
  EXPECT_EQ(f.x(10), static_cast<unsigned long>(-1));
  emulate(ok(plan16(0x2501)), kAt, f.w);  // sext.w a0 (c.addiw a0, 0)
  EXPECT_EQ(f.x(10), static_cast<unsigned long>(-1));
  emulate(ok(plan32(0x123452b7)), kAt, f.w);  // lui t0, 0x12345
  EXPECT_EQ(f.x(5), 0x12345000u);
  emulate(ok(plan32(0x800002b7)), kAt, f.w);  // lui t0, 0x80000: sign-extends
  EXPECT_EQ(f.x(5), 0xffffffff80000000ul);
  EXPECT_EQ(ok(plan16(0x0001)).kind, Kind::kAddImm);  // c.nop
  EXPECT_EQ(f.epc(), kAt + 4);
}

TEST(RiscvPlan, SteppedClassesAndSlotImage) {
  EXPECT_EQ(ok(plan16(0xe406)).kind, Kind::kSlot);      // c.sdsp ra, 8(sp)
  EXPECT_EQ(ok(plan32(0x00853503)).kind, Kind::kSlot);  // ld a0, 8(a0)
  EXPECT_EQ(ok(plan32(0x02b50533)).kind, Kind::kSlot);  // mul a0, a0, a1
  EXPECT_EQ(ok(plan32(0x0ff0000f)).kind, Kind::kSlot);  // fence
  EXPECT_EQ(ok(plan32(0xc0102573)).kind, Kind::kSlot);  // rdtime a0 (csrr a0, time)
  u8 image[kSlotSize];
  const u8 ld[4] = {0x03, 0x35, 0x85, 0x00};
  build_slot(ok(plan32(0x00853503)), ld, image);
  const u8 want4[8] = {0x03, 0x35, 0x85, 0x00, 0x73, 0x00, 0x10, 0x00};
  EXPECT_EQ(0, memcmp(image, want4, 8));
  for (usize i = 8; i < kSlotSize; ++i) EXPECT_EQ(image[i], 0);
  const u8 sdsp[2] = {0x06, 0xe4};
  build_slot(ok(plan16(0xe406)), sdsp, image);
  const u8 want2[4] = {0x06, 0xe4, 0x02, 0x90};
  EXPECT_EQ(0, memcmp(image, want2, 4));
}

TEST(RiscvPlan, Refusals) {
  struct {
    u32 insn;
    bool compressed;
    Errno err;
  } const cases[] = {
      {0x100122af, false, Errno::kInval},  // lr.w t0, (sp)
      {0x1852b2af, false, Errno::kInval},  // sc.d t0, t0, (t0)
      {0x00000073, false, Errno::kInval},  // ecall
      {0x00100073, false, Errno::kBusy},   // ebreak
      {0x10200073, false, Errno::kInval},  // sret
      {0x30200073, false, Errno::kInval},  // mret
      {0x10500073, false, Errno::kInval},  // wfi
      {0x12000073, false, Errno::kInval},  // sfence.vma
      {0x10051073, false, Errno::kInval},  // csrw sstatus, a0
      {0x10002573, false, Errno::kInval},  // csrr a0, sstatus
      {0x18051073, false, Errno::kInval},  // csrw satp, a0
      {0x14051073, false, Errno::kInval},  // csrw sscratch, a0
      {0x0000100f, false, Errno::kInval},  // fence.i
      {0x9002, true, Errno::kBusy},        // c.ebreak
      {0x0000, true, Errno::kIlSeq},       // illegal
  };
  for (const auto& c : cases) {
    auto p = c.compressed ? plan16(static_cast<u16>(c.insn)) : plan32(c.insn);
    ASSERT_TRUE(p.is_error()) << std::hex << c.insn;
    EXPECT_EQ(p.error().code(), c.err) << std::hex << c.insn << ": " << p.error().reason();
  }
}

TEST(RiscvDecode, LrScFlagsAndDirectTargets) {
  const u8 lr[4] = {0xaf, 0x22, 0x01, 0x10};  // lr.w t0, (sp)
  auto d = decode(lr, 4, kAt);
  ASSERT_FALSE(d.is_error());
  EXPECT_TRUE(d.value().lr);
  EXPECT_EQ(d.value().length, 4);
  const u8 cj[2] = {0xfd, 0xbf};  // c.j .-2
  auto j = decode(cj, 2, kAt);
  ASSERT_FALSE(j.is_error());
  EXPECT_EQ(j.value().direct_target, kAt - 2);
  const u8 trunc[3] = {0x13, 0x00, 0x00};
  EXPECT_TRUE(decode(trunc, 3, kAt).is_error());
}
