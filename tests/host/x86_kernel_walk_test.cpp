// SPDX-License-Identifier: GPL-2.0
// Where the kernel's kprobes must be kept off after okprobes' patch (arch/x86/kernel_walk.h),
// on the function tests/vm/modules/kk_drift_text.S measures in guests: its immediates make a
// decoder that reads okprobes' int3 or jmp as an instruction drift inside the next ones.
#include <gtest/gtest.h>

#include <vector>

#include "arch/x86/kernel_walk.h"

namespace {

// okp_kkd_fn without ENDBR: A=0 lea, B=4 movabs, C=14 mov $0xb8909090, D=19 movabs, E=29 add,
// F=32 add, G=36 ret.
const std::vector<okp::u8> kFn = {
    0x48, 0x8d, 0x47, 0x01,                                            // A
    0x48, 0xb9, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,        // B
    0xba, 0x90, 0x90, 0x90, 0xb8,                                      // C
    0x48, 0xb9, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,        // D
    0x48, 0x01, 0xc0,                                                  // E
    0x48, 0x83, 0xc0, 0x03,                                            // F
    0xc3,                                                              // G
};

void no_recovery(okp_addr_t, okp::u8*, okp::usize) {}

okp_addr_t fence_end(okp::usize at, okp::usize patch_len, okp::usize covered) {
  const okp_addr_t start = reinterpret_cast<okp_addr_t>(kFn.data());
  return okp::arch::kernel_kprobe_fence_end(start + at, patch_len, covered, start, kFn.size(),
                                            no_recovery) - start;
}

TEST(X86KernelWalk, Int3OnLeaFencesItsTailOnly) {
  // From A+1 `8d 47 01` is a 3-byte lea: the walk is back on B at once.
  EXPECT_EQ(fence_end(0, 1, 1), 4u);
}

TEST(X86KernelWalk, Int3OnMovDriftsIntoTheNextInstruction) {
  // From C+1: three nops, then b8 swallows D's first four bytes; six nops inside D; E.
  EXPECT_EQ(fence_end(14, 1, 1), 29u);
}

TEST(X86KernelWalk, JumpFencesItsRegionAndTheDriftAfterIt) {
  // A jmp at A over A+B (14 bytes): the walk from A+5 = B+1 reads b9 + imm32, four nops, C.
  EXPECT_EQ(fence_end(0, 5, 14), 14u);
}

TEST(X86KernelWalk, RealBoundaryRightAfterThePatchNeedsNoMore) {
  // An int3 on the one-byte ret: nothing after it to misread.
  EXPECT_EQ(fence_end(36, 1, 1), 37u);
}

}  // namespace
