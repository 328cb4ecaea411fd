// SPDX-License-Identifier: GPL-2.0
// The jump optimizer: a breakpoint probe's int3 becomes a `jmp rel32` to a detour that runs
// the handlers and a relocated copy of the instructions under the jump (the "region"), with no
// trap at all. Arch pieces: arch::plan_detour (x86-64: arch/x86/detour.h, the region check and
// the relocator); elsewhere kJumpOptimization is false and nothing here runs.
//
// One batch, run by one work item at a time (okp_seam_defer_optimizer, after a short delay
// that gathers registrations):
//  1. Locked: every kQueued site gets its detour planned (the whole function decoded, the
//     region checked and relocated) and written into slot-pool cells, and its copy published:
//     from then on its breakpoint hits resume in the copy, never in a boosted slot or a step
//     whose way back lands inside the region.
//  2. Unlocked: an RCU grace period (no CPU is still in the breakpoint handler with the old
//     decision), then proof that no task is preempted inside the region, or in a boosted slot
//     about to jump back into it: every task's stack read at one instant (x86-64:
//     okp_seam_tasks_outside), else a tasks-RCU grace period. Neither when every region of the
//     batch is one instruction: nothing can stop inside it.
//  3. Locked: the sites still kQueued since before step 1 get their jumps, all at once, as
//     the kernel's int3-guarded patching does it: bytes 1..4 (the int3 still at byte 0 sends a
//     CPU to the copy), sync, byte 0, sync. One pair of syncs per batch, not per probe.
// Going back to the breakpoint is the mirror (byte 0 = int3, sync, bytes 1..4, sync) and waits
// for nothing: the detour stays until its site is freed, and its cells are freed only after
// a tasks-RCU grace period (Registry::release_site retires them).
//
// Lock order: registry lock -> text_mutex (okp_seam_text_lock). Nothing here waits for a
// grace period with the registry lock held.
#include "core/registry.h"
#include "core/settings.h"
#include "core/string.h"

