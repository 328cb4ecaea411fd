// SPDX-License-Identifier: GPL-2.0
// The x86-64 detour buffer: what a jump-optimized probe's `jmp rel32` leads to.
//
//   buffer+0   the probe address (8 bytes of data: the hit path finds the site by it)
//   buffer+8   call okp_detour_entry   (saves a pt_regs, runs the handlers, restores; it
//                                       returns to the copy, or where a handler sent it)
//   buffer+13  the copy: the region's instructions relocated (detour_relocate.h), then a
//              jump back after the region
//
// The word before the call names the probe by address, not by a pointer to the core's site:
// a task preempted between the jump and the handlers may arrive after the probe was
// unregistered; it then finds no site, runs no handler and resumes in the copy, which lives
// until a tasks-RCU grace period after the jump is gone. The buffer is okprobes' own read-only
// text (the slot area), written through the kernel's text patching: never writable and
// executable at once.
#pragma once

#include "arch/common/arch_types.h"
#include "arch/x86/detour_region.h"
#include "arch/x86/detour_relocate.h"
#include "core/error_or.h"

namespace okp::x86 {

constexpr usize kDetourCallOffset = 8;
constexpr usize kDetourCopyOffset = kDetourCallOffset + 5;  // after `call rel32`
constexpr usize kMaxDetourSize = kDetourCopyOffset + kMaxDetourCode;
static_assert(kMaxDetourSize <= arch::kDetourCapacity, "DetourPlan has no room for a detour");

// The detour for the probe at addr, to be written at buffer: the region check over the whole
// function (fn, extable) and the relocation. entry: okp_detour_entry's address.
ErrorOr<arch::DetourPlan> plan_detour(const FunctionText& fn, okp_addr_t addr,
                                      const ExtableEntry* extable, usize n_extable,
                                      okp_addr_t buffer, okp_addr_t entry);

// [hit] The probe a detour serves, from the copy's address (the entry's return address).
inline okp_addr_t detour_probe_address(okp_addr_t copy) {
  return *reinterpret_cast<const okp_addr_t*>(copy - kDetourCopyOffset);
}

}  // namespace okp::x86
