// SPDX-License-Identifier: GPL-2.0
// Per-CPU frames (okp_cpu_state, passed in by the glue) record what this CPU is doing for
// okprobes: running handlers of a site or of a return probe, or single-stepping a slot. A
// hit while a frame is open is a re-entry: no handler runs and a miss is counted.
//
// Frames nest through whatever can interrupt the one that opened them: NMIs always;
// interrupts too where handlers run with interrupts on (ftrace entries, return handlers,
// which run with preemption off only). So a frame is filled before it is counted in depth,
// and an interrupt on this CPU never sees a half-written top frame; every opener closes its
// own frame before it returns, so frames stay strictly LIFO.
#pragma once

#include "seam/okp_seam.h"

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
  okp_cpu_frame* f = &cpu->frames[depth];
  f->site = const_cast<void*>(site);
  f->kind = kind;
  f->saved_flags = 0;
  // Same CPU only: the compiler must not sink the frame's stores below the count.
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&cpu->depth, depth + 1, __ATOMIC_RELAXED);
  return f;
}

[[gnu::always_inline]] inline void pop_frame(okp_cpu_state* cpu) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&cpu->depth, cpu->depth - 1, __ATOMIC_RELAXED);
}

}  // namespace okp
