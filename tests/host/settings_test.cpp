// SPDX-License-Identifier: GPL-2.0
// The C entry points the debugfs/sysctl glue calls.
#include <gtest/gtest.h>

#include "seam/okp_seam.h"

TEST(Settings, ArmedSwitchRoundTrips) {
  ASSERT_EQ(okp_core_armed(), 1);
  EXPECT_EQ(okp_core_set_armed(0), 0);
  EXPECT_EQ(okp_core_armed(), 0);
  EXPECT_EQ(okp_core_set_armed(2), -22);
  EXPECT_EQ(okp_core_armed(), 0);
  EXPECT_EQ(okp_core_set_armed(1), 0);
  EXPECT_EQ(okp_core_armed(), 1);
}

TEST(Settings, OptimizationSwitchRefusesOtherValues) {
  EXPECT_EQ(okp_core_set_optimization(-1), -22);
  EXPECT_EQ(okp_core_optimization(), 1);
  EXPECT_EQ(okp_core_set_optimization(0), 0);
  EXPECT_EQ(okp_core_optimization(), 0);
  EXPECT_EQ(okp_core_set_optimization(1), 0);
}

TEST(Settings, ParseSwitchThroughCAbi) {
  int v = -1;
  EXPECT_EQ(okp_core_parse_switch("1\n", 2, &v), 0);
  EXPECT_EQ(v, 1);
  v = -1;
  EXPECT_EQ(okp_core_parse_switch("on", 2, &v), -22);
  EXPECT_EQ(v, -1);  // untouched on error
}
