// SPDX-License-Identifier: GPL-2.0
// What the probe table shows in debugfs (`list`, `blacklist`, `refused`): one line per entry,
// rendered under the registry lock and streamed to the glue's emit callback.
#include "core/registry.h"

#include "core/return_probe.h"

namespace okp {

void Registry::show_probes(void (*emit)(void*, const char*), void* ctx) {
  RegistryGuard guard;
  for (ProbeRecord* r = table(guard).registered; r; r = r->next_registered) {
    const Site& s = *r->site;
    const okp_kprobe* kp = r->kp;
    char line[OKP_REASON_MAX + 460];
    unsigned int f = kp->flags;
    char modpart[64] = "";
    if (s.place.module_name[0]) okp_seam_format(modpart, sizeof(modpart), " [%s]", s.place.module_name);
    int n = 0;
    char flags[64] = "";
    const char* labels[] = {(f & OKP_KPROBE_FLAG_GONE) ? " [GONE]" : "",
                            (f & OKP_KPROBE_FLAG_DISABLED) ? " [DISABLED]" : "",
                            (f & OKP_KPROBE_FLAG_OPTIMIZED) ? " [OPTIMIZED]" : "",
                            (f & OKP_KPROBE_FLAG_FTRACE) ? " [FTRACE]" : ""};
    for (const char* l : labels)
      for (; *l && n + 1 < static_cast<int>(sizeof(flags)); ++l) flags[n++] = *l;
    flags[n] = '\0';
    char why[OKP_REASON_MAX + 16] = "";
    if (kp->okp_reason[0]) okp_seam_format(why, sizeof(why), " reason=\"%s\"", kp->okp_reason);
    const bool ret = is_return_entry(kp);
    char counts[200] = "";  // a return probe's pool, or a probe's misses by cause
    if (ret)
      describe_return_probe(reinterpret_cast<const okp_kretprobe*>(
                                reinterpret_cast<const u8*>(kp) - __builtin_offsetof(okp_kretprobe, kp)),
                            counts, sizeof(counts));
    else if (kp->nmissed)
      // nmissed alone does not say whether to fix a handler (re-entry), a shared address
      // (disabled) or the probed code (fault): an admin sees the split the struct has. Shown
      // only once there is a miss, so that a probe without one keeps its short line.
      okp_seam_format(counts, sizeof(counts),
                      " missed_reentry=%lu missed_disabled=%lu missed_fault=%lu",
                      kp->nmissed_by[OKP_MISS_REENTRY], kp->nmissed_by[OKP_MISS_DISABLED],
                      kp->nmissed_by[OKP_MISS_FAULT]);
    okp_seam_format(line, sizeof(line), "%016lx  %c  %s+%#lx%s%s hits=%lu nmissed=%lu%s%s", s.addr,
                    ret ? 'r' : 'k', s.place.symbol, s.place.offset, modpart, flags, kp->nhit, kp->nmissed,
                    counts, why);
    emit(ctx, line);
  }
}

void Registry::show_blacklist(void (*emit)(void*, const char*), void* ctx) {
  RegistryGuard guard;
  table(guard).blacklist.for_each([&](const BlacklistEntry& e) {
    char line[320], origin[160];
    Blacklist::describe(e, origin, sizeof(origin));
    okp_seam_format(line, sizeof(line), "0x%016lx-0x%016lx\t%s\t[%s]", e.start, e.end, e.symbol,
                    origin);
    emit(ctx, line);
  });
}

void Registry::show_refused(void (*emit)(void*, const char*), void* ctx) {
  RegistryGuard guard;
  const ProbeTable& t = table(guard);
  const usize first = t.next_refusal > ProbeTable::kRefusals ? t.next_refusal - ProbeTable::kRefusals : 0;
  for (usize i = first; i < t.next_refusal; ++i) {
    const ProbeTable::Refusal& r = t.refusals[i % ProbeTable::kRefusals];
    char line[OKP_REASON_MAX + 96];
    okp_seam_format(line, sizeof(line), "%s\t%d\t%s", r.what, r.err, r.reason);
    emit(ctx, line);
  }
}

}  // namespace okp
