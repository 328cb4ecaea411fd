// SPDX-License-Identifier: GPL-2.0
// AddressHashTable::for_each_in_range (core/address_hash_table.h): both of its ways, keys
// looked up one by one (range smaller than the table) and a walk of the table (range larger),
// visit exactly the entries whose key is in [start, end), each once, duplicates of a key too.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "core/address_hash_table.h"

namespace {

struct Entry : okp::HashLinked<Entry> {
  okp_addr_t key = 0;
  okp_addr_t hash_key() const { return key; }
};
using Table = okp::AddressHashTable<Entry, 4>;

std::map<const Entry*, int> visits(const Table& t, okp_addr_t start, okp_addr_t end) {
  std::map<const Entry*, int> seen;
  t.for_each_in_range(start, end, [&](Entry& e) { ++seen[&e]; });
  return seen;
}

void expect_exactly(const std::vector<Entry>& all, okp_addr_t start, okp_addr_t end,
                    const std::map<const Entry*, int>& seen) {
  for (const Entry& e : all) {
    const bool inside = e.key >= start && e.key < end;
    auto it = seen.find(&e);
    EXPECT_EQ(it == seen.end() ? 0 : it->second, inside ? 1 : 0)
        << "key " << std::hex << e.key << " range " << start << ".." << end;
  }
}

TEST(AddressHashTable, ForEachInRangeMatchesAFilteredWalk) {
  const okp_addr_t base = 0xffffffffc0001000ull;
  std::vector<Entry> all(200);
  Table t;
  for (size_t i = 0; i < all.size(); ++i) {
    all[i].key = base + (i / 2) * 7;  // two entries per key, keys 7 bytes apart
    t.insert(all[i]);
  }
  ASSERT_EQ(t.size(), all.size());
  // Small ranges (lookups by key), including empty and reversed ones.
  for (okp_addr_t start = base - 8; start < base + 40; ++start)
    for (okp_addr_t len = 0; len < 20; ++len)
      expect_exactly(all, start, start + len, visits(t, start, start + len));
  EXPECT_TRUE(visits(t, base + 10, base + 3).empty());
  // Ranges larger than the table (the walk).
  expect_exactly(all, base, base + 5000, visits(t, base, base + 5000));
  expect_exactly(all, base + 100, base + 100 + 1000, visits(t, base + 100, base + 1100));
  // After a removal the removed entry is not visited.
  ASSERT_TRUE(t.remove(all[3]));
  auto seen = visits(t, all[3].key, all[3].key + 1);
  EXPECT_EQ(seen.count(&all[3]), 0u);
  EXPECT_EQ(seen.count(&all[2]), 1u);
}

}  // namespace
