// SPDX-License-Identifier: GPL-2.0
// The kernel's can_probe() (arch/x86/kernel/kprobes/core.c, 6.1 and 6.12) proves a kprobe
// address is an instruction boundary by decoding the function from its start, recovering the
// original bytes only under the kernel's own kprobes (recover_probed_instruction). okprobes'
// int3 (1 byte) or jmp rel32 (5 bytes) is decoded as it is, so the walk goes on from addr + 1
// or addr + 5, which may be inside the original instructions: every place it lands there is a
// "boundary" the kernel accepts, and it would write its int3 into the middle of an
// instruction (measured: tests/vm/modules/kk_drift.c). The walk is deterministic: once it lands
// on a real boundary it follows the real ones, so the bytes to keep the kernel off are
// [addr, that landing). At least [addr, addr + covered): the kernel accepts addr itself when
// it holds okprobes' jump (it would emulate the jmp, and okprobes could not go back to its
// breakpoint), and a kernel int3 in the jump's region would never be reached.
//
// This simulates the kernel's walk with okprobes' decoder (Zydis, which agrees with the
// kernel's on every instruction of vmlinux text; on the garbage a drifting walk decodes, it is
// the same tables, not proven equal) over the original bytes after the patch (other okprobes
// sites recovered, as the kernel sees its own).
#include "arch/x86/kernel_walk.h"

#include "arch/x86/decoder.h"

namespace okp::arch {

namespace {
// How far a drifting walk is followed; one that has not found a real boundary by then is
// fenced to the function's end (x86 decoding resynchronises within a few instructions).
constexpr usize kMaxFence = 256;
}  // namespace

okp_addr_t kernel_kprobe_fence_end(okp_addr_t addr, usize patch_len, usize covered,
                                   okp_addr_t func_start, unsigned long func_size,
                                   RecoverFn recover) {
  const okp_addr_t func_end = func_size ? func_start + func_size : addr + kMaxFence;
  const usize n = func_end - addr < kMaxFence ? func_end - addr : kMaxFence;
  const okp_addr_t give_up = func_end > addr + kMaxFence ? func_end : addr + n;
  u8 text[kMaxFence];
  if (okp_seam_read_nofault(text, addr, n)) return give_up;
  recover(addr, text, n);
  usize real = 0, walk = patch_len;  // offsets from addr: a real boundary, the kernel's walk
  for (;;) {
    while (real < walk) {
      auto insn = x86::decode(text + real, n - real);
      if (insn.is_error()) return give_up;
      real += insn.value().length;
    }
    if (real == walk && walk >= covered) return addr + walk;
    if (walk >= n) return give_up;
    // Not a real boundary (or still inside what the patch stands for): the kernel decodes on.
    auto insn = x86::decode(text + walk, n - walk);
    if (insn.is_error()) return give_up;  // its walk stops here: all after it is refused
    walk += insn.value().length;
  }
}

}  // namespace okp::arch
