// SPDX-License-Identifier: GPL-2.0
// x86-64's definitions of the jump contract (arch/jump_contract.h declares each piece and
// checks it): a probe's int3 becomes a `jmp rel32` to a detour (arch/x86/detour.h).
#pragma once

#include "arch/x86/detour.h"
#include "probe_arch.h"
#include "seam/jump_services.h"

namespace okp::arch {

constexpr usize kMaxDetourSize = x86::kMaxDetourSize;
// Decodes the whole function from func_start (okprobes' breakpoints recovered), checks the
// region at addr against it, its exception-table entries and its neighbours' branches, and
// relocates it into a detour at buffer calling okp_detour_entry (and okp_detour_post_entry
// after the first instruction, with_post) (arch/x86/jump_probe_arch.cpp).
ErrorOr<DetourPlan> plan_detour(okp_addr_t addr, okp_addr_t func_start, unsigned long func_size,
                                RecoverFn recover, okp_addr_t buffer, bool with_post,
                                okp_addr_t site);
// int3 reaches okprobes through the die notifier chain on every x86-64 kernel.
inline const char* breakpoints_missing() { return nullptr; }
// rel32 reaches +-2 GiB: the module area is within it of the kernel's text by construction.
inline bool detour_reaches(okp_addr_t, okp_addr_t) { return true; }
// [hit] The site a detour serves, from its copy's address.
inline okp_addr_t detour_site(okp_addr_t copy) { return x86::detour_site(copy); }
inline bool detour_has_post(okp_addr_t copy) { return x86::detour_has_post(copy); }
// The end of a detour's step (post entry): the interrupt flag the entry cleared comes back.
inline void end_detour_step(okp_regs* regs, unsigned long saved_flags) { regs->flags |= saved_flags; }
// [hit] From the post entry's return address: the ip post handlers see, and where to go on.
inline okp_addr_t detour_post_next_ip(okp_addr_t ret) { return x86::detour_post_next_ip(ret); }
inline okp_addr_t detour_post_resume(okp_addr_t ret) { return x86::detour_post_resume(ret); }
// As the kernel's int3-guarded patching: every site's bytes after the first (the int3 still at
// byte 0 sends a CPU to the detour's copy), one sync, then every first byte, one sync. Back to
// the breakpoint is the mirror. One pair of syncs per batch, not per site.
void switch_jumps(JumpSwitch* batch, bool to_jump);
// The stop_machine() look at every task's stack (src/kernel/arch/x86/task_snapshot.c).
inline bool tasks_outside(okp_text_span* spans, usize n) { return okp_seam_tasks_outside(spans, n); }

}  // namespace okp::arch
