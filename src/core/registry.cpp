// SPDX-License-Identifier: GPL-2.0
// Registration, aggregation and removal of probes (see registry.h for the locking); a site's
// creation, arming and release are registry_site.cpp's.
#include "core/registry.h"

#include "core/new.h"
#include "core/optimizer/jump_optimizer.h"
#include "core/return_probe.h"
#include "core/settings.h"
#include "core/string.h"
#include "seam/core_entries.h"
#ifdef OKP_JUMP_PROBES
#include "seam/jump_services.h"  // the detour cells near the kernel's text
#endif

namespace okp {

constinit Registry g_registry;

namespace {

bool disabled(const okp_kprobe* kp) {
  return __atomic_load_n(&kp->flags, __ATOMIC_RELAXED) & OKP_KPROBE_FLAG_DISABLED;
}

void set_flag(okp_kprobe* kp, unsigned int flag, bool on) {
  unsigned int f = __atomic_load_n(&kp->flags, __ATOMIC_RELAXED);
  __atomic_store_n(&kp->flags, on ? (f | flag) : (f & ~flag), __ATOMIC_RELAXED);
}

void set_reason(okp_kprobe* kp, const char* text) { copy_string(kp->okp_reason, OKP_REASON_MAX, text); }

// What a refusal/log line calls the probe: "symbol+0x4" or "0xffff...".
void describe(const okp_kprobe* kp, char* buf, usize len) {
  if (kp->symbol_name)
    okp_seam_format(buf, len, "%s+%#x", kp->symbol_name, kp->offset);
  else
    okp_seam_format(buf, len, "%#lx+%#x", reinterpret_cast<okp_addr_t>(kp->addr), kp->offset);
}

}  // namespace

ErrorOr<void> Registry::init() {
  unsigned long size = 0;
  okp_addr_t base = okp_seam_slot_area(&size);
  if (!base || size < arch::kSlotSize) return Error(Errno::kNoMem, "no slot area");
  table_.slots.init(base, size);
#ifdef OKP_JUMP_PROBES
  unsigned long near_size = 0;
  if (const okp_addr_t near = okp_seam_near_text_area(&near_size))
    table_.near_slots.init(near, near_size);
#endif
  settings().armed_observer = [](bool) { registry().rearm_all(); };
  if constexpr (arch::kJumpProbes) {
    settings().optimization_observer = [](bool on) { jump_optimizer().set_enabled(on); };
    settings().optimization_veto = [] { return jump_optimizer().veto_disable(); };
  }
  return {};
}

void Registry::collect_retired_slots() {
  usize sealed;
  Site* sites;
  {
    RegistryGuard guard;
    ProbeTable& t = table(guard);
    sealed = t.slots.seal_retired();
#ifdef OKP_JUMP_PROBES
    sealed += t.near_slots.seal_retired();
#endif
    sites = t.retired_sites;
    t.retired_sites = nullptr;
  }
  if (!sealed && !sites) return;
  okp_seam_synchronize_tasks();  // unlocked: it can take seconds
  {
    RegistryGuard guard;
    table(guard).slots.free_sealed();
#ifdef OKP_JUMP_PROBES
    table(guard).near_slots.free_sealed();
#endif
  }
  while (sites) {
    Site* next = sites->next_retired;
    destroy(sites);
    sites = next;
  }
}

void Registry::exit() {
  // Clients hold references to okprobes while they have probes, so nothing is registered
  // here; anything left is a client bug we clean up after rather than leave armed.
  {
    RegistryGuard guard;
    settings().armed_observer = nullptr;
    settings().optimization_observer = nullptr;
  }
  for (;;) {
    okp_kprobe* kp;
    {
      RegistryGuard guard;
      const ProbeTable& t = table(guard);
      if (!t.registered) break;
      kp = t.registered->kp;
    }
    okp_seam_log(OKP_LOG_WARNING, "a probe was still registered at unload: removing it");
    unregister_probes(&kp, 1);
  }
  // The unregisters above may have queued the optimizer (a neighbour's region freed): no
  // batch may run once okprobes' text is gone.
  if constexpr (arch::kJumpProbes) jump_optimizer().stop();
  // The slot area is freed with okprobes' text: nobody may still run a boosted slot.
  okp_seam_flush_slot_collection();
  collect_retired_slots();
  RegistryGuard guard;
  table(guard).blacklist.clear();
}

ProbeRecord* Registry::find_record(Locked lock, const okp_kprobe* kp) const {
  return table(lock).records.find(reinterpret_cast<okp_addr_t>(kp));
}

void Registry::recover_original(okp_addr_t start, u8* bytes, usize n) const {
  // Only sites that can reach into [start, start + n): a lookup per address of that span,
  // not a walk of every site (called for each registration: a batch of 10k was quadratic).
  // The caller holds the lock (a RecoverFn has no room for the proof).
  table_.sites.for_each_in_range(patch_reach(start), start + n, [&](const Site& s) {
    if (s.ftrace() || !s.live()) return;
    for (usize i = 0; i < s.patch_size; ++i) {
      okp_addr_t a = s.addr + i;
      if (a >= start && a < start + n) bytes[a - start] = s.original[i];
    }
  });
}

void recover_original_text(okp_addr_t start, u8* bytes, usize n) {
  g_registry.recover_original(start, bytes, n);
}

void Registry::record_refusal(const okp_kprobe* kp, int err) {
  RegistryGuard guard;
  note_refusal(guard, kp, err);
}

void Registry::note_refusal(Locked lock, const okp_kprobe* kp, int err) {
  ProbeTable& t = table(lock);
  ProbeTable::Refusal& r = t.refusals[t.next_refusal++ % ProbeTable::kRefusals];
  r.err = err;
  if (kp) describe(kp, r.what, sizeof(r.what)); else copy_string(r.what, sizeof(r.what), "NULL");
  copy_string(r.reason, sizeof(r.reason), kp ? kp->okp_reason : "NULL probe");
}

int Registry::register_probe(okp_kprobe* kp, bool return_probe) {
  if (!kp) {
    okp_seam_log(OKP_LOG_ERR, "register: NULL probe (-EINVAL)");
    RegistryGuard guard;
    note_refusal(guard, nullptr, to_kernel_errno(Errno::kInval));
    return to_kernel_errno(Errno::kInval);
  }
  // Every slot taken, some only until a tasks-RCU grace period passes: let the collection
  // worker finish first (it needs the lock, so not while we hold it).
  bool flush;
  {
    RegistryGuard guard;
    const SlotPool<arch::kSlotSize>& slots = table(guard).slots;
    flush = slots.in_use() + 2 > slots.capacity() && slots.waiting();
  }
  if (flush) okp_seam_flush_slot_collection();
  okp_kprobe* rollback = nullptr;
  int err;
  {
    RegistryGuard guard;
    err = register_probe_locked(guard, kp, return_probe, &rollback);
  }
  if (rollback) {
    okp_seam_synchronize_rcu();
    RegistryGuard guard;
    finish_unregister(guard, &rollback, 1);
  }
  return err;
}

int Registry::register_probe_locked(Locked lock, okp_kprobe* kp, bool return_probe,
                                    okp_kprobe** rollback) {
  bool detached = false;
  auto result = do_register(lock, kp, return_probe, &detached);
  if (detached) *rollback = kp;
  return finish_registration(lock, kp, result);
}

// Logs and keeps a refusal; 0 when result is a success.
int Registry::finish_registration(Locked lock, okp_kprobe* kp, const ErrorOr<void>& result) {
  if (!result.is_error()) return 0;
  if (result.error().code() == Errno::kExist) return result.error().kernel_errno();  // keep it
  const char* reason = result.error().reason();
  set_reason(kp, reason);
  char what[64], line[OKP_REASON_MAX + 96];
  describe(kp, what, sizeof(what));
  okp_seam_format(line, sizeof(line), "refused probe at %s: %s (%d)", what, reason,
                  result.error().kernel_errno());
  okp_seam_log(OKP_LOG_ERR, line);
  note_refusal(lock, kp, result.error().kernel_errno());
  return result.error().kernel_errno();
}

ErrorOr<void> Registry::do_register(Locked lock, okp_kprobe* kp, bool return_probe,
                                    bool* rollback) {
  if (find_record(lock, kp)) {
    char what[64], line[128];
    describe(kp, what, sizeof(what));
    okp_seam_format(line, sizeof(line), "refused probe at %s: this okp_kprobe is already registered (-EEXIST)", what);
    okp_seam_log(OKP_LOG_ERR, line);
    note_refusal(lock, kp, to_kernel_errno(Errno::kExist));
    return Error(Errno::kExist, "already registered");
  }
  // A struct reused after unregister starts clean.
  kp->okp_core = nullptr;
  kp->okp_reason[0] = '\0';
  kp->nmissed = 0;
  kp->nhit = 0;
  for (auto& m : kp->nmissed_by) m = 0;
  kp->flags &= OKP_KPROBE_FLAG_DISABLED | OKP_KPROBE_FLAG_IPMODIFY;

  okp_addr_t addr = 0;
  okp_text_info info = {};
  OKP_TRY(locate_probe(lock, kp, return_probe, &addr, &info));
  return attach(lock, kp, addr, info, rollback);
}

// Where the probe goes, and whether it may go there (noinline: each formatted refusal is an
// Error of its own, and they stay out of the caller's frame).
[[gnu::noinline]] ErrorOr<void> Registry::locate_probe(Locked lock, okp_kprobe* kp,
                                                       bool return_probe, okp_addr_t* out,
                                                       okp_text_info* out_info) {
  if (kp->symbol_name && kp->addr)
    return Error(Errno::kInval, "both symbol_name and addr are set: give one");
  if (!kp->symbol_name && !kp->addr)
    return Error(Errno::kInval, "neither symbol_name nor addr is set");
  okp_addr_t addr = 0;
  okp_text_info& info = *out_info;
  char why[OKP_REASON_MAX] = "";  // the glue's words, across the C seam
  int err = okp_seam_locate(kp->symbol_name, reinterpret_cast<okp_addr_t>(kp->addr), kp->offset,
                            &addr, &info, why, sizeof(why));
  if (err) return Error::formatted(from_kernel_errno(err), "%s", why);
  const okp_addr_t landed = arch::skip_landing_pad(addr, info.func_start);
  if (landed != addr && info.func_size && landed >= info.func_start + info.func_size) {
    // The landing pad is all the symbol has (an assembly function whose body starts at an
    // inner label kallsyms lists as a symbol of its own): the probe goes on that one.
    err = okp_seam_locate(nullptr, landed, 0, &addr, &info, why, sizeof(why));
    if (err) return Error::formatted(from_kernel_errno(err), "%s", why);
  }
  addr = landed;
  if (return_probe) {
    if (addr != arch::skip_landing_pad(info.func_start, info.func_start))
      return Error::formatted(Errno::kInval,
                              "a return probe goes on a function's entry, and %s is not one",
                              info.symbol);
    if (const char* unsafe = return_probe_unsafe(info.symbol))
      return Error::formatted(Errno::kInval, "no return probe on %s: %s", info.symbol, unsafe);
  }

  // Function padding (CONFIG_CALL_PADDING, 6.2+): the NOPs before each function, which
  // kallsyms names __pfx_<function>. Never run as part of a function, and the kernel rewrites
  // them (call-depth-tracking thunks, FineIBT preambles): blacklisted by name, like every
  // __pfx_ symbol of vmlinux and of modules (tens of thousands: no range entry each).
  if (starts_with(info.symbol, "__pfx_"))
    return Error::formatted(Errno::kInval,
                            "%#lx is blacklisted: %s [function padding: the kernel rewrites it "
                            "(call depth tracking, FineIBT)]",
                            addr, info.symbol);
  if (const BlacklistEntry* b = blacklisted(lock, addr, 1)) {
    char origin[160];
    Blacklist::describe(*b, origin, sizeof(origin));
    return Error::formatted(Errno::kInval, "%#lx is blacklisted: %s [%s]", addr, b->symbol, origin);
  }
  *out = addr;
  return {};
}

// Joins the probe to its site (a new one or an aggregate) and arms it.
[[gnu::noinline]] ErrorOr<void> Registry::attach(Locked lock, okp_kprobe* kp, okp_addr_t addr,
                                                 const okp_text_info& info, bool* rollback) {

  // The record first: nothing is published before every allocation succeeded.
  ProbeTable& t = table(lock);
  auto* rec = make<ProbeRecord>(Gfp::kKernel);
  if (!rec) return Error(Errno::kNoMem, "out of memory");
  Site* site = t.sites.find(addr);
  if (site) {
    if (site->ftrace() && site->ipmodify() != !!(kp->flags & OKP_KPROBE_FLAG_IPMODIFY)) {
      destroy(rec);
      return Error::formatted(Errno::kBusy,
                              "the ftrace site is already probed %s IPMODIFY; register with the "
                              "same OKP_KPROBE_FLAG_IPMODIFY", site->ipmodify() ? "with" : "without");
    }
  } else {
    auto created = create_site(lock, addr, info, kp);
    if (created.is_error()) {
      destroy(rec);
      return created.release_error();
    }
    site = created.value();
  }
  rec->kp = kp;
  rec->site = site;
  // Append: handlers run in registration order. Publish after the record is complete.
  ProbeRecord** tail = &site->probes;
  while (*tail) tail = &(*tail)->next_at_site;
  // Before the record is published: a live site's hit that runs this pre handler also walks
  // the post handlers (update_site below recomputes the flag from all the site's probes).
  if (site->ftrace() && kp->post_handler) __atomic_store_n(&site->ftrace_post, true, __ATOMIC_RELEASE);
  __atomic_store_n(tail, rec, __ATOMIC_RELEASE);
  rec->prev_registered = t.registered_tail;
  (t.registered_tail ? t.registered_tail->next_registered : t.registered) = rec;
  t.registered_tail = rec;
  t.records.insert(*rec);

  kp->okp_core = rec;
  kp->addr = reinterpret_cast<okp_kprobe_opcode_t*>(addr);
  if (site->ftrace()) kp->flags |= OKP_KPROBE_FLAG_FTRACE;
  // As the kernel's kprobes mark it (bpf_get_func_ip() reads it): the function's first
  // instruction, after its landing pad.
  if (info.func_start && addr == arch::skip_landing_pad(info.func_start, info.func_start))
    kp->flags |= OKP_KPROBE_FLAG_ON_FUNC_ENTRY;
  update_site(lock, *site);
  // Without a breakpoint trap a failed arm is the jump's refusal: its reason, kept before the
  // detach below may free the site.
  char site_reason[OKP_REASON_MAX] = "";
  if constexpr (arch::kJumpProbes) {
    if (jump_optimizer().jump_only())
      copy_string(site_reason, sizeof(site_reason), jump_optimizer().not_optimized(lock, *site));
    if (!jump_optimizer().serves(lock, *site)) {
      // No breakpoint here, and the site lost its jump to this probe (a post_handler the
      // detour cannot run): the probe goes, and its site is served as before without it.
      *rollback = detach_probes(lock, &kp, 1);
      return Error::formatted(Errno::kOpNotSupp, "no breakpoint on this kernel, and no jump: %s",
                              site_reason);
    }
  }
  if (site->live() || disabled(kp) || !settings().armed()) {
    refresh_reason(lock, *site, kp);
    return {};
  }
  // Arming failed: detach now; the caller frees after a grace period, unlocked.
  *rollback = detach_probes(lock, &kp, 1);
  if constexpr (arch::kJumpProbes) {
    if (jump_optimizer().jump_only())
      return Error::formatted(Errno::kOpNotSupp, "no breakpoint on this kernel, and no jump: %s",
                              site_reason);
  }
  return Error::formatted(Errno::kBusy, "could not patch the text at %#lx", addr);
}

void Registry::unregister_probes(okp_kprobe* const* kps, int num) {
  bool wait;
  {
    RegistryGuard guard;
    wait = detach_probes(guard, kps, num);
  }
  if (!wait) return;
  // No CPU may still be running these probes' handlers when the caller frees them, nor be
  // stepping their sites' slots (that runs with interrupts off: an RCU reader too).
  okp_seam_synchronize_rcu();
  RegistryGuard guard;
  finish_unregister(guard, kps, num);
}

bool Registry::detach_probes(Locked lock, okp_kprobe* const* kps, int num) {
  bool any = false;
  for (int i = 0; i < num; ++i) {
    if (!kps[i]) continue;
    if (detach_probe(lock, kps[i])) {
      any = true;
      continue;
    }
    // Not registered: whatever okp_core holds is not a record, unless kp came earlier in
    // this batch (then it is the record detached then).
    bool repeated = false;
    for (int j = 0; j < i && !repeated; ++j) repeated = kps[j] == kps[i];
    if (!repeated) kps[i]->okp_core = nullptr;
  }
  return any;
}

void Registry::finish_unregister(Locked lock, okp_kprobe* const* kps, int num) {
  for (int i = 0; i < num; ++i) {
    okp_kprobe* kp = kps[i];
    // Detached: the record hangs on kp and nothing else (kps detach_probes did not detach
    // have no record).
    ProbeRecord* rec = kp ? static_cast<ProbeRecord*>(kp->okp_core) : nullptr;
    if (!rec) continue;
    if (rec->emptied_site) release_site(lock, *rec->site);
    destroy(rec);
    kp->okp_core = nullptr;
  }
}

// Unlinks kp from its site and from the registered list and disarms the site if kp was its
// last probe; the record is freed by finish_unregister() after the grace period. False if
// kp is not registered (said in the log).
bool Registry::detach_probe(Locked lock, okp_kprobe* kp) {
  ProbeRecord* rec = find_record(lock, kp);
  if (!rec) {
    char what[64], line[128];
    describe(kp, what, sizeof(what));
    okp_seam_format(line, sizeof(line), "unregister: the probe at %s is not registered", what);
    okp_seam_log(OKP_LOG_WARNING, line);
    return false;
  }
  ProbeTable& t = table(lock);
  Site& site = *rec->site;
  // Unlink from the aggregate; the record keeps its next link for readers standing on it.
  for (ProbeRecord** pp = &site.probes; *pp; pp = &(*pp)->next_at_site) {
    if (*pp == rec) {
      __atomic_store_n(pp, rec->next_at_site, __ATOMIC_RELEASE);
      break;
    }
  }
  (rec->prev_registered ? rec->prev_registered->next_registered : t.registered) = rec->next_registered;
  (rec->next_registered ? rec->next_registered->prev_registered : t.registered_tail) = rec->prev_registered;
  t.records.remove(*rec);
  rec->emptied_site = site.probes == nullptr;
  if (rec->emptied_site) {
    disarm(lock, site);
    if (!site.gone()) {
      t.sites.remove(site);
      if constexpr (arch::kJumpProbes)
        if (!site.ftrace()) jump_optimizer().probe_removed(lock, site.addr);
    }
  } else {
    update_site(lock, site);
  }
  return true;
}

int Registry::set_probe_disabled(Locked lock, okp_kprobe* kp, bool off) {
  ProbeRecord* rec = kp ? find_record(lock, kp) : nullptr;
  if (!rec) return to_kernel_errno(Errno::kInval);
  if (kp->flags & OKP_KPROBE_FLAG_GONE) return to_kernel_errno(Errno::kInval);
  set_flag(kp, OKP_KPROBE_FLAG_DISABLED, off);
  update_site(lock, *rec->site);
  if (!off && !rec->site->live() && settings().armed()) return to_kernel_errno(Errno::kBusy);
  return 0;
}

void Registry::rearm_all() {
  RegistryGuard guard;
  for_each_site(guard, [&](Site& s) { update_site(guard, s); });
}

void Registry::make_gone(Locked lock, Site& s) {
  // The text is about to be freed: forget it without patching it back. An ftrace site is
  // ftrace's record, still valid now: drop it from our filter so our ops holds no stale ip.
  if (s.ftrace() && s.live()) okp_seam_ftrace_disarm(s.addr, s.ipmodify());
  unfence_kernel_kprobes(lock, s);  // no text left to misread
  s.state = SiteState::kGone;
  table(lock).sites.remove(s);
}

void Registry::module_going(const void* module) {
  bool any = false;
  {
    RegistryGuard guard;
    ProbeTable& t = table(guard);
    for (ProbeRecord* r = t.registered; r; r = r->next_registered) {
      Site& s = *r->site;
      if (s.place.module != module || s.gone()) continue;
      make_gone(guard, s);
      any = true;
    }
    for (ProbeRecord* r = t.registered; r; r = r->next_registered) {
      if (r->site->place.module != module) continue;
      r->kp->flags |= OKP_KPROBE_FLAG_GONE;
      okp_seam_format(r->kp->okp_reason, OKP_REASON_MAX,
                      "module %s was unloaded: the probe is inert", r->site->place.module_name);
    }
  }
  // No CPU is still in a handler of a probe on the going text when this returns (unlocked).
  if (any) okp_seam_synchronize_rcu();
}

void Registry::module_live(const void* module) {
  bool any = false;
  {
    RegistryGuard guard;
    for (ProbeRecord* r = table(guard).registered; r; r = r->next_registered) {
      Site& s = *r->site;
      if (s.place.module != module || !s.place.init_text) continue;
      if (!s.gone()) {
        make_gone(guard, s);
        any = true;
      }
      r->kp->flags |= OKP_KPROBE_FLAG_GONE;
      okp_seam_format(r->kp->okp_reason, OKP_REASON_MAX,
                      "module %s finished init: its __init text is freed", s.place.module_name);
    }
  }
  if (any) okp_seam_synchronize_rcu();
}

int Registry::blacklist_add(okp_addr_t start, okp_addr_t end, const char* symbol,
                            const char* source, const void* owner, const char* via) {
  RegistryGuard guard;
  return to_kernel_result(table(guard).blacklist.add(start, end, symbol, source, owner, via));
}

void Registry::blacklist_remove_owner(const void* owner) {
  RegistryGuard guard;
  table(guard).blacklist.remove_owner(owner);
}

}  // namespace okp

