// SPDX-License-Identifier: GPL-2.0
// The no-breakpoint-trap reason (no_breakpoint_trap.h), kept once for every arch that has it.
#include "arch/common/no_breakpoint_trap.h"

namespace okp::arch {

namespace {

// A static string of the glue's; written once at load, before any registration reads it.
const char* g_no_breakpoint_trap = nullptr;

}  // namespace

const char* no_breakpoint_trap() { return g_no_breakpoint_trap; }

}  // namespace okp::arch

extern "C" void okp_set_no_breakpoint_trap(const char* reason) {
  okp::arch::g_no_breakpoint_trap = reason;
}
