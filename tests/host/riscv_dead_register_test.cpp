// SPDX-License-Identifier: GPL-2.0
// The riscv64 jump probe's proofs on the host: register use per instruction
// (arch/riscv/register_use.cpp), the function's liveness (function_flow.cpp), the dead
// register (dead_register.cpp) and the region check (detour_region.cpp), over functions
// assembled with riscv64-linux-gnu-as -march=rv64gc -mno-relax (the disassembly beside the
// bytes).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "arch/riscv/dead_register.h"
#include "arch/riscv/detour_region.h"
#include "arch/riscv/register_use.h"

using namespace okp;
using namespace okp::riscv;

namespace {

constexpr okp_addr_t kFn = 0xffffffff80001000ul;

constexpr RegSet x(unsigned n) { return reg_bit(n); }

RegisterUse use_of(std::vector<u8> b, okp_addr_t at = kFn) {
  auto r = register_use(b.data(), b.size(), at);
  EXPECT_FALSE(r.is_error()) << (r.is_error() ? r.error().reason() : "");
  return r.is_error() ? RegisterUse{} : r.release_value();
}

// A function of bytes at kFn, with its hidden edges.
struct Fn {
  std::vector<u8> bytes;
  std::vector<HiddenEdge> hidden = {};
  bool tail_calls = false;
  FunctionText text() const {
    FunctionText t{kFn, bytes.data(), bytes.size()};
    t.hidden = hidden.empty() ? nullptr : hidden.data();
    t.n_hidden = hidden.size();
    t.jumps_out_are_tail_calls = tail_calls;
    return t;
  }
  ErrorOr<DetourRegion> region(okp_addr_t off) const {
    return check_detour_region(text(), kFn + off);
  }
};

DetourRegion ok(ErrorOr<DetourRegion> r) {
  EXPECT_FALSE(r.is_error()) << (r.is_error() ? r.error().reason() : "");
  return r.is_error() ? DetourRegion{} : r.release_value();
}
std::string refused(ErrorOr<DetourRegion> r) {
  EXPECT_TRUE(r.is_error());
  if (!r.is_error()) return "";
  const std::string why = r.error().reason();
  EXPECT_EQ(why.rfind("not optimized: ", 0), 0u) << why;
  return why;
}

// t0 is written on both paths from the probe before the join reads it; t1-t6 are read at
// the join without a write: only t0 of the temporaries is dead.
const Fn kBothPaths{{
    0xaa, 0x87,              // +0 c.mv a5,a0
    0x33, 0x07, 0xb5, 0x00,  // +2 add a4,a0,a1
    0x93, 0x06, 0x15, 0x00,  // +6 addi a3,a0,1
    0x99, 0xc3,              // +a c.beqz a5,+0x10
    0x85, 0x42,              // +c c.li t0,1
    0x11, 0xa0,              // +e c.j +0x12
    0x89, 0x42,              // +10 c.li t0,2
    0x33, 0x85, 0xe2, 0x00,  // +12 add a0,t0,a4
    0x1a, 0x95,              // +16 c.add a0,t1
    0x1e, 0x95,              // +18 c.add a0,t2
    0x72, 0x95,              // +1a c.add a0,t3
    0x76, 0x95,              // +1c c.add a0,t4
    0x7a, 0x95,              // +1e c.add a0,t5
    0x7e, 0x95,              // +20 c.add a0,t6
    0x82, 0x80,              // +22 ret
}};

}  // namespace

// --- Register use --------------------------------------------------------------------------

