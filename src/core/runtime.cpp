// SPDX-License-Identifier: GPL-2.0
// The whole C++ runtime okprobes carries: a pure-virtual trap, and core init/exit.
// No operator new/delete (see new.h), no exceptions, no RTTI, no static constructors (the
// build fails on a .init_array section).
#include "core/registry.h"
#include "seam/kernel_services.h"
#include "seam/core_entries.h"

extern "C" void __cxa_pure_virtual();  // declared for -Wmissing-declarations (6.8+ kernels)
extern "C" void __cxa_pure_virtual() {
  okp_seam_invariant_failed("pure virtual function called", __FILE__, __LINE__);
  __builtin_trap();
}

extern "C" int okp_core_init(void) { return okp::to_kernel_result(okp::registry().init()); }

extern "C" void okp_core_exit(void) { okp::registry().exit(); }
