// SPDX-License-Identifier: GPL-2.0
// x86-64 instruction decoding for okprobes, on Zydis 4 (decoder only, built freestanding).
#pragma once

#include "core/error_or.h"
#include "core/utility.h"

namespace okp::x86 {

constexpr usize kMaxInsnLength = 15;

struct DecodedInsn {
  u8 length = 0;
  bool rip_relative = false;   // has a [rip+disp32] memory operand
  bool relative_branch = false;  // jmp/jcc/call/loop with a relative target
  i64 branch_displacement = 0;   // relative_branch: target = address + length + this
  const char* mnemonic = nullptr;  // static string, for reasons ("cannot single-step 'iretq'")
};

// Decodes one 64-bit-mode instruction from bytes[0..avail). -EILSEQ when the bytes are not a
// valid instruction (or are truncated by avail).
ErrorOr<DecodedInsn> decode(const u8* bytes, usize avail);

}  // namespace okp::x86
