// SPDX-License-Identifier: GPL-2.0
// arm64's definitions of the jump contract (arch/jump_contract.h declares each piece and
// checks it): a probe's BRK becomes one `b` to a detour (arch/arm64/detour.h), and the
// instruction it replaced runs relocated there.
#pragma once

#include "arch/arm64/detour.h"
#include "arch/common/no_breakpoint_trap.h"
#include "probe_arch.h"
#include "seam/jump_services.h"

namespace okp::arch {

constexpr usize kMaxDetourSize = arm64::kMaxDetourSize;
// Reads the probed word (okprobes' breakpoints recovered) and relocates it into a detour at
// buffer calling okp_detour_entry (and okp_detour_post_entry on every way out, with_post)
// (arch/arm64/jump_probe_arch.cpp).
ErrorOr<DetourPlan> plan_detour(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                                RecoverFn recover, okp_addr_t buffer, bool with_post,
                                okp_addr_t site);
// The debug-exception rework (6.17, 6.12.93+) gives a module's BRK to die() (trap.c).
inline const char* breakpoints_missing() { return no_breakpoint_trap(); }
// b reaches +-128 MiB: from the probe to the detour, and from every word of it back.
inline bool detour_reaches(okp_addr_t addr, okp_addr_t buffer) {
  return arm64::encode_b(addr, buffer) && arm64::encode_b(addr, buffer + kMaxDetourSize) &&
         arm64::encode_b(buffer, addr) && arm64::encode_b(buffer + kMaxDetourSize, addr);
}
// [hit] The site a detour serves, from its copy's address.
inline okp_addr_t detour_site(okp_addr_t copy) { return arm64::detour_site(copy); }
inline bool detour_has_post(okp_addr_t copy) { return arm64::detour_has_post(copy); }
// The end of a detour's step (post entry): DAIF as begin_step found it.
inline void end_detour_step(okp_regs* regs, unsigned long saved_flags) {
  auto* f = frame(regs);
  f->pstate = (f->pstate & ~arm64::kPstateDaif) |
              ((saved_flags << kPstateDaifShift) & arm64::kPstateDaif);
}
// [hit] From the post entry's return address: the ip post handlers see, and where to go on.
inline okp_addr_t detour_post_next_ip(okp_addr_t ret) { return arm64::detour_post_next_ip(ret); }
inline okp_addr_t detour_post_resume(okp_addr_t ret) { return arm64::detour_post_resume(ret); }
// One aligned word per site. BRK <-> b: both are among the instructions the architecture lets
// one CPU write while others execute them, so each is one write, no staging and no
// stop_machine (src/kernel/arch/arm64/text_patch.c); the original instruction <-> b (no
// breakpoint trap) is arbitrary on one side, so it is written with the other CPUs stopped.
void switch_jumps(JumpSwitch* batch, bool to_jump);
// A region is one instruction: the optimizer never asks (nothing is proven here).
inline bool tasks_outside(okp_text_span*, usize) { return false; }

}  // namespace okp::arch
