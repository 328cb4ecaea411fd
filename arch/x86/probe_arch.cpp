// SPDX-License-Identifier: GPL-2.0
#include "probe_arch.h"

#include "arch/x86/decoder.h"

namespace okp::arch {

namespace {

bool same(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// An int3 right after ret/jmp is straight-line-speculation padding (CONFIG_SLS), not a
// breakpoint: the decode may walk over it.
constexpr u8 kJmpRel32Opcode = 0xe9;

bool ends_flow(const char* mnemonic) { return same(mnemonic, "ret") || same(mnemonic, "jmp"); }

// endbr64, and the poison 6.1 writes over sealed (never indirectly called) ones: the 4-byte
// `osp nopl (%rax)`, unique to former ENDBR sites (later kernels use 0f 1f 40 d6).
bool is_landing_pad(const u8* b) {
  return (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) ||
         (b[0] == 0x66 && b[1] == 0x0f && b[2] == 0x1f && b[3] == 0x00) ||
         (b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x40 && b[3] == 0xd6);
}

}  // namespace

okp_addr_t skip_landing_pad(okp_addr_t addr, okp_addr_t func_start) {
  u8 bytes[4];
  if (addr != func_start || okp_seam_read_nofault(bytes, addr, sizeof(bytes))) return addr;
  return is_landing_pad(bytes) ? addr + 4 : addr;
}

ErrorOr<Plan> check_and_plan(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                             okp_addr_t slot, RecoverFn recover) {
  // Walk instruction by instruction from the function's start through a window of bytes
  // read (and recovered from under breakpoints) ahead. It is refilled only when it no longer
  // holds a whole instruction from pos, not once per instruction: each fill costs a nofault
  // read and a site lookup per byte it could hold, and probing the N-th instruction of a
  // function walks N of them (1000 probes in one 1024-instruction function: half a million
  // steps).
  constexpr usize kWindow = 64;
  u8 window[kWindow];
  okp_addr_t window_start = func_start, window_end = func_start;  // read and recovered
  okp_addr_t pos = func_start, previous = func_start;
  const char* previous_mnemonic = "";
  okp_addr_t func_end = func_size ? func_start + func_size : addr + x86::kMaxInsnLength;
  while (pos < addr) {
    if (window_end < func_end && window_end - pos < x86::kMaxInsnLength) {
      usize fill = func_end - pos < kWindow ? func_end - pos : kWindow;
      if (okp_seam_read_nofault(window, pos, fill))
        return Error::formatted(Errno::kFault, "cannot read the text at %#lx", pos);
      recover(pos, window, fill);
      window_start = pos;
      window_end = pos + fill;
    }
    const u8* at = window + (pos - window_start);
    usize avail = window_end - pos;
    auto insn = x86::decode(at, avail);
    if (insn.is_error())
      return Error::formatted(Errno::kIlSeq,
                              "cannot decode the function from its start: bytes at +%#lx are "
                              "not an instruction", pos - func_start);
    if (at[0] == x86::kInt3 && !ends_flow(previous_mnemonic)) {
      // Someone else's breakpoint hides the original instruction: boundaries after it are
      // unknowable, as for kprobes.
      return Error::formatted(Errno::kBusy,
                              "an int3 at +%#lx (another tool's breakpoint) hides the "
                              "instructions before the probe", pos - func_start);
    }
    if (at[0] == kJmpRel32Opcode && okp_seam_kernel_kprobe_in(pos, 1)) {
      // The kernel's optprobe: its jmp hides the region's first instructions and the rest of
      // the region after it is decoded from inside them (as the kernel's own can_probe() would
      // through okprobes' jump, measured by tests/vm/modules/kk_drift.c mirror=1).
      return Error::formatted(Errno::kBusy,
                              "a kernel kprobe optimized into a jump at +%#lx hides the "
                              "instructions before the probe", pos - func_start);
    }
    previous = pos;
    if (at[0] != x86::kInt3) previous_mnemonic = insn.value().mnemonic;
    pos += insn.value().length;
  }
  if (pos != addr)
    return Error::formatted(Errno::kIlSeq,
                            "+%#lx is not an instruction boundary: the nearest are +%#lx and +%#lx",
                            addr - func_start, previous - func_start, pos - func_start);
  u8 bytes[x86::kMaxInsnLength];
  usize avail = func_end - addr < sizeof(bytes) ? func_end - addr : sizeof(bytes);
  if (okp_seam_read_nofault(bytes, addr, avail))
    return Error::formatted(Errno::kFault, "cannot read the text at %#lx", addr);
  recover(addr, bytes, avail);
  auto plan = x86::plan_insn(addr, bytes, avail, slot);
  if (plan.is_error()) {
    auto d = x86::decode(bytes, avail);
    return Error::formatted(plan.error().code(), "%s (instruction '%s')", plan.error().reason(),
                            d.is_error() ? "?" : d.value().mnemonic);
  }
  return plan;
}


}  // namespace okp::arch
