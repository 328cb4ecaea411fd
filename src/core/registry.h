// SPDX-License-Identifier: GPL-2.0
// The probe table: one Site per probed address, each holding the probes registered there in
// registration order (one probe, or an aggregate of several). Beside it, on an arch with jump
// probes, the jump optimizer (core/optimizer/jump_optimizer.h) hears what happens to sites.
//
// Locking. The lock order, outermost first, for every lock okprobes takes or nests (this is
// the one place it is written):
//   registry lock (okp_seam_registry_lock: RegistryGuard)
//     -> kprobe_mutex         fencing the kernel's kprobes (src/kernel/kprobe_fence.c)
//     -> module_mutex         symbol lookups
//     -> jump_label_mutex     text owner checks
//     -> ftrace's locks       function-entry sites (filter updates, ops registration)
//     -> cpu hotplug lock -> text_mutex   text patching (arm64 takes the hotplug lock first,
//                                         as the kernel's kprobes do)
// okprobes holds at most one of the kernel's locks at a time but for the nestings the kernel
// makes itself (cpu hotplug and ftrace's locks outside text_mutex), and takes no lock of its
// own under any of them. The jump optimizer's task look (stop_machine, the hotplug lock) and
// every grace period are waited for with no okprobes lock held: writers detach under the
// registry lock, drop it to wait, and take it again to free (the kernel's _top/_bottom split
// of unregister).
//
// What the lock guards is the ProbeTable below, reachable only through Registry::table(Locked)
// (which asserts it, the one place that does), and everything reachable from it: the Sites and
// ProbeRecords, their fields unless marked [hit]. The trap path reads the table, the [hit]
// fields and the probe lists without any lock: they are published with release stores, and
// nothing reachable from the table is freed before an RCU grace period
// (okp_seam_synchronize_rcu; plus okp_seam_synchronize_tasks for boosted slots and detours,
// which a preempted task may still be executing).
#pragma once

#include <okprobes/okprobes.h>

#include "core/address_hash_table.h"
#include "core/blacklist.h"
#include "core/error_or.h"
#include "core/kernel_fence.h"
#include "core/slot_pool.h"
#include "arch/arch_contract.h"
#ifdef OKP_JUMP_PROBES
#include "core/optimizer/jump_site.h"
#endif

