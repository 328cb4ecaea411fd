// SPDX-License-Identifier: GPL-2.0
// Return probes (okp_kretprobe): an entry probe takes an instance from its probe's pool and a
// free return stub (arch/<arch>/return_stubs.S), and replaces the return address on the stack
// by the stub; the stub's trampoline runs the return handler and goes back to the real return
// address. The stub identifies the frame and its instance, so nothing is looked up on return
// and no task_struct field is needed. Registration reserves instances (maxactive), no stubs:
// the stubs bound only the frames suspended at once, all probes together.
//
// Stubs and their per-stub state (StubState) are global and never freed: a frame that
// still points at a stub after its probe was unregistered returns through it safely (the
// stub is "detached": no handler, the real return address still known). Instances and their
// data belong to the probe's pool, freed at unregister after an RCU grace period.
//
// Lock-free: a pool's free instances and the global free stubs are tagged (ABA-safe) stacks of
// indices (core/index_stack.h); the entry path pops, the return path pushes, any CPU. Registration
// and unregistration run under the registry lock. The stubs' life cycle is stub_life.h.
#pragma once

#include <okprobes/okprobes.h>

#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp {

// The pre_handler of a return probe's entry probe: takes an instance of kp's return probe for
// the frame entered at regs, runs the entry handler and diverts the frame's return (to a stub,
// or to the kernel's rethook trampoline).
int return_entry(okp_kprobe* kp, pt_regs* regs);

// The debugfs `list` suffix of a return probe: maxactive, peak, misses by cause and advice.
void describe_return_probe(const okp_kretprobe* rp, char* buf, usize len);

// Whether kp is the entry probe of a return probe (debugfs shows it with type r).
bool is_return_entry(const okp_kprobe* kp);

// Why a return probe may not go on the function named by symbol ("name+off/size"), or
// nullptr when it may. The reason is a static string.
const char* return_probe_unsafe(const char* symbol);

}  // namespace okp
