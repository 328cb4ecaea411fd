// SPDX-License-Identifier: GPL-2.0
// The two string helpers the core needs without libc.
#pragma once

#include "core/utility.h"

namespace okp {

// Copies src into dst[0..size), always NUL-terminated, truncating.
inline void copy_string(char* dst, usize size, const char* src) {
  if (!size) return;
  usize i = 0;
  for (; i + 1 < size && src[i]; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

inline usize string_length(const char* s) {
  usize n = 0;
  while (s[n]) ++n;
  return n;
}

inline bool starts_with(const char* s, const char* prefix) {
  while (*prefix && *s == *prefix) ++s, ++prefix;
  return !*prefix;
}

inline bool contains(const char* s, const char* part) {
  for (; *s; ++s)
    if (starts_with(s, part)) return true;
  return !*part;
}

}  // namespace okp
