// SPDX-License-Identifier: GPL-2.0
// The probe table: one Site per probed address, each holding the probes registered there in
// registration order (one probe, or an aggregate of several).
//
// Locking (the lock order, outermost first):
//   registry lock (okp_seam_registry_lock)
//     -> module_mutex (symbol lookups)  -> jump_label_mutex (text owner checks)
//     -> ftrace_lock (function-entry sites)  -> text_mutex (text patching)
// Every field below is written under the registry lock; a member that demands it takes a
// Locked (the guard itself) and asserts it (lockdep). The trap path reads the table, the Site
// fields marked [hit] and the probe lists without any lock: they are published with release
// stores, and nothing reachable from the table is freed before an RCU grace period
// (okp_seam_synchronize_rcu; plus okp_seam_synchronize_tasks for boosted slots, which a
// preempted task may still be executing). No grace period is ever waited for with the
// registry lock held: writers detach under it, drop it to wait, and take it again to free.
#pragma once

#include <okprobes/okprobes.h>

#include "core/address_hash_table.h"
#include "core/blacklist.h"
#include "core/error_or.h"
#include "core/slot_pool.h"
#include "arch/arch_contract.h"

namespace okp {

struct Site;
struct ProbeRecord;

// The core's record of one registered okp_kprobe, found by the probe's address in
// Registry::records_ (so registering or unregistering N probes is O(N), not O(N^2)).
// The hit path's acquire loads of the aggregate's links read offset 0 (arm64's ldar takes no
// offset: a link at offset 0 saves an add per load), so the link comes before the hash link.
struct ProbeRecordSiteLink {
  ProbeRecord* next_at_site = nullptr;  // [hit] the aggregate's list, registration order
};
struct ProbeRecord : ProbeRecordSiteLink, HashLinked<ProbeRecord> {
  okp_kprobe* kp = nullptr;
  okp_addr_t hash_key() const { return reinterpret_cast<okp_addr_t>(kp); }
  Site* site = nullptr;
  // All records in registration order (debugfs, unload); registry lock.
  ProbeRecord* next_registered = nullptr;
  ProbeRecord* prev_registered = nullptr;
  bool emptied_site = false;  // detach_probe(): it was the site's last probe (registry lock)
};

// What the text at a site holds, as the registry lock orders it:
//
//   kDisarmed --arm--> kArmed --queue--> kQueued --jump patched--> kOptimized
//       ^                |  ^               |                          |
//       +----disarm------+  +---unqueue-----+  <---back to breakpoint---+
//
// kArmed: a breakpoint (or the ftrace filter) is live. kQueued: the breakpoint is live and
// the site waits for the jump optimizer's next batch (core/optimizer.cpp); once its detour
// is planned, its breakpoint hits resume in the detour's copy of the region. kOptimized: the
// text holds a `jmp rel32` to the detour. Leaving kOptimized (unoptimize, disarm) goes back
// to the breakpoint first. Any state may end in kGone when the text goes away (module unload,
// __init text freed): the site is then never written again.
enum class SiteState : u8 { kDisarmed, kArmed, kQueued, kOptimized, kGone };

// As ProbeRecordSiteLink: every hit loads the aggregate's head (acquire); the hash link is
// followed only past a colliding site.
struct SiteProbesHead {
  ProbeRecord* probes = nullptr;  // [hit] first of the aggregate
};
struct Site : SiteProbesHead, HashLinked<Site> {
  okp_addr_t addr = 0;
  okp_addr_t hash_key() const { return addr; }

