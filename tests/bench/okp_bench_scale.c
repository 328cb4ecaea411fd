// SPDX-License-Identifier: GPL-2.0
/*
 * Scale benchmark (`tests/bench/run --scale`): the hit cost of one hot probe while N other
 * probes are registered, N = 1, 10, 100, 1000, 10000 (levels up to scale_max), memory per
 * probe, and registering/unregistering 10000 probes in one batch. Issue 15: the hit cost must
 * stay flat (within ±5%) from 1 to 10,000 registered probes.
 *
 * The N background probes sit on okp_bench_sfn_<i> (okp_bench_scale_text.S), never called
 * while timed: okprobes' on the RET with a pre and a post handler (a branch with a post
 * handler is never jump-optimized, so only the hot probe becomes a jump when
 * okprobes-optimization is 1), the kernel's on the mov, pre_handler only. The two frameworks
 * are measured in separate phases, never with the other's background probes registered: the
 * kernel's int3 handler looks an okprobes int3 up in its own kprobe table first, so kernel
 * background probes would be charged to okprobes.
 *
 * okprobes phase: `rounds` rounds (after `warmup`); each round walks the levels upwards,
 * registering each level's additional background probes with okp_register_kprobes(), and at
 * each level runs these states `scale_reps` times, interleaved, `calls` calls each:
 *   none      okp_bench_target and okp_bench_target_opt with no probe (their loop)
 *   okp-int3  a hot okp_kprobe on okp_bench_target's `mov` (emulated in the trap), sysctl 0,
 *             registered at the start of the round before any background probe (so it is
 *             at the tail of its hash chain) and enabled only for its runs
 *   okp-opt   a hot okp_kprobe on okp_bench_target_opt+3 (`add`), sysctl 1, a jump
 * then unregisters all background probes in one okp_unregister_kprobes() call. Levels are
 * interleaved within a round, so host load drifts over all of them alike.
 * kernel phase: one pass up the levels (registering 10000 kernel kprobes takes minutes under
 * TCG), `rounds` rounds of none / kernel-int3 (register_kprobe() on the same `mov`, both
 * sysctls 0) at each level, then unregister_kprobes() of all.
 * batch: okp_register_kprobes() of scale_max probes in one call, then okp_unregister_kprobes()
 * in one call, timed, with the memory the registered probes took: free pages and slab
 * (unreclaimable + reclaimable) before and after, per probe (the client's own struct
 * okp_kprobe, sizeof printed, is not included: it is the client's).
 *
 * Output lines:
 *   BENCH-SCALE framework=okp|kernel n=N state=S calls=C samples=K ns_per_call=X
 *         min_ns_per_call=X none_ns_per_call=X overhead_ns=X overhead_of_min_ns=X
 *         (median over the samples, rounds * scale_reps runs; overhead: minus none; of_min:
 *         fastest run minus fastest none run, which host load cannot inflate)
 *   BENCH-SCALE-FLAT framework=F state=S n_max=N overhead_n1=X overhead_nmax=X ratio=X
 *         spread=X ratio_of_min=X spread_of_min=X
 *         (overhead at the top level / at N=1; spread: (max - min) / min over the levels)
 *   BENCH-SCALE-BATCH framework=okp|kernel n=N reg_ns=T unreg_ns=T
 *   BENCH-SCALE-MEM framework=okp|kernel n=N bytes_per_probe=B slab_bytes_per_probe=B
 *         client_struct_bytes=B
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>
#include <okprobes/okprobes.h>

#include "okp_bench.h"

#define OKP_BENCH_SCALE 10240
extern const unsigned long okp_bench_scale_fns[OKP_BENCH_SCALE];
unsigned long okp_bench_target(unsigned long x);

#define RET_OFFSET 3		/* okp_bench_sfn_<i>: mov %rdi,%rax (3 bytes), then RET */
#define OPT_PROBE_OFFSET 3	/* okp_bench_target_opt: the `add` after the mov */

unsigned int scale_max = 10000;
BENCH_PARAM(scale_max, uint, "largest number of background probes (<= 10240)");
unsigned int scale_reps = 5;
BENCH_PARAM(scale_reps, uint, "runs of each state per level and round (samples: rounds * scale_reps)");
static bool scale_kernel = true;
BENCH_PARAM(scale_kernel, bool, "run the kernel's kprobes phase of the scale benchmark too");

