// SPDX-License-Identifier: GPL-2.0
// The kernel's own kprobes beside okprobes' patched bytes. On x86-64 the kernel's can_probe()
// decodes okprobes' int3 or jump as if it were the original instruction and may accept a
// kprobe inside an instruction after it (arch/x86/kernel_walk.cpp says where). The kernel
// has no veto hook but its kprobe blacklist, so each patched site puts an entry there
// (the misread bytes after it and the places its hidden branches make unsafe for the kernel's
// optprobes: register_kprobe() then refuses with -EINVAL, and the kernel's debugfs
// kprobes/blacklist lists each range) from before its bytes are written until after they are
// gone. The fences grow when the site becomes a jump (its region) and stay until the site is
// disarmed: shrinking them while a registration may have passed the check would buy nothing.
#include "core/kernel_fence.h"

#include "core/registry.h"

namespace okp {

void fence_kernel_kprobes(Locked, Site& site, usize patch_len, usize covered) {
  if (site.ftrace()) return;  // ftrace's own call site: the kernel's kprobes know it
  arch::KernelFence want[arch::kMaxKernelFences];
  const usize n = arch::kernel_kprobe_fences(site.addr, patch_len, covered, site.addr - site.place.offset,
                                             site.place.func_size, recover_original_text, want);
  for (usize i = 0; i < n; ++i) {
    const arch::KernelFence& w = want[i];
    usize at = site.fences.count;
    bool done = false;
    for (usize j = 0; j < site.fences.count && !done; ++j) {
      const arch::KernelFence& have = site.fences.ranges[j];
      if (w.start >= have.start && w.end <= have.end) done = true;  // already kept off
      else if (w.start == have.start) at = j;  // the same start: that entry grows
    }
    if (done) continue;
    if (at == KernelFences::kMax) {
      okp_seam_log(OKP_LOG_WARNING, "no room left to keep the kernel's kprobes off "
                   "a range they would misread");
      continue;
    }
    void* handle = okp_seam_fence_kernel_kprobes(at < site.fences.count ? site.fences.handles[at]
                                                                         : nullptr,
                                                 w.start, w.end);
    if (!handle) continue;  // the kernel has no kprobes, or no memory (the glue said so)
    site.fences.handles[at] = handle;
    site.fences.ranges[at] = w;
    if (at == site.fences.count) ++site.fences.count;
  }
}

void unfence_kernel_kprobes(Locked, Site& site) {
  for (usize j = 0; j < site.fences.count; ++j) {
    okp_seam_unfence_kernel_kprobes(site.fences.handles[j]);
    site.fences.handles[j] = nullptr;
    site.fences.ranges[j] = {};
  }
  site.fences.count = 0;
}

}  // namespace okp
