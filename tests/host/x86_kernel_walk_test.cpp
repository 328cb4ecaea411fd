// SPDX-License-Identifier: GPL-2.0
// Where the kernel's kprobes must be kept off after okprobes' patch (arch/x86/kernel_walk.h),
// on the function tests/vm/modules/kk_drift_text.S measures in guests: its immediates make a
// decoder that reads okprobes' int3 or jmp as an instruction drift inside the next ones.
#include <gtest/gtest.h>

#include <vector>

#include "arch/x86/kernel_walk.h"
#include "host_seam.h"

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

// okp_kkd_branch_fn: test, jnz over Y to T, Y, T...
const std::vector<okp::u8> kBranchFn = {
    0x48, 0x85, 0xff,                    // 0 test %rdi,%rdi
    0x0f, 0x85, 0x04, 0x00, 0x00, 0x00,  // 3 jnz 13
    0x48, 0x83, 0xc0, 0x64,              // 9 Y: add $100,%rax
    0x48, 0x8d, 0x47, 0x01,              // 13 T: lea 1(%rdi),%rax
    0x48, 0x01, 0xc0,                    // 17
    0x48, 0x83, 0xc0, 0x03,              // 20
    0xc3,                                // 24
};

TEST(X86KernelWalk, HiddenBranchFencesTheFourBytesBeforeItsTarget) {
  const okp_addr_t start = reinterpret_cast<okp_addr_t>(kBranchFn.data());
  okp::arch::KernelFence f[okp::arch::kMaxKernelFences];
  const okp::usize n = okp::arch::kernel_kprobe_fences(start + 3, 1, 1, start, kBranchFn.size(),
                                                       no_recovery, f);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(f[0].start - start, 3u);   // the jnz and the kernel's misread `85 04 00`, `00 00`
  EXPECT_EQ(f[0].end - start, 9u);
  EXPECT_EQ(f[1].start - start, 9u);   // an optprobe at 9..12 would cover the target, 13
  EXPECT_EQ(f[1].end - start, 13u);
}

TEST(X86KernelWalk, NoBranchNoMoreFences) {
  const okp_addr_t start = reinterpret_cast<okp_addr_t>(kFn.data());
  okp::arch::KernelFence f[okp::arch::kMaxKernelFences];
  EXPECT_EQ(okp::arch::kernel_kprobe_fences(start + 14, 1, 1, start, kFn.size(), no_recovery, f), 1u);
}

TEST(X86KernelWalk, HiddenIndirectJumpFencesTheWholeFunction) {
  const std::vector<okp::u8> fn = {0x48, 0x89, 0xf8, 0xff, 0xe0, 0x90, 0x90, 0xc3};  // jmp *%rax
  const okp_addr_t start = reinterpret_cast<okp_addr_t>(fn.data());
  okp::arch::KernelFence f[okp::arch::kMaxKernelFences];
  ASSERT_EQ(okp::arch::kernel_kprobe_fences(start + 3, 1, 1, start, fn.size(), no_recovery, f), 1u);
  EXPECT_EQ(f[0].start, start);
  EXPECT_EQ(f[0].end, start + fn.size());
}

// A tail call through a retpoline thunk (`jmp __x86_indirect_thunk_rax`, rel32) is an indirect
// jump to the kernel's can_optimize(): hidden under okprobes' int3, the whole function is fenced.
// A call to a thunk is not (the kernel does not count calls).
TEST(X86KernelWalk, HiddenJumpToARetpolineThunkFencesTheWholeFunction) {
  std::vector<okp::u8> fn = {0x48, 0x89, 0xf8, 0xe9, 0, 0, 0, 0, 0x90, 0x90, 0xc3};
  std::vector<okp::u8> thunks(64, 0xcc);
  const okp_addr_t start = reinterpret_cast<okp_addr_t>(fn.data());
  const okp_addr_t thunk = reinterpret_cast<okp_addr_t>(thunks.data()) + 32;
  const okp::i32 rel = static_cast<okp::i32>(thunk - (start + 8));
  if (static_cast<okp_addr_t>(start + 8 + rel) != thunk) GTEST_SKIP() << "heap too far apart for rel32";
  __builtin_memcpy(fn.data() + 4, &rel, 4);
  okp::arch::KernelFence f[okp::arch::kMaxKernelFences];
  // No thunks known: a jump out of the function needs no fence beyond the misread bytes.
  ASSERT_EQ(okp::arch::kernel_kprobe_fences(start + 3, 1, 1, start, fn.size(), no_recovery, f), 1u);
  EXPECT_EQ(f[0].start, start + 3);  // not the whole function
  okp_host::set_indirect_thunks(reinterpret_cast<okp_addr_t>(thunks.data()),
                                reinterpret_cast<okp_addr_t>(thunks.data()) + thunks.size());
  ASSERT_EQ(okp::arch::kernel_kprobe_fences(start + 3, 1, 1, start, fn.size(), no_recovery, f), 1u);
  EXPECT_EQ(f[0].start, start);
  EXPECT_EQ(f[0].end, start + fn.size());
  fn[3] = 0xe8;  // call the thunk instead
  ASSERT_EQ(okp::arch::kernel_kprobe_fences(start + 3, 1, 1, start, fn.size(), no_recovery, f), 1u);
  EXPECT_EQ(f[0].start, start + 3);
  okp_host::set_indirect_thunks(0, 0);
}

}  // namespace
