// SPDX-License-Identifier: GPL-2.0
// The riscv64 jump probe end to end on the host: random functions (register moves and
// arithmetic, auipc, forward and backward branches, jumps, calls and tail calls, early
// returns, compressed and 4-byte forms) run
// on an interpreter as they are and with a probe's jump and detour in place, at every
// boundary the region check accepts, with and without post handlers, from random registers.
// What the caller can see at the return (a0, a1, ra, sp, s0-s11) must be the same: the dead
// register really is dead, and the relocated region does what the original did.
// EQ_DUMP=<function number> writes that function and its last detour to eq_function.bin and
// eq_detour.bin (objdump -D -b binary -m riscv:rv64) when a comparison fails.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "arch/riscv/dead_register.h"
#include "arch/riscv/detour.h"
#include "arch/riscv/detour_region.h"
#include "arch/riscv/insn_plan.h"

using namespace okp;
using namespace okp::riscv;

namespace {

constexpr okp_addr_t kFn = 0xffffffff80001000ul;
constexpr okp_addr_t kBuffer = 0xffffffff80e00000ul;      // beyond a jal's reach: the pair
constexpr okp_addr_t kNearBuffer = 0xffffffff80041000ul;  // within it: a jal, no register
constexpr okp_addr_t kEntry = 0xffffffff81000000ul;
constexpr okp_addr_t kPost = 0xffffffff81000100ul;
constexpr okp_addr_t kReturn = 0xffffffff80777770ul;  // ra at the function's entry
// Another function the random ones call and tail-call: it reads its arguments and leaves
// what the psABI lets it leave in the caller-saved registers.
constexpr okp_addr_t kCallee = kFn + 0x800;
constexpr u64 kStack = 0x10000;

i64 sext(u64 v, unsigned bits) { return static_cast<i64>(v << (64 - bits)) >> (64 - bits); }

// Text at kFn and, when there is one, a detour at kBuffer.
struct Cpu {
  const std::vector<u8>& text;
  const arch::DetourPlan* detour;
  okp_addr_t buffer = kBuffer;
  u64 x[32] = {};
  u8 stack[512] = {};  // the function's frame and the entry's, which the detour's call takes
  u8 dead = 0;  // the detour's R: the pre entry shows (and restores) it as 0
  int post_calls = 0;
  int entries = 0;  // hits of the probe
  int detour_calls = 0;  // calls of the callee from the detour (a region's relocated call)
  u64 last_pc = 0;
  u64 calls = 0;  // the callee's clobbers depend on how many calls came before: the same
                  // in both runs when they make the same calls

