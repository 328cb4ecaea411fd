// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_core": runs the core checks (core_checks.cpp) in the kernel, built
 * with the same derived C++ flags as okprobes.ko, and checks the client link to okprobes.ko.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <okprobes/okprobes.h>

#include "core_checks.h"

static void okp_kunit_expect(void *runner, int ok, const char *expr, const char *file, int line)
{
	/* A named pointer, not a cast: 6.12's KUNIT_* macros expand test->last_seen unparenthesised. */
	struct kunit *test = runner;

	KUNIT_EXPECT_TRUE_MSG(test, ok, "%s (%s:%d)", expr, file, line);
}

#define OKP_CORE_CASE(name)                                                   \
	static void name##_case(struct kunit *test)                           \
	{                                                                     \
		struct okp_check_ctx ctx = { test, okp_kunit_expect };         \
		okp_check_##name(&ctx);                                       \
	}

OKP_CORE_CASE(hash_table_find)
OKP_CORE_CASE(hash_table_aggregate_order)
OKP_CORE_CASE(hash_table_remove_keeps_readers_chain)
OKP_CORE_CASE(hash_table_spread)
OKP_CORE_CASE(parse_switch)
OKP_CORE_CASE(error_or_try)

static void api_version_case(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, okp_api_version(), (unsigned int)OKP_API_VERSION);
}

static struct kunit_case okp_core_cases[] = {
	KUNIT_CASE(hash_table_find_case),
	KUNIT_CASE(hash_table_aggregate_order_case),
	KUNIT_CASE(hash_table_remove_keeps_readers_chain_case),
	KUNIT_CASE(hash_table_spread_case),
	KUNIT_CASE(parse_switch_case),
	KUNIT_CASE(error_or_try_case),
	KUNIT_CASE(api_version_case),
	{}
};

static struct kunit_suite okp_core_suite = {
	.name = "okprobes_core",
	.test_cases = okp_core_cases,
};
kunit_test_suites(&okp_core_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes KUnit: C++ core checks in-kernel");