namespace okp {

struct Site;
struct ProbeRecord;

// The registry lock, held for a scope (as Zircon's Guard<Mutex>). A member that demands the
// lock takes a `Locked`, which only a live guard can be passed as.
class [[nodiscard]] RegistryGuard {
 public:
  RegistryGuard() { okp_seam_registry_lock(); }
  ~RegistryGuard() { okp_seam_registry_unlock(); }
  RegistryGuard(const RegistryGuard&) = delete;
  RegistryGuard& operator=(const RegistryGuard&) = delete;
};
using Locked = const RegistryGuard&;

// The core's record of one registered okp_kprobe, found by the probe's address in
// ProbeTable::records (so registering or unregistering N probes is O(N), not O(N^2)).
// The hit path's acquire loads of the aggregate's links read offset 0 (arm64's ldar takes no
// offset: a link at offset 0 saves an add per load), so the link comes before the hash link.
struct ProbeRecordSiteLink {
  ProbeRecord* next_at_site = nullptr;  // [hit] the aggregate's list, registration order
};
struct ProbeRecord : ProbeRecordSiteLink, HashLinked<ProbeRecord> {
  okp_kprobe* kp = nullptr;
  okp_addr_t hash_key() const { return reinterpret_cast<okp_addr_t>(kp); }
  Site* site = nullptr;
  // All records in registration order (debugfs, unload).
  ProbeRecord* next_registered = nullptr;
  ProbeRecord* prev_registered = nullptr;
  bool emptied_site = false;  // detach_probe(): it was the site's last probe
};

// What the text at a site holds:
//
//   kDisarmed --arm--> kArmed --queue--> kQueued --jump patched--> kOptimized
//       ^                |  ^               |                          |
//       +----disarm------+  +---unqueue-----+  <---back to breakpoint---+
//
// kArmed: a breakpoint (or the ftrace filter) is live. kQueued: the breakpoint is live and
// the site waits for the jump optimizer's next batch; once its detour is planned, its
// breakpoint hits resume in the detour's copy of the region. kOptimized: the text holds a
// jump to the detour. The probe table moves sites between kDisarmed and kArmed, the jump
// optimizer between kArmed, kQueued and kOptimized; leaving kOptimized (unoptimize, disarm)
// goes back to the breakpoint first. Any state may end in kGone when the text goes away
// (module unload, __init text freed): the site is then never written again.
enum class SiteState : u8 { kDisarmed, kArmed, kQueued, kOptimized, kGone };

// Where a site is: for reasons, debugfs and module events, never read by a hit.
struct SitePlace {
  void* module = nullptr;          // struct module * owning the text, nullptr: vmlinux
  bool init_text = false;          // in a module's __init text
  okp_addr_t offset = 0;           // from the symbol's start
  unsigned long func_size = 0;     // the containing function's size (0: unknown)
  char symbol[64] = {};
  char module_name[56] = {};
};

// As ProbeRecordSiteLink: every hit loads the aggregate's head (acquire); the hash link is
// followed only past a colliding site.
struct SiteProbesHead {
  ProbeRecord* probes = nullptr;  // [hit] first of the aggregate
};
struct Site : SiteProbesHead, HashLinked<Site> {
  // --- What a hit reads [hit], first. ---
  okp_addr_t addr = 0;
  okp_addr_t hash_key() const { return addr; }
  arch::Plan plan;                 // [hit] how the probed instruction runs
  okp_addr_t step_slot = 0;        // [hit] copy + breakpoint (0: emulated, or ftrace)
  okp_addr_t boost_slot = 0;       // [hit] copy + jump back (0: not boostable)
  bool boost = false;              // [hit] use boost_slot: boostable and no post_handler
  // [hit] Served by the ftrace call site, not a breakpoint, and whether with IPMODIFY: one
  // byte, which the ftrace hit compares once against what its entry serves.
  enum class FtraceEntry : u8 { kNone, kPlain, kIpmodify };
  FtraceEntry ftrace_entry = FtraceEntry::kNone;
  bool ftrace() const { return ftrace_entry != FtraceEntry::kNone; }
  bool ipmodify() const { return ftrace_entry == FtraceEntry::kIpmodify; }
  bool ftrace_post = false;        // [hit] ftrace: some probe here has a post_handler
#ifdef OKP_JUMP_PROBES
  // [hit] The detour's copy a breakpoint hit resumes in (0: it steps or boosts); written by
  // the jump optimizer only.
  okp_addr_t detour_copy = 0;
#endif

  // --- What the text holds. ---
  SiteState state = SiteState::kDisarmed;
  // The text holds okprobes' patch (breakpoint, ftrace filter or jump).
  bool live() const {
    return state == SiteState::kArmed || state == SiteState::kQueued ||
           state == SiteState::kOptimized;
  }
  bool gone() const { return state == SiteState::kGone; }
  // The original bytes okprobes' patch covers: [addr, addr + patch_size). patch_size is the
  // breakpoint's size (arch::breakpoint_of(plan)), a jump's once optimized, 0 for ftrace sites.
  u8 original[arch::kMaxPatchSize] = {};
  u8 patch_size = 0;

