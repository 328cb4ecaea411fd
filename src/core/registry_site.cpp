// SPDX-License-Identifier: GPL-2.0
// One probed address's life in the registry (registry.h: Site): created (the instruction
// planned, its slots written, the text's owners and the blacklist asked), armed and disarmed as
// its probes ask (update_site), released when its last probe went. Registration, aggregation
// and removal of the probes themselves are registry.cpp's.
#include "core/registry.h"

#include "core/new.h"
#include "core/optimizer/jump_optimizer.h"
#include "core/settings.h"
#include "core/string.h"

namespace okp {

namespace {
bool same_bytes(const u8* a, const u8* b, usize n) {
  for (usize i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}
}  // namespace


namespace {

bool disabled(const okp_kprobe* kp) {
  return __atomic_load_n(&kp->flags, __ATOMIC_RELAXED) & OKP_KPROBE_FLAG_DISABLED;
}

}  // namespace

ErrorOr<Site*> Registry::create_site(Locked lock, okp_addr_t addr, const okp_text_info& info,
                                     okp_kprobe* kp, SiteTrial trial) {
  const bool dry_run = trial == SiteTrial::kDryRun;
  ProbeTable& t = table(lock);
  auto* site = make<Site>(Gfp::kKernel);
  if (!site) return Error(Errno::kNoMem, "out of memory");
  site->addr = addr;
  SitePlace& place = site->place;
  place.module = info.module;
  place.init_text = info.module_init_text;
  place.offset = addr - info.func_start;
  place.func_size = info.func_size;
  copy_string(place.symbol, sizeof(place.symbol), info.symbol);
  copy_string(place.module_name, sizeof(place.module_name), info.module_name);

  // A static call's trampoline is rewritten by static_call_update(), and no reserved-text check
  // of the kernel covers it (static_call_text_reserved() knows the call sites, not the
  // trampolines). Known by its symbol's name; a detour region stays inside the function.
  if (starts_with(place.symbol, "__SCT__")) {
    destroy(site);
    return Error::formatted(Errno::kBusy, "the instruction at %#lx is owned by: static call "
                            "trampoline (static_call_update() rewrites it)", addr);
  }
  okp_addr_t ftrace_site = okp_seam_ftrace_site(addr);
  if (ftrace_site && addr != ftrace_site) {
    destroy(site);
    return Error::formatted(Errno::kIlSeq,
                            "+%#lx is inside the ftrace call at +%#lx: probe +%#lx instead",
                            addr - info.func_start, ftrace_site - info.func_start,
                            ftrace_site - info.func_start);
  }
  if (ftrace_site) {
    site->ftrace_entry = (kp->flags & OKP_KPROBE_FLAG_IPMODIFY) ? Site::FtraceEntry::kIpmodify
                                                              : Site::FtraceEntry::kPlain;
    if (!dry_run) t.sites.insert(*site);
    return site;
  }

  site->step_slot = t.slots.allocate();
  if (!site->step_slot) {
    destroy(site);
    return Error::formatted(Errno::kNoMem, "all %lu out-of-line slots are in use",
                            static_cast<unsigned long>(t.slots.capacity()));
  }
  auto plan = arch::check_and_plan(addr, info.func_start, info.func_size, site->step_slot,
                                   recover_original_text);
  if (plan.is_error()) {
    release_site(lock, *site);
    return plan.release_error();
  }
  site->plan = plan.release_value();
  // A jump over addr would hide the breakpoint: that site goes back to its own breakpoint
  // before this one is read or armed.
  if constexpr (arch::kJumpProbes)
    if (!dry_run) jump_optimizer().breakpoint_added(lock, addr);
  usize len = arch::insn_length(site->plan);
  if (const char* owner = okp_seam_text_owner(addr, len)) {
    release_site(lock, *site);
    return Error::formatted(Errno::kBusy, "the instruction at %#lx is owned by: %s", addr, owner);
  }
  if (const BlacklistEntry* b = t.blacklist.find(addr, len)) {
    char origin[160];
    Blacklist::describe(*b, origin, sizeof(origin));
    release_site(lock, *site);
    return Error::formatted(Errno::kInval, "the instruction at %#lx overlaps blacklisted %s [%s]",
                            addr, b->symbol, origin);
  }
  site->patch_size = arch::breakpoint_of(site->plan).size;
  if (okp_seam_read_nofault(site->original, addr, site->patch_size)) {
    release_site(lock, *site);
    return Error::formatted(Errno::kFault, "cannot read the text at %#lx", addr);
  }
  if (!arch::needs_slot(site->plan)) {
    t.slots.release(site->step_slot);
    site->step_slot = 0;
  } else {
    u8 original[arch::kMaxInsnLength] = {};
    okp_seam_read_nofault(original, addr, len);
    recover_original(addr, original, len);
    u8 image[arch::kSlotSize];
    arch::build_slot(site->plan, addr, original, site->step_slot, false, image);
    int err = dry_run ? 0 : okp_seam_patch_text(site->step_slot, image, nullptr, sizeof(image));
    // A boost slot makes hits cheaper but is not needed: it is taken only while an eighth of
    // the cells stays free, so step slots (which are) never run out because of boosts.
    if (!err && arch::boostable(site->plan) &&
        t.slots.capacity() - t.slots.in_use() > t.slots.capacity() / 8) {
      site->boost_slot = t.slots.allocate();
      if (site->boost_slot) {
        // The displacement fix-up is per slot; check the second slot is in reach too.
        auto again = arch::check_and_plan(addr, info.func_start, info.func_size, site->boost_slot,
                                          recover_original_text);
        if (again.is_error() || !arch::boostable(again.value())) {
          t.slots.release(site->boost_slot);  // not boosted: the step slot serves
          site->boost_slot = 0;
        } else {
          arch::build_slot(site->plan, addr, original, site->boost_slot, true, image);
          if (!dry_run) err = okp_seam_patch_text(site->boost_slot, image, nullptr, sizeof(image));
        }
      }
    }
    if (err) {
      release_site(lock, *site);
      return Error::formatted(Errno::kFault, "cannot write the out-of-line slot for %#lx", addr);
    }
  }
  if (!dry_run) t.sites.insert(*site);
  return site;
}

ErrorOr<void> Registry::arm(Locked lock, Site& site) {
  if (site.state != SiteState::kDisarmed) return {};
  if (site.place.module && okp_seam_module_get(site.place.module))
    return Error(Errno::kNoEnt, "module is going away");
  const arch::Breakpoint bp = arch::breakpoint_of(site.plan);
  if constexpr (arch::kJumpProbes) {
    if (!site.ftrace() && jump_optimizer().jump_only()) {
      // No breakpoint reaches okprobes here: the site is its jump at once, or refused.
      site.state = SiteState::kArmed;  // its "breakpoint", the original word, is in place
      auto jumped = jump_optimizer().arm_jump(lock, site);
      if (jumped.is_error()) site.state = SiteState::kDisarmed;
      if (site.place.module) okp_seam_module_put(site.place.module);
      return jumped;
    }
  }
  // Fenced before the int3 is written, so no kernel kprobe is decoded through it unfenced.
  fence_kernel_kprobes(lock, site, bp.size, bp.size);
  int err = site.ftrace() ? okp_seam_ftrace_arm(site.addr, site.ipmodify())
                        : okp_seam_patch_text(site.addr, bp.bytes, site.original, bp.size);
  if (site.place.module) okp_seam_module_put(site.place.module);
  if (err) unfence_kernel_kprobes(lock, site);
  if (err) return Error::formatted(from_kernel_errno(err), "patching %#lx failed (%d)", site.addr, err);
  site.state = SiteState::kArmed;
  return {};
}

void Registry::disarm(Locked lock, Site& site) {
  if (!site.live()) return;
  if constexpr (arch::kJumpProbes) jump_optimizer().disarming(lock, site);  // breakpoint first
  // Hold the module while patching its text, or it may be freed under us.
  if (site.place.module && okp_seam_module_get(site.place.module)) {
    site.state = SiteState::kDisarmed;  // going: the module notifier will mark it gone
    unfence_kernel_kprobes(lock, site);
    return;
  }
  if (site.ftrace())
    okp_seam_ftrace_disarm(site.addr, site.ipmodify());
  else if (const arch::Breakpoint bp = arch::breakpoint_of(site.plan);
           !same_bytes(bp.bytes, site.original, bp.size) &&  // no breakpoint: nothing to undo
           okp_seam_patch_text(site.addr, site.original, bp.bytes, bp.size))
    okp_seam_invariant_failed("our breakpoint was overwritten by someone else", __FILE__, __LINE__);
  if (site.place.module) okp_seam_module_put(site.place.module);
  site.state = SiteState::kDisarmed;
  unfence_kernel_kprobes(lock, site);  // the original bytes are back
}

void Registry::update_site(Locked lock, Site& site) {
  bool any_enabled = false, any_post = false;
  for (ProbeRecord* r = site.probes; r; r = r->next_at_site) {
    if (!disabled(r->kp)) any_enabled = true;
    if (r->kp->post_handler) any_post = true;
  }
  __atomic_store_n(&site.boost, site.boost_slot && !any_post, __ATOMIC_RELEASE);
  __atomic_store_n(&site.ftrace_post, site.ftrace() && any_post, __ATOMIC_RELEASE);
  bool want = any_enabled && settings().armed() && !site.gone();
  if (want && site.state == SiteState::kDisarmed) {
    auto r = arm(lock, site);
    if (r.is_error()) {
      char line[160];
      okp_seam_format(line, sizeof(line), "cannot arm the probe at %s+%#lx: %s",
                      site.place.symbol, site.place.offset, r.error().reason());
      okp_seam_log(OKP_LOG_ERR, line);
    }
  } else if (!want && site.live()) {
    disarm(lock, site);
  }
  if constexpr (arch::kJumpProbes) jump_optimizer().site_updated(lock, site, any_post);
}

// A probe's reason (okp_kprobe_reason, debugfs list) on its breakpoint: why its site is not a
// jump, then why the breakpoint is not boosted. Both: the optimizer decides after the
// registration did, and its verdict must not hide the breakpoint's (a stepped instruction
// costs a second trap per hit). Left as it is when neither applies.
void Registry::refresh_reason(Locked lock, const Site& s, okp_kprobe* kp) {
  char boost[96] = "";
  if (!s.ftrace() && arch::needs_slot(s.plan) && arch::boostable(s.plan) && kp->post_handler)
    copy_string(boost, sizeof(boost), "not boosted: a post_handler needs the trap after the instruction");
  else if (!s.ftrace() && arch::needs_slot(s.plan) && !arch::boostable(s.plan))
    okp_seam_format(boost, sizeof(boost), "not boosted: '%s' must be single-stepped",
                    arch::mnemonic(s.plan));
  const char* jump = "";
  if constexpr (arch::kJumpProbes) jump = jump_optimizer().not_optimized(lock, s);
  if (!*jump && !*boost) return;
  okp_seam_format(kp->okp_reason, OKP_REASON_MAX, "%s%s%s", jump, *jump && *boost ? "; " : "", boost);
}

void Registry::refresh_reasons(Locked lock, const Site& s) {
  for (ProbeRecord* r = s.probes; r; r = r->next_at_site) refresh_reason(lock, s, r->kp);
}

void Registry::release_site(Locked lock, Site& site) {
  ProbeTable& t = table(lock);
  unfence_kernel_kprobes(lock, site);
  t.slots.release(site.step_slot);
  if (site.boost_slot) {
    t.slots.retire(site.boost_slot);
    okp_seam_defer_slot_collection();
  }
  bool outlives_detours = false;
  if constexpr (arch::kJumpProbes) outlives_detours = jump_optimizer().site_released(lock, site);
  if (outlives_detours) {
    // A task preempted in one of its detours reads this site when it goes on (its probe list
    // is empty by now: no handler runs). It goes after the same wait as the detours it had.
    site.next_retired = t.retired_sites;
    t.retired_sites = &site;
    okp_seam_defer_slot_collection();
  } else {
    destroy(&site);
  }
}

}  // namespace okp
