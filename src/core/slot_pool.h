// SPDX-License-Identifier: GPL-2.0
// Out-of-line execution slots: fixed-size cells of the executable area the glue provides
// (okprobes' own read-only text, so no writable+executable mapping ever exists). Allocation
// is writer-side only (registry lock); a freed slot may be reused only after the caller waited
// for every CPU and task that could still be executing it.
#pragma once

#include "core/utility.h"
#include "seam/okp_seam.h"

namespace okp {

template <usize SlotSize>
class SlotPool {
 public:
  void init(okp_addr_t base, usize bytes) {
    base_ = base;
    count_ = bytes / SlotSize;
    if (count_ > kMaxSlots) count_ = kMaxSlots;
  }
  // 0 when every slot is taken.
  okp_addr_t allocate() {
    for (usize i = 0; i < count_; ++i) {
      u64& word = used_[i / 64];
      u64 bit = u64{1} << (i % 64);
      if (!(word & bit)) {
        word |= bit;
        ++in_use_;
        return base_ + i * SlotSize;
      }
    }
    return 0;
  }
  void release(okp_addr_t slot) {
    if (!slot || slot < base_) return;
    usize i = (slot - base_) / SlotSize;
    if (i >= count_) return;
    used_[i / 64] &= ~(u64{1} << (i % 64));
    --in_use_;
  }
  usize in_use() const { return in_use_; }
  usize capacity() const { return count_; }

 private:
  static constexpr usize kMaxSlots = 4096;
  okp_addr_t base_ = 0;
  usize count_ = 0;
  usize in_use_ = 0;
  u64 used_[kMaxSlots / 64] = {};
};

}  // namespace okp
