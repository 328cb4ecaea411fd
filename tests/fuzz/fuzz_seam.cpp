// SPDX-License-Identifier: GPL-2.0
#include "fuzz_seam.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace okp_fuzz {
namespace {
struct Window {
  uintptr_t start;
  size_t size;
};
Window g_windows[4];
int g_nwindows;
}  // namespace

void set_readable(const void* const* starts, const size_t* sizes, int n) {
  g_nwindows = n > 4 ? 4 : n;
  for (int i = 0; i < g_nwindows; ++i)
    g_windows[i] = {reinterpret_cast<uintptr_t>(starts[i]), sizes[i]};
}
void clear_readable() { g_nwindows = 0; }
}  // namespace okp_fuzz

using okp_fuzz::g_nwindows;
using okp_fuzz::g_windows;

extern "C" void* okp_seam_alloc(unsigned long size, enum okp_gfp) {
  return std::calloc(1, size ? size : 1);  // zeroed, as okp_seam.h promises
}

extern "C" void okp_seam_free(void* ptr) { std::free(ptr); }

extern "C" void okp_seam_log(enum okp_log_level, const char* msg) {
  if (std::getenv("OKP_FUZZ_LOG")) std::fprintf(stderr, "okprobes: %s\n", msg);
}

extern "C" void okp_seam_invariant_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "okprobes: invariant broken: %s (%s:%d)\n", what, file, line);
  std::abort();
}

extern "C" int okp_seam_read_nofault(void* dst, okp_addr_t src, unsigned long len) {
  for (int i = 0; i < g_nwindows; ++i) {
    const auto& w = g_windows[i];
    if (src >= w.start && len <= w.size && src - w.start <= w.size - len) {
      std::memcpy(dst, reinterpret_cast<const void*>(src), len);
      return 0;
    }
  }
  return -14;  // -EFAULT
}

extern "C" void okp_seam_format(char* buf, unsigned long len, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, len, fmt, ap);
  va_end(ap);
}

extern "C" void okp_seam_vformat(char* buf, unsigned long len, const char* fmt, va_list args) {
  std::vsnprintf(buf, len, fmt, args);
}
