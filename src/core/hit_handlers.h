// SPDX-License-Identifier: GPL-2.0
// The handlers' walk of one hit, shared by every way a probe is reached (the breakpoint and
// ftrace paths, core/hit.cpp; jump probes' detours, core/optimizer/detour_hit.cpp): always
// inlined, so each entry keeps its own straight-line copy. Hit path: no lock, no allocation.
#pragma once

#include <okprobes/okprobes.h>

#include "core/registry.h"

// Nothing here is traced (Kbuild drops the ftrace flags for the files that include this) or
// probed (it is okprobes' own text, blacklisted). On an emulator the calls and returns of a
// trap path cost as much as the work itself: always inlined.
#define OKP_HIT_INLINE [[gnu::always_inline]] inline

namespace okp {

OKP_HIT_INLINE void count_miss(okp_kprobe* kp, okp_miss_cause cause) {
  __atomic_fetch_add(&kp->nmissed, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&kp->nmissed_by[cause], 1, __ATOMIC_RELAXED);
}

OKP_HIT_INLINE bool disabled(const okp_kprobe* kp) {
  // A relaxed load (GCC builds an atomic's address with an add first: a volatile read
  // addresses the field with an offset, one instruction less per probe and walk).
  return *static_cast<const volatile decltype(kp->flags)*>(&kp->flags) & OKP_KPROBE_FLAG_DISABLED;
}

OKP_HIT_INLINE ProbeRecord* first_probe(const Site& s) { return __atomic_load_n(&s.probes, __ATOMIC_ACQUIRE); }
OKP_HIT_INLINE ProbeRecord* next_probe(const ProbeRecord& r) {
  return __atomic_load_n(&r.next_at_site, __ATOMIC_ACQUIRE);
}

OKP_HIT_INLINE void miss_all(const Site& s, okp_miss_cause cause) {
  for (ProbeRecord* r = first_probe(s); r; r = next_probe(*r)) count_miss(r->kp, cause);
}

// Runs the pre handlers in registration order. True when one of them redirected execution
// (returned non-zero): as in kprobes, later handlers and the instruction are skipped.
// A return probe's entry is a pre handler like any other (return_entry): a test for it here
// would cost every other probe's hit.
OKP_HIT_INLINE bool run_pre_handlers(const Site& s, okp_regs* regs) {
  auto* pt = reinterpret_cast<pt_regs*>(regs);
  for (ProbeRecord* r = first_probe(s); r; r = next_probe(*r)) {
    okp_kprobe* kp = r->kp;
    if (disabled(kp)) {
      count_miss(kp, OKP_MISS_DISABLED);
      continue;
    }
    __atomic_fetch_add(&kp->nhit, 1, __ATOMIC_RELAXED);
    if (kp->pre_handler && kp->pre_handler(kp, pt)) return true;
  }
  return false;
}

// run_pre_handlers for a caller that does nothing after them but hand their answer on
// (non-zero: a handler redirected). The common site has one probe: its pre handler is called
// last, in tail position, and its own answer is the caller's, so the caller needs no frame of
// its own across the call (where the kernel lets the compiler make sibling calls). The next
// link is only tested for null here, before the call, so a relaxed load is enough: a probe
// added during the handler is a registration racing the hit, which the loop may or may not
// see either. Any other list goes the loop's way.
OKP_HIT_INLINE int run_pre_handlers_last(const Site& s, okp_regs* regs) {
  ProbeRecord* r = first_probe(s);
  if (!r) return 0;
  if (__builtin_expect(__atomic_load_n(&r->next_at_site, __ATOMIC_RELAXED) != nullptr, 0))
    return run_pre_handlers(s, regs);
  okp_kprobe* kp = r->kp;
  if (disabled(kp)) {
    count_miss(kp, OKP_MISS_DISABLED);
    return 0;
  }
  __atomic_fetch_add(&kp->nhit, 1, __ATOMIC_RELAXED);
  const okp_kprobe_pre_handler_t pre = kp->pre_handler;
  return pre ? pre(kp, reinterpret_cast<pt_regs*>(regs)) : 0;
}

OKP_HIT_INLINE void run_post_handlers(const Site& s, okp_regs* regs) {
  auto* pt = reinterpret_cast<pt_regs*>(regs);
  for (ProbeRecord* r = first_probe(s); r; r = next_probe(*r)) {
    okp_kprobe* kp = r->kp;
    if (kp->post_handler && !disabled(kp)) kp->post_handler(kp, pt, 0);
  }
}

}  // namespace okp
