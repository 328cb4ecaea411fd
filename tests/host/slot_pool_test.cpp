// SPDX-License-Identifier: GPL-2.0
// The slot pool (core/slot_pool.h): step slots (one cell) and detour buffers (runs of cells)
// share one area; boosted slots are retired, sealed and freed around a tasks-RCU wait.
#include <gtest/gtest.h>

#include "core/slot_pool.h"

namespace {

constexpr okp::usize kCell = 32;
using Pool = okp::SlotPool<kCell>;

TEST(SlotPool, CellsAndRunsShareTheArea) {
  Pool p;
  p.init(0x10000, 8 * kCell);
  const okp_addr_t a = p.allocate();
  const okp_addr_t run = p.allocate(3 * kCell);
  EXPECT_EQ(a, 0x10000u);
  EXPECT_EQ(run, 0x10000u + kCell);
  EXPECT_EQ(p.in_use(), 4u);
  EXPECT_EQ(p.allocate(5 * kCell), 0u) << "only 4 cells are left";
  EXPECT_NE(p.allocate(4 * kCell), 0u);
  EXPECT_EQ(p.allocate(), 0u);
  p.release(run, 3 * kCell);
  EXPECT_EQ(p.allocate(2 * kCell), run) << "a freed run is reused";
}

TEST(SlotPool, ARunSkipsTakenCells) {
  Pool p;
  p.init(0x10000, 8 * kCell);
  const okp_addr_t c0 = p.allocate(), c1 = p.allocate(), c2 = p.allocate();
  p.release(c1);
  EXPECT_EQ(p.allocate(2 * kCell), c2 + kCell) << "the single free cell at c1 is too short";
  // Next fit: the search goes on from the last run, and wraps around to c1 at the end.
  EXPECT_EQ(p.allocate(), c2 + 3 * kCell);
  EXPECT_EQ(p.allocate(), c2 + 4 * kCell);
  EXPECT_EQ(p.allocate(), c2 + 5 * kCell);
  EXPECT_EQ(p.allocate(), c1);
  EXPECT_EQ(p.allocate(), 0u) << "full";
  (void)c0;
}

TEST(SlotPool, RetiredSlotsWaitUntilSealedAndFreed) {
  Pool p;
  p.init(0x1000, 4 * kCell);
  const okp_addr_t s = p.allocate(2 * kCell);
  p.retire(s, 2 * kCell);
  EXPECT_EQ(p.waiting(), 2u);
  EXPECT_EQ(p.in_use(), 2u) << "retired is still taken";
  EXPECT_EQ(p.seal_retired(), 2u);
  p.retire(p.allocate(), kCell);  // retired after sealing: waits for the next round
  p.free_sealed();
  EXPECT_EQ(p.in_use(), 1u);
  EXPECT_EQ(p.waiting(), 1u);
  EXPECT_EQ(p.seal_retired(), 1u);
  p.free_sealed();
  EXPECT_EQ(p.in_use(), 0u);
}

}  // namespace
