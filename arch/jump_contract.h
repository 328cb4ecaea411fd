// SPDX-License-Identifier: GPL-2.0
// The jump contract: what an arch with jump probes provides to the jump optimizer
// (core/optimizer/), declared once, here, beside the arch contract (arch/arch_contract.h).
//
// A jump probe replaces a probe's breakpoint with a branch to a per-probe detour: the detour
// runs the handlers and a relocated copy of the instructions the branch covers (the region),
// then goes on after them. The optimizer owns the per-site state and the batch (plan, publish,
// wait, patch); an arch brings the four things only it knows:
//   1. check a region and build its detour (plan_detour): which instructions the branch
//      covers, that no branch lands inside them, their relocated copy, the branch's bytes;
//   2. the detour's hit-path pieces (detour_site ... detour_post_resume);
//   3. patch live text: switch a batch of sites between breakpoint and branch (switch_jumps),
//      in whatever steps the arch's cross-modification rules ask;
//   4. prove no task is stopped inside a batch's regions (tasks_outside), asked only for
//      regions of more than one instruction.
// x86-64 (`jmp rel32` over 5 bytes, int3-staged patching) is the one implementation so far;
// the contract does not assume the branch's size, the staging, or that a region holds more
// than one instruction (arm64: one `B`; riscv64: an auipc/jalr pair through a dead register).
//
// An arch has jump probes when its build defines OKP_JUMP_PROBES (Kbuild) and it provides
// arch/<arch>/jump_probe_arch.h; an arch without them provides nothing of this, and neither
// the optimizer nor the jump seam (seam/jump_services.h) is built for it.
#pragma once

#include "arch/arch_contract.h"

#ifndef OKP_JUMP_PROBES
#error "arch/jump_contract.h is for an arch with jump probes (OKP_JUMP_PROBES)"
#endif

#include "jump_probe_arch.h"
#include "seam/jump_services.h"

namespace okp::arch::contract {

// --- Sizes ------------------------------------------------------------------------------------
OKP_ARCH_CONSTANT(kMaxDetourSize, usize);  // bytes of slot-pool cells a detour takes
static_assert(::okp::arch::kMaxDetourSize <= kDetourCapacity, "DetourPlan has no room");
// A site's patch (arch contract's kMaxPatchSize) is its breakpoint or its branch.
static_assert(::okp::arch::kMaxPatchSize <= kJumpCapacity, "DetourPlan has no room for the jump");

// --- 1. Check a region and build its detour (registration side, registry lock held) ---------
// The detour for the probe at addr in the function [func_start, func_start + func_size),
// written later at buffer (okprobes' breakpoints recovered through recover). with_post: the
// probe has post handlers, so the copy runs them after the first instruction. site: the core's
// record of the probe (8-aligned), which detour_site gives back on a hit. An error's reason
// starts "not optimized: " and says why.
OKP_ARCH_PROVIDES(plan_detour, ErrorOr<DetourPlan> (*)(okp_addr_t addr, okp_addr_t func_start,
                                                       unsigned long func_size, RecoverFn recover,
                                                       okp_addr_t buffer, bool with_post,
                                                       okp_addr_t site));

// Whether the jump at addr reaches a detour buffer at buffer, and the detour's way back reaches
// addr's neighbourhood (the optimizer then looks for cells near the kernel's text instead).
OKP_ARCH_PROVIDES(detour_reaches, bool (*)(okp_addr_t addr, okp_addr_t buffer));

// Why this kernel delivers no breakpoint trap to okprobes, or nullptr when it does. Without
// one a site's "breakpoint" is its original instruction (breakpoint_of): a probe is armed as
// its jump at once (JumpOptimizer::arm_jump) or refused, and optimization cannot be turned off.
OKP_ARCH_PROVIDES(breakpoints_missing, const char* (*)());

// --- 2. The detour's hit path [hit] -------------------------------------------------------------
// The site argument of plan_detour, from the copy's address (the entry's return address).
OKP_ARCH_PROVIDES(detour_site, okp_addr_t (*)(okp_addr_t copy));
// A detour whose copy calls the post entry after its first instruction: the handlers' entry
// leaves a frame open and interrupts off (begin_step), the post entry ends it.
OKP_ARCH_PROVIDES(detour_has_post, bool (*)(okp_addr_t copy));
OKP_ARCH_PROVIDES(end_detour_step, void (*)(okp_regs*, unsigned long saved_flags));
// From the post entry's return address: the ip post handlers see, and where the copy goes on.
OKP_ARCH_PROVIDES(detour_post_next_ip, okp_addr_t (*)(okp_addr_t ret));
OKP_ARCH_PROVIDES(detour_post_resume, okp_addr_t (*)(okp_addr_t ret));

// --- 3. Patch live text (registry lock held) ---------------------------------------------------
// Every site of batch (linked by next) from its breakpoint to its jump (to_jump) or back, all
// at once; a site whose text is not what it should be is left as it is and marked failed.
OKP_ARCH_PROVIDES(switch_jumps, void (*)(JumpSwitch* batch, bool to_jump));

// --- 4. Prove no task is inside (no lock held) ----------------------------------------------
// True when, at one instant after the regions' copies were published and an RCU grace period
// passed, no task was stopped strictly inside any of spans[0..n) nor in okprobes' slot area;
// false proves nothing (the optimizer then waits for tasks-RCU).
OKP_ARCH_PROVIDES(tasks_outside, bool (*)(okp_text_span* spans, usize n));

}  // namespace okp::arch::contract
