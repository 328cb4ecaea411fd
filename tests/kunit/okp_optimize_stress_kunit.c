// SPDX-License-Identifier: GPL-2.0
/*
 * Suite "okprobes_optimize": optimizing and unoptimizing every class's probe, round after
 * round, while a caller on every CPU runs the targets and checks their results.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"
#include "okp_optimize_kunit.h"

/* --- Optimizing and unoptimizing while every CPU runs the targets. --- */

#define OKP_OT_STRESS_ROUNDS 50
#define OKP_OT_STRESS_THREADS 8

struct okp_ot_stress {
	atomic_t wrong;		/* results that differ from the expected */
	atomic_long_t calls;
};

static int okp_ot_stress_caller(void *arg)
{
	struct okp_ot_stress *s = arg;
	unsigned long calls = 0;
	unsigned int i, k;

	while (!kthread_should_stop()) {
		for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
			const struct okp_ot_case *c = &okp_ot_cases[k];

			if (c->shared)
				continue;
			for (i = 0; i < ARRAY_SIZE(okp_ot_inputs); i++) {
				long a = okp_ot_inputs[i].a, b = okp_ot_inputs[i].b;

				if (c->fn(a, b) != c->expect(a, b))
					atomic_inc(&s->wrong);
				calls++;
			}
		}
		/*
		 * Sleep, not just cond_resched(): the optimizer waits for tasks to leave the
		 * text it patches (RCU-tasks counts voluntary sleeps), and on a kernel without
		 * preemption the KUnit thread shares a CPU with one of these.
		 */
		usleep_range(10, 50);
	}
	atomic_long_add(calls, &s->calls);
	return 0;
}

void okprobes_optimize_stress(struct kunit *test)
{
	struct okp_ot_probe *p[ARRAY_SIZE(okp_ot_cases)];
	struct task_struct *threads[OKP_OT_STRESS_THREADS];
	struct okp_ot_stress s = { .wrong = ATOMIC_INIT(0), .calls = ATOMIC_LONG_INIT(0) };
	unsigned int nthreads = 0, round, k, failed_registers = 0, not_optimized = 0;
	unsigned long hits = 0;
	bool registered[ARRAY_SIZE(okp_ot_cases)];
	u8 orig[ARRAY_SIZE(okp_ot_cases)][OKP_OT_REGION_MAX];
	unsigned int cpu;

	for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
		const struct okp_ot_case *c = &okp_ot_cases[k];

		p[k] = okp_ot_new(test, k + 1, okp_ot_at(c->fn, c->site->probe), false);
		p[k]->quiet = true;
		memcpy(orig[k], p[k]->kp.addr, c->site->end - c->site->probe);
	}

	/* One caller per online CPU (at least two); from here to kthread_stop, no ASSERT. */
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		if (nthreads == OKP_OT_STRESS_THREADS)
			break;
		t = kthread_create(okp_ot_stress_caller, &s, "okp_ot/%u", cpu);
		if (IS_ERR(t))
			continue;
		kthread_bind(t, cpu);
		threads[nthreads++] = t;
		wake_up_process(t);
	}
	if (nthreads < 2) {
		struct task_struct *t = kthread_run(okp_ot_stress_caller, &s, "okp_ot/any");

		if (!IS_ERR(t))
			threads[nthreads++] = t;
	}

	for (round = 0; round < OKP_OT_STRESS_ROUNDS; round++) {
		for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
			registered[k] = !okp_ot_register(p[k]);
			if (!registered[k])
				failed_registers++;
		}
		/* Every fifth round unregisters at once: probes still queued for the optimizer. */
		if (round % 5 != 4) {
			okp_wait_for_optimizer();
			for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++)
				if (registered[k] && !okp_ot_optimized(p[k]))
					not_optimized++;
			/* Let the callers run through the detours. */
			usleep_range(1000, 2000);
		}
		for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
			if (!registered[k])
				continue;
			okp_ot_unregister(p[k]);
			hits += p[k]->kp.nhit;
		}
	}

	for (k = 0; k < nthreads; k++)
		kthread_stop(threads[k]);

	kunit_info(test, "%u callers, %u rounds: %ld calls, %lu hits\n", nthreads,
		   OKP_OT_STRESS_ROUNDS, atomic_long_read(&s.calls), hits);
	KUNIT_EXPECT_GE(test, nthreads, 2U);
	KUNIT_EXPECT_EQ(test, atomic_read(&s.wrong), 0);
	KUNIT_EXPECT_GT(test, atomic_long_read(&s.calls), 0L);
	KUNIT_EXPECT_GT(test, hits, 0UL);
	KUNIT_EXPECT_EQ(test, failed_registers, 0U);
	KUNIT_EXPECT_EQ(test, not_optimized, 0U);
	/* Every site is back: the region's bytes as they were, the functions right. */
	for (k = 0; k < ARRAY_SIZE(okp_ot_cases); k++) {
		const struct okp_ot_case *c = &okp_ot_cases[k];

		KUNIT_EXPECT_EQ_MSG(test, memcmp(okp_ot_at(c->fn, c->site->probe), orig[k],
						 c->site->end - c->site->probe), 0, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, c->fn(2, 3), c->expect(2, 3), "%s", c->name);
	}
}
