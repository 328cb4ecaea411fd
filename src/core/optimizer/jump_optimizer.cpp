// SPDX-License-Identifier: GPL-2.0
// The jump optimizer's events, batch and reasons (core/optimizer/jump_optimizer.h says what it
// owns and how a batch runs). Arch pieces come through the jump contract only.
#include "core/optimizer/jump_optimizer.h"

#include "arch/jump_contract.h"
#include "core/kernel_fence.h"
#include "core/settings.h"
#include "core/string.h"
#include "seam/jump_services.h"

namespace okp {

constinit JumpOptimizer g_jump_optimizer;

namespace {

bool has_post_handler(const Site& s) {
  for (const ProbeRecord* r = s.probes; r; r = r->next_at_site)
    if (r->kp->post_handler) return true;
  return false;
}

// A region is the jump's bytes rounded up to whole instructions: it starts at most this far
// before a byte it covers.
constexpr usize kRegionReach = arch::kMaxPatchSize + arch::kMaxInsnLength - 1;

}  // namespace

template <typename Fn>
void JumpOptimizer::for_each_region_over(Locked lock, okp_addr_t addr, Fn fn) {
  for (usize back = 1; back < kRegionReach && back <= addr; ++back)
    if (Site* s = registry().site_at(lock, addr - back)) fn(*s, back);
}

const char* JumpOptimizer::blocker(Locked, const Site& s) const {
  if (s.ftrace()) return "";  // nothing to say: no trap to save
  if (!settings().optimization() && !jump_only())
    return "not optimized: optimization off (debug.okprobes-optimization=0)";
  // A post_handler runs from the detour too (its copy calls the post entry).
  if (s.jump.cannot_optimize) return s.jump.not_optimized;
  if (const char* why = okp_seam_jumps_refused()) return why;
  return nullptr;
}

const char* JumpOptimizer::not_optimized(Locked, const Site& s) const {
  return s.state != SiteState::kOptimized ? s.jump.not_optimized : "";
}

void JumpOptimizer::set_not_optimized(Locked lock, Site& s, const char* why) {
  if (why != s.jump.not_optimized)
    copy_string(s.jump.not_optimized, sizeof(s.jump.not_optimized), why);
  registry().refresh_reasons(lock, s);
}

void JumpOptimizer::sync_optimized_flags(Locked, Site& s) {
  const bool on = s.state == SiteState::kOptimized;
  for (ProbeRecord* r = s.probes; r; r = r->next_at_site) {
    okp_kprobe* kp = r->kp;
    const unsigned int f = __atomic_load_n(&kp->flags, __ATOMIC_RELAXED);
    const unsigned int want = on ? (f | OKP_KPROBE_FLAG_OPTIMIZED) : (f & ~OKP_KPROBE_FLAG_OPTIMIZED);
    if (want != f) __atomic_store_n(&kp->flags, want, __ATOMIC_RELAXED);
    if (on) kp->okp_reason[0] = '\0';
  }
}

// The detour no longer serves (it was planned for the other kind, or a probe went inside its
// region): hits step the site's own instruction again, and the cells are retired (a task may
// still be in them) for a detour planned anew.
void JumpOptimizer::forget_detour(Locked lock, Site& s) {
  __atomic_store_n(&s.detour_copy, 0, __ATOMIC_RELEASE);
  retire_detour(lock, s.jump.detour, s.jump.detour_size);
  okp_seam_defer_slot_collection();
  s.jump.detour = 0;
  s.jump.planned_copy = 0;
}

// Cells for a detour the jump at s reaches: okprobes' slot area first, else the cells near
// the kernel's text. 0 with the reason when neither has any.
// for_good: no cell of either pool would ever reach (not: all are in use now).
// A detour takes the cells its plan fills, not the most any plan may: the cells near the
// kernel's text are few (arm64: the padding before _etext), and a run of the largest size
// would not fit the gaps detours of the common size leave behind when they go.
okp_addr_t JumpOptimizer::allocate_detour(Locked lock, const Site& s, bool any_post, usize* size,
                                          char* why, usize len, bool* for_good) {
  SlotPool<arch::kSlotSize>& slots = registry().slots(lock);
  SlotPool<arch::kSlotSize>& near = registry().near_slots(lock);
  const okp_addr_t addr = s.addr;
  const usize own_size = detour_size_in(slots, s, any_post);
  const okp_addr_t own = slots.allocate(own_size);
  if (own && arch::detour_reaches(addr, own)) {
    *size = own_size;
    return own;
  }
  if (own) slots.release(own, own_size);
  const usize near_size = detour_size_in(near, s, any_post);
  const okp_addr_t nearby = near.allocate(near_size);
  if (nearby && arch::detour_reaches(addr, nearby)) {
    *size = near_size;
    return nearby;
  }
  if (nearby) near.release(nearby, near_size);
  *for_good = own && (!near.capacity() || nearby);
  if (!own)
    okp_seam_format(why, len, "not optimized: all %lu slot cells are in use",
                    static_cast<unsigned long>(slots.capacity()));
  else if (!near.capacity())
    okp_seam_format(why, len, "not optimized: okprobes' slot area (%#lx) is out of a jump's "
                    "reach of the probe, and there is no executable memory near the kernel's "
                    "text to put its detour in", own);
  else
    okp_seam_format(why, len, "not optimized: okprobes' slot area (%#lx) and the %lu detour "
                    "cells near the kernel's text (%s) are out of a jump's reach of the probe",
                    own, static_cast<unsigned long>(near.capacity()),
                    nearby ? "in reach of others" : "all in use");
  return 0;
}

// A plan's size depends on where its detour is only through what reaches what from there
// (arm64: the entries by bl or through a literal), and a pool is one span of addresses, so the
// larger of the plans at its two ends holds anywhere between. A plan refused there is refused
// again at the cells, with its reason; the size is moot then.
usize JumpOptimizer::detour_size_in(const SlotPool<arch::kSlotSize>& pool, const Site& s,
                                    bool any_post) {
  if (!pool.capacity()) return arch::kMaxDetourSize;
  usize size = 0;
  const okp_addr_t ends[] = {pool.first_cell(), pool.last_cell()};
  for (const okp_addr_t at : ends) {
    auto planned = arch::plan_detour(s.addr, s.addr - s.place.offset, s.place.func_size,
                                     recover_original_text, at, any_post,
                                     reinterpret_cast<okp_addr_t>(&s));
    if (planned.is_error()) return arch::kMaxDetourSize;
    if (planned.value().size > size) size = planned.value().size;
  }
  return size;
}

// A detour's cells go back to their pool (each ignores cells not its own).
void JumpOptimizer::release_detour(Locked lock, okp_addr_t detour, usize size) {
  registry().slots(lock).release(detour, size);
  registry().near_slots(lock).release(detour, size);
}
void JumpOptimizer::retire_detour(Locked lock, okp_addr_t detour, usize size) {
  registry().slots(lock).retire(detour, size);
  registry().near_slots(lock).retire(detour, size);
}

void JumpOptimizer::site_updated(Locked lock, Site& s, bool any_post) {
  if (s.live()) {
    if (jump_only() && s.state == SiteState::kOptimized && s.jump.detour_post != any_post) {
      // No breakpoint to fall back on meanwhile: the jump goes straight to the new detour.
      static_cast<void>(rejump(lock, s, any_post));
    } else if (s.jump.planned_copy && s.jump.detour_post != any_post) {
      // Post handlers need the copy that calls the post entry, and without them that call is
      // only overhead: back to the breakpoint (the text after it is the original once more).
      unoptimize(lock, s);
      if (s.state == SiteState::kQueued) s.state = SiteState::kArmed;
      forget_detour(lock, s);
    }
    // A refusal that was about the other kind of detour does not hold for this one.
    if (s.jump.cannot_optimize && s.jump.planned_for_post != any_post) s.jump.cannot_optimize = false;
    if (const char* why = blocker(lock, s)) {
      if (s.state == SiteState::kOptimized) unoptimize(lock, s);
      if (s.state == SiteState::kQueued) s.state = SiteState::kArmed;
      if (*why) set_not_optimized(lock, s, why);
    } else if (s.state == SiteState::kArmed && jump_only()) {
      // A site that lost its jump (its detour was for the other kind) gets it back at once.
      static_cast<void>(arm_jump(lock, s));
    } else if (s.state == SiteState::kArmed) {
      s.state = SiteState::kQueued;
      s.jump.not_optimized[0] = '\0';  // "" while it may be: no stale reason for a probe joining now
      s.jump.queued_at = ++queue_stamp_;
      okp_seam_defer_optimizer();
    }
  }
  sync_optimized_flags(lock, s);
}

void JumpOptimizer::disarming(Locked lock, Site& s) {
  unoptimize(lock, s);
  if (s.state == SiteState::kQueued) s.state = SiteState::kArmed;
}

void JumpOptimizer::breakpoint_added(Locked lock, okp_addr_t addr) {
  for_each_region_over(lock, addr, [&](Site& s, usize back) {
    if (!s.detour_copy || addr >= s.addr + s.jump.region_length) return;
    unoptimize(lock, s);
    if (s.state == SiteState::kQueued) s.state = SiteState::kArmed;
    // The new breakpoint must see every hit: the old site steps its own instruction again
    // (the text after its breakpoint is the original once more).
    __atomic_store_n(&s.detour_copy, 0, __ATOMIC_RELEASE);
    char why[OKP_REASON_MAX];
    okp_seam_format(why, sizeof(why), "not optimized: the probe at +%#lx is inside the region "
                    "+%#lx..+%#lx", s.place.offset + back, s.place.offset,
                    s.place.offset + s.jump.region_length - 1);
    set_not_optimized(lock, s, why);
  });
}

void JumpOptimizer::probe_removed(Locked lock, okp_addr_t addr) {
  for_each_region_over(lock, addr, [&](Site& s, usize) {
    if (s.state == SiteState::kArmed && !s.jump.cannot_optimize)
      site_updated(lock, s, has_post_handler(s));
  });
}

bool JumpOptimizer::site_released(Locked lock, Site& s) {
  // A task preempted between the jump and the handlers, or in the copy, may still be in it.
  if (s.jump.detour) {
    retire_detour(lock, s.jump.detour, s.jump.detour_size);
    okp_seam_defer_slot_collection();
  }
  return s.jump.had_detour;
}

// Why a planned detour cannot become a jump (true, the reason in why; *for_good false when
// it may later): the plan's own refusal, or what its region covers. Shared by plan() and
// explain(), so that debugfs explain gives a batch's reasons.
bool JumpOptimizer::refuse_region(Locked lock, const Site& s,
                                  const ErrorOr<arch::DetourPlan>& planned, char* why,
                                  usize why_len, bool* for_good) {
  const okp_addr_t func_start = s.addr - s.place.offset;
  const unsigned long at = s.place.offset;
  *for_good = true;
  // A kernel kprobe the kernel optimized into a jump changes the bytes the plan decodes, and a
  // plan that fails on them would blame the bytes: name the kernel's probe instead (any byte
  // the longest region could reach).
  const okp_addr_t kernel_kp =
      planned.is_error() ? okp_seam_kernel_kprobe_in(s.addr + 1, kRegionReach - 1) : 0;
  if (kernel_kp) {
    okp_seam_format(why, why_len, "not optimized: kernel kprobe at +%#lx (possibly optimized "
                    "into a jump) where the region would be", kernel_kp - func_start);
    return true;
  }
  if (planned.is_error()) {
    copy_string(why, why_len, planned.error().reason());
    return true;
  }
  const arch::DetourPlan& plan = planned.value();
  const okp_addr_t end = s.addr + plan.region_length;
  const unsigned long last = at + plan.region_length - 1;
  const Site* inner = nullptr;
  for (okp_addr_t a = s.addr + 1; a < end && !inner; ++a) inner = registry().site_at(lock, a);
  const okp_addr_t ftrace_site = okp_seam_ftrace_site_in(s.addr, plan.region_length);
  if (inner) {
    *for_good = false;  // until that probe goes
    okp_seam_format(why, why_len, "not optimized: the probe at +%#lx is inside the region "
                    "+%#lx..+%#lx", inner->place.offset, at, last);
  } else if (ftrace_site) {
    okp_seam_format(why, why_len, "not optimized: the ftrace call at +%#lx is inside the "
                    "region +%#lx..+%#lx", ftrace_site - func_start, at, last);
  } else if (const okp_addr_t kk = okp_seam_kernel_kprobe_in(s.addr, plan.region_length)) {
    okp_seam_format(why, why_len, "not optimized: kernel kprobe at +%#lx inside the region "
                    "+%#lx..+%#lx", kk - func_start, at, last);
  } else if (const char* owner = okp_seam_text_owner(s.addr, plan.region_length)) {
    okp_seam_format(why, why_len, "not optimized: the region +%#lx..+%#lx holds text "
                    "owned by: %s", at, last, owner);
  } else if (const BlacklistEntry* b = registry().blacklisted(lock, s.addr, plan.region_length)) {
    okp_seam_format(why, why_len, "not optimized: the region +%#lx..+%#lx overlaps "
                    "blacklisted %s", at, last, b->symbol);
  } else {
    return false;
  }
  return true;
}

void JumpOptimizer::explain(Locked lock, const Site& s, char* out, usize out_len) {
  if (const char* why = blocker(lock, s)) {
    copy_string(out, out_len, why);
    return;
  }
  bool for_good = false;
  usize size = 0;
  const okp_addr_t detour = allocate_detour(lock, s, false, &size, out, out_len, &for_good);
  if (!detour) return;  // out says why
  // Planned as for a probe without a post handler; nothing is written, the cells go back.
  auto planned = arch::plan_detour(s.addr, s.addr - s.place.offset, s.place.func_size,
                                   recover_original_text, detour, false,
                                   reinterpret_cast<okp_addr_t>(&s));
  if (!refuse_region(lock, s, planned, out, out_len, &for_good))
    okp_seam_format(out, out_len, "optimized: a jump over +%#lx..+%#lx (%u instruction%s)",
                    s.place.offset, s.place.offset + planned.value().region_length - 1,
                    static_cast<unsigned>(planned.value().region_insns),
                    planned.value().region_insns == 1 ? "" : "s");
  release_detour(lock, detour, size);
}

// Step 1 for one site: plan, write and publish its detour. False: not now (the reason is
// set; cannot_optimize when it never will be).
bool JumpOptimizer::plan(Locked lock, Site& s, bool any_post) {
  JumpSite& j = s.jump;
  const okp_addr_t func_start = s.addr - s.place.offset;
  const unsigned long at = s.place.offset;
  if (j.planned_copy) {
    // Written before (and maybe still run by a task): the same bytes, published again, once
    // no probe sits inside the region any more.
    for (okp_addr_t a = s.addr + 1; a < s.addr + j.region_length; ++a) {
      if (const Site* inner = registry().site_at(lock, a)) {
        char why[OKP_REASON_MAX];
        okp_seam_format(why, sizeof(why), "not optimized: the probe at +%#lx is inside the "
                        "region +%#lx..+%#lx", inner->place.offset, at, at + j.region_length - 1);
        set_not_optimized(lock, s, why);
        return false;
      }
    }
    fence_kernel_kprobes(lock, s, j.jump_size, j.region_length);  // before the jump is written
    __atomic_store_n(&s.detour_copy, j.planned_copy, __ATOMIC_RELEASE);
    return true;
  }
  if (!j.detour) {
    char why[OKP_REASON_MAX] = "";
    bool for_good = false;
    usize size = 0;
    j.detour = allocate_detour(lock, s, any_post, &size, why, sizeof(why), &for_good);
    j.detour_size = static_cast<u16>(size);
    if (!j.detour) {
      j.cannot_optimize = for_good;
      set_not_optimized(lock, s, why);
      return false;
    }
  }
  j.planned_for_post = any_post;
  auto planned = arch::plan_detour(s.addr, func_start, s.place.func_size, recover_original_text,
                                   j.detour, any_post, reinterpret_cast<okp_addr_t>(&s));
  char why[OKP_REASON_MAX] = "";
  bool for_good = true;
  if (!refuse_region(lock, s, planned, why, sizeof(why), &for_good)) {
    const arch::DetourPlan& plan = planned.value();
    const usize bp_size = arch::breakpoint_of(s.plan).size;
    // The live text past the breakpoint, read into a copy: on a jump over a jump (rejump) the
    // site's own jump is there, and recover_original puts its bytes back from s.original,
    // which must not have been overwritten with them first.
    u8 text[arch::kMaxPatchSize];
    if (plan.jump_size > bp_size &&
        okp_seam_read_nofault(text + bp_size, s.addr + bp_size, plan.jump_size - bp_size)) {
      okp_seam_format(why, sizeof(why), "not optimized: cannot read the text at %#lx", s.addr);
    } else if (plan.size > j.detour_size) {
      // detour_size_in's bound did not hold: a bug, and no byte past the cells is written.
      okp_seam_invariant_failed("a detour's plan outgrew its cells", __FILE__, __LINE__);
      okp_seam_format(why, sizeof(why), "not optimized: the detour (%u bytes) outgrew its %u "
                      "bytes of cells", static_cast<unsigned>(plan.size),
                      static_cast<unsigned>(j.detour_size));
      for_good = false;
    } else if (okp_seam_patch_text(j.detour, plan.image, nullptr, plan.size)) {
      okp_seam_format(why, sizeof(why), "not optimized: cannot write the detour at %#lx",
                      j.detour);
    } else {
      // The bytes past the breakpoint (x86-64: the jump is longer; arm64: both are one
      // word, and the site's original word is already whole).
      if (plan.jump_size > bp_size) {
        registry().recover_original(s.addr + bp_size, text + bp_size, plan.jump_size - bp_size);
        for (usize i = bp_size; i < plan.jump_size; ++i) s.original[i] = text[i];
      }
      j.region_length = plan.region_length;
      j.region_insns = plan.region_insns;
      for (usize i = 0; i < plan.jump_size; ++i) j.jump[i] = plan.jump[i];
      j.jump_size = plan.jump_size;
      // The kernel's kprobes kept off the jump and what they would misread after it, from
      // now (a grace period or two before the jump is written) until the site is disarmed.
      fence_kernel_kprobes(lock, s, j.jump_size, j.region_length);
      j.planned_copy = plan.copy;
      j.detour_post = plan.post;
      j.had_detour = true;  // the detour names the site: it goes only after the detour does
      __atomic_store_n(&s.detour_copy, plan.copy, __ATOMIC_RELEASE);
      return true;
    }
  }
  // Never published: the cells may be reused at once.
  release_detour(lock, j.detour, j.detour_size);
  j.detour = 0;
  j.cannot_optimize = for_good;
  set_not_optimized(lock, s, why);
  return false;
}

void JumpOptimizer::run() {
  u32 stamp;
  usize ready = 0;
  bool must_wait = false;
  {
    RegistryGuard guard;
    registry().for_each_site(guard, [&](Site& s) {
      if (s.state != SiteState::kQueued) return;
      if (!s.detour_copy && !plan(guard, s, has_post_handler(s))) {
        s.state = SiteState::kArmed;
        return;
      }
      ++ready;
      if (s.jump.region_insns != 1) must_wait = true;
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
  registry().for_each_site(guard, [&](Site& s) {
    if (s.state != SiteState::kQueued) return;
    if (s.jump.queued_at > stamp || !s.detour_copy) {
      later = true;  // queued during the wait: its own wait comes with the next batch
      return;
    }
    s.jump.next_switching = batch;
    batch = &s;
  });
  if (batch) switch_jumps(guard, batch, true);
  if (later) okp_seam_defer_optimizer();
}

// After the RCU grace period no context can enter a published region's inside any more
// (every hit resumes in the copy), so the contexts still inside can only leave: one look at
// every task's stack that finds none there is as good as the tasks-RCU grace period, and much
// cheaper (arch::tasks_outside). The spans are this batch's regions, taken under the lock; one
// queued or gone since changes nothing (a stale span only makes the look stricter). When the
// look proves nothing (or the spans cannot be allocated) the tasks-RCU wait stays.
void JumpOptimizer::wait_until_outside_regions(u32 stamp) {
  okp_text_span* spans = nullptr;
  usize n = 0;
  {
    RegistryGuard guard;
    auto in_batch = [stamp](const Site& s) {
      return s.state == SiteState::kQueued && s.detour_copy && s.jump.queued_at <= stamp;
    };
    usize want = 0;
    registry().for_each_site(guard, [&](Site& s) { want += in_batch(s); });
    if (want)
      spans = static_cast<okp_text_span*>(okp_seam_alloc(want * sizeof(okp_text_span), OKP_GFP_KERNEL));
    if (spans) {
      registry().for_each_site(guard, [&](Site& s) {
        if (n < want && in_batch(s)) spans[n++] = okp_text_span{s.addr, s.jump.region_length};
      });
    }
  }
  okp_seam_synchronize_rcu();
  const bool outside = spans && arch::tasks_outside(spans, n);
  if (spans) okp_seam_free(spans);
  if (!outside) okp_seam_synchronize_tasks();
}

void JumpOptimizer::switch_jumps(Locked lock, Site* batch, bool to_jump) {
  // Pin each module whose text is patched; a module going away is left to its notifier.
  Site** link = &batch;
  while (Site* s = *link) {
    if (s->place.module && okp_seam_module_get(s->place.module)) {
      *link = s->jump.next_switching;
      continue;
    }
    link = &s->jump.next_switching;
  }
  arch::JumpSwitch* text = nullptr;
  for (Site* s = batch; s; s = s->jump.next_switching) {
    arch::JumpSwitch& t = s->jump.text_switch;
    t = {s->addr, arch::breakpoint_of(s->plan), s->jump.jump, s->original, s->jump.jump_size,
         false, nullptr, text};
    text = &t;
  }
  arch::switch_jumps(text, to_jump);
  for (Site* s = batch; s;) {
    Site* next = s->jump.next_switching;
    s->jump.next_switching = nullptr;
    if (s->jump.text_switch.failed && s->jump.text_switch.busy) {
      // Not written now (riscv64: a task may be stopped inside the region): the text is as it
      // was, and the reason is the site's until a later try.
      set_not_optimized(lock, *s, s->jump.text_switch.busy);
    } else if (s->jump.text_switch.failed) {
      // The text is not what the site says: left as it is, said so.
      okp_seam_invariant_failed("optimized site's text changed under us", __FILE__, __LINE__);
    } else {
      s->state = to_jump ? SiteState::kOptimized : SiteState::kArmed;
      s->patch_size = to_jump ? s->jump.jump_size : arch::breakpoint_of(s->plan).size;
      sync_optimized_flags(lock, *s);
    }
    if (s->place.module) okp_seam_module_put(s->place.module);
    s = next;
  }
}

void JumpOptimizer::unoptimize(Locked lock, Site& s) {
  if (s.state != SiteState::kOptimized) return;
  s.jump.next_switching = nullptr;
  switch_jumps(lock, &s, false);
}

ErrorOr<void> JumpOptimizer::arm_jump(Locked lock, Site& s) {
  const bool post = has_post_handler(s);
  if (s.jump.cannot_optimize && s.jump.planned_for_post != post) s.jump.cannot_optimize = false;
  bool busy = false;
  if (!s.jump.cannot_optimize && (s.detour_copy || plan(lock, s, post))) {
    s.jump.next_switching = nullptr;
    switch_jumps(lock, &s, true);
    if (s.state == SiteState::kOptimized) return {};
    busy = s.jump.text_switch.busy != nullptr;
  }
  // A jump not written for now (busy) may be on a later try: EBUSY, not "unsupported".
  const Errno err = busy ? Errno::kBusy : Errno::kOpNotSupp;
  return Error::formatted(err, "%s; and no jump: %s", arch::breakpoints_missing(),
                          s.jump.not_optimized[0] ? s.jump.not_optimized
                                                  : "the text changed under us");
}

// A jump-only site's jump moved to a detour of the other kind (with or without post calls) in
// one word's write, a jump over a jump: every hit is served, by one detour or the other. The
// old detour is retired (a task may still be in it). False: the old one stays, and why not.
bool JumpOptimizer::rejump(Locked lock, Site& s, bool any_post) {
  JumpSite& j = s.jump;
  const okp_addr_t old_detour = j.detour, old_copy = j.planned_copy;
  const u16 old_size = j.detour_size;
  const bool old_post = j.detour_post;
  u8 old_jump[arch::kJumpCapacity];
  const usize old_jump_size = j.jump_size;
  for (usize i = 0; i < j.jump_size; ++i) old_jump[i] = j.jump[i];
  j.detour = 0;
  j.planned_copy = 0;
  j.cannot_optimize = false;
  if (!plan(lock, s, any_post)) {
    j.detour = old_detour;
    j.detour_size = old_size;
    j.planned_copy = old_copy;
    j.detour_post = old_post;
    __atomic_store_n(&s.detour_copy, old_copy, __ATOMIC_RELEASE);
    return false;
  }
  // The two jumps may differ in size (riscv64: a jal where the new detour is within its
  // reach, the auipc/jalr pair where not): one write covers the longer, the shorter jump
  // followed by the original bytes (plan() recovered them for each size it planned), so
  // no half of the old pair is left behind the new jal for its detour's way back to land on.
  const usize n = old_jump_size > j.jump_size ? old_jump_size : j.jump_size;
  u8 want[arch::kJumpCapacity], expect[arch::kJumpCapacity];
  for (usize i = 0; i < n; ++i) {
    want[i] = i < j.jump_size ? j.jump[i] : s.original[i];
    expect[i] = i < old_jump_size ? old_jump[i] : s.original[i];
  }
  okp_seam_text_lock();
  const int err = okp_seam_poke_text(s.addr, want, expect, n);
  okp_seam_text_sync();
  okp_seam_text_unlock();
  if (err) {
    okp_seam_invariant_failed("a jump site's text changed under us", __FILE__, __LINE__);
    return false;
  }
  retire_detour(lock, old_detour, old_size);
  okp_seam_defer_slot_collection();
  return true;
}

bool JumpOptimizer::jump_only() const { return arch::breakpoints_missing() != nullptr; }

bool JumpOptimizer::serves(Locked, const Site& s) const {
  return !jump_only() || s.ftrace() || !s.live() ||
         (s.state == SiteState::kOptimized && s.jump.detour_post == has_post_handler(s));
}

const char* JumpOptimizer::veto_disable() const {
  return jump_only() ? "no breakpoint reaches okprobes on this kernel: its probes are jumps or "
                       "nothing, so optimization stays on"
                     : nullptr;
}

void JumpOptimizer::set_enabled(bool enabled) {
  RegistryGuard guard;
  if (!enabled) {
    Site* batch = nullptr;
    registry().for_each_site(guard, [&](Site& s) {
      if (s.state != SiteState::kOptimized) return;
      s.jump.next_switching = batch;
      batch = &s;
    });
    if (batch) switch_jumps(guard, batch, false);
  }
  registry().for_each_site(guard, [&](Site& s) { site_updated(guard, s, has_post_handler(s)); });
}

void JumpOptimizer::stop() { okp_seam_cancel_optimizer(); }

}  // namespace okp

extern "C" void okp_core_run_optimizer(void) { okp::jump_optimizer().run(); }
