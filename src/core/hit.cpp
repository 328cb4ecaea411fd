// SPDX-License-Identifier: GPL-2.0
// The hit path: what runs when a probed instruction is reached, through the breakpoint trap
// or through ftrace. It takes no lock, allocates nothing and never sleeps; it reads the probe
// table under the RCU protection the trap context gives (see registry.h).
//
// A hit while a per-CPU frame is open is a re-entry (core/cpu_frames.h): no handler runs, the
// instruction still executes, and a miss is counted.
#include <okprobes/okprobes.h>

#include "core/cpu_frames.h"
#include "core/hit_handlers.h"
#include "core/hit_path.h"
#include "core/registry.h"
#include "core/return_probe.h"
#include "seam/core_entries.h"
#ifdef OKP_JUMP_PROBES
#include "arch/jump_contract.h"  // a planned detour's copy is where a breakpoint hit resumes
#endif

namespace okp {

namespace {

// The slot's own trap: the copied instruction ran; resume after the original. depth: the
// caller's read of cpu->depth (non-zero). The frame closed is the one read here (frames are
// LIFO: whatever the post handlers open, they close), so pop_frame's re-reads are not needed.
OKP_HIT_INLINE bool finish_step(okp_cpu_state* cpu, unsigned int depth, okp_addr_t bp,
                                okp_regs* regs) {
  okp_cpu_frame* top = &cpu->frames[depth - 1];
  const unsigned int kind = top->kind;
  if (kind != kStepping && kind != kReentryStep) return false;
  auto* s = static_cast<const Site*>(top->site);
  if (!arch::is_step_exit(s->plan, s->step_slot, bp)) return false;
  arch::end_step(s->plan, s->addr, regs, top->saved_flags);
  if (kind == kStepping) {
    top->kind = kHandlers;
    run_post_handlers(*s, regs);
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  top->kind = 0;  // what an interrupt may see above depth (as pop_frame)
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&cpu->depth, depth - 1, __ATOMIC_RELAXED);
  return true;
}


// What a breakpoint hit does once its pre handlers ran (or, re-entered, were skipped): send
// execution on past the probed instruction, and close the hit's frame unless a step keeps it
// open. kReentry: frame was opened by push_frame on a busy CPU (filled, closed by pop_frame);
// otherwise it is open_first_frame's (unfilled until a step needs it).
template <bool kReentry>
OKP_HIT_INLINE int resume_after_pre(const Site& s, okp_regs* regs, okp_cpu_state* cpu,
                                    okp_cpu_frame* frame) {
  auto close = [cpu] {
    if (kReentry)
      pop_frame(cpu);
    else
      close_first_frame(cpu);
  };
  auto fill = [frame, &s](unsigned int kind) {
    frame->site = const_cast<Site*>(&s);
    frame->kind = kind;
  };
#ifdef OKP_JUMP_PROBES
  // A site whose detour is planned resumes in the detour's copy of its region: no step, and
  // nothing returns into the middle of a region that is about to hold (or holds) a jump.
  // (Without jump probes no site has a detour: the load is not even made.)
  if (const okp_addr_t copy = __atomic_load_n(&s.detour_copy, __ATOMIC_ACQUIRE)) {
    if (arch::detour_has_post(copy)) {  // the copy's post entry closes the frame
      fill(kReentry ? kDetourSkip : kDetourStep);
      arch::begin_step(regs, copy, &frame->saved_flags);
      return 1;
    }
    close();
    arch::set_instruction_pointer(regs, copy);
    return 1;
  }
#endif
  if (!arch::needs_slot(s.plan)) {
    if (arch::emulate(s.plan, s.addr, regs).is_error()) {
      // The original instruction would have faulted the same way: let the kernel report it.
      miss_all(s, OKP_MISS_FAULT);
      arch::restore_trap_ip(regs, s.addr);
      close();
      return 0;
    }
    if (!kReentry) run_post_handlers(s, regs);
    close();
    return 1;
  }
  if (__atomic_load_n(&s.boost, __ATOMIC_ACQUIRE) || (kReentry && s.boost_slot)) {
    close();
    arch::enter_boosted(regs, s.boost_slot);
    return 1;
  }
  fill(kReentry ? kReentryStep : kStepping);
  arch::begin_step(regs, s.step_slot, &frame->saved_flags);
  return 1;
}

// How a breakpoint entry answers its caller. BoolAnswer: okp_core_on_breakpoint's 1 (taken)
// or 0. HookAnswer: okp_core_on_break_hook's, the convention of a trap hook that tail-calls
// the core (0 taken, 1 refused, else what the glue's okp_seam_break_not_ours says, tail-called
// by name: the hook passes no pointer), so that the hook adds no frame of its own to every
// hit. Both are instantiated from the same code below.
struct BoolAnswer {
  static constexpr int kTaken = 1, kRefused = 0;
  OKP_HIT_INLINE static int not_ours(okp_regs*) { return 0; }
};
struct HookAnswer {
  static constexpr int kTaken = 0, kRefused = 1;
  OKP_HIT_INLINE static int not_ours(okp_regs* regs) { return okp_seam_break_not_ours(regs); }
};

// A breakpoint while a frame is open on this CPU that is no step exit: a re-entry (a probe hit
// from inside a handler, or from whatever interrupted one): no handler runs, the instruction
// still executes, and a miss is counted.
template <class Answer>
OKP_HIT_INLINE int on_breakpoint_reentry(okp_regs* regs, okp_cpu_state* cpu,
                                         okp_addr_t bp) {
  const Site* s = registry().find(bp);
  if (!s) return Answer::not_ours(regs);  // kgdb's, or the kernel's kprobes'
  okp_cpu_frame* frame = push_frame(cpu, s, kHandlers);
  if (!frame) {
    okp_seam_invariant_failed("per-CPU probe frames exhausted", __FILE__, __LINE__);
    return Answer::kRefused;
  }
  miss_all(*s, OKP_MISS_REENTRY);
  return resume_after_pre<true>(*s, regs, cpu, frame) ? Answer::kTaken : Answer::kRefused;
}

// The common hit: an idle CPU (no frame open), our site. Every instruction from here to the
// handler call, and from its return to the exception return, is the cost of a breakpoint
// probe (docs/benchmarks-arm64-icount.md counts them against the kernel's kprobes).
template <class Answer>
OKP_HIT_INLINE int on_breakpoint_idle(okp_regs* regs, okp_cpu_state* cpu,
                                      okp_addr_t bp) {
  const Site* s = registry().find(bp);
  if (!s) return Answer::not_ours(regs);  // kgdb's, or the kernel's kprobes'
  okp_cpu_frame* frame = open_first_frame(cpu);
  if (run_pre_handlers(*s, regs)) {
    close_first_frame(cpu);
    return Answer::kTaken;
  }
  return resume_after_pre<false>(*s, regs, cpu, frame) ? Answer::kTaken : Answer::kRefused;
}

// Each answer's out-of-line copies of the uncommon paths, tail-called (arguments in the
// callers' order: no register moves). Not templates: GCC puts a template's instances in .text
// whatever their section attribute says, and the hit path must stay in .kprobes.text.
[[gnu::noinline]] OKP_HIT_PATH int reentry_bool(okp_regs* regs, okp_cpu_state* cpu,
                                                okp_addr_t bp) {
  return on_breakpoint_reentry<BoolAnswer>(regs, cpu, bp);
}
[[gnu::noinline]] OKP_HIT_PATH int reentry_hook(okp_regs* regs, okp_cpu_state* cpu,
                                                okp_addr_t bp) {
  return on_breakpoint_reentry<HookAnswer>(regs, cpu, bp);
}
using ReentryFn = int (*)(okp_regs*, okp_cpu_state*, okp_addr_t);

// A frame is open on this CPU: a slot's step exit (the common case: the second trap of every
// stepped hit), or else a re-entry.
template <class Answer, ReentryFn reentry>
OKP_HIT_INLINE int on_breakpoint_busy(okp_regs* regs, okp_cpu_state* cpu, okp_addr_t bp,
                                      unsigned int depth) {
  if (finish_step(cpu, depth, bp, regs)) return Answer::kTaken;
  return reentry(regs, cpu, bp);
}
[[gnu::noinline]] OKP_HIT_PATH int busy_bool(okp_regs* regs, okp_cpu_state* cpu, okp_addr_t bp,
                                             unsigned int depth) {
  return on_breakpoint_busy<BoolAnswer, reentry_bool>(regs, cpu, bp, depth);
}
[[gnu::noinline]] OKP_HIT_PATH int busy_hook(okp_regs* regs, okp_cpu_state* cpu, okp_addr_t bp,
                                             unsigned int depth) {
  return on_breakpoint_busy<HookAnswer, reentry_hook>(regs, cpu, bp, depth);
}
using BusyFn = int (*)(okp_regs*, okp_cpu_state*, okp_addr_t, unsigned int);

// The entries: a busy CPU's trap is passed on by a tail call; the idle CPU's hit, the common
// one, runs here, inline.
template <class Answer, BusyFn busy>
OKP_HIT_INLINE int on_breakpoint(okp_regs* regs, okp_cpu_state* cpu) {
  const okp_addr_t bp = arch::breakpoint_address(regs);
  const unsigned int depth = __atomic_load_n(&cpu->depth, __ATOMIC_RELAXED);
  if (__builtin_expect(depth != 0, 0)) return busy(regs, cpu, bp, depth);
  return on_breakpoint_idle<Answer>(regs, cpu, bp);
}

}  // namespace

}  // namespace okp

