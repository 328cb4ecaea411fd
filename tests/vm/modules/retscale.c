// SPDX-License-Identifier: GPL-2.0
/*
 * Return probes at production scale (issue 29): 50 return probes, maxactive 128 each, on 50
 * distinct functions that one kthread per CPU (4) calls many times, some calls nested a few
 * deep and some sleeping inside, so that instances of many probes are live at once. Each probe
 * must see every call of its function exactly once at entry and once at return, with the
 * function's own return value, and miss none; the probed functions must return what they
 * return unprobed; once all are unregistered no return stub may stay in use.
 *
 * Driven by tests/vm/scripts/scale.sh, through the kernel's rethook and through okprobes' own
 * stubs. Every check runs at load and prints one line
 *   OKP-RETSCALE: ok - DESCRIPTION      or      OKP-RETSCALE: not ok - DESCRIPTION
 * which the script numbers as TAP, then OKP-RETSCALE-END. The module holds no probe once loaded.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <okprobes/okprobes.h>

#include "scale_common.h"

#define OKP_RSC_FNS 50

static unsigned int threads = 4;	/* one per CPU (CPU i % online CPUs) */
module_param(threads, uint, 0444);
static unsigned int rounds = 60;	/* per thread, each calling all 50 functions */
module_param(rounds, uint, 0444);
static unsigned int sleep_every = 8;	/* top-level calls between sleeps inside, per thread */
module_param(sleep_every, uint, 0444);
static int maxactive = 128;
module_param(maxactive, int, 0444);

