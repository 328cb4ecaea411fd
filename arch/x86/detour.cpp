// SPDX-License-Identifier: GPL-2.0
// The x86-64 detour buffer's image (see detour.h).
#include "arch/x86/detour.h"

namespace okp::x86 {

namespace {

constexpr u8 kCallRel32 = 0xe8;
constexpr u8 kJmpRel32 = 0xe9;

bool put_rel32(u8* at, okp_addr_t next, okp_addr_t target) {
  const i64 rel = static_cast<i64>(target - next);
  if (rel < -0x80000000ll || rel > 0x7fffffffll) return false;
  const u32 u = static_cast<u32>(static_cast<i32>(rel));
  for (int i = 0; i < 4; ++i) at[i] = static_cast<u8>(u >> (8 * i));
  return true;
}

}  // namespace

ErrorOr<arch::DetourPlan> plan_detour(const FunctionText& fn, okp_addr_t addr,
                                      const ExtableEntry* extable, usize n_extable,
                                      okp_addr_t buffer, okp_addr_t entry) {
  const DetourRegion region = OKP_TRY(check_detour_region(fn, addr, extable, n_extable));
  const DetourCode code = OKP_TRY(relocate_region(region, fn.bytes + (addr - fn.start),
                                                  buffer + kDetourCopyOffset));
  arch::DetourPlan plan;
  plan.buffer = buffer;
  plan.copy = buffer + kDetourCopyOffset;
  plan.region_length = static_cast<u8>(region.length);
  for (usize i = 0; i < sizeof(okp_addr_t); ++i) plan.image[i] = static_cast<u8>(addr >> (8 * i));
  plan.image[kDetourCallOffset] = kCallRel32;
  if (!put_rel32(plan.image + kDetourCallOffset + 1, buffer + kDetourCopyOffset, entry))
    return Error(Errno::kRange, "not optimized: the detour entry is out of reach of the buffer");
  for (usize i = 0; i < code.length; ++i) plan.image[kDetourCopyOffset + i] = code.bytes[i];
  plan.size = static_cast<u16>(kDetourCopyOffset + code.length);
  plan.jump[0] = kJmpRel32;
  if (!put_rel32(plan.jump + 1, addr + kJumpSize, buffer + kDetourCallOffset))
    return Error::formatted(Errno::kRange, "not optimized: the detour at %#lx is out of reach "
                            "of a jmp rel32 from %#lx", buffer, addr);
  plan.jump_size = kJumpSize;
  return plan;
}

}  // namespace okp::x86
