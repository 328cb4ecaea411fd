// SPDX-License-Identifier: GPL-2.0
// The jump optimizer: an engine beside the probe table (core/registry.h) that turns a live
// breakpoint site into a jump to a detour, which runs the handlers and a relocated copy of the
// instructions under the jump (the region) with no trap at all, and back. It owns each site's
// detour state (core/optimizer/jump_site.h) and the site states kQueued and kOptimized; the
// probe table tells it what happened to a site (the events below) and it asks the arch what
// only the arch knows, through the jump contract (arch/jump_contract.h). Built only on an arch
// with jump probes: elsewhere arch::kJumpProbes is false, the probe table's calls to it are
// discarded at compile time, and none of core/optimizer/ is compiled.
//
// One batch, run by one work item at a time (okp_seam_defer_optimizer, after a short delay
// that gathers registrations):
//  1. Locked: every kQueued site gets its detour planned (arch::plan_detour) and written into
//     slot-pool cells, and its copy published: from then on its breakpoint hits resume in the
//     copy, never in a boosted slot or a step whose way back lands inside the region.
//  2. Unlocked, for regions of more than one instruction: an RCU grace period (no CPU is still
//     in the breakpoint handler with the old decision), then proof that no task is stopped
//     inside a region, or in a boosted slot about to jump back into one (arch::tasks_outside),
//     else a tasks-RCU grace period. A region of one instruction has no inside.
//  3. Locked: the sites still kQueued since before step 1 get their jumps, all at once
//     (arch::switch_jumps). Going back to the breakpoint is the mirror and waits for nothing:
//     the detour stays until its site is freed, and its cells are freed only after a tasks-RCU
//     grace period (site_released retires them).
//
// Locking: every member but run() and the observers' entry points is called with the registry
// lock held (the Locked proof); run() takes it itself and drops it for step 2. The lock order
// is core/registry.h's.
#pragma once

#include "core/registry.h"

namespace okp {

class JumpOptimizer {
 public:
  // --- The probe table's events (registry lock held) ---
  // The site's probes or arming changed (any_post: some probe there has a post_handler): queue
  // it, take it back to its breakpoint, or say why not; the probes' OPTIMIZED flags follow.
  void site_updated(Locked, Site& site, bool any_post);
  // The site's breakpoint is about to go: back to the breakpoint first.
  void disarming(Locked, Site& site);
  // A new breakpoint at addr: a queued or optimized site whose region covers it goes back to
  // stepping its own breakpoint (the new one must see every hit).
  void breakpoint_added(Locked, okp_addr_t addr);
  // The probe at addr went: the sites it kept unoptimized may be queued again.
  void probe_removed(Locked, okp_addr_t addr);
  // The site is out of the table and no CPU can be in it: its detour is retired. True when
  // the site itself must outlive its detours (it had one: they name it); the probe table then
  // frees it with the retired slots, after a tasks-RCU grace period.
  [[nodiscard]] bool site_released(Locked, Site& site);
  // Why the site is not a jump ("" when it is, or may become one).
  const char* not_optimized(Locked, const Site& site) const;
  // Whether a trial site (Registry::explain, never published) would become a jump, planned as
  // a batch would plan it: "optimized: ..." or the batch's "not optimized: ..." into out.
  void explain(Locked, const Site& site, char* out, usize out_len);

  // --- Without a breakpoint trap (arch::breakpoints_missing()): jumps or nothing ---
  // The kernel delivers no breakpoint to okprobes: every site but ftrace's is its jump.
  bool jump_only() const;
  // Arms the site (its "breakpoint" being its original instruction) as its jump now: planned,
  // written and switched under the lock (a one-instruction region waits for nothing), or an
  // error saying why no breakpoint and no jump can serve it.
  [[nodiscard]] ErrorOr<void> arm_jump(Locked, Site& site);
  // Whether a live site's probes are served (always, where breakpoints trap).
  bool serves(Locked, const Site& site) const;
  // Why optimization may not be turned off (nullptr: it may).
  const char* veto_disable() const;

  // --- Entry points (no lock held) ---
  // sysctl debug.okprobes-optimization changed: unoptimize every site (one batch) or queue
  // every site that may be optimized again.
  void set_enabled(bool enabled);
  // The worker: one batch (steps 1-3 above).
  void run();
  // Unload: no batch runs once this returns.
  void stop();

 private:
  const char* blocker(Locked, const Site& site) const;
  void set_not_optimized(Locked, Site& site, const char* why);
  void sync_optimized_flags(Locked, Site& site);
  [[nodiscard]] bool plan(Locked, Site& site, bool any_post);
  bool refuse_region(Locked, const Site& site, const ErrorOr<arch::DetourPlan>& planned,
                     char* why, usize why_len, bool* for_good);
  [[nodiscard]] bool rejump(Locked, Site& site, bool any_post);
  // Cells for s's detour in a pool the jump reaches, as many as its plan fills (*size bytes);
  // 0 with the reason when no pool has them.
  okp_addr_t allocate_detour(Locked, const Site& s, bool any_post, usize* size, char* why,
                             usize len, bool* for_good);
  // The bytes s's detour takes anywhere in pool (a trial plan at each end, nothing written).
  usize detour_size_in(const SlotPool<arch::kSlotSize>& pool, const Site& s, bool any_post);
  void release_detour(Locked, okp_addr_t detour, usize size);
  void retire_detour(Locked, okp_addr_t detour, usize size);
  void forget_detour(Locked, Site& site);
  void wait_until_outside_regions(u32 stamp);
  void switch_jumps(Locked, Site* batch, bool to_jump);
  void unoptimize(Locked, Site& site);
  template <typename Fn>
  void for_each_region_over(Locked, okp_addr_t addr, Fn fn);

  u32 queue_stamp_ = 0;  // counts entries into kQueued; registry lock
};

// The one optimizer, beside the one registry. Constant-initialised (no static constructor).
extern JumpOptimizer g_jump_optimizer;
inline JumpOptimizer& jump_optimizer() { return g_jump_optimizer; }

}  // namespace okp