TEST(RiscvRegisterUse, AluReadsSourcesWritesDestination) {
  const auto u = use_of({0x33, 0x85, 0xc5, 0x00});  // add a0,a1,a2
  EXPECT_EQ(u.reads, x(kA1) | x(kA2));
  EXPECT_EQ(u.writes, x(kA0));
  EXPECT_EQ(u.flow, Flow::kNext);
  EXPECT_EQ(u.length, 4);
  const auto c = use_of({0x0d, 0x9d});  // c.subw a0,a1
  EXPECT_EQ(c.reads, x(kA0) | x(kA1));
  EXPECT_EQ(c.writes, x(kA0));
  EXPECT_EQ(c.length, 2);
  const auto s = use_of({0x14, 0xc3});  // c.sw a3,0(a4)
  EXPECT_EQ(s.reads, x(kA3) | x(kA4));
  EXPECT_EQ(s.writes, 0u);
  EXPECT_TRUE(s.memory);
  const auto sp = use_of({0x08, 0x08});  // c.addi4spn a0,sp,16
  EXPECT_EQ(sp.reads, x(kSp));
  EXPECT_EQ(sp.writes, x(kA0));
  const auto amo = use_of({0x2f, 0x25, 0xb6, 0x00});  // amoadd.w a0,a1,(a2)
  EXPECT_EQ(amo.reads, x(kA1) | x(kA2));
  EXPECT_EQ(amo.writes, x(kA0));
}

TEST(RiscvRegisterUse, FloatingPointTouchesIntegersOnlyInMovesAndConversions) {
  EXPECT_EQ(use_of({0x53, 0x05, 0x05, 0xe2}).writes, x(kA0));  // fmv.x.d a0,fa0
  EXPECT_EQ(use_of({0x53, 0x05, 0x05, 0xe2}).reads, 0u);
  EXPECT_EQ(use_of({0x53, 0xf5, 0x25, 0xd2}).reads, x(kA1));  // fcvt.d.l fa0,a1
  EXPECT_EQ(use_of({0x53, 0xf5, 0x25, 0xd2}).writes, 0u);
  EXPECT_EQ(use_of({0x88, 0x24}).reads, x(kS1));  // c.fld fa0,8(s1): the base only
  EXPECT_EQ(use_of({0x88, 0x24}).writes, 0u);
}

TEST(RiscvRegisterUse, CsrAccesses) {
  const auto r = use_of({0x73, 0x25, 0x00, 0x10});  // csrr a0,sstatus
  EXPECT_EQ(r.writes, x(kA0));
  EXPECT_EQ(r.reads, 0u);
  const auto w = use_of({0x73, 0x90, 0x05, 0x10});  // csrw sstatus,a1
  EXPECT_EQ(w.reads, x(kA1));
  EXPECT_EQ(w.writes, 0u);
  const auto i = use_of({0x73, 0xd5, 0x01, 0x14});  // csrrwi a0,sscratch,3: no register read
  EXPECT_EQ(i.reads, 0u);
  EXPECT_EQ(i.writes, x(kA0));
}

TEST(RiscvRegisterUse, CallsReturnsAndJumps) {
  const auto call = use_of({0xef, 0x00, 0x00, 0x10});  // jal ra,.+0x100
  EXPECT_EQ(call.flow, Flow::kCall);
  EXPECT_EQ(call.target, kFn + 0x100);
  EXPECT_EQ(call.writes, kCallClobbered) << "ra, t0-t6, a0-a7";
  EXPECT_EQ(call.reads & kArgRegs, kArgRegs) << "a call reads every argument register";
  EXPECT_EQ(call.reads & kTempRegs, 0u);
  const auto icall = use_of({0xe7, 0x80, 0x87, 0x00});  // jalr ra,8(a5)
  EXPECT_EQ(icall.flow, Flow::kCall);
  EXPECT_TRUE(icall.reads & x(kA5));
  EXPECT_EQ(icall.imm, 8);
  const auto ret = use_of({0x82, 0x80});  // ret
  EXPECT_EQ(ret.flow, Flow::kReturn);
  EXPECT_EQ(ret.reads, kReturnReads);
  EXPECT_TRUE(ret.reads & x(kA0) && ret.reads & x(kA1) && ret.reads & x(kS11));
  EXPECT_FALSE(ret.reads & x(kA2));
  EXPECT_EQ(use_of({0x82, 0x87}).flow, Flow::kIndirect);  // jr a5
  const auto b = use_of({0x05, 0xc2});                     // c.beqz a2,.+0x20
  EXPECT_EQ(b.flow, Flow::kBranch);
  EXPECT_EQ(b.target, kFn + 0x20);
  EXPECT_EQ(b.reads, x(kA2));
  EXPECT_TRUE(b.pc_relative);
  const auto a = use_of({0x17, 0x25, 0x01, 0x00});  // auipc a0,0x12
  EXPECT_EQ(a.imm, static_cast<i64>(kFn + 0x12000));
  EXPECT_EQ(a.writes, x(kA0));
  EXPECT_TRUE(a.pc_relative);
}