using okp::registry;

extern "C" int okp_core_register_kprobe(struct okp_kprobe* kp) { return registry().register_probe(kp); }

extern "C" void okp_core_unregister_kprobe(struct okp_kprobe* kp) {
  registry().unregister_probes(&kp, 1);
}

extern "C" void okp_core_unregister_kprobes(struct okp_kprobe** kps, int num) {
  registry().unregister_probes(kps, num);
}

extern "C" int okp_core_set_kprobe_disabled(struct okp_kprobe* kp, int off) {
  okp::RegistryGuard guard;
  return registry().set_probe_disabled(guard, kp, off);
}

extern "C" void okp_core_collect_slots(void) { registry().collect_retired_slots(); }

extern "C" int okp_core_blacklist_add(okp_addr_t start, okp_addr_t end, const char* symbol,
                                      const char* source, const void* owner) {
  return registry().blacklist_add(start, end, symbol, source, owner);
}

extern "C" void okp_core_blacklist_remove_owner(const void* owner) {
  registry().blacklist_remove_owner(owner);
}

extern "C" void okp_core_blacklist_show(void (*emit)(void*, const char*), void* ctx) {
  registry().show_blacklist(emit, ctx);
}

extern "C" void okp_core_list_show(void (*emit)(void*, const char*), void* ctx) {
  registry().show_probes(emit, ctx);
}

extern "C" void okp_core_refused_show(void (*emit)(void*, const char*), void* ctx) {
  registry().show_refused(emit, ctx);
}

extern "C" void okp_core_module_going(const void* module) { registry().module_going(module); }

extern "C" void okp_core_module_live(const void* module) { registry().module_live(module); }
