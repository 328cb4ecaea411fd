// SPDX-License-Identifier: GPL-2.0
#include "core_checks.h"

#include "core/address_hash_table.h"
#include "core/error_or.h"
#include "core/switch_value.h"

#define OKP_EXPECT(ctx, cond) (ctx)->expect((ctx)->runner, (cond) ? 1 : 0, #cond, __FILE__, __LINE__)

namespace {

struct FakeProbe : okp::HashLinked<FakeProbe> {
  okp_addr_t addr = 0;
  int id = 0;
  okp_addr_t hash_key() const { return addr; }
};

using Table = okp::AddressHashTable<FakeProbe, 6>;

// Kernel-text-like addresses: high bits set, 16-byte aligned functions.
constexpr okp_addr_t kText = 0xffffffff81000000ul;

}  // namespace

extern "C" void okp_check_hash_table_find(okp_check_ctx* ctx) {
  static Table table;  // zero-initialised storage: no constructor runs (static, not stack: 512 B)
  static FakeProbe probes[200];
  for (int i = 0; i < 200; ++i) {
    probes[i].addr = kText + 16 * i + (i % 7);
    probes[i].id = i;
    table.insert(probes[i]);
  }
  OKP_EXPECT(ctx, table.size() == 200);
  bool all_found = true;
  for (int i = 0; i < 200; ++i) all_found &= table.find(probes[i].addr) == &probes[i];
  OKP_EXPECT(ctx, all_found);
  OKP_EXPECT(ctx, table.find(kText + 1) == nullptr);
  OKP_EXPECT(ctx, table.find(0) == nullptr);
  int visited = 0;
  table.for_each([&](FakeProbe&) { ++visited; });
  OKP_EXPECT(ctx, visited == 200);
  for (auto& p : probes) OKP_EXPECT(ctx, table.remove(p));
  OKP_EXPECT(ctx, table.size() == 0);
  OKP_EXPECT(ctx, !table.remove(probes[0]));
}

extern "C" void okp_check_hash_table_aggregate_order(okp_check_ctx* ctx) {
  static Table table;
  static FakeProbe a, b, other;
  a.addr = b.addr = kText + 0x40;
  a.id = 1;
  b.id = 2;
  other.addr = kText + 0x80;
  table.insert(a);
  table.insert(other);
  table.insert(b);
  // Newest first: the aggregate that replaced a probe at an address shadows it.
  OKP_EXPECT(ctx, table.find(kText + 0x40) == &b);
  OKP_EXPECT(ctx, table.remove(b));
  OKP_EXPECT(ctx, table.find(kText + 0x40) == &a);
  OKP_EXPECT(ctx, table.find(kText + 0x80) == &other);
  OKP_EXPECT(ctx, table.remove(a) && table.remove(other));
  OKP_EXPECT(ctx, table.find(kText + 0x40) == nullptr);
}

extern "C" void okp_check_hash_table_remove_keeps_readers_chain(okp_check_ctx* ctx) {
  // Two buckets for eight entries: long chains.
  using Table1 = okp::AddressHashTable<FakeProbe, 1>;
  static Table1 table;
  static FakeProbe p[8];
  for (int i = 0; i < 8; ++i) {
    p[i].addr = kText + 0x1000 * i;
    table.insert(p[i]);
  }
  // A reader standing on p[5] when p[5] is removed must still reach what followed it.
  FakeProbe* before[8] = {};
  int n_before = 0;
  for (FakeProbe* q = Table1::chain_next(p[5]); q; q = Table1::chain_next(*q)) before[n_before++] = q;
  OKP_EXPECT(ctx, table.remove(p[5]));
  OKP_EXPECT(ctx, table.find(p[5].addr) == nullptr);
  int n_after = 0;
  bool same = true;
  for (FakeProbe* q = Table1::chain_next(p[5]); q; q = Table1::chain_next(*q)) same &= before[n_after++] == q;
  OKP_EXPECT(ctx, same && n_after == n_before);
  bool others_found = true;
  for (int i = 0; i < 8; ++i)
    if (i != 5) others_found &= table.find(p[i].addr) == &p[i];
  OKP_EXPECT(ctx, others_found);
  for (int i = 0; i < 8; ++i)
    if (i != 5) OKP_EXPECT(ctx, table.remove(p[i]));
  OKP_EXPECT(ctx, table.size() == 0);
}

extern "C" void okp_check_hash_table_spread(okp_check_ctx* ctx) {
  // 4096 function entries 16 bytes apart over 64 buckets: mean 64 each.
  static unsigned counts[Table::kBuckets];
  for (unsigned& c : counts) c = 0;
  for (unsigned i = 0; i < 4096; ++i) ++counts[Table::bucket_index(kText + 16 * i)];
  unsigned max = 0, min = ~0u;
  for (unsigned c : counts) {
    max = c > max ? c : max;
    min = c < min ? c : min;
  }
  OKP_EXPECT(ctx, max <= 2 * 64);
  OKP_EXPECT(ctx, min >= 64 / 2);
}

extern "C" void okp_check_parse_switch(okp_check_ctx* ctx) {
  auto ok = [](const char* s, okp::usize n, bool want) {
    auto r = okp::parse_switch(s, n);
    return !r.is_error() && r.value() == want;
  };
  auto einval = [](const char* s, okp::usize n) {
    auto r = okp::parse_switch(s, n);
    return r.is_error() && r.error().kernel_errno() == -22;
  };
  OKP_EXPECT(ctx, ok("0", 1, false));
  OKP_EXPECT(ctx, ok("1", 1, true));
  OKP_EXPECT(ctx, ok("1\n", 2, true));
  OKP_EXPECT(ctx, ok("0\n", 2, false));
  OKP_EXPECT(ctx, einval("2", 1));
  OKP_EXPECT(ctx, einval("", 0));
  OKP_EXPECT(ctx, einval("10", 2));
  OKP_EXPECT(ctx, einval("1\n\n", 3));
  OKP_EXPECT(ctx, einval("y", 1));
  OKP_EXPECT(ctx, einval(nullptr, 1));
}

namespace {

okp::ErrorOr<int> half(int v) {
  if (v % 2) return okp::Error(okp::Errno::kInval, "odd value");
  return v / 2;
}

okp::ErrorOr<int> quarter(int v) {
  int h = OKP_TRY(half(v));
  return OKP_TRY(half(h));
}

}  // namespace

extern "C" void okp_check_error_or_try(okp_check_ctx* ctx) {
  auto good = quarter(12);
  OKP_EXPECT(ctx, !good.is_error() && good.value() == 3);
  auto bad = quarter(6);  // 6 -> 3 -> odd
  OKP_EXPECT(ctx, bad.is_error());
  OKP_EXPECT(ctx, bad.is_error() && bad.error().kernel_errno() == -22);
  OKP_EXPECT(ctx, bad.is_error() && bad.error().reason()[0] == 'o');
}
