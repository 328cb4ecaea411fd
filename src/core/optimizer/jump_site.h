// SPDX-License-Identifier: GPL-2.0
// What the jump optimizer keeps per site (core/optimizer/jump_optimizer.h): the detour, the
// region it copies, the jump that leads to it, and why the site is not a jump. A member of
// every Site on an arch with jump probes, but the optimizer's alone: only it reads or writes
// these fields, under the registry lock. The one field a hit reads, the published copy, is
// Site::detour_copy, among the hit-path fields.
#pragma once

#include <okprobes/okprobes.h>

#include "arch/common/arch_types.h"

namespace okp {

struct Site;
class JumpOptimizer;

class JumpSite {
 private:
  friend class JumpOptimizer;

  okp_addr_t detour = 0;  // the detour buffer: slot cells, as many as its plan fills
  u16 detour_size = 0;    // their bytes
  okp_addr_t planned_copy = 0;  // the copy, once the detour is written (it never changes)
  u8 region_length = 0;         // original bytes the detour's copy runs
  u8 region_insns = 0;          // instructions in them (1: no boundary inside the region)
  u8 jump[arch::kJumpCapacity] = {};
  u8 jump_size = 0;
  bool detour_post = false;       // the planned detour calls the post entry (post handlers)
  bool planned_for_post = false;  // what the last plan was for (a refusal may be only for it)
  bool cannot_optimize = false;   // the plan was refused for good: not_optimized says why
  // A detour was written for it: detours name their site (arch::detour_site), so the site
  // outlives every detour it had, freed with them after a tasks-RCU grace period.
  bool had_detour = false;
  u32 queued_at = 0;  // JumpOptimizer::queue_stamp_ when the site entered kQueued
  // The batch arch::switch_jumps patches: the text's two states, and the sites in the batch.
  arch::JumpSwitch text_switch;
  Site* next_switching = nullptr;
  char not_optimized[OKP_REASON_MAX] = {};  // why not, "" while it may be
};

}  // namespace okp
