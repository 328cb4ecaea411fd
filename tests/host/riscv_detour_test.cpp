// SPDX-License-Identifier: GPL-2.0
// The riscv64 detour (arch/riscv/detour.cpp) on the host: the image's header and jump, and
// its copy run on a small interpreter of the instructions a detour is made of, from the copy
// to where it leaves (every way out lands where the original would have gone, with the
// registers the original would have left, R aside), for each kind of relocated instruction,
// with and without post handlers; every region shape fits; the refusals carry reasons.
// Functions assembled with riscv64-linux-gnu-as -march=rv64gc -mno-relax.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "arch/riscv/detour.h"
#include "arch/riscv/detour_region.h"
#include "arch/riscv/insn_plan.h"

using namespace okp;
using namespace okp::riscv;

namespace {

constexpr okp_addr_t kFn = 0xffffffff80001000ul;      // the function
constexpr okp_addr_t kBuffer = 0xffffffff80e00000ul;  // a detour 14 MiB on
constexpr okp_addr_t kEntry = 0xffffffff81000000ul;
constexpr okp_addr_t kPost = 0xffffffff81000100ul;
constexpr okp_addr_t kStack = 0x10000;  // the interpreter's stack (top)

u32 word_at(const arch::DetourPlan& p, usize at) {
  u32 w;
  std::memcpy(&w, p.image + at, 4);
  return w;
}
u64 quad_at(const arch::DetourPlan& p, usize at) {
  u64 v;
  std::memcpy(&v, p.image + at, 8);
  return v;
}
i64 sext(u64 v, unsigned bits) { return static_cast<i64>(v << (64 - bits)) >> (64 - bits); }

// Runs a detour's code on the host: the instructions detours are made of and the ones the
// tests' regions copy. Stops where control leaves the image; a call of the post entry is
// answered as the entry does (the data word after it is the ip post handlers see; back at
// ret + 8).
struct Machine {
  const arch::DetourPlan& plan;
  u64 x[32] = {};
  u8 stack[512] = {};  // the entry's frame, which the detour's call takes
  std::vector<u64> post_ips;
  std::string error;

  explicit Machine(const arch::DetourPlan& p) : plan(p) { x[kSp] = kStack; }

  bool in_image(u64 a, usize n) const { return a >= plan.buffer && a + n <= plan.buffer + plan.size; }
  u64 load(u64 a) {
    u64 v = 0;
    if (in_image(a, 8)) std::memcpy(&v, plan.image + (a - plan.buffer), 8);
    else if (a >= kStack - sizeof(stack) && a + 8 <= kStack) std::memcpy(&v, stack + (a - (kStack - sizeof(stack))), 8);
    else error = "load outside the image and the stack";
    return v;
  }
  void store(u64 a, u64 v) {
    if (a >= kStack - sizeof(stack) && a + 8 <= kStack) std::memcpy(stack + (a - (kStack - sizeof(stack))), &v, 8);
    else error = "store outside the stack";
  }
  void set(unsigned rd, u64 v) {
    if (rd) x[rd] = v;
  }