using namespace okp;

extern "C" OKP_HIT_PATH int okp_core_on_breakpoint(struct okp_regs* regs, struct okp_cpu_state* cpu) {
  return on_breakpoint<BoolAnswer, busy_bool>(regs, cpu);
}

extern "C" OKP_HIT_PATH int okp_core_on_break_hook(struct okp_regs* regs, struct okp_cpu_state* cpu) {
  return on_breakpoint<HookAnswer, busy_hook>(regs, cpu);
}

namespace {
// Every other trap of the step-ending breakpoint: a step whose frame is not frame 0 (a
// re-entered hit's step, or a step from inside an interrupt's frame), or nobody's step of ours.
[[gnu::noinline]] OKP_HIT_PATH int step_exit_uncommon(okp_regs* regs, okp_cpu_state* cpu) {
  const unsigned int depth = __atomic_load_n(&cpu->depth, __ATOMIC_RELAXED);
  if (depth != 0 && finish_step(cpu, depth, arch::breakpoint_address(regs), regs))
    return HookAnswer::kTaken;
  return HookAnswer::not_ours(regs);
}
}  // namespace

// The step-ending breakpoint, where the arch gives it a trap of its own (arm64's second BRK
// immediate): only a step can end here, so no lookup and no re-entry test. The common exit is
// the idle hit's step: frame 0 (the only one open), kStepping, this site's slot. Anything else
// goes the general way (finish_step's checks, then not_ours).
extern "C" OKP_HIT_PATH int okp_core_on_step_break_hook(struct okp_regs* regs,
                                                        struct okp_cpu_state* cpu) {
  okp_cpu_frame* const top = &cpu->frames[0];
  if (__builtin_expect(__atomic_load_n(&cpu->depth, __ATOMIC_RELAXED) != 1 ||
                       top->kind != kStepping, 0))
    return step_exit_uncommon(regs, cpu);
  // kStepping: the frame was filled before the step began (a frame that is not filled has kind
  // 0), so its site is the one being stepped.
  const Site* s = static_cast<const Site*>(top->site);
  if (__builtin_expect(!arch::is_step_exit(s->plan, s->step_slot, arch::breakpoint_address(regs)), 0))
    return step_exit_uncommon(regs, cpu);
  arch::end_step(s->plan, s->addr, regs, top->saved_flags);
  top->kind = kHandlers;
  run_post_handlers(*s, regs);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  top->kind = 0;  // what an interrupt may see above depth (as pop_frame)
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&cpu->depth, 0u, __ATOMIC_RELAXED);
  return HookAnswer::kTaken;
}