  arch::Plan plan;                 // [hit] how the probed instruction runs
  okp_addr_t step_slot = 0;        // [hit] copy + breakpoint (0: emulated, or ftrace)
  okp_addr_t boost_slot = 0;       // [hit] copy + jump back (0: not boostable)
  bool boost = false;              // [hit] use boost_slot: boostable and no post_handler
  bool ftrace = false;             // served by the ftrace call site, not a breakpoint
  bool ipmodify = false;           // ftrace: registered with IPMODIFY
  bool ftrace_post = false;        // [hit] ftrace: some probe here has a post_handler
  SiteState state = SiteState::kDisarmed;  // registry lock
  // The text holds okprobes' patch (breakpoint, ftrace filter or jump).
  bool live() const {
    return state == SiteState::kArmed || state == SiteState::kQueued ||
           state == SiteState::kOptimized;
  }
  bool gone() const { return state == SiteState::kGone; }
  bool init_text = false;          // in a module's __init text
  void* module = nullptr;          // struct module * owning the text, nullptr: vmlinux
  // The original bytes okprobes' patch covers: [addr, addr + patch_size). patch_size is the
  // breakpoint's size (arch::breakpoint_of(plan)), a jump's once optimized, 0 for ftrace sites.
  u8 original[arch::kMaxPatchSize] = {};
  u8 patch_size = 0;
  char symbol[64] = {};
  char module_name[56] = {};
  okp_addr_t offset = 0;           // from the symbol's start
  unsigned long func_size = 0;     // the containing function's size (0: unknown)

  // Jump optimization (core/optimizer.cpp); registry lock unless marked [hit].
  okp_addr_t detour = 0;           // the detour buffer (arch::kMaxDetourSize of slot cells)
  okp_addr_t detour_copy = 0;      // [hit] a breakpoint hit resumes here (0: it steps/boosts)
  okp_addr_t planned_copy = 0;     // the copy, once the detour is written (it never changes)
  u8 region_length = 0;            // original bytes the detour's copy runs
  u8 region_insns = 0;             // instructions in them (1: no boundary inside the region)
  u8 jump[arch::kJumpCapacity] = {};
  u8 jump_size = 0;
  bool detour_post = false;        // the planned detour calls the post entry (post handlers)
  bool planned_for_post = false;   // what the last plan was for (a refusal may be only for it)
  bool cannot_optimize = false;    // the plan was refused for good: not_optimized says why
  Site* next_switching = nullptr;  // the batch switch_jumps patches (optimizer.cpp)
  // A detour was written for it: detours name their site (arch::detour_site), so the site
  // outlives every detour it had, freed with them after a tasks-RCU grace period.
  bool had_detour = false;
  Site* next_retired = nullptr;    // Registry::retired_sites_ / the sealed batch
  u32 queued_at = 0;               // Registry::queue_stamp_ when it entered kQueued
  char not_optimized[OKP_REASON_MAX] = {};  // why not, "" while it may be
  // The kernel's own kprobes are kept off [addr, fence_end) while okprobes' bytes are here:
  // their decoder would misread the bytes after them (core/kernel_fence.cpp).
  // At most the int3's fences and the jump's (arch::kernel_kprobe_fences, each).
  static constexpr usize kMaxFences = 2 * arch::kMaxKernelFences;
  arch::KernelFence fences[kMaxFences] = {};
  void* fence_handles[kMaxFences] = {};  // the kernel blacklist entries (seam handles)
  u8 fence_count = 0;
};

// The registry lock, held for a scope (as Zircon's Guard<Mutex>), and the proof of holding
// it: a member that demands the lock takes a `Locked` (only a live guard can be passed) and
// asserts it through the seam (lockdep_assert_held where lockdep is on).
class [[nodiscard]] RegistryGuard {
 public:
  RegistryGuard() { okp_seam_registry_lock(); }
  ~RegistryGuard() { okp_seam_registry_unlock(); }
  RegistryGuard(const RegistryGuard&) = delete;
  RegistryGuard& operator=(const RegistryGuard&) = delete;
};
using Locked = const RegistryGuard&;

class Registry {
 public:
  ErrorOr<void> init();
  void exit();