  // From pc until control leaves the image: where it goes (0 on an error).
  u64 run(u64 pc) {
    for (int steps = 0; steps < 200; ++steps) {
      if (!in_image(pc, 2)) return pc;
      u16 h;
      std::memcpy(&h, plan.image + (pc - plan.buffer), 2);
      if ((h & 3) != 3) {
        const u32 f3 = h >> 13, rd = (h >> 7) & 31, rs2 = (h >> 2) & 31;
        const i64 imm6 = sext(((h >> 12) & 1) << 5 | ((h >> 2) & 31), 6);
        if ((h & 3) == 1 && f3 == 0) set(rd, x[rd] + imm6);           // c.addi, c.nop
        else if ((h & 3) == 1 && f3 == 2) set(rd, imm6);              // c.li
        else if ((h & 3) == 2 && f3 == 4 && !((h >> 12) & 1) && !rs2 && rd) return x[rd];  // c.jr
        else if ((h & 3) == 2 && f3 == 4 && !((h >> 12) & 1) && rs2) set(rd, x[rs2]);  // c.mv
        else if ((h & 3) == 2 && f3 == 4 && ((h >> 12) & 1) && rs2) set(rd, x[rd] + x[rs2]);  // c.add
        else return error = "compressed instruction not interpreted", 0;
        pc += 2;
        continue;
      }
      u32 w;
      std::memcpy(&w, plan.image + (pc - plan.buffer), 4);
      const u32 rd = (w >> 7) & 31, rs1 = (w >> 15) & 31, rs2 = (w >> 20) & 31, f3 = (w >> 12) & 7;
      const i64 imm_i = sext(w >> 20, 12);
      u64 next = pc + 4;
      switch (w & 0x7f) {
        case 0x17: set(rd, pc + sext(w & 0xfffff000u, 32)); break;
        case 0x6f:
          set(rd, pc + 4);
          next = pc + sext(((w >> 31) & 1) << 20 | ((w >> 12) & 0xff) << 12 |
                           ((w >> 20) & 1) << 11 | ((w >> 21) & 0x3ff) << 1, 21);
          break;
        case 0x13:
          if (f3 != 0) return error = "op-imm not interpreted", 0;
          set(rd, x[rs1] + imm_i);
          break;
        case 0x33:
          if (f3 != 0 || (w >> 25)) return error = "op not interpreted", 0;
          set(rd, x[rs1] + x[rs2]);
          break;
        case 0x03:
          if (f3 != 3) return error = "load not interpreted", 0;
          set(rd, load(x[rs1] + imm_i));
          break;
        case 0x23:
          if (f3 != 3) return error = "store not interpreted", 0;
          store(x[rs1] + sext(((w >> 25) << 5) | ((w >> 7) & 31), 12), x[rs2]);
          break;
        case 0x63: {
          const i64 off = sext(((w >> 31) & 1) << 12 | ((w >> 7) & 1) << 11 |
                               ((w >> 25) & 0x3f) << 5 | ((w >> 8) & 0xf) << 1, 13);
          if (okp::riscv::branch_taken(static_cast<okp::u8>(f3), x[rs1], x[rs2])) next = pc + off;
          break;
        }
        case 0x67: {
          const u64 target = (x[rs1] + imm_i) & ~1ull;
          set(rd, pc + 4);
          if (target == kPost) {
            if (x[kRa] % 8) return error = "post data not 8-aligned", 0;
            post_ips.push_back(load(x[kRa]));
            next = x[kRa] + 8;
          } else {
            next = target;
          }
          break;
        }
        default:
          return error = "instruction not interpreted", 0;
      }
      if (!error.empty()) return 0;
      pc = next;
    }
    error = "no way out";
    return 0;
  }
};

struct Fn {
  std::vector<u8> bytes;
  ErrorOr<DetourRegion> region(okp_addr_t off, usize jump_size = kJumpSize) const {
    return check_detour_region(FunctionText{kFn, bytes.data(), bytes.size()}, kFn + off,
                               jump_size);
  }
};

arch::DetourPlan plan(const Fn& fn, okp_addr_t off, okp_addr_t post = 0,
                      okp_addr_t buffer = kBuffer, usize jump_size = kJumpSize) {
  auto r = fn.region(off, jump_size);
  EXPECT_FALSE(r.is_error()) << (r.is_error() ? r.error().reason() : "");
  if (r.is_error()) return {};
  auto p = plan_detour(r.value(), buffer, {kEntry, post});
  EXPECT_FALSE(p.is_error()) << (p.is_error() ? p.error().reason() : "");
  return p.is_error() ? arch::DetourPlan{} : p.release_value();
}
std::string refusal(const Fn& fn, okp_addr_t off, okp_addr_t post = 0,
                    okp_addr_t buffer = kBuffer, okp_addr_t entry = kEntry,
                    usize jump_size = kJumpSize) {
  auto r = fn.region(off, jump_size);
  EXPECT_FALSE(r.is_error()) << (r.is_error() ? r.error().reason() : "");
  if (r.is_error()) return "";
  auto p = plan_detour(r.value(), buffer, {entry, post});
  EXPECT_TRUE(p.is_error());
  return p.is_error() ? p.error().reason() : "";
}

// Where an auipc/jalr pair at `at` (bytes of the image, or the jump) goes, and its register.
u64 pair_target(u32 auipc, u32 jalr, u64 at, unsigned* reg) {
  EXPECT_EQ(auipc & 0x7f, 0x17u);
  EXPECT_EQ(jalr & 0x707f, 0x67u);
  *reg = (auipc >> 7) & 31;
  EXPECT_EQ((jalr >> 15) & 31, *reg) << "the jalr goes through the auipc's register";
  return at + sext(auipc & 0xfffff000u, 32) + sext(jalr >> 20, 12);
}

const Fn kAuipc{{
    0x17, 0x25, 0x01, 0x00,  // +0 auipc a0,0x12
    0x21, 0x05,              // +4 c.addi a0,8
    0xaa, 0x85,              // +6 c.mv a1,a0
    0x82, 0x80,              // +8 ret
}};
const Fn kBranches{{
    0x63, 0x05, 0xb5, 0x00,  // +0 beq a0,a1,+0xa
    0x05, 0x05,              // +4 c.addi a0,1
    0x11, 0xc2,              // +6 c.beqz a2,+0xa
    0x09, 0x05,              // +8 c.addi a0,2
    0x82, 0x80,              // +a ret
}};

}  // namespace