TEST(RiscvRegisterUse, WhatIsNotUnderstoodIsUnknown) {
  EXPECT_EQ(use_of({0xe7, 0x82, 0x02, 0x00}).flow, Flow::kUnknown);  // jalr t0,0(t0)
  EXPECT_EQ(use_of({0x02, 0x90}).flow, Flow::kUnknown);              // c.ebreak
  EXPECT_EQ(use_of({0x73, 0x00, 0x10, 0x00}).flow, Flow::kUnknown);  // ebreak
  EXPECT_EQ(use_of({0x73, 0x00, 0x00, 0x00}).flow, Flow::kUnknown);  // ecall
  EXPECT_EQ(use_of({0x57, 0x00, 0x00, 0x00}).flow, Flow::kUnknown);  // vector opcode
  EXPECT_EQ(use_of({0x00, 0x80}).flow, Flow::kUnknown);              // Zcb c.lbu (reserved here)
  const u8 zero[2] = {0, 0};
  EXPECT_TRUE(register_use(zero, 2, kFn).is_error()) << "the all-zero parcel is padding";
  const u8 long48[2] = {0x1f, 0x00};
  EXPECT_TRUE(register_use(long48, 2, kFn).is_error());
}

TEST(RiscvRegisterUse, ReservationsAreFlagged) {
  EXPECT_TRUE(use_of({0xaf, 0x32, 0x05, 0x10}).lr);  // lr.d t0,(a0)
  const auto sc = use_of({0x2f, 0x33, 0x75, 0x18});  // sc.d t1,t2,(a0)
  EXPECT_TRUE(sc.sc);
  EXPECT_EQ(sc.reads, x(kA0) | x(kT2));
  EXPECT_EQ(sc.writes, x(kT1));
}

// --- Liveness and the dead register ---------------------------------------------------------

TEST(RiscvDeadRegister, WrittenBeforeReadOnEveryPathIsDead) {
  const auto r = ok(kBothPaths.region(0));
  EXPECT_EQ(r.count, 3);
  EXPECT_EQ(r.length, 10) << "c.mv, add, addi: 2 + 4 + 4 bytes cover the 8 of the jump";
  EXPECT_EQ(r.dead, kT0);
  // t0 written on both paths; a2, a6, a7 never read; a3 written in the region, never read.
  EXPECT_EQ(r.dead_set, x(kT0) | x(kA2) | x(kA3) | x(kA6) | x(kA7));
}

TEST(RiscvDeadRegister, ReadOnOnePathIsLive) {
  Fn fn = kBothPaths;
  fn.bytes[0x10] = 0x09;  // +10 c.li a2,2 (for c.li t0,2): t0 reaches the join unwritten
  fn.bytes[0x11] = 0x46;
  const auto r = ok(fn.region(0));
  EXPECT_FALSE(r.dead_set & x(kT0));
  EXPECT_EQ(r.dead, kA7) << "no temporary is dead: the next preference is a7";
  EXPECT_TRUE(r.dead_set & x(kA2)) << "a2 is written on the path that skips t0";
}

TEST(RiscvDeadRegister, WrittenInTheRegionThenReadAfterIsNotChosen) {
  // a5 (c.mv a5,a0 at +0) is dead at the region's start but read after it (+a): live where
  // the region leaves, so the way back through it would destroy the value.
  const auto r = ok(kBothPaths.region(0));
  EXPECT_FALSE(r.dead_set & x(kA5));
  EXPECT_FALSE(r.dead_set & x(kA4));
}