  // --- Cold. ---
  SitePlace place;
  KernelFences fences;             // core/kernel_fence.h
  Site* next_retired = nullptr;    // ProbeTable::retired_sites
#ifdef OKP_JUMP_PROBES
  JumpSite jump;                   // the jump optimizer's alone
#endif
};

// Everything the registry lock guards, in one place (Registry::table).
struct ProbeTable {
  // The trap path looks every hit up here: 8192 buckets keep chains about one long up to 10k
  // probes (docs/reliability.md, "10k probes"). 64 KiB, once.
  AddressHashTable<Site, 13> sites;
  AddressHashTable<ProbeRecord, 9> records;  // by okp_kprobe address
  ProbeRecord* registered = nullptr;           // registration order
  ProbeRecord* registered_tail = nullptr;
  Blacklist blacklist;
  // Step slots are free again after an RCU grace period (a step runs with interrupts off);
  // boosted slots and detours, which a preempted task may still be running, are retired and
  // freed by collect_retired_slots() after an RCU-tasks grace period.
  SlotPool<arch::kSlotSize> slots;
#ifdef OKP_JUMP_PROBES
  // Detour cells in executable memory near the kernel's text, for sites the slot area is out
  // of a jump's reach of (arm64: the padding at the end of the kernel's text; empty where the
  // arch has none). Retired and freed as the slots are.
  SlotPool<arch::kSlotSize> near_slots;
#endif
  // Released sites that had a detour: a task preempted in one of their detours (before the
  // detour entry disables preemption) reads the site when it resumes. Freed with the slots by
  // collect_retired_slots().
  Site* retired_sites = nullptr;
  // The last refusals, for debugfs `refused` (the probe struct may be gone by then).
  static constexpr usize kRefusals = 16;
  struct Refusal {
    int err;
    char what[64];
    char reason[OKP_REASON_MAX];
  } refusals[kRefusals] = {};
  usize next_refusal = 0;
};

// Whether create_site() registers a site or only tries one (debugfs explain).
enum class SiteTrial : bool { kRegister, kDryRun };

class Registry {
 public:
  ErrorOr<void> init();
  void exit();

  // The lock's data: the one way to it, and the one place that asserts the lock (lockdep
  // where the kernel has it).
  ProbeTable& table(Locked) {
    okp_seam_assert_registry_locked();
    return table_;
  }
  const ProbeTable& table(Locked) const {
    okp_seam_assert_registry_locked();
    return table_;
  }

  // --- Writer side: process context. No member waits for a grace period while the lock is
  // held: the ones that take the lock themselves drop it to wait.
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
  // debugfs `enabled` changed: every site armed or disarmed as its probes and the switch ask.
  void rearm_all();
  void module_going(const void* module);
  void module_live(const void* module);
  int blacklist_add(okp_addr_t start, okp_addr_t end, const char* symbol, const char* source,
                    const void* owner, const char* via = nullptr);
  void blacklist_remove_owner(const void* owner);
  void show_probes(void (*emit)(void*, const char*), void* ctx);
  void show_blacklist(void (*emit)(void*, const char*), void* ctx);
  void show_refused(void (*emit)(void*, const char*), void* ctx);
  // What registering a probe at symbol (or addr) + offset would do, without registering it:
  // one line into out, the refusal's own reason if it would be refused (its errno returned),
  // else how it would run (registry_explain.cpp).
  int explain(const char* symbol, okp_addr_t addr, unsigned int offset, char* out, usize out_len);
  // A refusal made outside register_probe (return probes): kept for debugfs `refused` too.
  // Takes the registry lock; kp may be nullptr.
  void record_refusal(const okp_kprobe* kp, int err);
  // Boosted slots and detours retired since the last call become free after one tasks-RCU
  // grace period, waited for unlocked, and so do the sites of those detours. Run by the glue's
  // worker (okp_seam_defer_slot_collection), one at a time, never from a registration.
  void collect_retired_slots();

