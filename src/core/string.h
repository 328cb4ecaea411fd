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

// The reason paired with a name in a {name, reason} table, comparing the table's names to the
// first name_len characters of name; nullptr when none matches.
template <usize N>
const char* reason_for(const char* const (&table)[N][2], const char* name, usize name_len) {
  for (const auto& entry : table) {
    const char* n = entry[0];
    usize i = 0;
    while (i < name_len && n[i] && n[i] == name[i]) ++i;
    if (i == name_len && !n[i]) return entry[1];
  }
  return nullptr;
}

}  // namespace okp