  // --- Writer side: process context. No member waits for a grace period while the lock is
  // held: the ones that take the lock themselves drop it to wait (the kernel's _top/_bottom
  // split of unregister: detach under the lock, wait unlocked, free under the lock again).
  // return_probe: kp is a return probe's entry (must be a function entry, not an unsafe one).
  int register_probe(okp_kprobe* kp, bool return_probe = false);
  // The same, for a caller that holds the lock and must stay atomic (a return probe's pool and
  // entry are published together). A failure leaves detached records in *rollback for
  // finish_unregister after the caller waited for a grace period (0 or 1 of them).
  int register_probe_locked(Locked, okp_kprobe* kp, bool return_probe, okp_kprobe** rollback);
  // One RCU grace period for all num probes.
  void unregister_probes(okp_kprobe* const* kps, int num);
  // The three steps, for callers that combine them with their own (return probes): detach
  // returns true when a grace period must pass before finish_unregister.
  bool detach_probes(Locked, okp_kprobe* const* kps, int num);
  void finish_unregister(Locked, okp_kprobe* const* kps, int num);
  int set_probe_disabled(Locked, okp_kprobe* kp, bool disabled);
  void set_armed(bool armed);
  // sysctl debug.okprobes-optimization changed: unoptimize every site (one batch) or queue
  // every site that may be optimized again.
  void set_optimization(bool enabled);
  // The jump optimizer's worker (core/optimizer.cpp): plans the queued sites' detours, waits
  // unlocked until no task can be inside their regions, then patches their jumps in one batch.
  void run_optimizer();
  void module_going(const void* module);
  void module_live(const void* module);
  int blacklist_add(okp_addr_t start, okp_addr_t end, const char* symbol, const char* source,
                    const void* owner, const char* via = nullptr);
  void blacklist_remove_owner(const void* owner);
  void show_probes(void (*emit)(void*, const char*), void* ctx);
  void show_blacklist(void (*emit)(void*, const char*), void* ctx);
  void show_refused(void (*emit)(void*, const char*), void* ctx);
  // A refusal made outside register_probe (return probes): kept for debugfs `refused` too.
  // Takes the registry lock; kp may be nullptr.
  void record_refusal(const okp_kprobe* kp, int err);
  // Boosted slots and detours retired since the last call become free after one tasks-RCU
  // grace period, waited for unlocked, and so do the sites of those detours. Run by the glue's
  // worker (okp_seam_defer_slot_collection), one at a time, never from a registration.
  void collect_retired_slots();

  // Writer side (registry lock): every site whose patched bytes overlap [start, end), e.g.
  // the sites a jump's detour region would cover. A site starts at most kMaxPatchSize - 1
  // bytes before start to reach into the range; the keys of that span are looked up, so the
  // cost does not grow with the number of probes (registration-time only).
  template <typename Fn>
  void for_each_site_in(Locked lock, okp_addr_t start, okp_addr_t end, Fn fn) {
    okp_seam_assert_registry_locked();
    (void)lock;
    table_.for_each_in_range(patch_reach(start), end, [&](Site& s) {
      const okp_addr_t last = s.addr + (s.patch_size ? s.patch_size : 1);
      if (s.addr < end && last > start) fn(s);
    });
  }
  // The lowest address a site's patch can start at and still cover start.
  static constexpr okp_addr_t patch_reach(okp_addr_t start) {
    return start > arch::kMaxPatchSize - 1 ? start - (arch::kMaxPatchSize - 1) : 0;
  }

  // Reader side (trap path): lock-free.
  Site* find(okp_addr_t addr) const { return table_.find(addr); }

  // Writer side helper for the arch decoder (registry lock held): undo okprobes' own
  // breakpoints in a copy of text.
  void recover_original(okp_addr_t start, u8* bytes, usize n) const;

