// SPDX-License-Identifier: GPL-2.0
// A lock-free LIFO of small indices (return stubs, a return probe's instances), any CPU pushing and popping at once,
// from the breakpoint trap or a return stub: no lock, no allocation.
//
// The links live in an array the stack's owner keeps (links[index] is index's next), so a
// stack costs two words. head = (tag << 32) | (index + 1); an index part of 0 is the empty
// stack. The tag changes on every pop, so a pop that raced with a pop+push of the same index
// fails its compare-exchange instead of linking a stale next (the ABA problem): an index is on
// the stack at most once, so whatever brings the head back to the index a pop read includes a
// pop (of it, or of what was pushed above it). A push needs no tag: it links whatever top its
// compare-exchange finds.
#pragma once

#include "core/utility.h"

namespace okp {

struct IndexStack {
  u64 head = 0;
  u32* links = nullptr;  // [every index the stack may hold], set before the first push

  [[gnu::always_inline]] void push(u32 index) {
    u64 old = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
    u64 next;
    do {
      __atomic_store_n(&links[index], static_cast<u32>(old), __ATOMIC_RELAXED);
      next = (old & ~u64{0xffffffffu}) | (index + 1);
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
      const u32 link = __atomic_load_n(&links[top - 1], __ATOMIC_RELAXED);
      next = (((old >> 32) + 1) << 32) | link;
    } while (!__atomic_compare_exchange_n(&head, &old, next, true, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    *index = static_cast<u32>(old) - 1;
    return true;
  }
};

}  // namespace okp