#define report(ok, fmt, ...) \
	pr_info("OKP-RETSCALE: %s - " fmt "\n", (ok) ? "ok" : "not ok", ##__VA_ARGS__)

/*
 * The depth argument: its low two bits say how many functions deep the call nests (function i
 * calls function i + 1), OKP_RSC_SLEEP that the innermost call sleeps.
 */
#define OKP_RSC_NEST 3UL
#define OKP_RSC_SLEEP 4UL

typedef unsigned long (*okp_rsc_fn_t)(unsigned long x, unsigned long depth);
static const okp_rsc_fn_t okp_rsc_fns[OKP_RSC_FNS];
static atomic_long_t calls_made[OKP_RSC_FNS];

/* What function idx computes, outside any probed function: the reference for the results. */
static unsigned long okp_rsc_model(unsigned int idx, unsigned long x, unsigned long depth)
{
	unsigned long r = x * 3 + idx;

	if (depth & OKP_RSC_NEST)
		r ^= okp_rsc_model((idx + 1) % OKP_RSC_FNS, r, depth - 1);
	return r + idx;
}

/* The body every probed function shares (not probed itself). */
static noinline unsigned long okp_rsc_body(unsigned int idx, unsigned long x, unsigned long depth)
{
	unsigned long r = x * 3 + idx;

	atomic_long_inc(&calls_made[idx]);
	if (depth & OKP_RSC_NEST)
		r ^= okp_rsc_fns[(idx + 1) % OKP_RSC_FNS](r, depth - 1);
	else if (depth & OKP_RSC_SLEEP)
		usleep_range(20, 60);
	return r;
}

/* 50 distinct functions: noinline and noclone, so every call goes through the probed entry;
 * each adds its own index after the body returns (no tail call, no two alike to merge). */
#define OKP_RSC_FN(N)								\
	unsigned long okp_rsc_fn_##N(unsigned long x, unsigned long depth);	\
	noinline __noclone unsigned long okp_rsc_fn_##N(unsigned long x, unsigned long depth) \
	{									\
		unsigned long r = okp_rsc_body(N, x, depth);			\
										\
		barrier();							\
		return r + N;							\
	}
#define OKP_RSC_FN10(T)								\
	OKP_RSC_FN(T##0) OKP_RSC_FN(T##1) OKP_RSC_FN(T##2) OKP_RSC_FN(T##3) OKP_RSC_FN(T##4) \
	OKP_RSC_FN(T##5) OKP_RSC_FN(T##6) OKP_RSC_FN(T##7) OKP_RSC_FN(T##8) OKP_RSC_FN(T##9)
OKP_RSC_FN(0) OKP_RSC_FN(1) OKP_RSC_FN(2) OKP_RSC_FN(3) OKP_RSC_FN(4)
OKP_RSC_FN(5) OKP_RSC_FN(6) OKP_RSC_FN(7) OKP_RSC_FN(8) OKP_RSC_FN(9)
OKP_RSC_FN10(1) OKP_RSC_FN10(2) OKP_RSC_FN10(3) OKP_RSC_FN10(4)

#define OKP_RSC_REF10(T)							\
	okp_rsc_fn_##T##0, okp_rsc_fn_##T##1, okp_rsc_fn_##T##2, okp_rsc_fn_##T##3,	\
	okp_rsc_fn_##T##4, okp_rsc_fn_##T##5, okp_rsc_fn_##T##6, okp_rsc_fn_##T##7,	\
	okp_rsc_fn_##T##8, okp_rsc_fn_##T##9
static const okp_rsc_fn_t okp_rsc_fns[OKP_RSC_FNS] = {
	okp_rsc_fn_0, okp_rsc_fn_1, okp_rsc_fn_2, okp_rsc_fn_3, okp_rsc_fn_4,
	okp_rsc_fn_5, okp_rsc_fn_6, okp_rsc_fn_7, okp_rsc_fn_8, okp_rsc_fn_9,
	OKP_RSC_REF10(1), OKP_RSC_REF10(2), OKP_RSC_REF10(3), OKP_RSC_REF10(4),
};

/* Per instance: the arguments, so the return handler can check the pairing. */
struct okp_rsc_data {
	unsigned long x, depth, magic;
};
#define OKP_RSC_MAGIC 0x7273636cUL

static struct okp_kretprobe probes[OKP_RSC_FNS];
static atomic_long_t entries[OKP_RSC_FNS], returns[OKP_RSC_FNS];
static atomic_long_t wrong_results, wrong_pairs;
static atomic_t running;
static DECLARE_COMPLETION(threads_done);

static unsigned int index_of(struct okp_kretprobe_instance *ri)
{
	return okp_get_kretprobe(ri) - probes;
}

static int okp_rsc_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct okp_rsc_data *d = (struct okp_rsc_data *)ri->data;

	atomic_long_inc(&entries[index_of(ri)]);
	d->x = okp_arg(regs, 0);
	d->depth = okp_arg(regs, 1);
	d->magic = OKP_RSC_MAGIC;
	return 0;
}

static int okp_rsc_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct okp_rsc_data *d = (struct okp_rsc_data *)ri->data;
	unsigned int idx = index_of(ri);

	atomic_long_inc(&returns[idx]);
	if (d->magic != OKP_RSC_MAGIC ||
	    regs_return_value(regs) != okp_rsc_model(idx, d->x, d->depth))
		atomic_long_inc(&wrong_pairs);
	d->magic = 0;
	return 0;
}

/* One round: every function once, at depths 0-3, the innermost call sleeping every so often. */
static void okp_rsc_round(unsigned long thread, unsigned long round)
{
	unsigned long x, depth, call;
	unsigned int idx;

	for (idx = 0; idx < OKP_RSC_FNS; idx++) {
		call = round * OKP_RSC_FNS + idx;
		x = (thread << 40) ^ (call * 0x9e3779b97f4a7c15UL);
		depth = (round + idx + thread) & OKP_RSC_NEST;
		if (sleep_every && call % sleep_every == thread % sleep_every)
			depth |= OKP_RSC_SLEEP;
		if (okp_rsc_fns[idx](x, depth) != okp_rsc_model(idx, x, depth))
			atomic_long_inc(&wrong_results);
	}
}

static int okp_rsc_caller(void *arg)
{
	unsigned long thread = (unsigned long)arg, round;

	for (round = 0; round < rounds; round++) {
		okp_rsc_round(thread, round);
		cond_resched();
	}
	if (atomic_dec_and_test(&running))
		complete(&threads_done);
	return 0;
}

static int __init okp_retscale_init(void)
{
	unsigned long stubs_before = okp_return_stubs_in_use(), calls_total = 0;
	unsigned long t, in_use, in_use_after;
	unsigned int i, registered = 0, bad_counts = 0, missed = 0, max_peak = 0, cpus;
	const char *mechanism = okp_return_route();
	int err = 0, first_bad = -1;
	u64 start;

	/* Unprobed, the functions compute what the model says (the reference below). */
	for (i = 0; i < OKP_RSC_FNS; i++)
		if (okp_rsc_fns[i](i + 1, i & OKP_RSC_NEST) != okp_rsc_model(i, i + 1, i & OKP_RSC_NEST))
			err = -EINVAL;
	report(!err, "unprobed, the 50 functions compute what the reference computes");
	for (i = 0; i < OKP_RSC_FNS; i++)
		atomic_long_set(&calls_made[i], 0);

	for (i = 0; i < OKP_RSC_FNS; i++) {
		probes[i].kp.addr = (void *)okp_rsc_fns[i];
		probes[i].entry_handler = okp_rsc_entry;
		probes[i].handler = okp_rsc_return;
		probes[i].data_size = sizeof(struct okp_rsc_data);
		probes[i].maxactive = maxactive;
		err = okp_register_kretprobe(&probes[i]);
		if (err) {
			pr_err("OKP-RETSCALE-REFUSED: return probe %u of %u (maxactive %d) refused: %d %s\n",
			       i + 1, OKP_RSC_FNS, maxactive, err, okp_kprobe_reason(&probes[i].kp));
			break;
		}
		registered++;
	}
	report(registered == OKP_RSC_FNS, "all %u return probes with maxactive %d registered (%u did, %s)",
	       OKP_RSC_FNS, maxactive, registered, mechanism);

	if (registered == OKP_RSC_FNS) {
		struct task_struct *task;

		cpus = num_online_cpus();
		start = ktime_get_ns();
		atomic_set(&running, threads);
		for (t = 0; t < threads; t++) {
			task = kthread_create(okp_rsc_caller, (void *)t, "okp-rscale/%lu", t);
			if (IS_ERR(task)) {
				pr_err("OKP-RETSCALE-ERROR: cannot start caller %lu: %ld\n", t, PTR_ERR(task));
				if (atomic_dec_and_test(&running))
					complete(&threads_done);
				continue;
			}
			kthread_bind(task, t % cpus);
			wake_up_process(task);
		}
		wait_for_completion(&threads_done);
		pr_info("OKP-RETSCALE-TIMES: %u threads on %u CPUs, %u rounds: %llu ms\n",
			threads, cpus, rounds, (ktime_get_ns() - start) / 1000000);
	}

	/* Every caller has returned from every probed function: nothing may stay in use. */
	in_use = okp_scale_wait_stubs_in_use(stubs_before);
	for (i = 0; i < registered; i++) {
		long made = atomic_long_read(&calls_made[i]);

		calls_total += made;
		if (atomic_long_read(&entries[i]) != made || atomic_long_read(&returns[i]) != made) {
			if (first_bad < 0)
				first_bad = i;
			bad_counts++;
		}
		if (okp_scale_misses_of(&probes[i]))
			missed++;
		max_peak = max(max_peak, probes[i].peak);
	}
	if (registered == OKP_RSC_FNS) {
		report(!bad_counts && calls_total >= (unsigned long)threads * rounds * OKP_RSC_FNS,
		       "every probe saw each of its function's calls once at entry and once at return (%lu calls; %u probes off, the first %d: calls %ld entries %ld returns %ld)",
		       calls_total, bad_counts, first_bad,
		       first_bad < 0 ? 0 : atomic_long_read(&calls_made[first_bad]),
		       first_bad < 0 ? 0 : atomic_long_read(&entries[first_bad]),
		       first_bad < 0 ? 0 : atomic_long_read(&returns[first_bad]));
		report(!missed, "no probe missed an entry or a return, for any cause (%u probes missed some)", missed);
		report(!atomic_long_read(&wrong_results),
		       "probed, the functions return what they return unprobed (%ld wrong)",
		       atomic_long_read(&wrong_results));
		report(!atomic_long_read(&wrong_pairs),
		       "each return handler saw its own entry's data and the frame's return value (%ld wrong)",
		       atomic_long_read(&wrong_pairs));
		report(max_peak >= 2 && max_peak <= (unsigned int)maxactive,
		       "instances were live at once on a probe (highest peak %u, at most maxactive)", max_peak);
		report(in_use == stubs_before,
		       "once every call returned, no instance stays in use (%lu, %lu before)", in_use,
		       stubs_before);
	}
	for (i = 0; i < registered; i++)
		okp_unregister_kretprobe(&probes[i]);
	in_use_after = okp_scale_wait_stubs_in_use(0);
	report(in_use_after == 0, "after unregister no return stub is in use (%lu)", in_use_after);
	pr_info("OKP-RETSCALE-END: return=%s calls=%lu peak=%u\n", mechanism, calls_total, max_peak);
	return 0;
}

static void __exit okp_retscale_exit(void)
{
}

module_init(okp_retscale_init);
module_exit(okp_retscale_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: 50 return probes with maxactive 128 on 4 CPUs");
