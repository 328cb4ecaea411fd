// SPDX-License-Identifier: GPL-2.0
// riscv64's definitions of the jump contract (arch/jump_contract.h declares each piece and
// checks it): a probe becomes `auipc R, hi; jalr x0, lo(R)` through a register R proven dead
// there, or a `jal x0` where the detour is within +-1 MiB (arch/riscv/detour.h), into a detour
// that runs the handlers and the relocated region (docs/riscv64-detours.md).
#pragma once

#include "arch/common/no_breakpoint_trap.h"
#include "arch/riscv/detour.h"
#include "probe_arch.h"
#include "kernel/arch/riscv/okp_riscv.h"
#include "seam/jump_services.h"

namespace okp::arch {

constexpr usize kMaxDetourSize = riscv::kMaxDetourSize;
// Decodes the whole function from func_start (okprobes' breakpoints recovered) with the
// kernel's tables (jump labels, exception table, BUG/WARN sites, jump tables) and kallsyms
// (jumps out of it are tail calls), checks the region at addr, finds its dead register and
// relocates it into a detour at buffer (arch/riscv/jump_probe_arch.cpp).
ErrorOr<DetourPlan> plan_detour(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                                RecoverFn recover, okp_addr_t buffer, bool with_post,
                                okp_addr_t site);
// Without KGDB do_trap_break never passes an ebreak to a module (src/kernel/arch/riscv/trap.c).
inline const char* breakpoints_missing() { return no_breakpoint_trap(); }
// The pair reaches +-2 GiB: from the probe to the detour and back.
inline bool detour_reaches(okp_addr_t addr, okp_addr_t buffer) {
  return riscv::detour_reaches(addr, buffer);
}
// [hit] The site a detour serves, from its copy's address.
inline okp_addr_t detour_site(okp_addr_t copy) { return riscv::detour_site(copy); }
inline bool detour_has_post(okp_addr_t copy) { return riscv::detour_has_post(copy); }
// The end of a detour's step (post entry): the interrupt bits as begin_step found them.
inline void end_detour_step(okp_regs* regs, unsigned long saved_flags) {
  constexpr unsigned long kMask = riscv::kStatusSie | riscv::kStatusSpie;
  regs->status = (regs->status & ~kMask) | saved_flags;
}
// [hit] From the post entry's return address: the ip post handlers see, and where to go on.
inline okp_addr_t detour_post_next_ip(okp_addr_t ret) { return riscv::detour_post_next_ip(ret); }
inline okp_addr_t detour_post_resume(okp_addr_t ret) { return riscv::detour_post_resume(ret); }
// Each chunk of the batch in one stop_machine (src/kernel/arch/riscv/text_patch.c): the pair
// is two instructions, so a hart between its auipc and its jalr would run the original second
// half after a switch back, and without a breakpoint trap the original is arbitrary. On a
// kernel that preempts no kernel code, every hart in the stopper is at an instant where no
// task is inside any region (a task sleeps only in a call, and a region's call is its last
// instruction), so all of a site's bytes are written at once, both ways. On one that preempts,
// the stop reads every task's stack first (src/kernel/arch/riscv/task_look.c) and writes only
// when none is stopped inside a region, else tries again: the way back until it is written,
// the way in a few times, then the site fails with busy saying why. From a breakpoint that
// traps to the jump nothing is stopped: the bytes after the breakpoint first, then the
// breakpoint's (the optimizer waited until no context is inside the region, as on x86-64).
void switch_jumps(JumpSwitch* batch, bool to_jump);
// Before a batch's way in from breakpoints (src/kernel/arch/riscv/detour.c).
inline bool tasks_outside(okp_text_span* spans, usize n) { return okp_seam_tasks_outside(spans, n); }

}  // namespace okp::arch
