// SPDX-License-Identifier: GPL-2.0
// The kernel's riscv kprobes (arch/riscv/kernel/probes/kprobes.c, 6.1 and 6.12) accept an
// address that their walk from the containing symbol's start reaches, each step the length the
// first parcel there says (its low two bits) in the text as it is now, okprobes' patches
// included; then they decode only the instruction at the address: ebreak and c.ebreak are
// refused, auipc, jal, jalr and branches simulated, the rest stepped from a slot.
//  - okprobes' breakpoint has its instruction's own size (c.ebreak for 2 bytes, ebreak for 4):
//    no walk is misled, and the kernel refuses a kprobe on it.
//  - okprobes' jump (auipc/jalr, or a jal) is made of instructions the kernel accepts: a kprobe
//    of the kernel's on the auipc, the jalr or the jal would write its ebreak over okprobes'
//    jump, and keep the jump's instruction as the one it simulates. okprobes' way back writes
//    the original bytes over that ebreak (or finds the text changed and cannot go back), and
//    the kernel's disarm later writes the jump's half back into the original code: a jump
//    into a freed detour, or half an auipc/jalr pair. Kept off: the jump's bytes.
//  - Past the jump the kernel's walk goes on from addr + patch_len, which may be inside an
//    original instruction: a region can be 10 bytes (2 + 4 + 4, the pair written over the
//    first 8), whose last 2 bytes are the upper half of a 4-byte instruction. The walk reads
//    that parcel as an instruction of its own and may go on drifting (an upper parcel whose low
//    bits are 11 reads as a 4-byte instruction that swallows the next one's first half): every
//    place it stops there is a "boundary" the kernel would accept, and an ebreak there would
//    split a real instruction. As on x86-64 the walk is deterministic: once it lands on a real
//    boundary it follows the real ones, so the bytes to keep the kernel off are
//    [addr, that landing), at least [addr, addr + covered).
// This simulates the kernel's walk over the original bytes after the patch (okprobes' other
// sites recovered: their breakpoints keep their instructions' lengths, as the kernel sees).
#include "arch/riscv/kernel_walk.h"

namespace okp::arch {

namespace {
// How far a drifting walk is followed; one not back on a real boundary by then is fenced to
// the function's end.
constexpr usize kMaxFence = 64;

// The length of the instruction whose first parcel is at p, as the kernel's GET_INSN_LENGTH.
usize insn_length_at(const u8* p) { return (p[0] & 0x3) == 0x3 ? 4 : 2; }
}  // namespace

okp_addr_t kernel_kprobe_fence_end(okp_addr_t addr, usize patch_len, usize covered,
                                   okp_addr_t func_start, unsigned long func_size,
                                   RecoverFn recover) {
  const okp_addr_t func_end = func_size ? func_start + func_size : addr + kMaxFence;
  const usize n = func_end > addr ? (func_end - addr < kMaxFence ? func_end - addr : kMaxFence)
                                  : 0;
  const okp_addr_t give_up = func_end > addr + n ? func_end : addr + n;
  if (covered < patch_len) covered = patch_len;
  u8 text[kMaxFence];
  if (n < covered || okp_seam_read_nofault(text, addr, n)) return give_up;
  recover(addr, text, n);
  usize real = 0, walk = patch_len;  // offsets from addr: a real boundary, the kernel's walk
  for (;;) {
    while (real < walk) {
      if (real + 2 > n) return give_up;
      real += insn_length_at(text + real);
    }
    if (real == walk && walk >= covered) return addr + walk;
    if (walk + 2 > n) return give_up;
    walk += insn_length_at(text + walk);  // not a real boundary: the kernel decodes on
  }
}

usize kernel_kprobe_fences(okp_addr_t addr, usize patch_len, usize covered, okp_addr_t func_start,
                           unsigned long func_size, RecoverFn recover,
                           KernelFence (&out)[kMaxKernelFences]) {
  out[0] = {addr, kernel_kprobe_fence_end(addr, patch_len, covered, func_start, func_size,
                                          recover)};
  return 1;
}

}  // namespace okp::arch
