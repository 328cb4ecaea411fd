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

void switch_jumps(JumpSwitch* batch, bool to_jump) {
  okp_seam_text_lock();
  for (JumpSwitch* s = batch; s; s = s->next) {
    const int err = to_jump ? okp_seam_poke_text(s->addr, s->jump, s->breakpoint.bytes,
                                                 s->breakpoint.size)
                            : okp_seam_poke_text(s->addr, s->breakpoint.bytes, s->jump,
                                                 s->breakpoint.size);
    s->failed = err != 0;
  }
  okp_seam_text_sync();
  okp_seam_text_unlock();
}

}  // namespace okp::arch
