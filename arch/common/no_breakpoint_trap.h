// SPDX-License-Identifier: GPL-2.0
// Why no breakpoint probe can work on the running kernel, for an arch whose kernel may deliver
// no breakpoint trap to a module (nullptr: they can). The glue sets it once at load, before
// any registration (okp_set_no_breakpoint_trap, src/kernel/okp_glue.h). riscv64's
// check_and_plan refuses every breakpoint probe with it (function entries on ftrace sites
// still work); arm64 arms such a probe as a jump to its detour at once, and refuses it with
// this reason only where no jump can be placed (arch/jump_contract.h, breakpoints_missing).
#pragma once

namespace okp::arch {

const char* no_breakpoint_trap();

}  // namespace okp::arch

extern "C" void okp_set_no_breakpoint_trap(const char* reason);
