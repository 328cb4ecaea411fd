/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the per-arch benchmark modules (arm64/okp_bench_arm64.c, riscv/okp_bench_riscv.c)
 * share: their parameters, the states they measure, the timed and checked call loop, and the
 * rounds that time each state unprobed, under the kernel's probe and under okprobes' (the
 * order alternating per round) and print the medians per hit as
 *   <OKP_BENCH_TAG> <state> kernel=<ns> okprobes=<ns> ratio=<okprobes/kernel, x1000> ...
 * A module defines OKP_BENCH_TAG ("BENCH-ARM64"), includes this once, and defines
 * run_kernel() and run_okprobes(): ns for the calls of a state under that framework's probe.
 * Their Kbuild adds -I$(OKPROBES)/tests/bench (run-arch builds them from links in a build dir).
 */
#ifndef OKP_BENCH_ROUNDS_H
#define OKP_BENCH_ROUNDS_H

#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/sort.h>

#ifndef OKP_BENCH_TAG
#error "define OKP_BENCH_TAG (the prefix of the module's result lines) before including this"
#endif

static unsigned long calls = 20000;
module_param(calls, ulong, 0444);
static unsigned int rounds = 7;
module_param(rounds, uint, 0444);

#define MAX_ROUNDS 31
static unsigned int errors;	/* each one also printed as an <OKP_BENCH_TAG>-ERROR line */

struct state {
	const char *name;
	unsigned long (*fn)(unsigned long x);
	const u8 *insn;		/* NULL: a return probe on fn */
	unsigned long mul;	/* fn(x) = mul * x + 1 */
	bool post;		/* a post_handler too (arm64: no boosting, both frameworks step) */
};

static u64 run_kernel(const struct state *s);
static u64 run_okprobes(const struct state *s);

/* ns for `calls` calls of fn, checking every result. */
static u64 time_fn(const char *name, unsigned long (*fn)(unsigned long), unsigned long mul)
{
	unsigned long i, sum = 0, expect = 0;
	u64 t0, t1;

	t0 = ktime_get_ns();
	for (i = 0; i < calls; i++)
		sum += fn(i);
	t1 = ktime_get_ns();
	for (i = 0; i < calls; i++)
		expect += mul * i + 1;
	if (sum != expect) {
		errors++;
		pr_err(OKP_BENCH_TAG "-ERROR %s: wrong results\n", name);
	}
	return t1 - t0;
}

static u64 time_calls(const struct state *s)
{
	return time_fn(s->name, s->fn, s->mul);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 median(u64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), cmp_u64, NULL);
	return v[n / 2];
}

/* Each state's rounds, its medians printed per hit (rounds already clamped to MAX_ROUNDS). */
static void bench_states(const struct state *states, unsigned int nstates)
{
	static u64 k[MAX_ROUNDS], o[MAX_ROUNDS];
	unsigned int i, r;

	for (i = 0; i < nstates; i++) {
		const struct state *s = &states[i];
		u64 km, om;

		time_calls(s);	/* warm up */
		for (r = 0; r < rounds; r++) {
			u64 base = time_calls(s);

			if (r & 1) {
				o[r] = run_okprobes(s);
				k[r] = run_kernel(s);
			} else {
				k[r] = run_kernel(s);
				o[r] = run_okprobes(s);
			}
			k[r] = k[r] > base ? k[r] - base : 0;
			o[r] = o[r] > base ? o[r] - base : 0;
		}
		km = div64_u64(median(k, rounds), calls);
		om = div64_u64(median(o, rounds), calls);
		pr_info(OKP_BENCH_TAG " %s kernel=%llu okprobes=%llu ratio=%llu calls=%lu rounds=%u\n",
			s->name, km, om, km ? div64_u64(om * 1000, km) : 0, calls, rounds);
	}
}

#endif
