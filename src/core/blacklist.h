// SPDX-License-Identifier: GPL-2.0
// Address ranges no probe may touch, each with the symbol it covers and where the entry came
// from (`_kprobe_blacklist`, `.entry.text`, `okprobes`, `built-in`, a module's section...).
// The glue feeds it at load and on module events; every access is under the registry lock
// (the trap path never consults it: it only protects registration).
#pragma once

#include "core/error_or.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp {

struct BlacklistEntry {
  okp_addr_t start;
  okp_addr_t end;  // exclusive
  const char* source;  // static string
  const void* owner;   // module that contributed it (nullptr: vmlinux or okprobes)
  char symbol[64];
  char via[64];  // "trap path" entries: the function it was reached from ("" otherwise)
};

class Blacklist {
 public:
  // Keeps entries sorted by start; duplicates of one (start, end, source) are dropped.
  ErrorOr<void> add(okp_addr_t start, okp_addr_t end, const char* symbol, const char* source,
                    const void* owner, const char* via = nullptr);
  // "SOURCE" or "SOURCE, reached from VIA": how debugfs and refusals name an entry's origin.
  static void describe(const BlacklistEntry& e, char* buf, usize len);
  void remove_owner(const void* owner);
  // The entry containing any byte of [addr, addr+len), or nullptr.
  const BlacklistEntry* find(okp_addr_t addr, usize len) const;
  template <typename Fn>
  void for_each(Fn fn) const {
    for (usize i = 0; i < count_; ++i) fn(entries_[i]);
  }
  usize size() const { return count_; }
  void clear();

 private:
  BlacklistEntry* entries_ = nullptr;
  usize count_ = 0;
  usize capacity_ = 0;
  okp_addr_t longest_ = 0;  // the widest range: bounds the backwards scan in find()
};

}  // namespace okp