namespace okp {

namespace {

bool has_post_handler(const Site& s) {
  for (const ProbeRecord* r = s.probes; r; r = r->next_at_site)
    if (r->kp->post_handler) return true;
  return false;
}

void recover_trampoline(okp_addr_t start, u8* bytes, usize n) {
  g_registry.recover_original(start, bytes, n);
}

}  // namespace

const char* Registry::optimization_blocker(Locked, const Site& s, bool any_post) const {
  if (!arch::kJumpOptimization || s.ftrace) return "";  // nothing to say: no trap to save
  if (!settings().optimization())
    return "not optimized: optimization off (debug.okprobes-optimization=0)";
  (void)any_post;  // a post_handler runs from the detour too (its copy calls the post entry)
  if (s.cannot_optimize) return s.not_optimized;
  return nullptr;
}

void Registry::set_not_optimized(Locked lock, Site& s, const char* why) {
  okp_seam_assert_registry_locked();
  if (why != s.not_optimized) copy_string(s.not_optimized, sizeof(s.not_optimized), why);
  for (ProbeRecord* r = s.probes; r; r = r->next_at_site) refresh_reason(lock, s, r->kp);
}

// A probe's reason (okp_kprobe_reason, debugfs list) on its breakpoint: why its site is not a
// jump, then why the breakpoint is not boosted. Both: the optimizer decides after the
// registration did, and its verdict must not hide the breakpoint's (a stepped instruction
// costs a second trap per hit). Left as it is when neither applies.
void Registry::refresh_reason(Locked, const Site& s, okp_kprobe* kp) {
  char boost[96] = "";
  if (!s.ftrace && arch::needs_slot(s.plan) && arch::boostable(s.plan) && kp->post_handler)
    copy_string(boost, sizeof(boost), "not boosted: a post_handler needs the trap after the instruction");
  else if (!s.ftrace && arch::needs_slot(s.plan) && !arch::boostable(s.plan))
    okp_seam_format(boost, sizeof(boost), "not boosted: '%s' must be single-stepped",
                    arch::mnemonic(s.plan));
  const char* jump = s.state != SiteState::kOptimized ? s.not_optimized : "";
  if (!*jump && !*boost) return;
  okp_seam_format(kp->okp_reason, OKP_REASON_MAX, "%s%s%s", jump, *jump && *boost ? "; " : "", boost);
}

void Registry::sync_optimized_flags(Locked, Site& s) {
  const bool on = s.state == SiteState::kOptimized;
  for (ProbeRecord* r = s.probes; r; r = r->next_at_site) {
    okp_kprobe* kp = r->kp;
    const unsigned int f = __atomic_load_n(&kp->flags, __ATOMIC_RELAXED);
    const unsigned int want = on ? (f | OKP_KPROBE_FLAG_OPTIMIZED) : (f & ~OKP_KPROBE_FLAG_OPTIMIZED);
    if (want != f) __atomic_store_n(&kp->flags, want, __ATOMIC_RELAXED);
    if (on) kp->okp_reason[0] = '\0';
  }
}

void Registry::update_optimization(Locked lock, Site& s, bool any_post) {
  if (!s.live()) return;
  if (s.planned_copy && s.detour_post != any_post) {
    // The detour no longer fits: post handlers need the copy that calls the post entry, and
    // without them that call is only overhead. Back to the breakpoint, hits step again (the
    // text after it is the original once more), and the old detour is retired (a task may
    // still be in it) for one planned anew.
    unoptimize(lock, s);
    if (s.state == SiteState::kQueued) s.state = SiteState::kArmed;
    __atomic_store_n(&s.detour_copy, 0, __ATOMIC_RELEASE);
    slots_.retire(s.detour, arch::kMaxDetourSize);
    okp_seam_defer_slot_collection();
    s.detour = 0;
    s.planned_copy = 0;
  }
  // A refusal that was about the other kind of detour does not hold for this one.
  if (s.cannot_optimize && s.planned_for_post != any_post) s.cannot_optimize = false;
  if (const char* why = optimization_blocker(lock, s, any_post)) {
    if (s.state == SiteState::kOptimized) unoptimize(lock, s);
    if (s.state == SiteState::kQueued) s.state = SiteState::kArmed;
    if (*why) set_not_optimized(lock, s, why);
    return;
  }
  if (s.state == SiteState::kArmed) {
    s.state = SiteState::kQueued;
    s.not_optimized[0] = '\0';  // "" while it may be: no stale reason for a probe joining now
    s.queued_at = ++queue_stamp_;
    okp_seam_defer_optimizer();
  }
}

// Step 1 for one site: plan, write and publish its detour. False: not now (the reason is
// set; cannot_optimize when it never will be).
bool Registry::plan_optimization(Locked lock, Site& s, bool any_post) {
  const okp_addr_t func_start = s.addr - s.offset;
  if (s.planned_copy) {
    // Written before (and maybe still run by a task): the same bytes, published again, once
    // no probe sits inside the region any more.
    for (okp_addr_t a = s.addr + 1; a < s.addr + s.region_length; ++a) {
      if (const Site* inner = table_.find(a)) {
        char why[OKP_REASON_MAX];
        okp_seam_format(why, sizeof(why), "not optimized: the probe at +%#lx is inside the "
                        "region +%#lx..+%#lx", inner->offset, s.offset,
                        s.offset + s.region_length - 1);
        set_not_optimized(lock, s, why);
        return false;
      }
    }
    fence_kernel_kprobes(lock, s, s.jump_size, s.region_length);  // before the jump is written
    __atomic_store_n(&s.detour_copy, s.planned_copy, __ATOMIC_RELEASE);
    return true;
  }
  if (!s.detour) s.detour = slots_.allocate(arch::kMaxDetourSize);
  if (!s.detour) {
    char why[OKP_REASON_MAX];
    okp_seam_format(why, sizeof(why), "not optimized: all %lu slot cells are in use",
                    static_cast<unsigned long>(slots_.capacity()));
    set_not_optimized(lock, s, why);
    return false;
  }
  s.planned_for_post = any_post;
  auto planned = arch::plan_detour(s.addr, func_start, s.func_size, recover_trampoline, s.detour,
                                   okp_seam_detour_entry(any_post),
                                   any_post ? okp_seam_detour_post_entry() : 0,
                                   reinterpret_cast<okp_addr_t>(&s));
  char why[OKP_REASON_MAX] = "";
  bool for_good = true;
  // A kernel kprobe the kernel optimized into a jump changes the bytes the plan decodes, and a
  // plan that fails on them would blame the bytes: name the kernel's probe instead (any byte
  // the longest region could reach).
  const okp_addr_t kernel_kp =
      planned.is_error() ? okp_seam_kernel_kprobe_in(s.addr + 1, arch::kMaxPatchSize + arch::kMaxInsnLength - 2) : 0;
  if (kernel_kp) {
    okp_seam_format(why, sizeof(why), "not optimized: kernel kprobe at +%#lx (possibly optimized "
                    "into a jump) where the region would be", kernel_kp - func_start);
  } else if (planned.is_error()) {
    copy_string(why, sizeof(why), planned.error().reason());
  } else {
    const arch::DetourPlan& plan = planned.value();
    const okp_addr_t end = s.addr + plan.region_length;
    const unsigned long at = s.offset, last = s.offset + plan.region_length - 1;
    const Site* inner = nullptr;
    for (okp_addr_t a = s.addr + 1; a < end && !inner; ++a) inner = table_.find(a);
    const okp_addr_t ftrace_site = okp_seam_ftrace_site_in(s.addr, plan.region_length);
    if (inner) {
      for_good = false;  // until that probe goes
      okp_seam_format(why, sizeof(why), "not optimized: the probe at +%#lx is inside the region "
                      "+%#lx..+%#lx", inner->offset, at, last);
    } else if (ftrace_site) {
      okp_seam_format(why, sizeof(why), "not optimized: the ftrace call at +%#lx is inside the "
                      "region +%#lx..+%#lx", ftrace_site - func_start, at, last);
    } else if (const okp_addr_t kk = okp_seam_kernel_kprobe_in(s.addr, plan.region_length)) {
      okp_seam_format(why, sizeof(why), "not optimized: kernel kprobe at +%#lx inside the region "
                      "+%#lx..+%#lx", kk - func_start, at, last);
    } else if (const char* owner = okp_seam_text_owner(s.addr, plan.region_length)) {
      okp_seam_format(why, sizeof(why), "not optimized: the region +%#lx..+%#lx holds text "
                      "owned by: %s", at, last, owner);
    } else if (const BlacklistEntry* b = blacklist_.find(s.addr, plan.region_length)) {
      okp_seam_format(why, sizeof(why), "not optimized: the region +%#lx..+%#lx overlaps "
                      "blacklisted %s", at, last, b->symbol);
    } else if (okp_seam_read_nofault(s.original + 1, s.addr + 1, plan.jump_size - 1)) {
      okp_seam_format(why, sizeof(why), "not optimized: cannot read the text at %#lx", s.addr);
    } else if (okp_seam_patch_text(s.detour, plan.image, nullptr, plan.size)) {
      okp_seam_format(why, sizeof(why), "not optimized: cannot write the detour at %#lx",
                      s.detour);
    } else {
      recover_original(s.addr + 1, s.original + 1, plan.jump_size - 1);
      s.region_length = plan.region_length;
      s.region_insns = plan.region_insns;
      for (usize i = 0; i < plan.jump_size; ++i) s.jump[i] = plan.jump[i];
      s.jump_size = plan.jump_size;
      // The kernel's kprobes kept off the jump and what they would misread after it, from
      // now (a grace period or two before the jump is written) until the site is disarmed.
      fence_kernel_kprobes(lock, s, s.jump_size, s.region_length);
      s.planned_copy = plan.copy;
      s.detour_post = plan.post;
      s.had_detour = true;  // the detour names the site: it goes only after the detour does
      __atomic_store_n(&s.detour_copy, plan.copy, __ATOMIC_RELEASE);
      return true;
    }
  }
  // Never published: the cells may be reused at once.
  slots_.release(s.detour, arch::kMaxDetourSize);
  s.detour = 0;
  s.cannot_optimize = for_good;
  set_not_optimized(lock, s, why);
  return false;
}

void Registry::run_optimizer() {
  u32 stamp;
  usize ready = 0;
  bool must_wait = false;
  {
    RegistryGuard guard;
    table_.for_each([&](Site& s) {
      if (s.state != SiteState::kQueued) return;
      if (!s.detour_copy && !plan_optimization(guard, s, has_post_handler(s))) {
        s.state = SiteState::kArmed;
        return;
      }
      ++ready;
      if (s.region_insns != 1) must_wait = true;
    });
    stamp = queue_stamp_;
  }
  if (!ready) return;
  // The waits keep tasks out of the region's inside: one stopped at a boundary within it, or
  // on its way back there from a boosted slot or a step, would resume inside the jump. A
  // region of one instruction has no inside boundary, and every old way back (a boosted
  // slot's jump, a step's or an emulation's resume) lands at its end, after the jump: such a
  // batch patches at once (the kernel's optimizer waits for tasks-RCU whatever the region).
  if (must_wait) wait_until_outside_regions(stamp);
  RegistryGuard guard;
  Site* batch = nullptr;
  bool later = false;
  table_.for_each([&](Site& s) {
    if (s.state != SiteState::kQueued) return;
    if (s.queued_at > stamp || !s.detour_copy) {
      later = true;  // queued during the wait: its own wait comes with the next batch
      return;
    }
    s.next_switching = batch;
    batch = &s;
  });
  if (batch) switch_jumps(guard, batch, true);
  if (later) okp_seam_defer_optimizer();
}

// After the RCU grace period no context can enter a published region's inside any more
// (every hit resumes in the copy), so the contexts still inside can only leave: one look at
// every task's stack that finds none there is as good as the tasks-RCU grace period, which
// costs 116 ms under TCG where the look costs a few (okp_seam_tasks_outside, x86-64). The
// spans are this batch's regions, taken under the lock; one queued or gone since changes
// nothing (a stale span only makes the look stricter). When the look proves nothing (or the
// spans cannot be allocated) the tasks-RCU wait stays.
void Registry::wait_until_outside_regions(u32 stamp) {
  okp_text_span* spans = nullptr;
  usize n = 0;
  {
    RegistryGuard guard;
    usize want = 0;
    table_.for_each([&](Site& s) {
      if (s.state == SiteState::kQueued && s.detour_copy && s.queued_at <= stamp) ++want;
    });
    if (want)
      spans = static_cast<okp_text_span*>(okp_seam_alloc(want * sizeof(okp_text_span), OKP_GFP_KERNEL));
    if (spans) {
      table_.for_each([&](Site& s) {
        if (n < want && s.state == SiteState::kQueued && s.detour_copy && s.queued_at <= stamp)
          spans[n++] = okp_text_span{s.addr, s.region_length};
      });
    }
  }
  okp_seam_synchronize_rcu();
  const bool outside = spans && okp_seam_tasks_outside(spans, n);
  if (spans) okp_seam_free(spans);
  if (!outside) okp_seam_synchronize_tasks();
}

void Registry::switch_jumps(Locked lock, Site* batch, bool to_jump) {
  okp_seam_assert_registry_locked();
  // Pin each module whose text is patched; a module going away is left to its notifier.
  Site** link = &batch;
  while (Site* s = *link) {
    if (s->module && okp_seam_module_get(s->module)) {
      *link = s->next_switching;
      continue;
    }
    link = &s->next_switching;
  }
  okp_seam_text_lock();
  for (Site** p = &batch; *p;) {  // stage 1
    Site& s = **p;
    const arch::Breakpoint bp = arch::breakpoint_of(s.plan);
    const int err = to_jump ? okp_seam_poke_text(s.addr + 1, s.jump + 1, s.original + 1, s.jump_size - 1)
                            : okp_seam_poke_text(s.addr, bp.bytes, s.jump, bp.size);
    if (err) {
      // The text is not what the site says: leave it as it is, say so.
      okp_seam_invariant_failed("optimized site's text changed under us", __FILE__, __LINE__);
      if (s.module) okp_seam_module_put(s.module);
      *p = s.next_switching;
      continue;
    }
    p = &s.next_switching;
  }
  okp_seam_text_sync();
  for (Site* s = batch; s; s = s->next_switching) {  // stage 2
    const arch::Breakpoint bp = arch::breakpoint_of(s->plan);
    const int err = to_jump ? okp_seam_poke_text(s->addr, s->jump, bp.bytes, bp.size)
                            : okp_seam_poke_text(s->addr + 1, s->original + 1, s->jump + 1, s->jump_size - 1);
    if (err) okp_seam_invariant_failed("optimized site's text changed mid-switch", __FILE__, __LINE__);
  }
  okp_seam_text_sync();
  okp_seam_text_unlock();
  for (Site* s = batch; s;) {
    Site* next = s->next_switching;
    s->next_switching = nullptr;
    s->state = to_jump ? SiteState::kOptimized : SiteState::kArmed;
    s->patch_size = to_jump ? s->jump_size : arch::breakpoint_of(s->plan).size;
    if (s->module) okp_seam_module_put(s->module);
    sync_optimized_flags(lock, *s);
    s = next;
  }
}

void Registry::unoptimize(Locked lock, Site& s) {
  if (s.state != SiteState::kOptimized) return;
  s.next_switching = nullptr;
  switch_jumps(lock, &s, false);
}

void Registry::yield_regions_over(Locked lock, okp_addr_t addr) {
  if (!arch::kJumpOptimization) return;
  // A region is the jump's bytes rounded up to whole instructions: it starts at most this far
  // before a byte it covers.
  constexpr usize kReach = arch::kMaxPatchSize + arch::kMaxInsnLength - 1;
  for (usize back = 1; back < kReach && back <= addr; ++back) {
    Site* s = table_.find(addr - back);
    if (!s || !s->detour_copy || addr >= s->addr + s->region_length) continue;
    unoptimize(lock, *s);
    if (s->state == SiteState::kQueued) s->state = SiteState::kArmed;
    // The new breakpoint must see every hit: the old site steps its own instruction again
    // (the text after its breakpoint is the original once more).
    __atomic_store_n(&s->detour_copy, 0, __ATOMIC_RELEASE);
    char why[OKP_REASON_MAX];
    okp_seam_format(why, sizeof(why), "not optimized: the probe at +%#lx is inside the region "
                    "+%#lx..+%#lx", s->offset + back, s->offset, s->offset + s->region_length - 1);
    set_not_optimized(lock, *s, why);
  }
}

void Registry::requeue_regions_over(Locked lock, okp_addr_t addr) {
  if (!arch::kJumpOptimization) return;
  constexpr usize kReach = arch::kMaxPatchSize + arch::kMaxInsnLength - 1;
  for (usize back = 1; back < kReach && back <= addr; ++back) {
    Site* s = table_.find(addr - back);
    if (s && s->state == SiteState::kArmed && !s->cannot_optimize)
      update_optimization(lock, *s, has_post_handler(*s));
  }
}

void Registry::set_optimization(bool enabled) {
  RegistryGuard guard;
  if (!enabled) {
    Site* batch = nullptr;
    table_.for_each([&](Site& s) {
      if (s.state != SiteState::kOptimized) return;
      s.next_switching = batch;
      batch = &s;
    });
    if (batch) switch_jumps(guard, batch, false);
  }
  table_.for_each([&](Site& s) { update_optimization(guard, s, has_post_handler(s)); });
}

}  // namespace okp

extern "C" void okp_core_run_optimizer(void) { okp::registry().run_optimizer(); }