namespace {

// An ftrace hit. kIpmodify: which of the glue's two ftrace_ops called (a constant per entry, so
// that checking the site against it is one compare). A site is in one ops' filter only
// (registration refuses a mismatch); the check guards a call still in flight from the other
// ops after the site was released and made again. The CPU is idle in the common hit: its frame
// is frame 0, counted and left unfilled as okp_core_on_detour's (a kHandlers frame is never
// read; ftrace sites never step). Every instruction here is the ftrace entry's cost
// (docs/benchmarks-icount.md, ret-ftrace, counts it against kprobe_ftrace_handler).
template <bool kIpmodify>
OKP_HIT_INLINE void on_ftrace(okp_addr_t site_addr, okp_regs* regs, okp_cpu_state* cpu) {
  const Site* s = registry().find(site_addr);
  constexpr Site::FtraceEntry kServed = kIpmodify ? Site::FtraceEntry::kIpmodify : Site::FtraceEntry::kPlain;
  if (!s || s->ftrace_entry != kServed) return;
  if (cpu->depth > 0) {
    miss_all(*s, OKP_MISS_REENTRY);
    return;
  }
  open_first_frame(cpu);
  const okp_addr_t orig_ip = arch::instruction_pointer(regs);
  // From here the site's own address (s->addr == site_addr): site_addr need not be kept
  // across the handlers' calls.
  arch::set_instruction_pointer(regs, arch::ftrace_pre_ip(s->addr));
  if (run_pre_handlers(*s, regs)) {
    // The handler set the ip it wants: obeyed with or without IPMODIFY, as the kernel's
    // kprobes obey it on an entry they serve through ftrace (docs/api.md, "Changing the
    // instruction pointer").
    close_first_frame(cpu);
    return;
  }
  // Post handlers see the ip after the call, as if it had been stepped. A site none of whose
  // probes has one (update_site keeps ftrace_post, as it keeps boost) skips the walk.
  if (__atomic_load_n(&s->ftrace_post, __ATOMIC_ACQUIRE)) {
    arch::set_instruction_pointer(regs, arch::ftrace_post_ip(s->addr));
    run_post_handlers(*s, regs);
  }
  arch::set_instruction_pointer(regs, orig_ip);
  close_first_frame(cpu);
}

}  // namespace

extern "C" OKP_HIT_PATH void okp_core_on_ftrace(okp_addr_t site_addr, struct okp_regs* regs,
                                                struct okp_cpu_state* cpu) {
  on_ftrace<false>(site_addr, regs, cpu);
}

extern "C" OKP_HIT_PATH void okp_core_on_ftrace_ipmodify(okp_addr_t site_addr, struct okp_regs* regs,
                                                         struct okp_cpu_state* cpu) {
  on_ftrace<true>(site_addr, regs, cpu);
}
