// SPDX-License-Identifier: GPL-2.0
// Why no breakpoint probe can work on the running kernel, for an arch whose kernel may deliver
// no breakpoint trap to a module (nullptr: they can). The glue sets it once at load, before
// any registration (okp_set_no_breakpoint_trap, src/kernel/okp_glue.h); check_and_plan refuses
// every breakpoint probe with it, while function entries on ftrace sites still work.
#pragma once

namespace okp::arch {

const char* no_breakpoint_trap();

}  // namespace okp::arch

extern "C" void okp_set_no_breakpoint_trap(const char* reason);
