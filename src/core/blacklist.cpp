// SPDX-License-Identifier: GPL-2.0
#include "core/blacklist.h"

#include "core/string.h"

namespace okp {

ErrorOr<void> Blacklist::add(okp_addr_t start, okp_addr_t end, const char* symbol,
                             const char* source, const void* owner, const char* via) {
  if (end <= start) return Error(Errno::kInval, "empty blacklist range");
  // Binary search for the insertion point.
  usize lo = 0, hi = count_;
  while (lo < hi) {
    usize mid = (lo + hi) / 2;
    if (entries_[mid].start < start) lo = mid + 1; else hi = mid;
  }
  for (usize i = lo; i < count_ && entries_[i].start == start; ++i)
    if (entries_[i].end == end && entries_[i].source == source) return {};
  if (count_ == capacity_) {
    usize cap = capacity_ ? capacity_ * 2 : 256;
    auto* grown = static_cast<BlacklistEntry*>(okp_seam_alloc(cap * sizeof(BlacklistEntry), OKP_GFP_KERNEL));
    if (!grown) return Error(Errno::kNoMem, "no memory for the blacklist");
    for (usize i = 0; i < count_; ++i) grown[i] = entries_[i];
    okp_seam_free(entries_);
    entries_ = grown;
    capacity_ = cap;
  }
  for (usize i = count_; i > lo; --i) entries_[i] = entries_[i - 1];
  BlacklistEntry& e = entries_[lo];
  e.start = start;
  e.end = end;
  e.source = source;
  e.owner = owner;
  copy_string(e.symbol, sizeof(e.symbol), symbol ? symbol : "");
  copy_string(e.via, sizeof(e.via), via ? via : "");
  ++count_;
  if (end - start > longest_) longest_ = end - start;
  return {};
}

void Blacklist::remove_owner(const void* owner) {
  usize out = 0;
  for (usize i = 0; i < count_; ++i)
    if (entries_[i].owner != owner) entries_[out++] = entries_[i];
  count_ = out;
}

const BlacklistEntry* Blacklist::find(okp_addr_t addr, usize len) const {
  okp_addr_t last = addr + (len ? len : 1) - 1;
  // First entry starting after `last`; candidates are before it and start >= addr-longest.
  usize lo = 0, hi = count_;
  while (lo < hi) {
    usize mid = (lo + hi) / 2;
    if (entries_[mid].start <= last) lo = mid + 1; else hi = mid;
  }
  for (usize i = lo; i-- > 0;) {
    const BlacklistEntry& e = entries_[i];
    if (e.end > addr) return &e;
    if (addr - e.start > longest_) break;
  }
  return nullptr;
}

void Blacklist::describe(const BlacklistEntry& e, char* buf, usize len) {
  if (e.via[0])
    okp_seam_format(buf, len, "%s, reached from %s", e.source, e.via);
  else
    okp_seam_format(buf, len, "%s", e.source);
}

void Blacklist::clear() {
  okp_seam_free(entries_);
  entries_ = nullptr;
  count_ = capacity_ = 0;
  longest_ = 0;
}

}  // namespace okp