TEST(RiscvDeadRegister, HiddenEdgeSkippingTheWriteMakesItLive) {
  Fn fn = kBothPaths;
  fn.hidden = {{kFn + 0xc, kFn + 0x12}};  // a jump label at +c to the join, over c.li t0
  const auto r = ok(fn.region(0));
  EXPECT_FALSE(r.dead_set & x(kT0));
  EXPECT_EQ(r.dead, kA7);
}

TEST(RiscvDeadRegister, CallClobbersAndReadsArguments) {
  const Fn fn{{
      0x41, 0x11,              // +0 addi sp,sp,-16
      0x06, 0xe4,              // +2 sd ra,8(sp)
      0xaa, 0x84,              // +4 mv s1,a0
      0x05, 0x45,              // +6 li a0,1
      0xef, 0x00, 0xe0, 0x00,  // +8 jal ra,+0x16
      0x16, 0x95,              // +c add a0,a0,t0
      0x32, 0x95,              // +e add a0,a0,a2
      0xa2, 0x60,              // +10 ld ra,8(sp)
      0x41, 0x01,              // +12 addi sp,sp,16
      0x82, 0x80,              // +14 ret
      0x82, 0x80,              // +16 ret
  }};
  auto decoded = FunctionFlow::decode(fn.text());
  ASSERT_FALSE(decoded.is_error());
  FunctionFlow flow = decoded.release_value();
  ASSERT_TRUE(flow.compute_liveness());
  const u32 probe = flow.index_of(kFn + 4);
  ASSERT_NE(probe, kNoInsn);
  // t0 is read after the call, but the call writes it first; a2 is an argument the call
  // may read.
  EXPECT_FALSE(flow.live_in(probe) & x(kT0));
  EXPECT_TRUE(flow.live_in(probe) & x(kA2));
  EXPECT_TRUE(flow.live_in(probe) & x(kA0)) << "mv s1,a0 reads it";
  EXPECT_FALSE(flow.live_in(probe + 1) & x(kA0)) << "li a0,1 writes it before the call reads it";
  const auto r = ok(fn.region(4));
  EXPECT_EQ(r.count, 3);
  EXPECT_EQ(r.insns[2].flow, Flow::kCall);
  EXPECT_EQ(r.insns[2].target, kFn + 0x16);
  EXPECT_EQ(r.dead, kT0);
  EXPECT_FALSE(r.dead_set & kArgRegs) << "the callee may read every argument register";
  EXPECT_FALSE(r.dead_set & x(kRa));
}

TEST(RiscvDeadRegister, ReturnKeepsResultAndSavedRegistersLive) {
  const Fn fn{{
      0x05, 0x46,  // +0 li a2,1
      0x89, 0x46,  // +2 li a3,2
      0x01, 0x00,  // +4 nop
      0x82, 0x80,  // +6 ret
  }};
  const auto r = ok(fn.region(0));
  EXPECT_EQ(r.count, 4);
  EXPECT_FALSE(r.dead_set & (x(kA0) | x(kA1) | x(kRa) | kSavedRegs));
  EXPECT_EQ(r.dead_set & (x(kA2) | x(kA3)), x(kA2) | x(kA3));
  EXPECT_EQ(r.dead_set & kTempRegs, kTempRegs);
  EXPECT_EQ(r.dead, kT0);
}

TEST(RiscvDeadRegister, NeverTheFixedRegistersNorTheFramePointer) {
  EXPECT_EQ(pick_dead_register(x(kSp) | x(kGp) | x(kTp) | x(kS0)), 0);
  EXPECT_EQ(pick_dead_register(x(kRa) | x(kS1)), kS1) << "ra comes last";
  EXPECT_EQ(pick_dead_register(x(kRa)), kRa);
  EXPECT_EQ(pick_dead_register(x(kA0) | x(kT6)), kT6) << "temporaries first";
  EXPECT_STREQ(register_name(kT6), "t6");
  EXPECT_STREQ(register_name(kS0), "s0");
}

