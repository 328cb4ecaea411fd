// SPDX-License-Identifier: GPL-2.0
// The core's C entry points for its global switches (see settings.h, seam/okp_seam.h).
#include "core/settings.h"

#include <okprobes/okprobes.h>

#include "core/errno.h"
#include "core/switch_value.h"
#include "seam/kernel_services.h"
#include "seam/core_entries.h"

namespace okp {

namespace {
constinit Settings g_settings;
}  // namespace

Settings& settings() { return g_settings; }

}  // namespace okp

extern "C" int okp_core_parse_switch(const char* buf, unsigned long len, int* value) {
  auto parsed = okp::parse_switch(buf, len);
  if (parsed.is_error()) return parsed.error().kernel_errno();
  *value = parsed.value() ? 1 : 0;
  return 0;
}

extern "C" int okp_core_armed(void) { return okp::settings().armed(); }

extern "C" int okp_core_set_armed(int armed) {
  if (armed != 0 && armed != 1) return okp::to_kernel_errno(okp::Errno::kInval);
  okp::settings().set_armed(armed);
  if (okp::settings().armed_observer) okp::settings().armed_observer(armed);
  return 0;
}

extern "C" int okp_core_optimization(void) { return okp::settings().optimization(); }

extern "C" int okp_core_set_optimization(int enabled) {
  if (enabled != 0 && enabled != 1) return okp::to_kernel_errno(okp::Errno::kInval);
  if (const char* veto = !enabled && okp::settings().optimization_veto
                             ? okp::settings().optimization_veto() : nullptr) {
    char line[OKP_REASON_MAX];
    okp_seam_format(line, sizeof(line), "debug.okprobes-optimization=0 refused: %s", veto);
    okp_seam_log(OKP_LOG_ERR, line);
    return okp::to_kernel_errno(okp::Errno::kPerm);
  }
  okp::settings().set_optimization(enabled);
  if (okp::settings().optimization_observer) okp::settings().optimization_observer(enabled);
  return 0;
}