  const u8* fetch(u64 pc, usize n) const {
    if (pc >= kFn && pc + n <= kFn + text.size()) return text.data() + (pc - kFn);
    if (detour && pc >= buffer && pc + n <= buffer + detour->size)
      return detour->image + (pc - buffer);
    return nullptr;
  }
  void set(unsigned rd, u64 v) {
    if (rd) x[rd] = v;
  }
  bool load(u64 a, u64* v) {
    if (const u8* p = fetch(a, 8)) return std::memcpy(v, p, 8), true;
    if (a >= kStack - sizeof(stack) && a + 8 <= kStack)
      return std::memcpy(v, stack + (a - (kStack - sizeof(stack))), 8), true;
    return false;
  }
  bool store(u64 a, u64 v) {
    if (a < kStack - sizeof(stack) || a + 8 > kStack) return false;
    std::memcpy(stack + (a - (kStack - sizeof(stack))), &v, 8);
    return true;
  }
  // Runs from kFn until the function returns (true) or something is wrong (false).
  bool run(int max_steps) {
    u64 pc = kFn;
    for (int step = 0; step < max_steps; ++step) {
      if (pc == kReturn) return true;
      if (pc == kCallee) {
        ++calls;
        detour_calls += last_pc >= buffer && last_pc < buffer + arch::kDetourCapacity &&
                        x[kRa] != kReturn;
        const u64 result = x[kA0] * 3 + x[kA1] + x[kA7] + calls;
        for (unsigned r = 1; r < 32; ++r)
          if (kCallClobbered & reg_bit(r) && r != kRa) x[r] = (calls * 0x9e3779b97f4a7c15ull) ^ r;
        x[kA0] = result;
        pc = x[kRa];
        continue;
      }
      const u8* p = fetch(pc, 2);
      if (!p) return false;
      last_pc = pc;
      const u16 h = static_cast<u16>(p[0] | p[1] << 8);
      if ((h & 3) != 3) {
        const u32 f3 = h >> 13, rd = (h >> 7) & 31, rs2 = (h >> 2) & 31, rs1p = ((h >> 7) & 7) + 8;
        const i64 imm6 = sext(((h >> 12) & 1) << 5 | ((h >> 2) & 31), 6);
        u64 next = pc + 2;
        if ((h & 3) == 1 && f3 == 0) set(rd, x[rd] + imm6);        // c.addi, c.nop
        else if ((h & 3) == 1 && f3 == 2) set(rd, imm6);           // c.li
        else if ((h & 3) == 1 && f3 == 5) {                        // c.j
          const i64 off = sext(((h >> 12) & 1) << 11 | ((h >> 11) & 1) << 4 | ((h >> 9) & 3) << 8 |
                               ((h >> 8) & 1) << 10 | ((h >> 7) & 1) << 6 | ((h >> 6) & 1) << 7 |
                               ((h >> 3) & 7) << 1 | ((h >> 2) & 1) << 5, 12);
          next = pc + off;
        } else if ((h & 3) == 1 && f3 >= 6) {                      // c.beqz, c.bnez
          const i64 off = sext(((h >> 12) & 1) << 8 | ((h >> 10) & 3) << 3 | ((h >> 5) & 3) << 6 |
                               ((h >> 3) & 3) << 1 | ((h >> 2) & 1) << 5, 9);
          if ((x[rs1p] == 0) == (f3 == 6)) next = pc + off;
        } else if ((h & 3) == 2 && f3 == 4 && !((h >> 12) & 1) && !rs2 && rd) {
          next = x[rd];                                            // c.jr
        } else if ((h & 3) == 2 && f3 == 4 && !((h >> 12) & 1) && rs2) {
          set(rd, x[rs2]);                                         // c.mv
        } else if ((h & 3) == 2 && f3 == 4 && ((h >> 12) & 1) && rs2) {
          set(rd, x[rd] + x[rs2]);                                 // c.add
        } else {
          return false;
        }
        pc = next;
        continue;
      }
      const u8* q = fetch(pc, 4);
      if (!q) return false;
      u32 w;
      std::memcpy(&w, q, 4);
      const u32 rd = (w >> 7) & 31, rs1 = (w >> 15) & 31, rs2 = (w >> 20) & 31, f3 = (w >> 12) & 7;
      const i64 imm_i = sext(w >> 20, 12);
      u64 next = pc + 4, v = 0;
      switch (w & 0x7f) {
        case 0x17: set(rd, pc + sext(w & 0xfffff000u, 32)); break;
        case 0x6f:
          set(rd, pc + 4);
          next = pc + sext(((w >> 31) & 1) << 20 | ((w >> 12) & 0xff) << 12 |
                           ((w >> 20) & 1) << 11 | ((w >> 21) & 0x3ff) << 1, 21);
          break;
        case 0x13:
          if (f3) return false;
          set(rd, x[rs1] + imm_i);
          break;
        case 0x33:
          if (f3 || (w >> 25)) return false;
          set(rd, x[rs1] + x[rs2]);
          break;
        case 0x03:
          if (f3 != 3 || !load(x[rs1] + imm_i, &v)) return false;
          set(rd, v);
          break;
        case 0x23:
          if (f3 != 3 || !store(x[rs1] + sext(((w >> 25) << 5) | ((w >> 7) & 31), 12), x[rs2]))
            return false;
          break;
        case 0x63:
          if (okp::riscv::branch_taken(static_cast<okp::u8>(f3), x[rs1], x[rs2]))
            next = pc + sext(((w >> 31) & 1) << 12 | ((w >> 7) & 1) << 11 |
                             ((w >> 25) & 0x3f) << 5 | ((w >> 8) & 0xf) << 1, 13);
          break;
        case 0x67: {
          const u64 target = (x[rs1] + imm_i) & ~1ull;
          set(rd, pc + 4);
          if (target == kEntry) {  // saves and restores everything, R shown as 0
            ++entries;
            if (dead) x[dead] = 0;
            next = x[1];
          } else if (target == kPost) {  // saves and restores everything, R as it is (it
            ++post_calls;                  // may hold the first instruction's result)
            next = x[1] + 8;
          } else {
            next = target;
          }
          break;
        }
        default:
          return false;
      }
      pc = next;
    }
    return false;
  }
};

// A random function of the interpreted instructions, every branch landing on one of them.
struct Generator {
  std::mt19937_64 rng;
  explicit Generator(u64 seed) : rng(seed) {}
  u32 pick(u32 n) { return static_cast<u32>(rng() % n); }

