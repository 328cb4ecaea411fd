// SPDX-License-Identifier: GPL-2.0
// riscv64 jump tables (arch/riscv/jump_table.cpp) on the host: GCC's relative dispatch
// recognized, the table's entries read up to the first that is no instruction of the
// function, and the region check and liveness going through exactly its targets. Assembled
// with riscv64-linux-gnu-as -march=rv64gc -mno-relax.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "arch/riscv/detour_region.h"
#include "arch/riscv/jump_table.h"

using namespace okp;
using namespace okp::riscv;

namespace {

constexpr okp_addr_t kFn = 0xffffffff80001000ul;
constexpr okp_addr_t kTable = kFn + 0x108;  // auipc at +8, addi 0x100

const std::vector<u8> kSwitch{
    0x89, 0x47,              // +0 li a5,2
    0x63, 0xe1, 0xa7, 0x02,  // +2 bltu a5,a0,+0x24
    0x0a, 0x05,              // +6 slli a0,a0,0x2
    0x17, 0x07, 0x00, 0x00,  // +8 auipc a4,0x0
    0x13, 0x07, 0x07, 0x10,  // +c addi a4,a4,256: the table
    0x3a, 0x95,              // +10 add a0,a0,a4
    0x1c, 0x41,              // +12 lw a5,0(a0)
    0xba, 0x97,              // +14 add a5,a5,a4
    0x82, 0x87,              // +16 jr a5
    0x85, 0x42,              // +18 li t0,1
    0x21, 0xa0,              // +1a j +0x22
    0x89, 0x42,              // +1c li t0,2
    0x11, 0xa0,              // +1e j +0x22
    0x0d, 0x43,              // +20 li t1,3
    0x16, 0x95,              // +22 add a0,a0,t0
    0x82, 0x80,              // +24 ret
};

std::vector<u8> entries(std::initializer_list<i64> offsets) {  // from the function's start
  std::vector<u8> b;
  for (i64 off : offsets) {
    const i32 e = static_cast<i32>(static_cast<i64>(kFn + off - kTable));
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<u8>(static_cast<u32>(e) >> (8 * i)));
  }
  return b;
}

FunctionFlow decode(const FunctionText& fn) {
  auto f = FunctionFlow::decode(fn);
  EXPECT_FALSE(f.is_error());
  return f.release_value();
}

}  // namespace

TEST(RiscvJumpTable, DispatchIsRecognizedAndItsTableRead) {
  FunctionFlow flow = decode(FunctionText{kFn, kSwitch.data(), kSwitch.size()});
  const u32 jr = flow.index_of(kFn + 0x16);
  ASSERT_NE(jr, kNoInsn);
  EXPECT_EQ(flow.insn(jr).flow, Flow::kIndirect);
  EXPECT_EQ(table_base(flow, jr), kTable);
  EXPECT_EQ(table_base(flow, flow.index_of(kFn + 0x24)), 0u) << "a return is no dispatch";
  okp_addr_t out[8];
  // Three entries, then data landing between instructions: the table ends there.
  const auto t = entries({0x18, 0x1c, 0x20, 0x19, 0x18});
  ASSERT_EQ(table_targets(flow, kTable, t.data(), t.size(), out, 8), 3u);
  EXPECT_EQ(out[0], kFn + 0x18);
  EXPECT_EQ(out[1], kFn + 0x1c);
  EXPECT_EQ(out[2], kFn + 0x20);
  // Data pointing out of the function ends it too.
  const auto outside = entries({0x18, 0x20, 0x400});
  EXPECT_EQ(table_targets(flow, kTable, outside.data(), outside.size(), out, 8), 2u);
  // No end within what was read, or more than max: not resolved.
  const auto endless = entries({0x18, 0x1c, 0x20});
  EXPECT_EQ(table_targets(flow, kTable, endless.data(), endless.size(), out, 8), 0u);
  EXPECT_EQ(table_targets(flow, kTable, t.data(), t.size(), out, 2), 0u);
}

