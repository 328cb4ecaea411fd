// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_optimize" (x86-64): jump optimization. A probe without post_handler
 * is armed as an int3, then replaced by a jmp rel32 to a detour once the optimizer ran
 * (okp_wait_for_optimizer() runs it now). Each instruction class a region may hold
 * (optimize_targets_x86.S) is probed there: the function computes the same result, the
 * pre_handler sees the registers, stack and flags of the probe address, and unregistering
 * gives the text back. Then what must not be optimized (a branch into the region, a
 * post_handler), a redirecting pre_handler, aggregates, disable/enable, and patching while
 * every CPU runs the targets.
 * Probes still registered when a case ends (an assertion failed) are unregistered by .exit.
 * The cases: okp_optimize_class_kunit.c (classes, branches into the region),
 * okp_optimize_handlers_kunit.c (post_handler, redirect, aggregate, disable/enable),
 * okp_optimize_stress_kunit.c (every CPU); their probes: okp_optimize_probes.c.
 */
#include <kunit/test.h>
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"
#include "okp_optimize_kunit.h"

KUNIT_ARRAY_PARAM(okp_ot_class, okp_ot_cases, okp_ot_case_desc);

static int okp_ot_suite_init(struct kunit *test)
{
	okp_ot_norder = 0;
	return okp_t_suite_init(test);
}

static struct kunit_case okp_optimize_cases[] = {
	KUNIT_CASE_PARAM(okprobes_optimize_class, okp_ot_class_gen_params),
	KUNIT_CASE(okprobes_optimize_branch_into_region),
	KUNIT_CASE(okprobes_optimize_branch_into_region_past_label),
	KUNIT_CASE(okprobes_optimize_jump_table),
	KUNIT_CASE(okprobes_optimize_post_handler),
	KUNIT_CASE(okprobes_optimize_post_handler_joins),
	KUNIT_CASE(okprobes_optimize_redirect),
	KUNIT_CASE(okprobes_optimize_aggregate),
	KUNIT_CASE(okprobes_optimize_disable_enable),
	KUNIT_CASE(okprobes_optimize_stress),
	{}
};

static struct kunit_suite okp_optimize_suite = {
	.name = "okprobes_optimize",
	.init = okp_ot_suite_init,
	.exit = okp_t_suite_exit,
	.test_cases = okp_optimize_cases,
};
kunit_test_suites(&okp_optimize_suite);