TEST(RiscvDeadRegister, JumpOutOfTheFunctionIsATailCallOnlyWhenChecked) {
  Fn fn{{
      0x13, 0x06, 0x10, 0x00,  // +0 li a2,1
      0x93, 0x06, 0x20, 0x00,  // +4 li a3,2
      0x17, 0x03, 0x00, 0x00,  // +8 auipc t1,0
      0x67, 0x00, 0x03, 0x10,  // +c jr 0x100(t1): the assembler's `tail` to +0x108
  }};
  // Unchecked, the jump out may be a .cold part reading anything; only t1, which the far
  // jump's auipc writes, is dead.
  const auto unchecked = ok(fn.region(0));
  EXPECT_EQ(unchecked.count, 2);
  EXPECT_EQ(unchecked.dead_set, x(kT1));
  EXPECT_EQ(unchecked.dead, kT1);
  fn.tail_calls = true;
  const auto tail = ok(fn.region(0));
  EXPECT_EQ(tail.dead, kT0);
  EXPECT_EQ(tail.dead_set & kTempRegs, kTempRegs);
  EXPECT_FALSE(tail.dead_set & kArgRegs) << "the tail callee reads its arguments";
}

// --- The region check's refusals ----------------------------------------------------------

TEST(RiscvDetourRegion, LoopBackIntoTheRegionIsRefused) {
  const Fn fn{{
      0xa9, 0x47,  // +0 li a5,10
      0xfd, 0x17,  // +2 addi a5,a5,-1
      0x0d, 0x05,  // +4 addi a0,a0,3
      0xf5, 0xff,  // +6 bnez a5,+2
      0x82, 0x80,  // +8 ret
  }};
  const std::string why = refused(fn.region(0));
  EXPECT_NE(why.find("a branch at +0x6 goes to +0x2, inside the region +0..+0x8"),
            std::string::npos) << why;
  // At the loop's head the branch lands on the region's first byte: the jump itself.
  const auto r = ok(fn.region(2));
  EXPECT_EQ(r.count, 4);
  EXPECT_EQ(r.insns[2].flow, Flow::kBranch);
  EXPECT_EQ(r.insns[2].target, kFn + 2);
  EXPECT_EQ(r.dead, kT0);
  EXPECT_FALSE(r.dead_set & x(kA5)) << "a5 is read at the loop's head, where the branch goes";
}

TEST(RiscvDetourRegion, CompressedAndFullSizedMixes) {
  const Fn four{{
      0x05, 0x46,  // +0 li a2,1
      0x89, 0x46,  // +2 li a3,2
      0x0d, 0x47,  // +4 li a4,3
      0x91, 0x47,  // +6 li a5,4
      0x32, 0x95,  // +8 add a0,a0,a2
      0x82, 0x80,  // +a ret
  }};
  const auto r4 = ok(four.region(0));
  EXPECT_EQ(r4.count, 4);
  EXPECT_EQ(r4.length, 8);
  EXPECT_EQ(r4.insns[3].offset, 6u);
  EXPECT_FALSE(r4.dead_set & x(kA2)) << "read right after the region";
  EXPECT_TRUE(r4.dead_set & x(kA5));
  const auto r3 = ok(four.region(2));
  EXPECT_EQ(r3.count, 4) << "+2..+a: three c.li and the add";
  EXPECT_EQ(ok(four.region(4)).count, 4) << "+4..+c: to the function's last byte";
  const std::string why = refused(four.region(6));
  EXPECT_NE(why.find("run past the function's code (it ends at +0xc)"), std::string::npos) << why;
  EXPECT_EQ(refused(four.region(3)), "not optimized: +0x3 is not an instruction boundary");
}

TEST(RiscvDetourRegion, CallOnlyAsTheLastInstruction) {
  const Fn fn{{
      0xef, 0x00, 0x00, 0x01,  // +0 jal ra,+0x10
      0x05, 0x46,              // +4 li a2,1
      0x89, 0x46,              // +6 li a3,2
      0x82, 0x80,              // +8 ret
      0x01, 0x00, 0x01, 0x00, 0x01, 0x00,
      0x82, 0x80,              // +10 ret
  }};
  const std::string why = refused(fn.region(0));
  EXPECT_NE(why.find("the call at +0 would return into the region"), std::string::npos) << why;
}

