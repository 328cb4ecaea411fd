// SPDX-License-Identifier: GPL-2.0
// An intrusive hash table keyed by code address: the probe table's shape.
//
// Concurrency contract (the reason this is intrusive and singly linked):
//  - Writers (insert/remove) are serialised by the caller's registration lock.
//  - Readers (find, from the trap path) take no lock. A node is published with a release
//    store after it is fully initialised, and readers load links with acquire, so a reader
//    sees either the old or the new chain, never a half-built node.
//  - A removed node keeps its `next` link, so a reader standing on it still reaches the rest
//    of its chain. The caller must not reuse or free a removed node until every reader that
//    might stand on it has finished (an RCU grace period, provided through the seam).
#pragma once

#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp {

// Derive T from HashLinked<T> to make it storable in an AddressHashTable<T> (one table at
// a time), as fbl::SinglyLinkedListable does.
template <typename T>
class HashLinked {
 private:
  template <typename, unsigned> friend class AddressHashTable;
  T* hash_next_ = nullptr;
};

// T must expose `okp_addr_t hash_key() const`.
template <typename T, unsigned Bits>
class AddressHashTable {
 public:
  static constexpr unsigned kBuckets = 1u << Bits;

  constexpr AddressHashTable() = default;
  AddressHashTable(const AddressHashTable&) = delete;
  AddressHashTable& operator=(const AddressHashTable&) = delete;

  // Writer side. Adds at the chain head, so the newest entry for a key is found first.
  void insert(T& obj) {
    T*& head = bucket(obj.hash_key());
    obj.hash_next_ = head;
    __atomic_store_n(&head, &obj, __ATOMIC_RELEASE);
    ++size_;
  }

  // Writer side. Returns false if obj is not in the table.
  bool remove(T& obj) {
    for (T** pp = &bucket(obj.hash_key()); *pp; pp = &(*pp)->hash_next_) {
      if (*pp == &obj) {
        // Readers already on obj keep following obj.hash_next_: leave it intact.
        __atomic_store_n(pp, obj.hash_next_, __ATOMIC_RELEASE);
        --size_;
        return true;
      }
    }
    return false;
  }

  // Reader side: lock-free. The first entry whose key is addr, or nullptr.
  T* find(okp_addr_t addr) const {
    for (T* obj = __atomic_load_n(&bucket(addr), __ATOMIC_ACQUIRE); obj;
         obj = __atomic_load_n(&obj->hash_next_, __ATOMIC_ACQUIRE)) {
      if (obj->hash_key() == addr) return obj;
    }
    return nullptr;
  }

  // Reader side: the entry after obj in its chain (nullptr at the end). Valid on an entry
  // that was removed while the reader stood on it.
  static T* chain_next(const T& obj) { return __atomic_load_n(&obj.hash_next_, __ATOMIC_ACQUIRE); }

  // Writer side: visits every entry; fn(T&) must not modify the table.
  template <typename Fn>
  void for_each(Fn fn) const {
    for (unsigned b = 0; b < kBuckets; ++b)
      for (T* obj = buckets_[b]; obj; obj = obj->hash_next_) fn(*obj);
  }

  // Writer side: visits every entry whose key is in [start, end); fn(T&) must not modify the
  // table. Registration asks this of ranges a few bytes to a function long, on a table that
  // may hold tens of thousands of probes: it looks the range's keys up one by one when the
  // range is the smaller, and walks the table otherwise, so the cost is min(range, size)
  // chains (a whole-table walk per registration made a batch of 10k quadratic).
  template <typename Fn>
  void for_each_in_range(okp_addr_t start, okp_addr_t end, Fn fn) const {
    if (end <= start) return;
    if (end - start < size_) {
      for (okp_addr_t a = start; a < end; ++a)
        for (T* obj = buckets_[bucket_index(a)]; obj; obj = obj->hash_next_)
          if (obj->hash_key() == a) fn(*obj);
      return;
    }
    for_each([&](T& obj) {
      const okp_addr_t key = obj.hash_key();
      if (key >= start && key < end) fn(obj);
    });
  }

  usize size() const { return size_; }

  // Fibonacci hashing: code addresses share low alignment bits and high kernel bits, so
  // multiply to spread the middle bits over the whole index. On the low 32 bits: the kernel's
  // text and its modules' lie within a few GiB, whose addresses differ there, and the 32-bit
  // multiplier is two instructions fewer to build than the 64-bit one (arm64: mov + movk), on
  // every hit's lookup.
  static_assert(Bits > 0 && Bits < 32, "a 32-bit hash");
  static constexpr unsigned bucket_index(okp_addr_t addr) {
    return static_cast<u32>(static_cast<u32>(addr) * 0x9E3779B9u) >> (32 - Bits);
  }

 private:
  T*& bucket(okp_addr_t addr) { return buckets_[bucket_index(addr)]; }
  T* const& bucket(okp_addr_t addr) const { return buckets_[bucket_index(addr)]; }

  T* buckets_[kBuckets] = {};
  usize size_ = 0;  // guarded by the caller's writer lock
};

}  // namespace okp
