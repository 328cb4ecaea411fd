// SPDX-License-Identifier: GPL-2.0
// The x86-64 detour buffer: what a jump-optimized probe's `jmp rel32` leads to.
//
//   buffer+0   the probe address (8 bytes of data: what the detour is for, when read back)
//   buffer+8   the core's site for the probe (8-aligned), or'ed with kDetourHasPost when the
//              copy calls the post entry (8 bytes; plan_detour leaves the site 0)
//   buffer+16  call okp_detour_entry   (saves a pt_regs, runs the handlers, restores; it
//                                       returns to the copy, or where a handler sent it;
//                                       okp_detour_entry_with_post when the copy calls the
//                                       post entry, below)
//   buffer+21  the copy: the region's instructions relocated (detour_relocate.h), then a
//              jump back after the region
//
// A probe with a post_handler gets its first instruction's copy followed by a second call:
//
//   buffer+21  the first instruction, relocated
//              call okp_detour_post_entry   (post handlers, with the registers the instruction
//                                            left; returns past the data below)
//              the probe address, the original address of the next instruction (16 bytes)
//              the other instructions, relocated, then the jump back
//
// Interrupts are off from the end of the pre handlers to the post handlers (the pre handlers'
// saved flags lose IF, begin_step; the post entry restores it), as for a single-step: the CPU
// cannot change in between.
//
// The word before the call names the core's site directly, so a hit needs no lookup. A task
// preempted between the jump and the handlers may arrive after the probe was unregistered:
// the core keeps the site (its probe list empty then: no handler runs) for as long as it
// keeps the detour, until a tasks-RCU grace period after the jump is gone
// (JumpOptimizer::site_released), and the task resumes in the copy. The buffer is okprobes' own read-only
// text (the slot area), written through the kernel's text patching: never writable and
// executable at once.
#pragma once

#include "arch/common/arch_types.h"
#include "arch/x86/detour_region.h"
#include "arch/x86/detour_relocate.h"
#include "core/error_or.h"
#include "kernel/arch/x86/detour_layout.h"

namespace okp::x86 {

constexpr usize kDetourFlagsOffset = 8;
constexpr u64 kDetourHasPost = 1;
constexpr usize kDetourCallOffset = 16;
constexpr usize kDetourCopyOffset = kDetourCallOffset + 5;  // after `call rel32`
constexpr usize kPostCallSize = 5;
constexpr usize kPostDataSize = 16;  // the probe address, the next instruction's address
constexpr usize kMaxDetourSize = kDetourCopyOffset + kMaxDetourCode + kPostCallSize + kPostDataSize;
static_assert(kMaxDetourSize <= arch::kDetourCapacity, "DetourPlan has no room for a detour");
// okp_detour_entry (assembly) tells the common hit apart by reading the site word itself.
static_assert(OKP_DETOUR_SITE_FROM_COPY == static_cast<long>(kDetourFlagsOffset) -
                                               static_cast<long>(kDetourCopyOffset),
              "detour_layout.h's OKP_DETOUR_SITE_FROM_COPY is not the site word's place");
static_assert(OKP_DETOUR_HAS_POST == kDetourHasPost && kDetourHasPost < 0x100,
              "detour_layout.h's OKP_DETOUR_HAS_POST is not kDetourHasPost (in the first byte)");

// The detour for the probe at addr, to be written at buffer: the region check over the whole
// function (fn, extable) and the relocation. entry: okp_detour_entry's address; post_entry:
// okp_detour_post_entry's for a probe with a post_handler, 0 otherwise.
ErrorOr<arch::DetourPlan> plan_detour(const FunctionText& fn, okp_addr_t addr,
                                      const ExtableEntry* extable, usize n_extable,
                                      okp_addr_t buffer, okp_addr_t entry, okp_addr_t post_entry);

// The core's site for the probe, in a planned detour's image / [hit] from the copy's address.
inline void set_detour_site(arch::DetourPlan* plan, okp_addr_t site) {
  u8* word = plan->image + kDetourFlagsOffset;
  for (usize i = 0; i < 8; ++i) word[i] |= static_cast<u8>(site >> (8 * i));
}
inline okp_addr_t detour_site(okp_addr_t copy) {
  return *reinterpret_cast<const u64*>(copy - kDetourCopyOffset + kDetourFlagsOffset) & ~kDetourHasPost;
}

// [hit] Whether the detour's copy calls the post entry (then the handlers' entry leaves
// interrupts off and a frame open for it).
inline bool detour_has_post(okp_addr_t copy) {
  return *reinterpret_cast<const u64*>(copy - kDetourCopyOffset + kDetourFlagsOffset) & kDetourHasPost;
}

// [hit] From the post entry's return address: the ip post handlers see (the original next
// instruction, after the probe address's word), and where the copy goes on.
inline okp_addr_t detour_post_next_ip(okp_addr_t ret) {
  return *reinterpret_cast<const okp_addr_t*>(ret + sizeof(okp_addr_t));
}
inline okp_addr_t detour_post_resume(okp_addr_t ret) { return ret + kPostDataSize; }

}  // namespace okp::x86
