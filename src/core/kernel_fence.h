// SPDX-License-Identifier: GPL-2.0
// The kernel's own kprobes kept off the bytes they would misread while okprobes' patch is at a
// site (core/kernel_fence.cpp says why and how).
#pragma once

#include "arch/arch_contract.h"

namespace okp {

struct Site;
class RegistryGuard;
using Locked = const RegistryGuard&;

// A site's entries in the kernel's kprobe blacklist: at most the breakpoint's fences and the
// jump's (arch::kernel_kprobe_fences, each). Registry lock.
struct KernelFences {
  static constexpr usize kMax = 2 * arch::kMaxKernelFences;
  arch::KernelFence ranges[kMax] = {};
  void* handles[kMax] = {};  // the kernel blacklist entries (seam handles)
  u8 count = 0;
};

// Keeps the kernel's kprobes off what they would misread while the site holds a patch of
// patch_len bytes standing for covered original ones (grows only), and lets them back.
void fence_kernel_kprobes(Locked, Site& site, usize patch_len, usize covered);
void unfence_kernel_kprobes(Locked, Site& site);

}  // namespace okp