  std::vector<u8> function() {
    // x8 (s0) and x9 (s1), a0-a5: compressed branches' registers; t0-t2 beside them.
    static constexpr u8 kRegs[] = {9, 10, 11, 12, 13, 14, 15, 5, 6, 7};
    static constexpr u8 kCRegs[] = {9, 10, 11, 12, 13, 14, 15};
    struct Insn {
      int kind;
      u8 rd, rs1, rs2;
      i32 imm;
      usize target;  // branches and jumps: an instruction index
    };
    const usize n = 8 + pick(14);
    std::vector<Insn> insns;
    for (usize i = 0; i < n; ++i) {
      Insn in{static_cast<int>(pick(14)), kRegs[pick(10)], kRegs[pick(10)], kRegs[pick(10)],
              static_cast<i32>(pick(31)) - 15, 0};
      if (in.kind == 5 || in.kind == 6) in.rs1 = kCRegs[pick(7)];
      // Branch targets: forward, or backward at most once in a while (bounded by steps).
      if (in.kind >= 5 && in.kind <= 8) in.target = pick(4) ? i + 1 + pick(n - i) : pick(i + 1);
      insns.push_back(in);
    }
    // Lay out: lengths first, then encode with the offsets known.
    // A frame keeps ra across the calls: addi sp,sp,-16; sd ra,8(sp) first, and
    // ld ra,8(sp); addi sp,sp,16 before every return and tail call.
    constexpr usize kPrologue = 8, kEpilogue = 8;
    auto length = [](const Insn& in) {
      switch (in.kind) {
        case 3: case 4: case 7: case 9: case 10: return usize{4};
        case 11: return usize{8};               // auipc + jalr
        case 12: return kEpilogue + 2;          // epilogue, ret
        case 13: return kEpilogue + 8;          // epilogue, auipc + jr
        default: return usize{2};
      }
    };
    std::vector<usize> at(n + 1);
    at[0] = kPrologue;
    for (usize i = 0; i < n; ++i) at[i + 1] = at[i] + length(insns[i]);
    std::vector<u8> b;
    auto put16 = [&](u32 h) { b.push_back(static_cast<u8>(h)); b.push_back(static_cast<u8>(h >> 8)); };
    auto put32 = [&](u32 w) { put16(w & 0xffff); put16(w >> 16); };
    auto epilogue = [&] {
      put32(0x00813083);  // ld ra,8(sp)
      put32(0x01010113);  // addi sp,sp,16
    };
    put32(0xff010113);  // addi sp,sp,-16
    put32(0x00113423);  // sd ra,8(sp)
    for (usize i = 0; i < n; ++i) {
      const Insn& in = insns[i];
      const i64 off = static_cast<i64>(at[in.target]) - static_cast<i64>(at[i]);
      const u32 imm = static_cast<u32>(in.imm) & 63;
      switch (in.kind) {
        case 0: put16(2u << 13 | (imm >> 5) << 12 | in.rd << 7 | (imm & 31) << 2 | 1); break;  // c.li
        case 1: put16((imm >> 5) << 12 | in.rd << 7 | (imm & 31) << 2 | 1); break;  // c.addi
        case 2: put16(8u << 12 | in.rd << 7 | in.rs2 << 2 | 2); break;              // c.mv
        case 3: put32(static_cast<u32>(in.rs2) << 20 | in.rs1 << 15 | in.rd << 7 | 0x33); break;
        case 4: put32((static_cast<u32>(in.imm) & 0xfff) << 20 | in.rs1 << 15 | in.rd << 7 | 0x13); break;
        case 5: case 6: {  // c.beqz / c.bnez rs1'
          const u32 o = static_cast<u32>(off);
          put16((in.kind == 5 ? 6u : 7u) << 13 | ((o >> 8) & 1) << 12 | ((o >> 3) & 3) << 10 |
                (in.rs1 - 8u) << 7 | ((o >> 6) & 3) << 5 | ((o >> 1) & 3) << 3 | ((o >> 5) & 1) << 2 | 1);
          break;
        }
        case 7: {  // bne / blt rs1, rs2
          const u32 o = static_cast<u32>(off), f3 = pick(2) ? 1 : 4;
          put32(((o >> 12) & 1) << 31 | ((o >> 5) & 0x3f) << 25 | static_cast<u32>(in.rs2) << 20 |
                in.rs1 << 15 | f3 << 12 | ((o >> 1) & 0xf) << 8 | ((o >> 11) & 1) << 7 | 0x63);
          break;
        }
        case 8: {  // c.j
          const u32 o = static_cast<u32>(off);
          put16(5u << 13 | ((o >> 11) & 1) << 12 | ((o >> 4) & 1) << 11 | ((o >> 8) & 3) << 9 |
                ((o >> 10) & 1) << 8 | ((o >> 6) & 1) << 7 | ((o >> 7) & 1) << 6 |
                ((o >> 1) & 7) << 3 | ((o >> 5) & 1) << 2 | 1);
          break;
        }
        case 9: put32((static_cast<u32>(pick(4))) << 12 | in.rd << 7 | 0x17); break;  // auipc
        case 10: {  // jal ra, callee
          const u32 o = static_cast<u32>(kCallee - (kFn + at[i]));
          put32(((o >> 20) & 1) << 31 | ((o >> 1) & 0x3ff) << 21 | ((o >> 11) & 1) << 20 |
                ((o >> 12) & 0xff) << 12 | 1u << 7 | 0x6f);
          break;
        }
        case 11: case 13: {  // call / tail callee: auipc ra|t1, 0; jalr ra|x0, lo(ra|t1)
          if (in.kind == 13) epilogue();
          const u32 o = static_cast<u32>(kCallee - (kFn + b.size()));
          const u32 link = in.kind == 11 ? 1 : 6;
          put32(link << 7 | 0x17);
          put32((o & 0xfff) << 20 | link << 15 | (in.kind == 11 ? 1u : 0u) << 7 | 0x67);
          break;
        }
        default: epilogue(); put16(0x8082); break;  // an early return
      }
    }
    epilogue();
    put16(0x8082);  // ret
    return b;
  }
};

constexpr RegSet kVisible = kReturnReads;

}  // namespace