static const unsigned int levels[] = { 1, 10, 100, 1000, 10000 };
#define NLEVELS ARRAY_SIZE(levels)

enum scale_state { SC_NONE, SC_INT3, SC_OPT, SC_NONE_OPT, SC_NR };
static const char *const okp_state_name[SC_NR] = { "none", "okp-int3", "okp-opt", "none-opt" };
static const char *const kernel_state_name[SC_NR] = { "none", "kernel-int3", "", "" };

static unsigned long scale_pre_hits;
static volatile unsigned long scale_sink;

static int sc_kpre(struct kprobe *p, struct pt_regs *regs)
{
	scale_pre_hits++;
	return 0;
}
NOKPROBE_SYMBOL(sc_kpre);

static int sc_opre(struct okp_kprobe *p, struct pt_regs *regs)
{
	scale_pre_hits++;
	return 0;
}
NOKPROBE_SYMBOL(sc_opre);

/* The background probes' handlers: never called while timed. */
static int sc_bg_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(sc_bg_pre);

static void sc_bg_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}
NOKPROBE_SYMBOL(sc_bg_post);

/* Background probe storage: all of it allocated once, up front (not charged to a level). */
static struct okp_kprobe *bg_okp;
static struct okp_kprobe **bg_okp_ptrs;
static struct kprobe *bg_k;
static struct kprobe **bg_k_ptrs;

static void *bg_okp_addr(unsigned int i)
{
	return first_insn((void *)okp_bench_scale_fns[i]) + RET_OFFSET;
}

static void *bg_kernel_addr(unsigned int i)
{
	return first_insn((void *)okp_bench_scale_fns[i]);
}

static void bg_okp_prepare(unsigned int from, unsigned int to)
{
	unsigned int i;

	for (i = from; i < to; i++) {
		memset(&bg_okp[i], 0, sizeof(bg_okp[i]));
		bg_okp[i].addr = bg_okp_addr(i);
		bg_okp[i].pre_handler = sc_bg_pre;
		bg_okp[i].post_handler = sc_bg_post;
		bg_okp_ptrs[i] = &bg_okp[i];
	}
}

static void bg_kernel_prepare(unsigned int from, unsigned int to)
{
	unsigned int i;

	for (i = from; i < to; i++) {
		memset(&bg_k[i], 0, sizeof(bg_k[i]));
		bg_k[i].addr = bg_kernel_addr(i);
		bg_k[i].pre_handler = sc_kpre;
		bg_k_ptrs[i] = &bg_k[i];
	}
}

/* The timed loop over okp_bench_target (opt: okp_bench_target_opt); each returns x + 1. */
static noinline u64 scale_loop(bool opt, unsigned long n)
{
	unsigned long i, acc = 0;
	u64 t0, t1;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		acc += opt ? okp_bench_target_opt(i) : okp_bench_target(i);
		if (unlikely(!(i & 0xffff)))
			cond_resched();
	}
	t1 = ktime_get_ns();
	scale_sink = acc;
	if (acc != n * (n + 1) / 2)
		bench_error("scale: the target computed %lu, not %lu", acc, n * (n + 1) / 2);
	return t1 - t0;
}

/*
 * The hot int3 probes are registered once per round (okprobes) or once (kernel), before any
 * background probe: both hash tables add at the head of a chain, so the hot probe sits at the
 * tail of its chain, behind every background probe that shares its bucket (the worst case of
 * a lookup). They are disabled for `none` runs and enabled for int3 runs (outside the timing).
 */
static struct okp_kprobe okp_hot_int3;
static struct kprobe kernel_hot;

static bool okp_hot_register(void)
{
	int ret;

	memset(&okp_hot_int3, 0, sizeof(okp_hot_int3));
	okp_hot_int3.addr = first_insn(okp_bench_target);
	okp_hot_int3.pre_handler = sc_opre;
	okp_hot_int3.flags = OKP_KPROBE_FLAG_DISABLED;
	ret = okp_register_kprobe(&okp_hot_int3);
	if (ret)
		bench_error("scale okp_register_kprobe at %pS: %d (%s)", okp_hot_int3.addr, ret,
			    okp_kprobe_reason(&okp_hot_int3));
	return !ret;
}