TEST(RiscvDetourRegion, IndirectJumpRefusesTheFunction) {
  const Fn fn{{
      0x05, 0x46,  // +0 li a2,1
      0x89, 0x46,  // +2 li a3,2
      0x05, 0x07,  // +4 addi a4,a4,1
      0x01, 0x00,  // +6 nop
      0x01, 0x00,  // +8 nop
      0x82, 0x87,  // +a jr a5
  }};
  const std::string why = refused(fn.region(0));
  EXPECT_NE(why.find("the indirect jump at +0xa"), std::string::npos) << why;
}

TEST(RiscvDetourRegion, LrScSequencesAreRefused) {
  const Fn fn{{
      0xaf, 0x22, 0x05, 0x10,  // +0 lr.w t0,(a0)
      0x63, 0x96, 0xb2, 0x00,  // +4 bne t0,a1,+0x10
      0x2f, 0x23, 0xc5, 0x18,  // +8 sc.w t1,a2,(a0)
      0xe3, 0x1a, 0x03, 0xfe,  // +c bnez t1,+0
      0x82, 0x80,              // +10 ret
  }};
  EXPECT_NE(refused(fn.region(0)).find("the lr at +0 in the region opens an LR/SC sequence"),
            std::string::npos);
  EXPECT_NE(refused(fn.region(4)).find("inside the LR/SC sequence opened at +0"),
            std::string::npos);
}

TEST(RiscvDetourRegion, TrapInTheRegionIsRefused) {
  const Fn fn{{
      0x05, 0x46,  // +0 li a2,1
      0x89, 0x46,  // +2 li a3,2
      0x02, 0x90,  // +4 ebreak (a BUG/WARN, or another tool's breakpoint)
      0x16, 0x85,  // +6 mv a0,t0
      0x82, 0x80,  // +8 ret
  }};
  const std::string why = refused(fn.region(0));
  EXPECT_NE(why.find("'c.ebreak' at +0x4 in the region cannot run from the detour"),
            std::string::npos) << why;
  // Two instructions before the end: no room for the jump.
  const std::string none = refused(fn.region(6));
  EXPECT_NE(none.find("run past the function's code"), std::string::npos) << none;
}

TEST(RiscvDetourRegion, UnknownFlowAheadLeavesNoDeadRegister) {
  const Fn fn{{
      0x05, 0x46,              // +0 li a2,1
      0x89, 0x46,              // +2 li a3,2
      0x05, 0x47,              // +4 li a4,1
      0x05, 0x48,              // +6 li a6,1
      0xe7, 0x82, 0x02, 0x00,  // +8 jalr t0,0(t0): a link register the proof does not know
      0x82, 0x80,              // +c ret
  }};
  const std::string why = refused(fn.region(0));
  EXPECT_NE(why.find("no register is dead at the region +0..+0x8"), std::string::npos)
      << why;
}

TEST(RiscvDetourRegion, KernelTablesNamingTheRegion) {
  Fn into = kBothPaths;
  into.hidden = {{kFn + 0x12, kFn + 0x6}};  // an exception-table fixup inside +0..+0xa
  EXPECT_NE(refused(into.region(0)).find("send +0x12 to +0x6, inside the region +0..+0xa"),
            std::string::npos);
  Fn from = kBothPaths;
  from.hidden = {{kFn + 0x2, kFn + 0x12}};  // a faulting instruction in the region
  EXPECT_NE(refused(from.region(0)).find("+0x2 in the region is named by the kernel's tables"),
            std::string::npos);
  Fn misplaced = kBothPaths;
  misplaced.hidden = {{kFn + 0x3, kFn + 0x12}};  // no instruction starts at +3
  EXPECT_NE(refused(misplaced.region(0xc)).find("does not find an instruction"),
            std::string::npos);
}

