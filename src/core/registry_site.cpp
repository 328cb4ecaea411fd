// SPDX-License-Identifier: GPL-2.0
// One probed address's life in the registry (registry.h: Site): created (the instruction
// planned, its slots written, the text's owners and the blacklist asked), armed and disarmed as
// its probes ask (update_site), released when its last probe went. Registration, aggregation
// and removal of the probes themselves are registry.cpp's.
#include "core/registry.h"

#include "core/new.h"
#include "core/settings.h"
#include "core/string.h"

namespace okp {

namespace {

// The proof a lock-demanding member checks (Locked is only made from a live guard).
void assert_locked(Locked) { okp_seam_assert_registry_locked(); }

bool disabled(const okp_kprobe* kp) {
  return __atomic_load_n(&kp->flags, __ATOMIC_RELAXED) & OKP_KPROBE_FLAG_DISABLED;
}

void recover_trampoline(okp_addr_t start, u8* bytes, usize n) {
  g_registry.recover_original(start, bytes, n);
}

}  // namespace

ErrorOr<Site*> Registry::create_site(Locked lock, okp_addr_t addr, const okp_text_info& info,
                                     okp_kprobe* kp) {
  assert_locked(lock);
  auto* site = make<Site>(Gfp::kKernel);
  if (!site) return Error(Errno::kNoMem, "out of memory");
  site->addr = addr;
  site->module = info.module;
  site->init_text = info.module_init_text;
  site->offset = addr - info.func_start;
  site->func_size = info.func_size;
  copy_string(site->symbol, sizeof(site->symbol), info.symbol);
  copy_string(site->module_name, sizeof(site->module_name), info.module_name);

  // A static call's trampoline is rewritten by static_call_update(), and no reserved-text check
  // of the kernel covers it (static_call_text_reserved() knows the call sites, not the
  // trampolines). Known by its symbol's name; a detour region stays inside the function.
  if (starts_with(site->symbol, "__SCT__")) {
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
    site->ftrace = true;
    site->ipmodify = kp->flags & OKP_KPROBE_FLAG_IPMODIFY;
    table_.insert(*site);
    return site;
  }

  site->step_slot = slots_.allocate();
  if (!site->step_slot) {
    destroy(site);
    return Error::formatted(Errno::kNoMem, "all %lu out-of-line slots are in use",
                            static_cast<unsigned long>(slots_.capacity()));
  }
  auto plan = arch::check_and_plan(addr, info.func_start, info.func_size, site->step_slot,
                                   recover_trampoline);
  if (plan.is_error()) {
    release_site(lock, *site);
    return plan.release_error();
  }
  site->plan = plan.release_value();
  // A jump over addr would hide the breakpoint: that site goes back to its own breakpoint
  // before this one is read or armed.
  yield_regions_over(lock, addr);
  usize len = arch::insn_length(site->plan);
  if (const char* owner = okp_seam_text_owner(addr, len)) {
    release_site(lock, *site);
    return Error::formatted(Errno::kBusy, "the instruction at %#lx is owned by: %s", addr, owner);
  }
  if (const BlacklistEntry* b = blacklist_.find(addr, len)) {
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
    slots_.release(site->step_slot);
    site->step_slot = 0;
  } else {
    u8 original[arch::kMaxInsnLength] = {};
    okp_seam_read_nofault(original, addr, len);
    recover_original(addr, original, len);
    u8 image[arch::kSlotSize];
    arch::build_slot(site->plan, addr, original, site->step_slot, false, image);
    int err = okp_seam_patch_text(site->step_slot, image, nullptr, sizeof(image));
    if (!err && arch::boostable(site->plan)) {
      site->boost_slot = slots_.allocate();
      if (site->boost_slot) {
        // The displacement fix-up is per slot; check the second slot is in reach too.
        auto again = arch::check_and_plan(addr, info.func_start, info.func_size, site->boost_slot,
                                          recover_trampoline);
        if (again.is_error() || !arch::boostable(again.value())) {
          slots_.release(site->boost_slot);  // not boosted: the step slot serves
          site->boost_slot = 0;
        } else {
          arch::build_slot(site->plan, addr, original, site->boost_slot, true, image);
          err = okp_seam_patch_text(site->boost_slot, image, nullptr, sizeof(image));
        }
      }
    }
    if (err) {
      release_site(lock, *site);
      return Error::formatted(Errno::kFault, "cannot write the out-of-line slot for %#lx", addr);
    }
  }
  table_.insert(*site);
  return site;
}

ErrorOr<void> Registry::arm(Locked lock, Site& site) {
  assert_locked(lock);
  if (site.state != SiteState::kDisarmed) return {};
  if (site.module && okp_seam_module_get(site.module))
    return Error(Errno::kNoEnt, "module is going away");
  const arch::Breakpoint bp = arch::breakpoint_of(site.plan);
  // Fenced before the int3 is written, so no kernel kprobe is decoded through it unfenced.
  fence_kernel_kprobes(lock, site, bp.size, bp.size);
  int err = site.ftrace ? okp_seam_ftrace_arm(site.addr, site.ipmodify)
                        : okp_seam_patch_text(site.addr, bp.bytes, site.original, bp.size);
  if (site.module) okp_seam_module_put(site.module);
  if (err) unfence_kernel_kprobes(lock, site);
  if (err) return Error::formatted(from_kernel_errno(err), "patching %#lx failed (%d)", site.addr, err);
  site.state = SiteState::kArmed;
  return {};
}

void Registry::disarm(Locked lock, Site& site) {
  assert_locked(lock);
  if (!site.live()) return;
  unoptimize(lock, site);  // back to the breakpoint first
  if (site.state == SiteState::kQueued) site.state = SiteState::kArmed;
  // Hold the module while patching its text, or it may be freed under us.
  if (site.module && okp_seam_module_get(site.module)) {
    site.state = SiteState::kDisarmed;  // going: the module notifier will mark it gone
    unfence_kernel_kprobes(lock, site);
    return;
  }
  if (site.ftrace)
    okp_seam_ftrace_disarm(site.addr, site.ipmodify);
  else if (const arch::Breakpoint bp = arch::breakpoint_of(site.plan);
           okp_seam_patch_text(site.addr, site.original, bp.bytes, bp.size))
    okp_seam_invariant_failed("our breakpoint was overwritten by someone else", __FILE__, __LINE__);
  if (site.module) okp_seam_module_put(site.module);
  site.state = SiteState::kDisarmed;
  unfence_kernel_kprobes(lock, site);  // the original bytes are back
}

void Registry::update_site(Locked lock, Site& site) {
  assert_locked(lock);
  bool any_enabled = false, any_post = false;
  for (ProbeRecord* r = site.probes; r; r = r->next_at_site) {
    if (!disabled(r->kp)) any_enabled = true;
    if (r->kp->post_handler) any_post = true;
  }
  __atomic_store_n(&site.boost, site.boost_slot && !any_post, __ATOMIC_RELEASE);
  __atomic_store_n(&site.ftrace_post, site.ftrace && any_post, __ATOMIC_RELEASE);
  bool want = any_enabled && settings().armed() && !site.gone();
  if (want && site.state == SiteState::kDisarmed) {
    auto r = arm(lock, site);
    if (r.is_error()) {
      char line[160];
      okp_seam_format(line, sizeof(line), "cannot arm the probe at %s+%#lx: %s", site.symbol,
                      site.offset, r.error().reason());
      okp_seam_log(OKP_LOG_ERR, line);
    }
  } else if (!want && site.live()) {
    disarm(lock, site);
  }
  update_optimization(lock, site, any_post);
  sync_optimized_flags(lock, site);
}

void Registry::release_site(Locked lock, Site& site) {
  assert_locked(lock);
  unfence_kernel_kprobes(lock, site);
  slots_.release(site.step_slot);
  if (site.boost_slot) {
    slots_.retire(site.boost_slot);
    okp_seam_defer_slot_collection();
  }
  const bool deferred = site.detour || site.had_detour;
  if (site.detour) {
    // A task preempted between the jump and the handlers, or in the copy, may still be in it.
    slots_.retire(site.detour, arch::kMaxDetourSize);
  }
  if (site.had_detour) {
    // ... and when it goes on, the detour entry reads this site (its probe list is empty by
    // now: no handler runs). It goes after the same wait as the detours it had.
    site.next_retired = retired_sites_;
    retired_sites_ = &site;
  } else {
    destroy(&site);
  }
  if (deferred) okp_seam_defer_slot_collection();
}

}  // namespace okp
