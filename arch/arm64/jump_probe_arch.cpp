// SPDX-License-Identifier: GPL-2.0
// arm64's jump probes: the detour planning and the text switch of the jump contract
// (arch/jump_contract.h). The relocation itself is arch/arm64/detour.cpp.
#include "jump_probe_arch.h"

#include "seam/jump_services.h"

namespace okp::arch {

ErrorOr<DetourPlan> plan_detour(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                                RecoverFn recover, okp_addr_t buffer, bool with_post,
                                okp_addr_t site) {
  static_cast<void>(func_start);
  static_cast<void>(func_size);  // one instruction: check_and_plan proved it one already
  u8 bytes[arm64::kInsnSize];
  if (okp_seam_read_nofault(bytes, addr, sizeof(bytes)))
    return Error::formatted(Errno::kFault, "not optimized: cannot read the text at %#lx", addr);
  recover(addr, bytes, sizeof(bytes));
  const u32 insn = static_cast<u32>(bytes[0]) | static_cast<u32>(bytes[1]) << 8 |
                   static_cast<u32>(bytes[2]) << 16 | static_cast<u32>(bytes[3]) << 24;
  const arm64::DetourEnv env{okp_seam_detour_entry(0),
                             with_post ? okp_seam_detour_post_entry() : 0,
                             okp_seam_kernel_bti() != 0};
  auto plan = arm64::plan_detour(addr, insn, buffer, env);
  if (plan.is_error()) return plan;
  arm64::set_detour_site(&plan.value(), site);
  return plan;
}

namespace {

u32 word_of(const u8* b) {
  return static_cast<u32>(b[0]) | static_cast<u32>(b[1]) << 8 | static_cast<u32>(b[2]) << 16 |
         static_cast<u32>(b[3]) << 24;
}

// The Arm ARM's concurrent modification and execution rule: a word other CPUs may be executing
// may be rewritten without synchronizing them only when the old and the new instruction are
// both among B, BL, BRK, NOP (and HVC, ISB, SMC, SVC, which okprobes never writes).
bool hot_patchable(u32 insn) {
  u16 imm;
  return (insn & 0x7c000000) == 0x14000000 || arm64::is_brk(insn, &imm) || insn == 0xd503201f;
}

}  // namespace

void switch_jumps(JumpSwitch* batch, bool to_jump) {
  // BRK <-> b: one write each, the batch under text_mutex.
  okp_seam_text_lock();
  for (JumpSwitch* s = batch; s; s = s->next) {
    const u8* from = to_jump ? s->breakpoint.bytes : s->jump;
    const u8* to = to_jump ? s->jump : s->breakpoint.bytes;
    if (!hot_patchable(word_of(from)) || !hot_patchable(word_of(to))) continue;
    s->failed = okp_seam_poke_text(s->addr, to, from, s->breakpoint.size) != 0;
  }
  okp_seam_text_sync();
  okp_seam_text_unlock();
  // The original instruction <-> b (no breakpoint trap: the "breakpoint" is the original):
  // with every other CPU stopped, as any site's first write (text_patch.c).
  for (JumpSwitch* s = batch; s; s = s->next) {
    const u8* from = to_jump ? s->breakpoint.bytes : s->jump;
    const u8* to = to_jump ? s->jump : s->breakpoint.bytes;
    if (hot_patchable(word_of(from)) && hot_patchable(word_of(to))) continue;
    s->failed = okp_seam_patch_text(s->addr, to, from, s->breakpoint.size) != 0;
  }
}

}  // namespace okp::arch
