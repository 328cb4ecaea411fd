// SPDX-License-Identifier: GPL-2.0
// The x86-64 jump optimizer's relocator: the code a detour runs after the handlers, i.e. the
// region's instructions moved to the detour buffer, then a jump back after the region.
//
//  - rip-relative operands: the disp32 is rewritten so the operand still names the same
//    address; refused (-ERANGE) when that is beyond +-2 GiB of the detour;
//  - relative jmp/jcc (leaving the region, as detour_region.h guarantees): re-encoded rel32
//    to the same target (a jcc8 becomes 0f 8x rel32);
//  - a call (only the region's last instruction): `push $return` + `jmp target` (for an
//    indirect call, the same ModRM operand as a jmp), so the callee sees the original return
//    address and stack traces stay true; the return address is a sign-extended imm32, which
//    every kernel and module text address is (the top 2 GiB);
//  - everything else is copied as is; then `jmp rel32` back to the end of the region.
// Registration-time only.
#pragma once

#include "arch/x86/detour_region.h"
#include "core/error_or.h"
#include "core/utility.h"

namespace okp::x86 {

// 5 instructions of at most 15 bytes, a call's extra push, the jump back.
constexpr usize kMaxDetourCode = kMaxRegionInsns * 15 + 5 + 5;

struct DetourCode {
  u8 bytes[kMaxDetourCode] = {};
  u8 length = 0;
};

// original: the region's bytes as they are without any patch (region.length of them).
ErrorOr<DetourCode> relocate_region(const DetourRegion& region, const u8* original,
                                    okp_addr_t code_addr);
// Instructions [first, region.count) only, then the jump back if jump_back; without it, code
// ends after the last of [first, last) (last <= region.count).
ErrorOr<DetourCode> relocate_insns(const DetourRegion& region, const u8* original,
                                   okp_addr_t code_addr, u8 first, u8 last, bool jump_back);

}  // namespace okp::x86