// The pair through a dead register (detour beyond a jal's reach), or a jal (within it: the
// region of 4 bytes, a register only where a way out is beyond a jal's reach).
void run_random_functions(okp_addr_t buffer, usize jump_size) {
  Generator gen(0x5eed + jump_size);
  long functions = 0, probes = 0, accepted = 0, compared = 0, calls = 0, tails = 0, not_t0 = 0,
       compared_calls = 0, hits = 0;
  for (int f = 0; f < 3000; ++f) {
    const std::vector<u8> text = gen.function();
    FunctionText fn{kFn, text.data(), text.size()};
    fn.jumps_out_are_tail_calls = true;  // kCallee is another function's entry
    auto decoded = FunctionFlow::decode(fn);
    ASSERT_FALSE(decoded.is_error());
    FunctionFlow flow = decoded.release_value();
    ASSERT_TRUE(flow.compute_liveness());
    ASSERT_EQ(flow.code_size(), text.size()) << "the generator's code decodes whole";
    ++functions;
    for (usize k = 0; k < flow.count(); ++k) {
      ++probes;
      auto region = check_detour_region(flow, flow.addr_of(k), jump_size);
      if (region.is_error()) continue;
      ++accepted;
      const DetourRegion& r = region.value();
      calls += r.insns[r.count - 1].flow == Flow::kCall;
      for (usize i = 0; i < r.count; ++i)
        tails += r.insns[i].flow == Flow::kJump && r.insns[i].target == kCallee;
      not_t0 += r.dead != kT0;
      for (okp_addr_t post : {okp_addr_t{0}, kPost}) {
        auto planned = plan_detour(region.value(), buffer, {kEntry, post});
        if (planned.is_error()) continue;  // post handlers after a return; no register
        const arch::DetourPlan& plan = planned.value();
        std::vector<u8> patched = text;
        EXPECT_EQ(plan.jump_size, jump_size);
        std::memcpy(patched.data() + (flow.addr_of(k) - kFn), plan.jump, plan.jump_size);
        for (int run = 0; run < 4; ++run) {
          Cpu original{text, nullptr}, probed{patched, &plan, buffer};
          for (unsigned r = 1; r < 32; ++r) original.x[r] = probed.x[r] = gen.rng() % 5;
          original.x[kRa] = probed.x[kRa] = kReturn;
          original.x[kSp] = probed.x[kSp] = kStack;
          probed.dead = region.value().dead;
          if (!original.run(400)) break;  // a loop that does not end: not a case
          if (std::getenv("EQ_DUMP") && f == std::atoi(std::getenv("EQ_DUMP"))) {
            FILE* o = std::fopen("eq_function.bin", "wb");
            std::fwrite(text.data(), 1, text.size(), o);
            std::fclose(o);
            o = std::fopen("eq_detour.bin", "wb");
            std::fwrite(plan.image, 1, plan.size, o);
            std::fclose(o);
          }
          ASSERT_TRUE(probed.run(4000)) << "function " << f << " probe +" << std::hex
                                        << flow.addr_of(k) - kFn;
          for (unsigned r = 1; r < 32; ++r) {
            if (!(kVisible & reg_bit(r))) continue;
            ASSERT_EQ(original.x[r], probed.x[r])
                << "x" << r << " differs: function " << f << " probe +" << std::hex
                << flow.addr_of(k) - kFn << " R " << register_name(region.value().dead)
                << (post ? " with post" : "");
          }
          ++compared;
          compared_calls += probed.detour_calls > 0;
          hits += probed.entries > 0;
        }
      }
    }
  }
  ::testing::Test::RecordProperty("accepted", static_cast<int>(accepted));
  ::testing::Test::RecordProperty("calls", static_cast<int>(calls));
  ::testing::Test::RecordProperty("tails", static_cast<int>(tails));
  ::testing::Test::RecordProperty("not_t0", static_cast<int>(not_t0));
  EXPECT_GT(calls, 100) << "regions ending in a call";
  ::testing::Test::RecordProperty("compared_calls", static_cast<int>(compared_calls));
  ::testing::Test::RecordProperty("hits", static_cast<int>(hits));
  EXPECT_GT(hits, compared / 4) << "runs that went through the probe";
  EXPECT_GT(compared_calls, 1000) << "runs calling from a detour";
  EXPECT_GT(tails, 100) << "regions with a tail call";
  EXPECT_GT(not_t0, 100) << "regions through another register than t0";
  EXPECT_GT(accepted, probes / 4) << "the generator gives the region check work it accepts";
  EXPECT_GT(compared, 1000);
}

TEST(RiscvDetourEquivalence, RandomFunctionsBehaveTheSameThroughAPairDetour) {
  run_random_functions(kBuffer, kJumpSize);
}

TEST(RiscvDetourEquivalence, RandomFunctionsBehaveTheSameThroughAJalDetour) {
  run_random_functions(kNearBuffer, kJalSize);
}