/* One okprobes run of state st with n background probes registered; 0 on failure. */
static u64 okp_run(enum scale_state st, unsigned int n)
{
	static struct okp_kprobe hot;
	bool opt = st == SC_OPT || st == SC_NONE_OPT;
	void *addr = first_insn(okp_bench_target_opt) + OPT_PROBE_OFFSET;
	unsigned long nhit0;
	u64 ns;
	int ret;

	if (st == SC_NONE || st == SC_NONE_OPT) {
		scale_pre_hits = 0;
		ns = scale_loop(opt, calls);
		if (scale_pre_hits)
			bench_error("scale n=%u state=%s %lu handler calls with no probe", n,
				    okp_state_name[st], scale_pre_hits);
		return ns;
	}
	if (st == SC_INT3) {
		ret = okp_enable_kprobe(&okp_hot_int3);
		if (ret) {
			bench_error("scale n=%u okp_enable_kprobe: %d", n, ret);
			return 0;
		}
		msleep(30);	/* an optimizer that should not be on would show itself */
		if ((okp_hot_int3.flags & OKP_KPROBE_FLAG_OPTIMIZED) || text_is_jump(okp_hot_int3.addr))
			bench_error("scale n=%u the hot int3 probe is a jump", n);
		scale_pre_hits = 0;
		nhit0 = okp_hot_int3.nhit;
		ns = scale_loop(false, calls);
		if (scale_pre_hits != calls || okp_hot_int3.nhit - nhit0 != calls || okp_hot_int3.nmissed)
			bench_error("scale n=%u state=okp-int3 %lu handler calls, nhit=%lu nmissed=%lu for %lu calls",
				    n, scale_pre_hits, okp_hot_int3.nhit - nhit0, okp_hot_int3.nmissed, calls);
		okp_disable_kprobe(&okp_hot_int3);
		cond_resched();
		return ns;
	}
	/* SC_OPT: the jump path never looks the probe up; registered per run. */
	if (!bench_sysctl_write(OKP_OPT, 1))
		return 0;
	memset(&hot, 0, sizeof(hot));
	hot.addr = addr;
	hot.pre_handler = sc_opre;
	ret = okp_register_kprobe(&hot);
	if (ret) {
		bench_error("scale n=%u state=%s okp_register_kprobe at %pS: %d (%s)", n,
			    okp_state_name[st], addr, ret, okp_kprobe_reason(&hot));
		bench_sysctl_write(OKP_OPT, 0);
		return 0;
	}
	okp_wait_for_optimizer();
	if (!(hot.flags & OKP_KPROBE_FLAG_OPTIMIZED) || !text_is_jump(addr))
		bench_error("scale n=%u state=%s the hot probe is not a jump (%s)", n, okp_state_name[st],
			    okp_kprobe_reason(&hot));
	scale_pre_hits = 0;
	ns = scale_loop(true, calls);
	if (scale_pre_hits != calls || hot.nhit != calls || hot.nmissed)
		bench_error("scale n=%u state=%s %lu handler calls, nhit=%lu nmissed=%lu for %lu calls",
			    n, okp_state_name[st], scale_pre_hits, hot.nhit, hot.nmissed, calls);
	okp_unregister_kprobe(&hot);
	bench_sysctl_write(OKP_OPT, 0);
	cond_resched();
	return ns;
}

/* One kernel run of state st (SC_NONE or SC_INT3); 0 on failure. */
static u64 kernel_run(enum scale_state st, unsigned int n)
{
	u64 ns;
	int ret;

	if (st == SC_NONE)
		return scale_loop(false, calls);
	ret = enable_kprobe(&kernel_hot);
	if (ret) {
		bench_error("scale n=%u enable_kprobe: %d", n, ret);
		return 0;
	}
	msleep(30);
	scale_pre_hits = 0;
	ns = scale_loop(false, calls);
	if (scale_pre_hits != calls || kernel_hot.nmissed)
		bench_error("scale n=%u state=kernel-int3 %lu handler calls, nmissed=%lu for %lu calls",
			    n, scale_pre_hits, kernel_hot.nmissed, calls);
	disable_kprobe(&kernel_hot);
	cond_resched();
	return ns;
}