TEST(RiscvDetourRegion, BugSitesFallThroughButStayWhereTheyAre) {
  const std::vector<u8> bytes{
      0x05, 0x46,  // +0 li a2,1
      0x89, 0x46,  // +2 li a3,2
      0x0d, 0x47,  // +4 li a4,3
      0x91, 0x47,  // +6 li a5,4
      0x02, 0x90,  // +8 ebreak (a WARN)
      0x85, 0x42,  // +a li t0,1
      0x16, 0x85,  // +c mv a0,t0
      0x82, 0x80,  // +e ret
  };
  FunctionText fn{kFn, bytes.data(), bytes.size()};
  // Not known as a BUG/WARN: another tool's breakpoint over an unknown instruction.
  EXPECT_NE(refused(check_detour_region(fn, kFn)).find("no register is dead"), std::string::npos);
  const okp_addr_t bug = kFn + 8;
  fn.bug_sites = &bug;
  fn.n_bug_sites = 1;
  const auto r = ok(check_detour_region(fn, kFn));
  EXPECT_EQ(r.dead, kT0) << "past the WARN, t0 is written before it is read";
  EXPECT_NE(refused(check_detour_region(fn, kFn + 4)).find("the BUG/WARN at +0x8 in the region"),
            std::string::npos);
}

TEST(RiscvDeadRegister, EnabledJumpLabelStillFallsThrough) {
  const std::vector<u8> bytes{
      0x05, 0x46,              // +0 li a2,1
      0x89, 0x46,              // +2 li a3,2
      0x0d, 0x47,              // +4 li a4,3
      0x91, 0x47,              // +6 li a5,4
      0x6f, 0x00, 0x60, 0x00,  // +8 j +0xe: a jump label's site, its key enabled
      0x16, 0x85,              // +c mv a0,t0: reached again once the key is disabled
      0x82, 0x80,              // +e ret
  };
  FunctionText fn{kFn, bytes.data(), bytes.size()};
  EXPECT_EQ(ok(check_detour_region(fn, kFn)).dead, kT0) << "unknown as a site: a plain jump";
  const HiddenEdge label{kFn + 8, kFn + 0xe};
  fn.hidden = &label;
  fn.n_hidden = 1;
  const auto r = ok(check_detour_region(fn, kFn));
  EXPECT_FALSE(r.dead_set & x(kT0)) << "the nop's way reads t0";
  EXPECT_EQ(r.dead, kT1);
}

TEST(RiscvDetourRegion, BytesThatDoNotDecodeRefuseTheFunction) {
  std::vector<u8> bytes{
      0x05, 0x46,  // +0 li a2,1
      0x89, 0x46,  // +2 li a3,2
      0x0d, 0x47,  // +4 li a4,3
      0x91, 0x47,  // +6 li a5,4
      0x82, 0x80,  // +8 ret
      0x00, 0x00,  // +a padding
      0x00, 0x00,
  };
  FunctionText fn{kFn, bytes.data(), bytes.size()};
  EXPECT_EQ(ok(check_detour_region(fn, kFn)).count, 4) << "zero padding after the last one";
  bytes[0xc] = 0x1f;  // +c a 48-bit encoding: code nobody decodes follows
  const std::string why = refused(check_detour_region(fn, kFn));
  EXPECT_NE(why.find("the function's bytes at +0xa do not decode"), std::string::npos) << why;
}

