// SPDX-License-Identifier: GPL-2.0
// The core checks the KUnit suite runs in-kernel, run here under GoogleTest.
#include <gtest/gtest.h>

#include "core_checks.h"

namespace {

void expect(void*, int ok, const char* expr, const char* file, int line) {
  if (!ok) ADD_FAILURE_AT(file, line) << expr;
}

#define OKP_CORE_TEST(name)                     \
  TEST(CoreChecks, name) {                      \
    okp_check_ctx ctx{nullptr, expect};         \
    okp_check_##name(&ctx);                     \
  }

OKP_CORE_TEST(hash_table_find)
OKP_CORE_TEST(hash_table_aggregate_order)
OKP_CORE_TEST(hash_table_remove_keeps_readers_chain)
OKP_CORE_TEST(hash_table_spread)
OKP_CORE_TEST(parse_switch)
OKP_CORE_TEST(error_or_try)

// The checks must be able to fail: a failing expectation reaches the runner.
TEST(CoreChecks, ExpectCallbackReportsFailure) {
  int failures = 0;
  okp_check_ctx ctx{&failures, [](void* r, int ok, const char*, const char*, int) {
                      if (!ok) ++*static_cast<int*>(r);
                    }};
  ctx.expect(ctx.runner, 0, "false", __FILE__, __LINE__);
  EXPECT_EQ(failures, 1);
}

}  // namespace
