// SPDX-License-Identifier: GPL-2.0
// The host's stand-in for the kernel glue: the seam over libc and a fake kernel (a text
// buffer of hand-assembled functions and a slot area), with counters tests read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seam/okp_seam.h"

namespace okp_host {
struct SeamCounters {
  long allocs = 0;
  long frees = 0;
  long invariant_failures = 0;
  bool fail_next_alloc = false;
  // The lock contract, as the seam sees it.
  bool lock_held = false;
  long rcu_waits = 0;
  long tasks_waits = 0;
  long waits_under_lock = 0;      // a grace period waited for with the registry lock held
  long unlocked_asserts = 0;      // a lock-demanding member reached without the lock
  long patches = 0;
  long patches_without_lock = 0;  // text written without the registry lock
  long deferred_collections = 0;
  // Jump optimization.
  bool text_lock_held = false;
  long pokes_without_text_lock = 0;
  long text_syncs = 0;
  long deferred_optimizations = 0;
  const char* jumps_refused = nullptr;  // okp_seam_jumps_refused: why no jump may be written
  // okp_seam_tasks_outside: what it answers, how often it was asked, the spans it last got,
  // and whether it was asked with the registry lock held or before the RCU grace period.
  bool tasks_outside = false;
  long tasks_outside_asks = 0;
  long tasks_outside_before_rcu = 0;
  std::vector<okp_text_span> last_spans;
};
SeamCounters& seam_counters();

// The fake kernel's text and slot area (okp_seam_slot_area).
extern uint8_t g_text[];
extern uint8_t g_slots[128 * 1024];

// The fake kernel text: functions placed by name, probed and patched like the real one.
okp_addr_t fake_function(const std::string& name);  // 0 when there is none
// Resets the fake text to its pristine bytes and returns whether it still was (no leftover
// breakpoint).
bool fake_text_pristine();
// What okp_seam_indirect_thunks() answers (the kernel's retpoline thunks): none by default.
void set_indirect_thunks(okp_addr_t start, okp_addr_t end);  // start == end: none
// Fake kernel memory okp_seam_read_nofault() reads (jump tables, thunk text at kernel
// addresses the region checker computes): copied in; an empty data clears every mapping.
// Any other kernel-half address reads as unmapped (-EFAULT), never as host memory.
void map_fake_memory(okp_addr_t addr, const void* data, size_t len);
}  // namespace okp_host

// The regs okp_seam_break_not_ours (the break hook's "not ours" answer, 7 here) was last
// called with.
extern okp_regs* g_not_ours_regs;
