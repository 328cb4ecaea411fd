// SPDX-License-Identifier: GPL-2.0
// Parsing of the 0/1 switches admins write (debugfs `enabled`, sysctl
// debug.okprobes-optimization): exactly "0" or "1", optionally followed by one newline as
// `echo` adds. Anything else is -EINVAL, never a silent default.
#pragma once

#include "core/error_or.h"

namespace okp {

inline ErrorOr<bool> parse_switch(const char* buf, usize len) {
  if (buf && len == 2 && buf[1] == '\n') len = 1;
  if (!buf || len != 1 || (buf[0] != '0' && buf[0] != '1'))
    return Error(Errno::kInval, "expected 0 or 1");
  return buf[0] == '1';
}

}  // namespace okp
