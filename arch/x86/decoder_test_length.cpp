// SPDX-License-Identifier: GPL-2.0
// Test-only: the length okprobes' decoder gives one instruction, for the differential decoding
// of all vmlinux text against the kernel's own decoder (tests/vm/modules/sweep_decode.c).
// Probe registration decodes through the same okp::x86::decode, so a disagreement found here
// is one the boundary proof would make.
#include "arch/x86/decoder.h"

// Declared here for the C glue's call (src/kernel/arch/x86/test_decode.c declares it too).
extern "C" int okp_arch_test_insn_length(const okp::u8* bytes, unsigned long avail);

extern "C" int okp_arch_test_insn_length(const okp::u8* bytes, unsigned long avail) {
  auto insn = okp::x86::decode(bytes, avail);
  if (insn.is_error()) return insn.error().kernel_errno();
  return insn.value().length;
}
