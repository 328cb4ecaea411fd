// SPDX-License-Identifier: GPL-2.0
// The lock-free index stack return stubs are kept on (core/index_stack.h), under threads:
// every index pushed is popped exactly once, none is lost or duplicated, whatever interleaves.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/index_stack.h"

namespace {

constexpr unsigned kIndices = 4096;
okp::u32 g_links[kIndices];

struct Stack : okp::IndexStack {
  Stack() { links = g_links; }
};

TEST(IndexStack, LifoOnOneThread) {
  Stack s;
  okp::u32 i;
  EXPECT_FALSE(s.pop(&i));
  s.push(7);
  s.push(0);
  s.push(4095);
  ASSERT_TRUE(s.pop(&i));
  EXPECT_EQ(i, 4095u);
  ASSERT_TRUE(s.pop(&i));
  EXPECT_EQ(i, 0u) << "index 0 is a real index, not the empty mark";
  ASSERT_TRUE(s.pop(&i));
  EXPECT_EQ(i, 7u);
  EXPECT_FALSE(s.pop(&i));
}

// What ABA safety rests on (index_stack.h): with the tag changed by pops only, whatever brings
// the head back to the index a pop read changes the head word, so that pop's compare-exchange
// fails; here the interleaving a stopped pop would see, done on one thread, with the pop's own
// compare-exchange replayed against the head it read.
TEST(IndexStack, APopRacingAPopAndPushOfItsIndexFails) {
  Stack s;
  s.push(9);
  s.push(5);
  s.push(3);
  okp::u64 read = s.head;  // the stopped pop read index 3, whose link is 5
  const okp::u32 link = g_links[3];
  okp::u32 i, j;
  ASSERT_TRUE(s.pop(&i));  // others: 3 and 5 go, 3 comes back above 9
  ASSERT_TRUE(s.pop(&j));
  s.push(i);
  EXPECT_EQ(static_cast<okp::u32>(s.head), static_cast<okp::u32>(read)) << "index 3 on top again";
  const okp::u64 stale = (((read >> 32) + 1) << 32) | link;  // would make 5 (taken) the top
  EXPECT_FALSE(__atomic_compare_exchange_n(&s.head, &read, stale, false, __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE));
  // A push alone leaves the tag, and pushes only never bring a popped head back.
  const okp::u64 before = s.head;
  s.push(j);
  EXPECT_EQ(s.head >> 32, before >> 32);
  EXPECT_NE(static_cast<okp::u32>(s.head), static_cast<okp::u32>(before));
  ASSERT_TRUE(s.pop(&i));
  EXPECT_EQ(i, j);
  ASSERT_TRUE(s.pop(&i));
  EXPECT_EQ(i, 3u);
  ASSERT_TRUE(s.pop(&i));
  EXPECT_EQ(i, 9u);
  EXPECT_FALSE(s.pop(&i));
}

// Threads take an index from one of two stacks and put it back on the other, as the entry
// path pops a pool's stub and a return on another CPU pushes it; long enough that threads
// share the two cores' time slices. Afterwards every index is on exactly one stack once.
// (The ABA interleaving the tag guards against needs a thread stopped between reading a link
// and its compare-exchange; the tag's argument is in index_stack.h.)
TEST(IndexStack, NothingLostOrDuplicatedUnderContention) {
  static Stack a, b;
  a = Stack{};
  b = Stack{};
  for (okp::u32 i = 0; i < 256; ++i) a.push(i);
  std::atomic<bool> go{false};
  std::atomic<long> moves{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) {
      }
      Stack& from = (t % 2) ? a : b;
      Stack& to = (t % 2) ? b : a;
      for (int n = 0; n < 3000000; ++n) {
        okp::u32 i;
        if (from.pop(&i)) {
          to.push(i);
          moves.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_GT(moves.load(), 0);
  std::vector<int> seen(256, 0);
  okp::u32 i;
  int count = 0;
  while (count <= 256 && a.pop(&i)) {  // bounded: a corrupted stack may be a cycle
    ASSERT_LT(i, 256u);
    if (seen[i]++) break;  // duplicated: the stacks share a chain
    ++count;
  }
  while (count <= 256 && b.pop(&i)) {
    ASSERT_LT(i, 256u);
    if (seen[i]++) break;  // duplicated: the stacks share a chain
    ++count;
  }
  EXPECT_EQ(count, 256);
  for (unsigned k = 0; k < 256; ++k) EXPECT_EQ(seen[k], 1) << "index " << k;
}

}  // namespace