TEST(RiscvDetour, HeaderEntryCallAndJump) {
  const auto p = plan(kAuipc, 0);
  EXPECT_EQ(quad_at(p, 0), kFn);
  EXPECT_EQ(quad_at(p, kDetourSiteOffset), 0u);
  EXPECT_EQ(quad_at(p, kDetourDeadRegOffset), kT0 * 8u) << "R's place in a pt_regs, for the entry";
  EXPECT_EQ(word_at(p, 24), 0xec010113u);  // addi sp,sp,-320: the entry's whole frame
  EXPECT_EQ(word_at(p, 28), 0x00113423u);  // sd ra,8(sp): pt_regs' ra
  unsigned reg;
  EXPECT_EQ(pair_target(word_at(p, 32), word_at(p, 36), kBuffer + 32, &reg), kEntry);
  EXPECT_EQ(reg, kRa);
  EXPECT_EQ((word_at(p, 36) >> 7) & 31, kRa) << "jalr ra: the entry returns to buffer+40";
  EXPECT_EQ(word_at(p, 40), 0x00813083u);  // ld ra,8(sp)
  EXPECT_EQ(word_at(p, 44), 0x14010113u);  // addi sp,sp,320
  EXPECT_EQ(p.copy, kBuffer + kDetourCopyOffset);
  // The jump: auipc t0; jalr x0 through t0, to the stack save at buffer+24.
  u32 jump[2];
  std::memcpy(jump, p.jump, 8);
  EXPECT_EQ(p.jump_size, 8);
  EXPECT_EQ(pair_target(jump[0], jump[1], kFn, &reg), kBuffer + kDetourCallOffset);
  EXPECT_EQ(reg, kT0);
  EXPECT_EQ((jump[1] >> 7) & 31, 0u) << "no link";
  EXPECT_EQ(p.region_length, 8);
  EXPECT_EQ(p.region_insns, 3);
  EXPECT_FALSE(p.post);
  EXPECT_EQ(p.size % 8, 0u);
  EXPECT_LE(p.size, kMaxDetourSize);
}

