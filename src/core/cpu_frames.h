// SPDX-License-Identifier: GPL-2.0
// Per-CPU frames (okp_cpu_state, passed in by the glue) record what this CPU is doing for
// okprobes: running handlers of a site or of a return probe, or single-stepping a slot. A
// hit while a frame is open is a re-entry: no handler runs and a miss is counted.
//
// Frames nest through whatever can interrupt the one that opened them: NMIs always;
// interrupts too where handlers run with interrupts on (a jump-optimized probe's pre handlers,
// ftrace entries, return handlers: preemption off only). Every opener closes its own frame
// before it returns, so frames stay strictly LIFO and an interrupt leaves depth as it found it.
//
// A frame is counted in depth before it is filled. An interrupt that comes in between sees the
// frame counted (a hit in it is a re-entry) and opens its own above it, so nothing it writes
// lands in ours. The only readers of a frame they did not open are an opener's own traps (a
// slot's step exit, a detour's post entry), which look at the top frame's kind first: a frame
// not yet filled has kind 0 (pop_frame leaves every frame above depth so), and the frames
// those traps close are filled before the step begins.
// (Filled first and counted after, an interrupt in between would take the same index and
// overwrite the frame's site and kind before the opener counts it.)
#pragma once

#include "seam/kernel_services.h"

namespace okp {

enum FrameKind : unsigned int {
  kHandlers = 1,       // pre/post or return handlers are running
  kStepping = 2,       // the slot is executing, its trap will come back to us
  kReentryStep = 3,    // stepping on behalf of a re-entered hit: no post handler
  // A jump-optimized probe with a post_handler: its detour's copy runs the first instruction
  // with interrupts off, then its post entry closes this frame.
  kDetourStep = 4,     // post handlers run at the post entry
  kDetourSkip = 5,     // none do (a re-entered hit, or the probe is gone)
};

[[gnu::always_inline]] inline okp_cpu_frame* push_frame(okp_cpu_state* cpu, const void* site,
                                                        unsigned int kind) {
  const unsigned int depth = cpu->depth;
  if (depth >= OKP_CPU_STACK_DEPTH) return nullptr;
  __atomic_store_n(&cpu->depth, depth + 1, __ATOMIC_RELAXED);
  // Same CPU only: the compiler must not hoist the frame's stores above the count.
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  okp_cpu_frame* f = &cpu->frames[depth];
  f->site = const_cast<void*>(site);
  f->kind = kind;
  f->saved_flags = 0;
  return f;
}

[[gnu::always_inline]] inline void pop_frame(okp_cpu_state* cpu) {
  const unsigned int depth = cpu->depth;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  cpu->frames[depth - 1].kind = 0;  // no kind: what an interrupt may see above depth
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&cpu->depth, depth - 1, __ATOMIC_RELAXED);
}

// A frame the hit opened on an idle CPU: frame 0, counted in depth and left unfilled (kind 0,
// as pop_frame leaves every frame above depth), as okp_core_on_detour's common hit does. Only
// step exits and detour post entries read a frame, and only one of their own kinds: a
// kHandlers frame is never read, so it need not be written; a step fills it before it begins.
// Closing it is then only the count (nothing was written that an interrupt must not see).
[[gnu::always_inline]] inline okp_cpu_frame* open_first_frame(okp_cpu_state* cpu) {
  __atomic_store_n(&cpu->depth, 1u, __ATOMIC_RELAXED);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);  // same CPU only: nothing hoisted above the count
  return &cpu->frames[0];
}
[[gnu::always_inline]] inline void close_first_frame(okp_cpu_state* cpu) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&cpu->depth, 0u, __ATOMIC_RELAXED);
}

}  // namespace okp
