// SPDX-License-Identifier: GPL-2.0
// The x86-64 detour buffer's image (see detour.h).
#include "arch/x86/detour.h"

namespace okp::x86 {

namespace {

constexpr u8 kCallRel32 = 0xe8;
constexpr u8 kJmpRel32 = 0xe9;

void put_u64(u8* at, u64 v) {
  for (usize i = 0; i < 8; ++i) at[i] = static_cast<u8>(v >> (8 * i));
}

// Reads or writes the interrupt flag: from a copy run with interrupts off it would see or
// leave the wrong one (cli, sti, pushf, popf, iret).
bool touches_interrupt_flag(const u8* insn, usize len) {
  usize i = 0;
  while (i < len && (insn[i] == 0x66 || insn[i] == 0x67 || insn[i] == 0xf0 || insn[i] == 0xf2 ||
                     insn[i] == 0xf3 || insn[i] == 0x2e || insn[i] == 0x36 || insn[i] == 0x3e ||
                     insn[i] == 0x26 || insn[i] == 0x64 || insn[i] == 0x65 ||
                     (insn[i] & 0xf0) == 0x40))
    ++i;
  if (i >= len) return false;
  const u8 op = insn[i];
  return op == 0xfa || op == 0xfb || op == 0x9c || op == 0x9d || op == 0xcf;
}

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
                                      okp_addr_t buffer, okp_addr_t entry, okp_addr_t post_entry) {
  const DetourRegion region = OKP_TRY(check_detour_region(fn, addr, extable, n_extable));
  const u8* original = fn.bytes + (addr - fn.start);
  const RegionInsn& first = region.insns[0];
  if (post_entry && (first.relative_branch || first.is_call))
    return Error(Errno::kInval, "not optimized: a post_handler after a branch or call needs the "
                 "trap after the instruction");
  if (post_entry && touches_interrupt_flag(original, first.length))
    return Error(Errno::kInval, "not optimized: a post_handler after an instruction that reads or "
                 "writes the interrupt flag needs the trap after it");
  arch::DetourPlan plan;
  plan.buffer = buffer;
  plan.copy = buffer + kDetourCopyOffset;
  plan.region_length = static_cast<u8>(region.length);
  plan.region_insns = static_cast<u8>(region.count);
  plan.post = post_entry != 0;
  put_u64(plan.image, addr);
  put_u64(plan.image + kDetourFlagsOffset, post_entry ? kDetourHasPost : 0);
  plan.image[kDetourCallOffset] = kCallRel32;
  if (!put_rel32(plan.image + kDetourCallOffset + 1, buffer + kDetourCopyOffset, entry))
    return Error(Errno::kRange, "not optimized: the detour entry is out of reach of the buffer");
  usize at = kDetourCopyOffset;
  auto append = [&](const DetourCode& code) {
    for (usize i = 0; i < code.length; ++i) plan.image[at + i] = code.bytes[i];
    at += code.length;
  };
  if (!post_entry) {
    append(OKP_TRY(relocate_region(region, original, buffer + at)));
  } else {
    append(OKP_TRY(relocate_insns(region, original, buffer + at, 0, 1, false)));
    plan.image[at] = kCallRel32;
    if (!put_rel32(plan.image + at + 1, buffer + at + kPostCallSize, post_entry))
      return Error(Errno::kRange, "not optimized: the detour post entry is out of reach");
    at += kPostCallSize;
    put_u64(plan.image + at, addr);
    put_u64(plan.image + at + 8, addr + first.length);
    at += kPostDataSize;
    append(OKP_TRY(relocate_insns(region, original, buffer + at, 1, region.count, true)));
  }
  plan.size = static_cast<u16>(at);
  plan.jump[0] = kJmpRel32;
  if (!put_rel32(plan.jump + 1, addr + kJumpSize, buffer + kDetourCallOffset))
    return Error::formatted(Errno::kRange, "not optimized: the detour at %#lx is out of reach "
                            "of a jmp rel32 from %#lx", buffer, addr);
  plan.jump_size = kJumpSize;
  return plan;
}

}  // namespace okp::x86