 private:
  ErrorOr<void> do_register(Locked, okp_kprobe* kp, bool return_probe, bool* rollback);
  ErrorOr<void> locate_probe(Locked, okp_kprobe* kp, bool return_probe, okp_addr_t* addr,
                             okp_text_info* info);
  ErrorOr<void> attach(Locked, okp_kprobe* kp, okp_addr_t addr, const okp_text_info& info,
                       bool* rollback);
  ErrorOr<Site*> create_site(Locked, okp_addr_t addr, const okp_text_info& info, okp_kprobe* kp);
  ErrorOr<void> arm(Locked, Site& site);
  void disarm(Locked, Site& site);
  // Keeps the kernel's kprobes off what they would misread while the site holds a patch of
  // patch_len bytes standing for covered original ones (grows only), and lets them back.
  void fence_kernel_kprobes(Locked, Site& site, usize patch_len, usize covered);
  void unfence_kernel_kprobes(Locked, Site& site);
  void update_site(Locked, Site& site);  // re-derive boost and armed from the probes there
  // --- Jump optimization (core/optimizer.cpp) ---
  // Queues the site for the optimizer, or takes it back to its breakpoint and says why not.
  void update_optimization(Locked, Site& site, bool any_post);
  const char* optimization_blocker(Locked, const Site& site, bool any_post) const;
  void sync_optimized_flags(Locked, Site& site);
  bool plan_optimization(Locked, Site& site, bool any_post);
  // Step 2 of a batch whose regions have insides (optimizer.cpp): unlocked, takes the lock
  // itself to copy the regions of the sites queued by stamp.
  void wait_until_outside_regions(u32 stamp);
  // Jump <-> breakpoint for every site of the batch (linked by next_switching), two syncs.
  void switch_jumps(Locked, Site* batch, bool to_jump);
  void unoptimize(Locked, Site& site);
  // A new breakpoint at addr: a queued or optimized site whose region covers it goes back to
  // stepping its own breakpoint (the new one must see every hit).
  void yield_regions_over(Locked, okp_addr_t addr);
  // The probe at addr went: the sites it kept unoptimized may be queued again.
  void requeue_regions_over(Locked, okp_addr_t addr);
  void set_not_optimized(Locked, Site& site, const char* why);
  void refresh_reason(Locked, const Site& site, okp_kprobe* kp);
  // The site is out of the table and no CPU can be in it (a grace period passed, or it was
  // never armed): its step slot is free again, its boosted slot retired.
  void release_site(Locked, Site& site);
  ProbeRecord* find_record(Locked, const okp_kprobe* kp) const;
  bool detach_probe(Locked, okp_kprobe* kp);
  void note_refusal(Locked, const okp_kprobe* kp, int err);
  int finish_registration(Locked, okp_kprobe* kp, const ErrorOr<void>& result);

  // The trap path looks every hit up here: 8192 buckets keep chains ~1 long up to 10k
  // probes (at 512, a probe registered first sat behind ~20 others at 10k, +11% per int3 hit
  // on the test kernel; docs/reliability.md, "10k probes"). 64 KiB, once.
  AddressHashTable<Site, 13> table_;
  AddressHashTable<ProbeRecord, 9> records_;  // by okp_kprobe address; registry lock
  ProbeRecord* registered_ = nullptr;          // registration order; registry lock
  ProbeRecord* registered_tail_ = nullptr;
  Blacklist blacklist_;
  // Step slots are free again after an RCU grace period (a step runs with interrupts off);
  // boosted slots, which a preempted task may still be running, are retired and freed by
  // collect_retired_slots() after an RCU-tasks grace period (which can take seconds).
  SlotPool<arch::kSlotSize> slots_;
  // Released sites that had a detour: a task preempted in one of their detours (before the
  // detour entry disables preemption) reads the site when it resumes. Freed with the slots by
  // collect_retired_slots(); registry lock.
  Site* retired_sites_ = nullptr;

  // The last refusals, for debugfs `refused` (the probe struct may be gone by then).
  static constexpr usize kRefusals = 16;
  struct Refusal {
    int err;
    char what[64];
    char reason[OKP_REASON_MAX];
  } refusals_[kRefusals] = {};
  usize next_refusal_ = 0;
  u32 queue_stamp_ = 0;  // counts entries into kQueued; registry lock
};

// The one registry. Constant-initialised (no static constructor); inline so the hit path
// reaches it without a call.
extern Registry g_registry;
inline Registry& registry() { return g_registry; }

}  // namespace okp
