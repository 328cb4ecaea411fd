// SPDX-License-Identifier: GPL-2.0
#include "host_seam.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "seam/okp_seam.h"

namespace okp_host {
SeamCounters& seam_counters() {
  static SeamCounters counters;
  return counters;
}
}  // namespace okp_host

extern "C" void* okp_seam_alloc(unsigned long size, enum okp_gfp) {
  auto& c = okp_host::seam_counters();
  if (c.fail_next_alloc) {
    c.fail_next_alloc = false;
    return nullptr;
  }
  ++c.allocs;
  return std::calloc(1, size);
}

extern "C" void okp_seam_free(void* ptr) {
  if (ptr) ++okp_host::seam_counters().frees;
  std::free(ptr);
}

extern "C" void okp_seam_log(enum okp_log_level level, const char* msg) {
  std::fprintf(stderr, "okprobes<%d>: %s\n", static_cast<int>(level), msg);
}

extern "C" void okp_seam_invariant_failed(const char* what, const char* file, int line) {
  ++okp_host::seam_counters().invariant_failures;
  std::fprintf(stderr, "okprobes: invariant broken: %s (%s:%d)\n", what, file, line);
}

// Host memory is all readable except the null page, which stands in for an unmapped kernel
// address so tests can reach the -EFAULT paths.
extern "C" int okp_seam_read_nofault(void* dst, okp_addr_t src, unsigned long len) {
  if (src < 4096) return -14;  // -EFAULT
  std::memcpy(dst, reinterpret_cast<const void*>(src), len);
  return 0;
}