/* times[level][state][sample]; a sample is one run, rounds * scale_reps of them per state */
static u64 (*scale_times)[SC_NR][MAX_ROUNDS];
static unsigned int nsamples;

static void report(const char *fw, const char *const *names, unsigned int nlevels,
		   const enum scale_state *states, unsigned int nstates)
{
	static u64 sorted[MAX_ROUNDS];
	u64 ov[NLEVELS], ovmin[NLEVELS];
	char a[32], b[32], c[32], d[32], e[32], f[32];
	unsigned int l, s;

	for (s = 0; s < nstates; s++) {
		enum scale_state st = states[s];
		enum scale_state base = st == SC_OPT ? SC_NONE_OPT : SC_NONE;
		u64 lo = U64_MAX, hi = 0, lo_min = U64_MAX, hi_min = 0;

		if (st == SC_NONE || st == SC_NONE_OPT)
			continue;
		for (l = 0; l < nlevels; l++) {
			u64 med, min, bmed;

			u64 bmin;

			memcpy(sorted, scale_times[l][st], nsamples * sizeof(u64));
			med = median(sorted, nsamples);
			min = sorted[0];
			memcpy(sorted, scale_times[l][base], nsamples * sizeof(u64));
			bmed = median(sorted, nsamples);
			bmin = sorted[0];
			/* picoseconds per call */
			med = div64_u64(med * 1000, calls);
			min = div64_u64(min * 1000, calls);
			bmed = div64_u64(bmed * 1000, calls);
			bmin = div64_u64(bmin * 1000, calls);
			ov[l] = med > bmed ? med - bmed : 0;
			ovmin[l] = min > bmin ? min - bmin : 0;
			lo_min = min(lo_min, ovmin[l]);
			hi_min = max(hi_min, ovmin[l]);
			lo = min(lo, ov[l]);
			hi = max(hi, ov[l]);
			pr_info("BENCH-SCALE framework=%s n=%u state=%s calls=%lu samples=%u ns_per_call=%s min_ns_per_call=%s none_ns_per_call=%s overhead_ns=%s overhead_of_min_ns=%s\n",
				fw, levels[l], names[st], calls, nsamples, milli(a, sizeof(a), med),
				milli(b, sizeof(b), min), milli(c, sizeof(c), bmed),
				milli(d, sizeof(d), ov[l]), milli(e, sizeof(e), ovmin[l]));
		}
		pr_info("BENCH-SCALE-FLAT framework=%s state=%s n_max=%u overhead_n1=%s overhead_nmax=%s ratio=%s spread=%s ratio_of_min=%s spread_of_min=%s\n",
			fw, names[st], levels[nlevels - 1], milli(a, sizeof(a), ov[0]),
			milli(b, sizeof(b), ov[nlevels - 1]),
			milli(c, sizeof(c), ratio_milli(ov[nlevels - 1], ov[0])),
			milli(d, sizeof(d), ratio_milli(hi - lo, lo)),
			milli(e, sizeof(e), ratio_milli(ovmin[nlevels - 1], ovmin[0])),
			milli(f, sizeof(f), ratio_milli(hi_min - lo_min, lo_min)));
	}
}

static unsigned int usable_levels(void)
{
	unsigned int l = 0;

	while (l < NLEVELS && levels[l] <= scale_max)
		l++;
	return l;
}

struct mem_snapshot {
	long free_pages, slab_pages;
};

static void mem_snapshot(struct mem_snapshot *m)
{
	m->free_pages = global_zone_page_state(NR_FREE_PAGES);
	m->slab_pages = global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B) +
			global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B);
}

