// SPDX-License-Identifier: GPL-2.0
/*
 * One call for a debugger to step through: the module's side of tests/bench/run --trace-path
 * (tests/bench/trace-path, tests/bench/README.md). Off unless the parameter trace_path is set.
 */
#include <linux/compiler.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/printk.h>

#include "okp_bench.h"

static bool trace_path;
BENCH_PARAM(trace_path, bool, "before each return-probe run, one call for tests/bench/trace-path's debugger to step through");

/*
 * tests/bench/trace-path: the instructions of one call, stepped by a debugger attached to
 * QEMU's gdb stub. The module names the marks and waits until the debugger, its breakpoint on
 * the first mark set, writes trace_go; the debugger steps from the first mark to the second.
 */
static int trace_go;
noinline void okp_bench_trace_begin(void)
{
	barrier();
}
noinline void okp_bench_trace_end(void)
{
	barrier();
}

void bench_trace_call(const char *tn, const char *sn, unsigned long (*fn)(unsigned long))
{
	unsigned long r;

	if (!trace_path)
		return;
	fn(1);	/* the path once untraced: what is taken on a first hit only is not counted */
	WRITE_ONCE(trace_go, 0);
	pr_info("BENCH-TRACE-WAIT target=%s state=%s begin=%px end=%px go=%px\n", tn, sn,
		okp_bench_trace_begin, okp_bench_trace_end, &trace_go);
	while (!READ_ONCE(trace_go))
		msleep(5);
	okp_bench_trace_begin();
	r = fn(41);
	okp_bench_trace_end();
	pr_info("BENCH-TRACE-DONE target=%s state=%s result=%lu\n", tn, sn, r);
}
