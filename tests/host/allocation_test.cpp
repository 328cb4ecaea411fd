// SPDX-License-Identifier: GPL-2.0
// okp::make/destroy: allocation names its context, failure is a nullptr, not a crash.
#include <gtest/gtest.h>

#include "core/new.h"
#include "host_seam.h"

namespace {

struct Tracked {
  explicit Tracked(int* live) : live_(live) { ++*live_; }
  ~Tracked() { --*live_; }
  int* live_;
};

TEST(Allocation, MakeConstructsAndDestroyDestructs) {
  int live = 0;
  auto& c = okp_host::seam_counters();
  long allocs = c.allocs, frees = c.frees;
  Tracked* t = okp::make<Tracked>(okp::Gfp::kKernel, &live);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(live, 1);
  okp::destroy(t);
  EXPECT_EQ(live, 0);
  EXPECT_EQ(c.allocs - allocs, 1);
  EXPECT_EQ(c.frees - frees, 1);
}

TEST(Allocation, FailedAllocationReturnsNullAndConstructsNothing) {
  int live = 0;
  okp_host::seam_counters().fail_next_alloc = true;
  EXPECT_EQ(okp::make<Tracked>(okp::Gfp::kAtomic, &live), nullptr);
  EXPECT_EQ(live, 0);
}

}  // namespace