  // --- For the jump optimizer and the arch decoders (registry lock held) ---
  Site* site_at(Locked lock, okp_addr_t addr) { return table(lock).sites.find(addr); }
  template <typename Fn>
  void for_each_site(Locked lock, Fn fn) {
    table(lock).sites.for_each(fn);
  }
  // Every site whose patched bytes overlap [start, end), e.g. the sites a jump's detour region
  // would cover. A site starts at most kMaxPatchSize - 1 bytes before start to reach into the
  // range; the keys of that span are looked up, so the cost does not grow with the number of
  // probes (registration-time only).
  template <typename Fn>
  void for_each_site_in(Locked lock, okp_addr_t start, okp_addr_t end, Fn fn) {
    table(lock).sites.for_each_in_range(patch_reach(start), end, [&](Site& s) {
      const okp_addr_t last = s.addr + (s.patch_size ? s.patch_size : 1);
      if (s.addr < end && last > start) fn(s);
    });
  }
  SlotPool<arch::kSlotSize>& slots(Locked lock) { return table(lock).slots; }
#ifdef OKP_JUMP_PROBES
  SlotPool<arch::kSlotSize>& near_slots(Locked lock) { return table(lock).near_slots; }
#endif
  const BlacklistEntry* blacklisted(Locked lock, okp_addr_t addr, usize len) const {
    return table(lock).blacklist.find(addr, len);
  }
  // Every probe's reason at the site, from the site's verdicts (refresh_reason).
  void refresh_reasons(Locked, const Site& site);
  // Undoes okprobes' own breakpoints and jumps in a copy of text [start, start + n). Registry
  // lock held (the arch decoders call it through a RecoverFn while planning).
  void recover_original(okp_addr_t start, u8* bytes, usize n) const;

  // --- Reader side (trap path): lock-free (see the top of this file).
  Site* find(okp_addr_t addr) const { return table_.sites.find(addr); }

 private:
  // The lowest address a site's patch can start at and still cover start.
  static constexpr okp_addr_t patch_reach(okp_addr_t start) {
    return start > arch::kMaxPatchSize - 1 ? start - (arch::kMaxPatchSize - 1) : 0;
  }
  ErrorOr<void> do_register(Locked, okp_kprobe* kp, bool return_probe, bool* rollback);
  ErrorOr<void> locate_probe(Locked, okp_kprobe* kp, bool return_probe, okp_addr_t* addr,
                             okp_text_info* info);
  ErrorOr<void> attach(Locked, okp_kprobe* kp, okp_addr_t addr, const okp_text_info& info,
                       bool* rollback);
  // kDryRun: every check and plan of a registration, nothing written or published (explain);
  // the site is the caller's to describe and discard_trial_site().
  ErrorOr<Site*> create_site(Locked, okp_addr_t addr, const okp_text_info& info, okp_kprobe* kp,
                             SiteTrial trial = SiteTrial::kRegister);
  void discard_trial_site(Locked, Site& site);
  ErrorOr<void> arm(Locked, Site& site);
  void disarm(Locked, Site& site);
  void update_site(Locked, Site& site);  // re-derive boost and armed from the probes there
  void refresh_reason(Locked, const Site& site, okp_kprobe* kp);
  // The site is out of the table and no CPU can be in it (a grace period passed, or it was
  // never armed): its step slot is free again, its boosted slot retired.
  void release_site(Locked, Site& site);
  // The text went away (module unload, __init text freed): the site is never written again.
  void make_gone(Locked, Site& site);
  ProbeRecord* find_record(Locked, const okp_kprobe* kp) const;
  bool detach_probe(Locked, okp_kprobe* kp);
  void note_refusal(Locked, const okp_kprobe* kp, int err);
  int finish_registration(Locked, okp_kprobe* kp, const ErrorOr<void>& result);

  ProbeTable table_;  // guarded by the registry lock: reach it through table(Locked)
};

// The one registry. Constant-initialised (no static constructor); inline so the hit path
// reaches it without a call.
extern Registry g_registry;
inline Registry& registry() { return g_registry; }

// The RecoverFn the arch's decoders and fence walks are given (registry lock held). Out of
// line, once: an inline function whose address is taken would be a COMDAT copy per object,
// which the kernel's module link rejects under ftrace's __mcount_loc.
void recover_original_text(okp_addr_t start, u8* bytes, usize n);

}  // namespace okp
