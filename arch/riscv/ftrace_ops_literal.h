// SPDX-License-Identifier: GPL-2.0
// The ftrace_ops pointer a riscv64 kernel with DYNAMIC_FTRACE_WITH_CALL_OPS (6.16+; Debian's
// 7.x) keeps in the 8 bytes before each traceable function, which kallsyms counts into the
// previous function's extent: data, never decoded or patched.
#pragma once

#include "arch/common/arch_types.h"

namespace okp::riscv {

// How many of an extent's last 8 bytes are such a pointer: 8 or 0. A kernel address has its
// upper 32 bits all ones, and no RV64GC code ends that way: a 16-bit parcel 0xffff starts no
// instruction (it is the prefix of an encoding longer than 32 bits), so the parcel at +6 can
// be neither an instruction's first nor (after one starting 0xffff at +4) its second.
inline usize ftrace_ops_literal_bytes(const u8* last8) {
  return last8[4] == 0xff && last8[5] == 0xff && last8[6] == 0xff && last8[7] == 0xff ? 8 : 0;
}

}  // namespace okp::riscv