TEST(RiscvJumpTable, ScheduledCodeThatIsNotTheDispatchIsNotRecognized) {
  std::vector<u8> b = kSwitch;
  b[0x14] = 0xbe;  // +14 add a5,a5,a5 (0x97be): the table's address is not added
  b[0x15] = 0x97;
  FunctionFlow flow = decode(FunctionText{kFn, b.data(), b.size()});
  EXPECT_EQ(table_base(flow, flow.index_of(kFn + 0x16)), 0u);
  std::vector<u8> joined = kSwitch;  // a branch lands between the auipc and the jr
  joined[0x1a] = 0xdd;               // +1a j +0x10 (0xbfdd): not straight-line code any more
  joined[0x1b] = 0xbf;
  FunctionFlow j = decode(FunctionText{kFn, joined.data(), joined.size()});
  EXPECT_EQ(j.insn(j.index_of(kFn + 0x1a)).target_addr, kFn + 0x10);
  EXPECT_EQ(table_base(j, j.index_of(kFn + 0x16)), 0u);
}

TEST(RiscvJumpTable, ResolvedDispatchGoesToExactlyItsTargets) {
  FunctionText fn{kFn, kSwitch.data(), kSwitch.size()};
  const auto unresolved = check_detour_region(fn, kFn);
  ASSERT_TRUE(unresolved.is_error());
  EXPECT_NE(std::string(unresolved.error().reason()).find("the indirect jump at +0x16"),
            std::string::npos);
  const HiddenEdge table[] = {{kFn + 0x16, kFn + 0x18, true},
                              {kFn + 0x16, kFn + 0x1c, true},
                              {kFn + 0x16, kFn + 0x20, true}};
  fn.hidden = table;
  fn.n_hidden = 3;
  const auto r = check_detour_region(fn, kFn);
  ASSERT_FALSE(r.is_error()) << r.error().reason();
  EXPECT_EQ(r.value().count, 3);
  EXPECT_FALSE(r.value().dead_set & reg_bit(kT0)) << "the third case reads t0 unwritten";
  EXPECT_EQ(r.value().dead, kT1);
  // A case label inside the region.
  const auto inside = check_detour_region(fn, kFn + 0x18);
  ASSERT_TRUE(inside.is_error());
  EXPECT_NE(std::string(inside.error().reason())
                .find("the jump table dispatched at +0x16 sends it to +0x1c, inside the region "
                      "+0x18..+0x20"),
            std::string::npos) << inside.error().reason();
  // The dispatch itself in a region.
  const auto dispatch = check_detour_region(fn, kFn + 0x10);
  ASSERT_TRUE(dispatch.is_error());
  EXPECT_NE(std::string(dispatch.error().reason()).find("the jump table's dispatch at +0x16"),
            std::string::npos) << dispatch.error().reason();
}

namespace {

// The kernel's memory as the resolver reads it: the table at kTable, nothing else.
struct Rodata {
  std::vector<u8> bytes;
  static bool read(void* ctx, okp_addr_t addr, u8* out, usize n) {
    const auto& r = *static_cast<Rodata*>(ctx);
    if (addr < kTable || addr + n > kTable + r.bytes.size()) return false;
    std::memcpy(out, r.bytes.data() + (addr - kTable), n);
    return true;
  }
};

}  // namespace

TEST(RiscvJumpTable, ResolvedThroughTheKernelsMemory) {
  FunctionFlow flow = decode(FunctionText{kFn, kSwitch.data(), kSwitch.size()});
  Rodata rodata{entries({0x20, 0x18, 0x1c, 0x1c, 0x400})};
  rodata.bytes.resize(256);  // the chunks read past the table stay readable
  HiddenEdge out[8];
  ASSERT_EQ(resolve_jump_tables(flow, Rodata::read, &rodata, out, 8), 4u);
  for (const HiddenEdge& e : out) {
    if (&e == out + 4) break;
    EXPECT_EQ(e.from, kFn + 0x16);
    EXPECT_TRUE(e.table);
  }
  EXPECT_EQ(out[0].to, kFn + 0x20);
  EXPECT_EQ(out[3].to, kFn + 0x1c);
  // The flow decoded again with them: the dispatch goes to exactly those.
  FunctionText fn{kFn, kSwitch.data(), kSwitch.size()};
  fn.hidden = out;
  fn.n_hidden = 4;
  FunctionFlow resolved = decode(fn);
  EXPECT_EQ(resolved.first_unresolved_indirect(), kNoInsn);
  EXPECT_TRUE(resolved.insn(resolved.index_of(kFn + 0x16)).table_dispatch);
  // Memory that cannot be read, or too little room for the edges: not resolved.
  Rodata unreadable{entries({0x20})};
  EXPECT_EQ(resolve_jump_tables(flow, Rodata::read, &unreadable, out, 8), 0u);
  EXPECT_EQ(resolve_jump_tables(flow, Rodata::read, &rodata, out, 3), 0u);
}
