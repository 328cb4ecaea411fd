// SPDX-License-Identifier: GPL-2.0
// Out-of-line execution slots: runs of fixed-size cells of the executable area the glue provides
// (okprobes' own read-only text, so no writable+executable mapping ever exists). Allocation
// is writer-side only (registry lock); a freed slot may be reused only after the caller waited
// for every CPU and task that could still be executing it.
#pragma once

#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp {

// Set bits of a word, without the libgcc call __builtin_popcountll becomes without -mpopcnt.
constexpr usize count_bits(u64 w) {
  usize n = 0;
  for (; w; w &= w - 1) ++n;
  return n;
}

template <usize SlotSize>
class SlotPool {
 public:
  void init(okp_addr_t base, usize bytes) {
    base_ = base;
    count_ = bytes / SlotSize;
    if (count_ > kMaxSlots) count_ = kMaxSlots;
  }
  // Two sizes share the area: a step slot is one cell, a detour buffer (the jump optimizer's)
  // a run of consecutive cells. 0 when no run of that many cells is free.
  okp_addr_t allocate(usize bytes = SlotSize) {
    const usize cells = (bytes + SlotSize - 1) / SlotSize;
    // From where the last run was taken, then from the start: registering N probes does not
    // rescan the N runs it took before.
    if (okp_addr_t slot = allocate_from(hint_, cells)) return slot;
    return allocate_from(0, cells);
  }
  void release(okp_addr_t slot, usize bytes = SlotSize) {
    usize i;
    if (!index_of(slot, &i)) return;
    const usize cells = (bytes + SlotSize - 1) / SlotSize;
    for (usize k = 0; k < cells && i + k < count_; ++k) {
      clear(used_, i + k);
      --in_use_;
    }
  }
  // A slot that may still be running after a grace period (a boosted slot a preempted task
  // sits in): it stays taken until seal_retired() and free_sealed() around an RCU-tasks wait.
  void retire(okp_addr_t slot, usize bytes = SlotSize) {
    usize i;
    if (!index_of(slot, &i)) return;
    const usize cells = (bytes + SlotSize - 1) / SlotSize;
    for (usize k = 0; k < cells && i + k < count_; ++k) set(retired_, i + k);
  }
  // Retired slots become sealed: the wait that follows covers every task that was in them.
  usize seal_retired() {
    usize n = 0;
    for (usize w = 0; w < kWords; ++w) {
      sealed_[w] |= retired_[w];
      retired_[w] = 0;
      n += count_bits(sealed_[w]);
    }
    return n;
  }
  void free_sealed() {
    for (usize w = 0; w < kWords; ++w) {
      in_use_ -= count_bits(sealed_[w]);
      used_[w] &= ~sealed_[w];
      sealed_[w] = 0;
    }
  }
  // Slots taken but waiting to be freed (retired or sealed).
  usize waiting() const {
    usize n = 0;
    for (usize w = 0; w < kWords; ++w) n += count_bits(retired_[w] | sealed_[w]);
    return n;
  }
  usize in_use() const { return in_use_; }
  usize capacity() const { return count_; }
  // The first and the last cell (capacity() > 0).
  okp_addr_t first_cell() const { return base_; }
  okp_addr_t last_cell() const { return base_ + (count_ - 1) * SlotSize; }

 private:
  okp_addr_t allocate_from(usize first, usize cells) {
    for (usize i = first; cells && i + cells <= count_; ++i) {
      if (taken(i)) {
        // A full word of taken cells is skipped whole.
        if (i % 64 == 0 && used_[i / 64] == ~u64{0}) i += 63;
        continue;
      }
      usize n = 0;
      while (n < cells && !taken(i + n)) ++n;
      if (n < cells) {
        i += n;  // the run broke at i + n: resume after it
        continue;
      }
      for (usize k = 0; k < cells; ++k) set(used_, i + k);
      in_use_ += cells;
      hint_ = i + cells;
      return base_ + i * SlotSize;
    }
    return 0;
  }
  bool taken(usize i) const { return used_[i / 64] & (u64{1} << (i % 64)); }
  static void set(u64* bits, usize i) { bits[i / 64] |= u64{1} << (i % 64); }
  static void clear(u64* bits, usize i) { bits[i / 64] &= ~(u64{1} << (i % 64)); }
  bool index_of(okp_addr_t slot, usize* i) const {
    if (!slot || slot < base_) return false;
    *i = (slot - base_) / SlotSize;
    return *i < count_;
  }
  static constexpr usize kMaxSlots = 32768;
  static constexpr usize kWords = kMaxSlots / 64;
  okp_addr_t base_ = 0;
  usize count_ = 0;
  usize in_use_ = 0;
  usize hint_ = 0;  // where the next search starts
  u64 used_[kWords] = {};
  u64 retired_[kWords] = {};
  u64 sealed_[kWords] = {};
};

}  // namespace okp
