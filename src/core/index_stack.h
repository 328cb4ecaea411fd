// SPDX-License-Identifier: GPL-2.0
// A lock-free LIFO of small indices (return stubs), any CPU pushing and popping at once,
// from the breakpoint trap or a return stub: no lock, no allocation.
//
// The links live in the caller's objects (Links::link(index) names index's u32), so a stack
// costs one word. head = (tag << 32) | (index + 1); an index part of 0 is the empty stack. The
// tag changes on every push and pop, so a pop that raced with a pop+push of the same index
// fails its compare-exchange instead of linking a stale next (the ABA problem).
#pragma once

#include "core/utility.h"

namespace okp {

template <typename Links>
struct IndexStack {
  u64 head = 0;

  [[gnu::always_inline]] void push(u32 index) {
    u64 old = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
    u64 next;
    do {
      __atomic_store_n(Links::link(index), static_cast<u32>(old), __ATOMIC_RELAXED);
      next = (((old >> 32) + 1) << 32) | (index + 1);
    } while (!__atomic_compare_exchange_n(&head, &old, next, true, __ATOMIC_RELEASE,
                                          __ATOMIC_ACQUIRE));
  }

  [[gnu::always_inline]] bool pop(u32* index) {
    u64 old = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
    u64 next;
    do {
      const u32 top = static_cast<u32>(old);
      if (!top) return false;
      // May read a link that a racing pop+push changed: the tag makes that exchange fail.
      const u32 link = __atomic_load_n(Links::link(top - 1), __ATOMIC_RELAXED);
      next = (((old >> 32) + 1) << 32) | link;
    } while (!__atomic_compare_exchange_n(&head, &old, next, true, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    *index = static_cast<u32>(old) - 1;
    return true;
  }
};

}  // namespace okp