TEST(RiscvDetour, AuipcLoadsItsOriginalValue) {
  const auto p = plan(kAuipc, 0);
  Machine m(p);
  m.x[kA0] = 5;
  m.x[kA1] = 6;
  m.x[kT0] = 0x7777;
  const u64 out = m.run(p.copy);
  ASSERT_EQ(m.error, "");
  EXPECT_EQ(out, kFn + 8) << "back after the region";
  EXPECT_EQ(m.x[kA0], kFn + 0x12000 + 8);
  EXPECT_EQ(m.x[kA1], kFn + 0x12000 + 8);
  for (unsigned r = 1; r < 32; ++r)
    if (r != kA0 && r != kA1 && r != kT0) {
      EXPECT_EQ(m.x[r], r == kSp ? kStack : 0u) << "x" << r;
    }
}

TEST(RiscvDetour, BranchesKeepTheirTargets) {
  const auto p = plan(kBranches, 0);
  struct Case {
    u64 a0, a1, a2;
    u64 out, a0_after;
  } cases[] = {
      {3, 3, 0, kFn + 0xa, 3},      // beq taken
      {3, 4, 0, kFn + 0xa, 4},      // c.beqz taken
      {3, 4, 9, kFn + 0x8, 4},      // neither: back after the region
  };
  for (const Case& c : cases) {
    Machine m(p);
    m.x[kA0] = c.a0;
    m.x[kA1] = c.a1;
    m.x[kA2] = c.a2;
    EXPECT_EQ(m.run(p.copy), c.out) << c.a0 << " " << c.a1 << " " << c.a2;
    EXPECT_EQ(m.error, "");
    EXPECT_EQ(m.x[kA0], c.a0_after);
  }
  // c.beqz became a 4-byte bne a2, x0 over the way out.
  bool found = false;
  for (usize at = kDetourCopyOffset; at + 4 <= p.size; at += 2) {
    const u32 w = word_at(p, at);
    if ((w & 0x7f) == 0x63 && ((w >> 15) & 31) == kA2) {
      EXPECT_EQ((w >> 12) & 7, 1u) << "bne";
      EXPECT_EQ((w >> 20) & 31, 0u);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(RiscvDetour, DirectCallReturnsToTheOriginalCode) {
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
  const auto p = plan(fn, 4);
  Machine m(p);
  m.x[kA0] = 42;
  EXPECT_EQ(m.run(p.copy), kFn + 0x16) << "the callee";
  EXPECT_EQ(m.error, "");
  EXPECT_EQ(m.x[kRa], kFn + 0xc) << "returns after the call, in the original code";
  EXPECT_EQ(m.x[kS1], 42u);
  EXPECT_EQ(m.x[kA0], 1u);
}

TEST(RiscvDetour, IndirectCallComputesItsTargetBeforeTheLink) {
  const Fn fn{{
      0x26, 0x85,  // +0 mv a0,s1
      0x89, 0x45,  // +2 li a1,2
      0x0d, 0x46,  // +4 li a2,3
      0x82, 0x97,  // +6 jalr a5
      0x01, 0x45,  // +8 li a0,0
      0x82, 0x80,  // +a ret
  }};
  const auto p = plan(fn, 0);
  Machine m(p);
  m.x[kS1] = 7;
  m.x[kA5] = 0xffffffff80345670ul;
  EXPECT_EQ(m.run(p.copy), 0xffffffff80345670ul);
  EXPECT_EQ(m.error, "");
  EXPECT_EQ(m.x[kRa], kFn + 8);
  EXPECT_EQ(m.x[kA0], 7u);
  EXPECT_EQ(m.x[kA1], 2u);
  EXPECT_EQ(m.x[kA2], 3u);
  EXPECT_EQ(m.x[kA5], 0xffffffff80345670ul) << "the callee's address stays where it was";
  EXPECT_EQ(m.x[kT0], 0xffffffff80345670ul) << "R carried it";
}

TEST(RiscvDetour, ReturnIsCopiedAndEndsTheCopy) {
  const Fn fn{{
      0x82, 0x80,  // +0 ret
      0x05, 0x45,  // +2 li a0,1 (never reached from the region)
      0x89, 0x45,  // +4 li a1,2
      0x0d, 0x46,  // +6 li a2,3
      0x82, 0x80,  // +8 ret
  }};
  const auto p = plan(fn, 0);
  Machine m(p);
  m.x[kRa] = 0xffffffff80777770ul;
  EXPECT_EQ(m.run(p.copy), 0xffffffff80777770ul);
  EXPECT_EQ(m.x[kA0], 0u);
  EXPECT_EQ(p.size, kDetourCopyOffset + 8) << "the ret, padded: nothing after it is copied";
  EXPECT_NE(refusal(fn, 0, kPost).find("post handlers after a return"), std::string::npos);
}

TEST(RiscvDetour, PostHandlersAfterTheFirstInstruction) {
  const auto p = plan(kAuipc, 0, kPost);
  EXPECT_TRUE(p.post);
  EXPECT_EQ(quad_at(p, kDetourSiteOffset), kDetourHasPost);
  Machine m(p);
  EXPECT_EQ(m.run(p.copy), kFn + 8);
  ASSERT_EQ(m.error, "");
  ASSERT_EQ(m.post_ips.size(), 1u);
  EXPECT_EQ(m.post_ips[0], kFn + 4) << "after the auipc";
  EXPECT_EQ(m.x[kA1], kFn + 0x12000 + 8);
  EXPECT_EQ(m.x[kSp], kStack) << "the post call's frame is gone";

  const auto b = plan(kBranches, 0, kPost);
  Machine taken(b);
  taken.x[kA0] = taken.x[kA1] = 1;
  EXPECT_EQ(taken.run(b.copy), kFn + 0xa);
  ASSERT_EQ(taken.post_ips.size(), 1u);
  EXPECT_EQ(taken.post_ips[0], kFn + 0xa) << "the branch's target";
  Machine not_taken(b);
  not_taken.x[kA1] = 1;
  not_taken.x[kA2] = 1;
  EXPECT_EQ(not_taken.run(b.copy), kFn + 0x8);
  ASSERT_EQ(not_taken.post_ips.size(), 1u) << "post handlers once, after the first instruction";
  EXPECT_EQ(not_taken.post_ips[0], kFn + 0x4);
}

TEST(RiscvDetour, SiteWordAndHitAccessors) {
  auto p = plan(kAuipc, 0, kPost);
  set_detour_site(&p, 0xffffffff81234560ul);
  const okp_addr_t copy = reinterpret_cast<okp_addr_t>(p.image) + kDetourCopyOffset;
  EXPECT_EQ(detour_site(copy), 0xffffffff81234560ul);
  EXPECT_TRUE(detour_has_post(copy));
  alignas(8) u8 after_call[16] = {};
  const u64 ip = kFn + 4;
  std::memcpy(after_call, &ip, 8);
  const okp_addr_t ret = reinterpret_cast<okp_addr_t>(after_call);
  EXPECT_EQ(detour_post_next_ip(ret), kFn + 4);
  EXPECT_EQ(detour_post_resume(ret), ret + 8);
}

TEST(RiscvDetour, ReachRefusals) {
  // 2 GiB and more below the probe: no pair reaches.
  const std::string far = refusal(kAuipc, 0, 0, kFn - 0x80001000ul);
  EXPECT_NE(far.find("not optimized: the detour at 0xffffffff00000000 is out of an auipc/jalr"),
            std::string::npos) << far;
  const std::string entry = refusal(kAuipc, 0, 0, kBuffer, kBuffer + 0x90000000ul);
  EXPECT_NE(entry.find("out of an auipc/jalr pair's reach (+-2 GiB) of the detour"),
            std::string::npos) << entry;
  EXPECT_TRUE(pair_reaches(kFn, kFn + 0x7ffff7ff));
  EXPECT_FALSE(pair_reaches(kFn, kFn + 0x7ffff800));
  EXPECT_TRUE(pair_reaches(kFn, kFn - 0x80000000));
  EXPECT_FALSE(pair_reaches(kFn, kFn - 0x80000801));
  EXPECT_TRUE(detour_reaches(kFn, kBuffer));
  EXPECT_FALSE(detour_reaches(kFn, kFn + 0x90000000ul));
}

TEST(RiscvDetour, SplitPairRoundsForTheSignedLowPart) {
  for (i64 delta : {0l, 4l, 0x7ffl, 0x800l, 0xfffl, -1l, -0x800l, -0x801l, 0x12345678l,
                    -0x12345678l}) {
    i32 hi, lo;
    split_pair(delta, &hi, &lo);
    EXPECT_GE(lo, -2048);
    EXPECT_LT(lo, 2048);
    EXPECT_EQ((static_cast<i64>(hi) << 12) + lo, delta);
  }
}

// Every region shape of the instructions that grow a detour most, with and without post
// handlers: it fits, and run with no branch taken it leaves after the region (or for the call).
TEST(RiscvDetour, EveryRegionShapeFits) {
  struct Piece {
    u8 length;
    const char* name;
  };
  const Piece menu[] = {{4, "beq"}, {2, "c.beqz"}, {2, "c.addi"}, {4, "auipc"}, {4, "add"},
                        {4, "call"}};
  constexpr usize kTarget = 0x40;  // ret: every branch's and the call's target
  usize shapes = 0, largest = 0;
  std::vector<int> seq;
  auto encode = [&](std::vector<u8>& b, int piece) {
    const usize at = b.size();
    const i64 off = static_cast<i64>(kTarget - at);
    auto put32 = [&](u32 w) {
      for (int i = 0; i < 4; ++i) b.push_back(static_cast<u8>(w >> (8 * i)));
    };
    switch (piece) {
      case 0:  // beq a0,a1,target
        put32(((off >> 12) & 1) << 31 | ((off >> 5) & 0x3f) << 25 | 11u << 20 | 10u << 15 |
              ((off >> 1) & 0xf) << 8 | ((off >> 11) & 1) << 7 | 0x63);
        break;
      case 1: {  // c.beqz a2,target
        const u32 h = 6u << 13 | ((off >> 8) & 1) << 12 | ((off >> 3) & 3) << 10 | 4u << 7 |
                      ((off >> 6) & 3) << 5 | ((off >> 1) & 3) << 3 | ((off >> 5) & 1) << 2 | 1;
        b.push_back(static_cast<u8>(h));
        b.push_back(static_cast<u8>(h >> 8));
        break;
      }
      case 2: b.push_back(0x05); b.push_back(0x07); break;  // c.addi a4,1
      case 3: put32(0x00012697); break;                     // auipc a3,0x12
      case 4: put32(0x00b787b3); break;                     // add a5,a5,a1
      default:                                              // jal ra,target
        put32(((off >> 20) & 1) << 31 | ((off >> 1) & 0x3ff) << 21 | ((off >> 11) & 1) << 20 |
              ((off >> 12) & 0xff) << 12 | 1u << 7 | 0x6f);
    }
  };
  std::function<void(usize)> grow = [&](usize length) {
    if (length >= kJumpSize) {
      std::vector<u8> b;
      for (int piece : seq) encode(b, piece);
      while (b.size() < kTarget) b.push_back(0x01), b.push_back(0x00);  // c.nop
      b.push_back(0x82), b.push_back(0x80);                             // ret
      const Fn fn{b};
      for (okp_addr_t post : {okp_addr_t{0}, kPost}) {
        const auto p = plan(fn, 0, post);
        ASSERT_NE(p.size, 0u);
        ++shapes;
        largest = std::max<usize>(largest, p.size);
        EXPECT_LE(p.size, kMaxDetourSize);
        Machine m(p);
        m.x[kA1] = 1;  // a0 != a1
        m.x[kA2] = 1;  // a2 != 0
        const u64 out = m.run(p.copy);
        EXPECT_EQ(m.error, "");
        EXPECT_EQ(out, seq.back() == 5 ? kFn + kTarget : kFn + length);
        EXPECT_EQ(m.post_ips.size(), post ? 1u : 0u);
      }
      return;
    }
    for (int piece = 0; piece < 6; ++piece) {
      if (piece == 5 && length + menu[piece].length < kJumpSize) continue;  // a call is last
      seq.push_back(piece);
      grow(length + menu[piece].length);
      seq.pop_back();
    }
  };
  grow(0);
  EXPECT_GT(shapes, 100u);
  RecordProperty("largest", static_cast<int>(largest));
  EXPECT_GT(largest, 128u) << "the shapes do reach past the old capacity";
}

// --- A jal where the detour is within +-1 MiB of the probe ----------------------------------

namespace {

constexpr okp_addr_t kNear = kFn + 0x40000;  // a detour 256 KiB on

bool is_jal_to(u32 w, u64 at, u64 to) {
  if ((w & 0xfff) != 0x06f) return false;  // jal x0
  const i64 off = sext(((w >> 31) & 1) << 20 | ((w >> 12) & 0xff) << 12 | ((w >> 20) & 1) << 11 |
                       ((w >> 21) & 0x3ff) << 1, 21);
  return at + off == to;
}

}  // namespace

TEST(RiscvDetour, JalWhereOneReachesCoversOneInstruction) {
  const auto p = plan(kAuipc, 0, 0, kNear, kJalSize);
  EXPECT_EQ(p.jump_size, 4);
  u32 jump;
  std::memcpy(&jump, p.jump, 4);
  EXPECT_TRUE(is_jal_to(jump, kFn, kNear + kDetourCallOffset)) << std::hex << jump;
  EXPECT_EQ(p.region_insns, 1) << "the auipc alone: a region with no inside";
  EXPECT_EQ(p.region_length, 4);
  Machine m(p);
  EXPECT_EQ(m.run(p.copy), kFn + 4);
  EXPECT_EQ(m.error, "");
  EXPECT_EQ(m.x[kA0], kFn + 0x12000);
  // The way back is a jal too: no register written but the auipc's own.
  for (unsigned r = 1; r < 32; ++r)
    if (r != kA0) {
      EXPECT_EQ(m.x[r], r == kSp ? kStack : 0u) << "x" << r;
    }
}

TEST(RiscvDetour, JalNeedsNoDeadRegister) {
  const Fn fn{{
      0x05, 0x46,              // +0 li a2,1
      0x89, 0x46,              // +2 li a3,2
      0xe7, 0x82, 0x02, 0x00,  // +4 jalr t0,0(t0): every register live before it
      0x82, 0x80,              // +8 ret
  }};
  EXPECT_TRUE(fn.region(0, kJumpSize).is_error()) << "8 bytes take in the jalr t0";
  auto r = fn.region(0, kJalSize);
  ASSERT_FALSE(r.is_error()) << r.error().reason();
  EXPECT_EQ(r.value().dead, 0) << "none dead";
  EXPECT_EQ(r.value().count, 2);
  const auto p = plan(fn, 0, 0, kNear, kJalSize);
  Machine m(p);
  EXPECT_EQ(m.run(p.copy), kFn + 4);
  EXPECT_EQ(m.x[kA2], 1u);
  EXPECT_EQ(m.x[kA3], 2u);
  // Checked for a jal, the region cannot take the pair: a detour out of a jal's reach.
  EXPECT_NE(refusal(fn, 0, 0, kBuffer, kEntry, kJalSize).find("out of a jal's reach (+-1 MiB) "
                                                              "of the probe"),
            std::string::npos);
}

TEST(RiscvDetour, JalWayOutOfReachNeedsARegister) {
  const Fn fn{{
      0x6f, 0x00, 0x01, 0x80,  // +0 j -0xf0000: to a function 960 KiB below (unchecked)
      0x82, 0x80,              // +4 ret
  }};
  const std::string why = refusal(fn, 0, 0, kNear, kEntry, kJalSize);
  EXPECT_NE(why.find("is out of a jal's reach (+-1 MiB) of the detour at 0xffffffff80041000, and "
                     "no register is dead"), std::string::npos) << why;
}
