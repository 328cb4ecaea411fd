// SPDX-License-Identifier: GPL-2.0
// The host's stand-in for the kernel glue: the seam over libc, with counters tests read.
#pragma once

namespace okp_host {
struct SeamCounters {
  long allocs = 0;
  long frees = 0;
  long invariant_failures = 0;
  bool fail_next_alloc = false;
};
SeamCounters& seam_counters();
}  // namespace okp_host
