// SPDX-License-Identifier: GPL-2.0
// The hit path of a jump probe: a detour's entry calls in here (seam/jump_services.h) instead
// of a breakpoint trap. It takes no lock, allocates nothing and never sleeps, as core/hit.cpp;
// the handlers' walk is theirs (core/hit_handlers.h), the detour's layout the arch's (the
// jump contract's hit-path pieces, arch/jump_contract.h).
#include "arch/jump_contract.h"
#include "core/cpu_frames.h"
#include "core/hit_handlers.h"
#include "core/hit_path.h"
#include "core/registry.h"
#include "seam/jump_services.h"

using namespace okp;

namespace {

// Every other detour hit: a re-entry (a frame is open on this CPU), or a post handler to run
// after the copy's first instruction. Out of line, so that the common hit below keeps a short
// prologue. Returns as okp_core_on_detour does.
[[gnu::noinline]] OKP_HIT_PATH int on_detour_uncommon(okp_addr_t copy, const Site& s,
                                                       okp_regs* regs, okp_cpu_state* cpu) {
  const bool post = arch::detour_has_post(copy);
  const bool reentry = cpu->depth > 0;
  okp_cpu_frame* frame = push_frame(cpu, &s, kHandlers);
  if (!frame) {
    // No frame for the post entry to close either: it resumes without handlers.
    okp_seam_invariant_failed("per-CPU probe frames exhausted", __FILE__, __LINE__);
    return 0;
  }
  if (reentry) {
    miss_all(s, OKP_MISS_REENTRY);
  } else if (run_pre_handlers(s, regs)) {
    pop_frame(cpu);  // redirected: the instruction is skipped, and so are post handlers
    return 1;
  }
  if (post) {
    frame->kind = reentry ? kDetourSkip : kDetourStep;
    arch::begin_step(regs, copy, &frame->saved_flags);
    return 1;
  }
  pop_frame(cpu);
  return 0;
}

}  // namespace

extern "C" OKP_HIT_PATH int okp_core_on_detour(okp_addr_t copy, struct okp_regs* regs,
                                               struct okp_cpu_state* cpu) {
  // The detour names its site: no lookup. A task preempted on its way here may come after the
  // probe was unregistered; the site is still there (JumpOptimizer::site_released keeps it as long
  // as its detours), with no probe left in it, so no handler runs and the copy runs.
  const Site& s = *reinterpret_cast<const Site*>(arch::detour_site(copy));
  // Handlers see what a breakpoint hit shows them (the kprobes convention).
  arch::restore_trap_ip(regs, s.addr);
  // The common hit, which is what an optimized probe's cost is: the probe is there, this
  // CPU has no frame open and no post handler waits. Its frame is frame 0 and only its count
  // matters: a kHandlers frame is never read (only step exits and post entries read a frame,
  // and only one of their own kinds), so it is counted and left unfilled, with the kind 0
  // every frame above depth has (core/cpu_frames.h). Unless a handler redirected (then
  // regs->ip is where it sent execution), the entry returns into the copy as it was called.
  // On x86-64 okp_detour_entry tells this common hit apart itself and takes it to
  // okp_core_on_detour_idle (the same work, less of it in C); it comes here only otherwise
  // (the host tests call this entry for every hit).
  if (__builtin_expect(cpu->depth == 0 && !arch::detour_has_post(copy), 1)) {
    __atomic_store_n(&cpu->depth, 1u, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    const bool redirected = run_pre_handlers(s, regs);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&cpu->depth, 0u, __ATOMIC_RELAXED);
    return redirected;
  }
  return on_detour_uncommon(copy, s, regs, cpu);
}

extern "C" OKP_HIT_PATH int okp_core_on_detour_idle(okp_addr_t site, struct okp_regs* regs) {
  // okp_core_on_detour's common hit, with the depth's check and its 0 -> 1 -> 0 and the
  // post-entry check done by the entry around this call, which also reads the site word for
  // it: no CPU state to keep across the handlers (one callee-saved register fewer to save).
  // What is left is the ip the handlers see and the handlers' walk: every instruction here is
  // the optimized probe's cost (docs/jump-optimization.md counts them against optprobes).
  // Its one probe's pre handler is tail-called (run_pre_handlers_last).
  const Site& s = *reinterpret_cast<const Site*>(site);
  arch::restore_trap_ip(regs, s.addr);
  return run_pre_handlers_last(s, regs);
}

extern "C" OKP_HIT_PATH void okp_core_on_detour_post(okp_addr_t ret, struct okp_regs* regs,
                                                     struct okp_cpu_state* cpu) {
  const okp_addr_t resume = arch::detour_post_resume(ret);
  okp_cpu_frame* top = cpu->depth ? &cpu->frames[cpu->depth - 1] : nullptr;
  if (!top || (top->kind != kDetourStep && top->kind != kDetourSkip)) {
    // The entry could not open the frame (exhausted): nothing to end.
    arch::set_instruction_pointer(regs, resume);
    return;
  }
  arch::end_detour_step(regs, top->saved_flags);
  if (top->kind == kDetourStep) {
    top->kind = kHandlers;
    arch::set_instruction_pointer(regs, arch::detour_post_next_ip(ret));
    run_post_handlers(*static_cast<const Site*>(top->site), regs);
  }
  pop_frame(cpu);
  arch::set_instruction_pointer(regs, resume);
}