static void okp_phase(unsigned int nlevels)
{
	static const enum scale_state order[] = { SC_NONE, SC_INT3, SC_NONE_OPT, SC_OPT };
	unsigned int r, l, s, rep, have;
	int ret;

	for (r = 0; r < warmup + rounds && !errors; r++) {
		have = 0;
		if (!okp_hot_register())
			break;
		for (l = 0; l < nlevels && !errors; l++) {
			unsigned int n = levels[l];

			bg_okp_prepare(have, n);
			ret = okp_register_kprobes(&bg_okp_ptrs[have], n - have);
			if (ret) {
				bench_error("scale okp_register_kprobes of %u (%u..%u): %d (%s)", n - have,
					    have, n, ret, okp_kprobe_reason(bg_okp_ptrs[have]));
				break;
			}
			have = n;
			if (r == 0 && l == nlevels - 1) {
				/* Proves the background probes are live and stay breakpoints. */
				bench_sysctl_write(OKP_OPT, 1);
				okp_wait_for_optimizer();
				bench_sysctl_write(OKP_OPT, 0);
				if (bg_okp[0].flags & OKP_KPROBE_FLAG_OPTIMIZED)
					bench_error("scale: background probe 0 was optimized (%s)",
						    okp_kprobe_reason(&bg_okp[0]));
				pr_info("BENCH-INFO scale background=%pS okp_reason=\"%s\"\n",
					bg_okp[0].addr, okp_kprobe_reason(&bg_okp[0]));
				scale_sink = ((unsigned long (*)(unsigned long))okp_bench_scale_fns[0])(0);
				if (bg_okp[0].nhit != 1)
					bench_error("scale: background probe 0 nhit=%lu after one call",
						    bg_okp[0].nhit);
			}
			for (rep = 0; rep < scale_reps; rep++) {
				for (s = 0; s < ARRAY_SIZE(order); s++) {
					u64 ns = okp_run(order[s], n);

					if (!ns)
						break;
					if (r >= warmup)
						scale_times[l][order[s]][(r - warmup) * scale_reps + rep] = ns;
				}
			}
		}
		okp_unregister_kprobes(bg_okp_ptrs, have);
		okp_unregister_kprobe(&okp_hot_int3);
	}
	if (!errors)
		report("okp", okp_state_name, nlevels, order, ARRAY_SIZE(order));
}

static void kernel_phase(unsigned int nlevels)
{
	static const enum scale_state order[] = { SC_NONE, SC_INT3 };
	unsigned int r, l, s, rep, have = 0;
	struct mem_snapshot before, after;
	u64 reg_total = 0;
	int ret;

	memset(&kernel_hot, 0, sizeof(kernel_hot));
	kernel_hot.addr = first_insn(okp_bench_target);
	kernel_hot.pre_handler = sc_kpre;
	kernel_hot.flags = KPROBE_FLAG_DISABLED;
	ret = register_kprobe(&kernel_hot);
	if (ret) {
		bench_error("scale register_kprobe at %pS: %d", kernel_hot.addr, ret);
		return;
	}
	msleep(100);
	mem_snapshot(&before);
	for (l = 0; l < nlevels && !errors; l++) {
		unsigned int n = levels[l];
		u64 t0 = ktime_get_ns();

		bg_kernel_prepare(have, n);
		ret = register_kprobes(&bg_k_ptrs[have], n - have);
		if (ret) {
			bench_error("scale register_kprobes of %u (%u..%u): %d", n - have, have, n, ret);
			break;
		}
		reg_total += ktime_get_ns() - t0;
		pr_info("BENCH-INFO scale kernel register_kprobes of %u more (to %u) took %llu ns\n",
			n - have, n, ktime_get_ns() - t0);
		have = n;
		if (l == nlevels - 1) {
			/* Memory of the n probes (the hot one is registered only in runs). */
			mem_snapshot(&after);
			pr_info("BENCH-SCALE-MEM framework=kernel n=%u bytes_per_probe=%ld slab_bytes_per_probe=%ld client_struct_bytes=%zu\n",
				n, (before.free_pages - after.free_pages) * (long)PAGE_SIZE / (long)n,
				(after.slab_pages - before.slab_pages) * (long)PAGE_SIZE / (long)n,
				sizeof(struct kprobe));
		}
		for (r = 0; r < warmup + rounds && !errors; r++) {
			for (rep = 0; rep < scale_reps; rep++) {
				for (s = 0; s < ARRAY_SIZE(order); s++) {
					u64 ns = kernel_run(order[s], n);

					if (!ns)
						break;
					if (r >= warmup)
						scale_times[l][order[s]][(r - warmup) * scale_reps + rep] = ns;
				}
			}
		}
	}
	if (have) {
		u64 t0 = ktime_get_ns();

		unregister_kprobes(bg_k_ptrs, have);
		/* Registered level by level (in batches); unregistered in one batch. */
		pr_info("BENCH-SCALE-BATCH framework=kernel n=%u reg_ns=%llu unreg_ns=%llu\n", have,
			reg_total, ktime_get_ns() - t0);
	}
	unregister_kprobe(&kernel_hot);
	if (!errors)
		report("kernel", kernel_state_name, nlevels, order, ARRAY_SIZE(order));
}

