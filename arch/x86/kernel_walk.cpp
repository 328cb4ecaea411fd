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
// The kernel's can_optimize() (opt.c) walks the whole function the same way to make sure no
// jump lands in [kp + 1, kp + 5), where an optprobe's jmp would go, and that no indirect jump
// exists: a branch under okprobes' patch or inside the misread bytes is invisible to it, so
// it would optimize a kprobe just before that branch's target (measured: kk_drift.c branch=1,
// an oops at the next taken jnz). Those kprobes are fenced too: [T - 4, T) per hidden target
// T, the whole function for a hidden indirect jump or call. A `jmp` or jcc to a retpoline
// thunk counts as an indirect jump (can_optimize()'s insn_is_indirect_jump() says so on
// CONFIG_RETPOLINE kernels): hidden, the kernel would optimize a kprobe in a function whose
// jumps through a thunk it can no longer see, e.g. the BPF interpreter's computed gotos.
//
// This simulates the kernel's walk with okprobes' decoder (Zydis, which agrees with the
// kernel's on every instruction of vmlinux text; on the garbage a drifting walk decodes, it is
// the same tables, not proven equal) over the original bytes after the patch (other okprobes
// sites recovered, as the kernel sees its own).
#include "arch/x86/kernel_walk.h"

#include "arch/x86/decoder.h"
#include "seam/jump_services.h"

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

namespace {
bool same(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// Whether target is in the kernel's retpoline thunks (okp_seam_indirect_thunks).
bool is_indirect_thunk(okp_addr_t target) {
  okp_addr_range thunks[3];
  const unsigned int n = okp_seam_indirect_thunks(thunks, 3);
  for (unsigned int i = 0; i < n; ++i)
    if (target >= thunks[i].start && target < thunks[i].end) return true;
  return false;
}
}  // namespace

usize kernel_kprobe_fences(okp_addr_t addr, usize patch_len, usize covered, okp_addr_t func_start,
                           unsigned long func_size, RecoverFn recover,
                           KernelFence (&out)[kMaxKernelFences]) {
  const okp_addr_t end = kernel_kprobe_fence_end(addr, patch_len, covered, func_start, func_size,
                                                 recover);
  const okp_addr_t func_end = func_size ? func_start + func_size : end;
  const KernelFence whole{func_start < addr ? func_start : addr, func_end > end ? func_end : end};
  out[0] = {addr, end};
  usize n = 1;
  u8 text[kMaxFence + x86::kMaxInsnLength];
  const usize avail = end - addr + x86::kMaxInsnLength <= func_end - addr
                          ? end - addr + x86::kMaxInsnLength : func_end - addr;
  if (end - addr > kMaxFence || okp_seam_read_nofault(text, addr, avail)) {
    out[0] = whole;
    return 1;
  }
  recover(addr, text, avail);
  for (usize at = 0; at < end - addr;) {  // the real instructions the kernel cannot see
    auto insn = x86::decode(text + at, avail - at);
    if (insn.is_error()) break;  // the walk gave up here too: fenced to its end already
    const x86::DecodedInsn& d = insn.value();
    const okp_addr_t here = addr + at;
    at += d.length;
    if (!d.relative_branch) {
      if (same(d.mnemonic, "jmp") || same(d.mnemonic, "call")) {  // indirect
        out[0] = whole;
        return 1;
      }
      continue;
    }
    const okp_addr_t target = here + d.length + d.branch_displacement;
    if (!same(d.mnemonic, "call") && is_indirect_thunk(target)) {  // `jmp *%reg` in disguise
      out[0] = whole;
      return 1;
    }
    if (target <= func_start || target >= func_end) continue;  // no optprobe of ours to miss
    const KernelFence f{target - 4 > func_start ? target - 4 : func_start, target};
    if (f.start >= out[0].start && f.end <= out[0].end) continue;
    if (n == kMaxKernelFences) {
      out[0] = whole;
      return 1;
    }
    out[n++] = f;
  }
  return n;
}

}  // namespace okp::arch