// A CALL_OPS kernel (6.16+) keeps the next function's ftrace_ops pointer in the 8 bytes
// before it, at the end of this function's extent: data, which refuses nothing.
TEST(RiscvDetourRegion, TheNextFunctionsFtraceOpsPointerIsNotCode) {
  std::vector<u8> bytes{
      0x05, 0x46,  // +0 li a2,1
      0x89, 0x46,  // +2 li a3,2
      0x0d, 0x47,  // +4 li a4,3
      0x91, 0x47,  // +6 li a5,4
      0x82, 0x80,  // +8 ret
      0x01, 0x00,  // +a nop (padding to the pointer's alignment)
      0x01, 0x00, 0x01, 0x00,
      0x48, 0x3a, 0xe1, 0x81, 0xff, 0xff, 0xff, 0xff,  // +10 &ftrace_nop_ops
  };
  FunctionText fn{kFn, bytes.data(), bytes.size()};
  const auto r = ok(check_detour_region(fn, kFn));
  EXPECT_EQ(r.count, 4);
  bytes[0x16] = 0xfe;  // not a kernel address: bytes that do not decode, as before
  const std::string why = refused(check_detour_region(fn, kFn));
  EXPECT_NE(why.find("do not decode"), std::string::npos) << why;
}

TEST(RiscvRegisterUse, VectorLoadsReadTheirStride) {
  // vlse32.v v8,(a0),a1 (strided: a1 is the stride) and fld fa0,8(a0) (the base only)
  EXPECT_EQ(use_of({0x07, 0x64, 0xb5, 0x0a}).reads & x(kA1), x(kA1));
  EXPECT_EQ(use_of({0x07, 0x35, 0x85, 0x00}).reads, x(kA0));
}

TEST(RiscvDeadRegister, ArgumentsTheRegionSetsForItsCallAreNotDead) {
  const Fn fn{{
      0x15, 0x46,              // +0 li a2,5
      0x99, 0x46,              // +2 li a3,6
      0xef, 0x00, 0xc0, 0x00,  // +4 jal ra,+0x10
      0x2e, 0x95,              // +8 add a0,a0,a1
      0x82, 0x80,              // +a ret
      0x01, 0x00, 0x01, 0x00,  // +c nop; nop
      0x82, 0x80,              // +10 ret (the callee)
  }};
  const auto r = ok(fn.region(0));
  EXPECT_EQ(r.count, 3);
  // a2 and a3 are dead at the region's start (written first), but the callee reads them:
  // the detour's jump to it must not go through them.
  EXPECT_FALSE(r.dead_set & (x(kA2) | x(kA3)));
  EXPECT_FALSE(r.dead_set & kArgRegs);
  EXPECT_EQ(r.dead, kT0);
}

TEST(RiscvFunctionFlow, FarJumpsAndCallsResolveOnlyWhenNothingLandsOnTheirJalr) {
  const Fn fn{{
      0x19, 0xc1,              // +0 beqz a0,+6: lands on the jalr below
      0x97, 0x00, 0x00, 0x00,  // +2 auipc ra,0
      0xe7, 0x80, 0x00, 0x10,  // +6 jalr ra,0x100(ra): ra is not always the auipc's
      0x17, 0x03, 0x00, 0x00,  // +a auipc t1,0
      0x67, 0x00, 0x03, 0x20,  // +e jr 0x200(t1): the assembler's `tail` to +0x20a
      0x19, 0xc1,              // +12 beqz a0,+0x18: lands on the jalr below
      0x17, 0x03, 0x00, 0x00,  // +14 auipc t1,0
      0x67, 0x00, 0x03, 0x10,  // +18 jr 0x100(t1)
  }};
  auto decoded = FunctionFlow::decode(fn.text());
  ASSERT_FALSE(decoded.is_error());
  const FunctionFlow flow = decoded.release_value();
  const FlowInsn& call = flow.insn(flow.index_of(kFn + 6));
  EXPECT_EQ(call.flow, Flow::kCall);
  EXPECT_EQ(call.target_addr, 0u) << "a call through ra, whatever it holds";
  const FlowInsn& tail = flow.insn(flow.index_of(kFn + 0xe));
  EXPECT_EQ(tail.flow, Flow::kJump);
  EXPECT_EQ(tail.target_addr, kFn + 0x20a);
  const FlowInsn& landed = flow.insn(flow.index_of(kFn + 0x18));
  EXPECT_EQ(landed.flow, Flow::kIndirect) << "t1 is not always the auipc's there";
  EXPECT_EQ(flow.first_unresolved_indirect(), flow.index_of(kFn + 0x18));
}
