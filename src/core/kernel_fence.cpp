// SPDX-License-Identifier: GPL-2.0
// The kernel's own kprobes beside okprobes' patched bytes. On x86-64 the kernel's can_probe()
// decodes okprobes' int3 or jump as if it were the original instruction and may accept a
// kprobe inside an instruction after it (arch/x86/kernel_walk.cpp says where). The kernel
// has no veto hook but its kprobe blacklist, so each patched site puts an entry there
// ([addr, fence_end): register_kprobe() then refuses with -EINVAL, and the kernel's debugfs
// kprobes/blacklist lists the range) from before its bytes are written until after they are
// gone. The fence grows when the site becomes a jump (its region) and stays that size until
// the site is disarmed: shrinking it back while a registration may have passed the check
// would buy nothing.
#include "core/registry.h"

namespace okp {

namespace {
void recover_for_fence(okp_addr_t start, u8* bytes, usize n) {
  registry().recover_original(start, bytes, n);
}
}  // namespace

void Registry::fence_kernel_kprobes(Locked lock, Site& site, usize patch_len, usize covered) {
  okp_seam_assert_registry_locked();
  (void)lock;
  if (site.ftrace) return;  // ftrace's own call site: the kernel's kprobes know it
  const okp_addr_t end = arch::kernel_kprobe_fence_end(site.addr, patch_len, covered,
                                                       site.addr - site.offset, site.func_size,
                                                       recover_for_fence);
  if (end <= site.addr || end <= site.fence_end) return;
  site.kernel_fence = okp_seam_fence_kernel_kprobes(site.kernel_fence, site.addr, end);
  site.fence_end = site.kernel_fence ? end : 0;
}

void Registry::unfence_kernel_kprobes(Locked lock, Site& site) {
  okp_seam_assert_registry_locked();
  (void)lock;
  okp_seam_unfence_kernel_kprobes(site.kernel_fence);
  site.kernel_fence = nullptr;
  site.fence_end = 0;
}

}  // namespace okp
