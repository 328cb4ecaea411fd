// SPDX-License-Identifier: GPL-2.0
// The jump-optimization part of the arch contract for a breakpoint arch without a jump
// optimizer (arm64, riscv64 today): plan_detour refuses with the arch named, and the core
// never calls the rest. Included by the arch's probe_arch.h (at file scope, after
// OKP_ARCH_NAME is defined).
#pragma once

#include "arch/common/arch_types.h"
#include "core/error_or.h"

namespace okp::arch {

constexpr bool kJumpOptimization = false;
constexpr usize kMaxDetourSize = 0;
inline ErrorOr<DetourPlan> plan_detour(okp_addr_t, okp_addr_t, unsigned long, RecoverFn, okp_addr_t,
                                       okp_addr_t, okp_addr_t, okp_addr_t) {
  return Error::formatted(Errno::kOpNotSupp, "not optimized: no jump optimization on %s",
                          OKP_ARCH_NAME);
}
inline okp_addr_t detour_site(okp_addr_t) { return 0; }
inline bool detour_has_post(okp_addr_t) { return false; }
inline void end_detour_step(okp_regs*, unsigned long) {}
inline okp_addr_t detour_post_next_ip(okp_addr_t) { return 0; }
inline okp_addr_t detour_post_resume(okp_addr_t) { return 0; }

}  // namespace okp::arch
