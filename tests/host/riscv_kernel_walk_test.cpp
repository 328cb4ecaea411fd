// SPDX-License-Identifier: GPL-2.0
// Where the kernel's riscv kprobes must be kept off okprobes' patch (arch/riscv/kernel_walk.h):
// their walk reads each instruction's length from its first parcel in the text as it is, so
// after okprobes' jump it goes on from the jump's end, which may be the upper half of an
// original instruction.
#include <gtest/gtest.h>

#include <vector>

#include "arch/riscv/kernel_walk.h"
#include "host_seam.h"

namespace {

// +0 c.addi a0, 1; +2 slli a1, a0, 4; +6 addi a1, t1, 3 (its upper parcel 0x0033 reads as a
// 4-byte instruction); +10 addi a0, a1, 3 (upper parcel 0x0035: 2 bytes); +14 c.jr ra.
const std::vector<okp::u8> kFn = {
    0x05, 0x05,              // +0
    0x93, 0x15, 0x45, 0x00,  // +2
    0x93, 0x05, 0x33, 0x00,  // +6
    0x13, 0x85, 0x35, 0x00,  // +10
    0x82, 0x80,              // +14
};

void no_recovery(okp_addr_t, okp::u8*, okp::usize) {}

okp_addr_t fence_end(okp::usize at, okp::usize patch_len, okp::usize covered,
                     okp::usize size = kFn.size()) {
  const okp_addr_t start = reinterpret_cast<okp_addr_t>(kFn.data());
  return okp::arch::kernel_kprobe_fence_end(start + at, patch_len, covered, start, size,
                                            no_recovery) - start;
}

TEST(RiscvKernelWalk, BreakpointFencesItsOwnInstruction) {
  EXPECT_EQ(fence_end(0, 2, 2), 2u);   // c.ebreak on c.addi
  EXPECT_EQ(fence_end(2, 4, 4), 6u);   // ebreak on slli
}

TEST(RiscvKernelWalk, PairOverWholeInstructionsFencesItsBytes) {
  // auipc/jalr at +2 over slli and addi (8 bytes): the walk is on +10, a real boundary.
  EXPECT_EQ(fence_end(2, 8, 8), 10u);
}

TEST(RiscvKernelWalk, JalOverPartOfAnInstructionFencesTheTail) {
  // jal at +0 over c.addi and slli (6 bytes): from +4 the walk reads slli's upper parcel
  // (0x0045, 2 bytes) and lands on +6.
  EXPECT_EQ(fence_end(0, 4, 6), 6u);
}

TEST(RiscvKernelWalk, PairDriftsIntoTheNextInstruction) {
  // The pair at +0 over 10 bytes: from +8 the upper parcel 0x0033 reads as 4 bytes, to +12,
  // inside addi at +10; its upper parcel 0x0035 reads as 2, to +14: back on a real boundary.
  EXPECT_EQ(fence_end(0, 8, 10), 14u);
}

TEST(RiscvKernelWalk, FencesReturnOneRangeFromTheProbe) {
  const okp_addr_t start = reinterpret_cast<okp_addr_t>(kFn.data());
  okp::arch::KernelFence out[okp::arch::kMaxKernelFences];
  ASSERT_EQ(okp::arch::kernel_kprobe_fences(start, 8, 10, start, kFn.size(), no_recovery, out),
            1u);
  EXPECT_EQ(out[0].start, start);
  EXPECT_EQ(out[0].end, start + 14);
}

TEST(RiscvKernelWalk, WalkPastTheFunctionFencesToItsEnd) {
  // The same drift in a function cut at +12: no real boundary to land on before its end.
  EXPECT_EQ(fence_end(0, 8, 10, 12), 12u);
}

}  // namespace
