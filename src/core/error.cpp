// SPDX-License-Identifier: GPL-2.0
// Error's formatted constructor, out of line: a variadic function is never inlined, and one
// copy keeps the module free of duplicate instances (core/error_or.h).
#include "core/error_or.h"

namespace okp {

Error Error::formatted(Errno code, const char* fmt, ...) {
  Error e(code, nullptr);
  __builtin_va_list args;
  __builtin_va_start(args, fmt);
  okp_seam_vformat(e.text_, sizeof(e.text_), fmt, args);
  __builtin_va_end(args);
  return e;
}

}  // namespace okp