/* scale_max probes registered in one call and unregistered in one call; memory per probe. */
static void okp_batch(unsigned int n)
{
	struct mem_snapshot before, after;
	u64 t0, t1, t2;
	unsigned int i;
	int ret;

	bg_okp_prepare(0, n);
	msleep(100);	/* let earlier frees (RCU callbacks) settle */
	mem_snapshot(&before);
	t0 = ktime_get_ns();
	ret = okp_register_kprobes(bg_okp_ptrs, n);
	t1 = ktime_get_ns();
	if (ret) {
		bench_error("scale batch okp_register_kprobes of %u: %d (%s)", n, ret,
			    okp_kprobe_reason(bg_okp_ptrs[0]));
		return;
	}
	mem_snapshot(&after);
	for (i = 0; i < n; i++)
		if (bg_okp[i].flags & OKP_KPROBE_FLAG_GONE)
			bench_error("scale batch probe %u is GONE", i);
	t2 = ktime_get_ns();
	okp_unregister_kprobes(bg_okp_ptrs, n);
	pr_info("BENCH-SCALE-BATCH framework=okp n=%u reg_ns=%llu unreg_ns=%llu\n", n, t1 - t0,
		ktime_get_ns() - t2);
	pr_info("BENCH-SCALE-MEM framework=okp n=%u bytes_per_probe=%ld slab_bytes_per_probe=%ld client_struct_bytes=%zu\n",
		n, (before.free_pages - after.free_pages) * (long)PAGE_SIZE / (long)n,
		(after.slab_pages - before.slab_pages) * (long)PAGE_SIZE / (long)n,
		sizeof(struct okp_kprobe));
}

void bench_scale(void)
{
	unsigned int nlevels = usable_levels();

	nsamples = rounds * scale_reps;
	if (scale_max > OKP_BENCH_SCALE || !nlevels || !nsamples || nsamples > MAX_ROUNDS) {
		bench_error("scale_max %u (1..%d), rounds * scale_reps %u (1..%d)", scale_max,
			    OKP_BENCH_SCALE, nsamples, MAX_ROUNDS);
		return;
	}
	pr_info("BENCH-INFO scale scale_max=%u levels=%u calls=%lu rounds=%u scale_reps=%u warmup=%u kernel=%d\n",
		scale_max, nlevels, calls, rounds, scale_reps, warmup, scale_kernel);
	bg_okp = vzalloc(array_size(scale_max, sizeof(*bg_okp)));
	bg_okp_ptrs = vzalloc(array_size(scale_max, sizeof(*bg_okp_ptrs)));
	bg_k = vzalloc(array_size(scale_max, sizeof(*bg_k)));
	bg_k_ptrs = vzalloc(array_size(scale_max, sizeof(*bg_k_ptrs)));
	scale_times = vzalloc(sizeof(*scale_times) * NLEVELS);
	if (!bg_okp || !bg_okp_ptrs || !bg_k || !bg_k_ptrs || !scale_times) {
		bench_error("scale: out of memory");
		goto out;
	}
	okp_batch(scale_max);
	if (!errors)
		okp_phase(nlevels);
	if (scale_kernel && !errors)
		kernel_phase(nlevels);
out:
	vfree(scale_times);
	vfree(bg_k_ptrs);
	vfree(bg_k);
	vfree(bg_okp_ptrs);
	vfree(bg_okp);
}
