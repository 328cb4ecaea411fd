// SPDX-License-Identifier: GPL-2.0
/*
 * okprobes against the kernel's own kprobes, in one boot (tests/bench/run, `make bench`).
 *
 * Everything runs in module init and prints parseable lines; the guest script rmmods the
 * module afterwards. Parts 1-3 (`classic`) run on breakpoints: the guest writes 0 to both
 * /proc/sys/debug/kprobes-optimization and /proc/sys/debug/okprobes-optimization first (both
 * are read back here). Parts 4-6 (`opt`, okp_bench_opt.c and okp_bench_ret.c) measure jump
 * optimization, each run switching its own framework's sysctl to 1 and back to 0.
 *
 * 1. Hit cost, for each of three targets (okp_bench_text.S), all returning x + 1 and probed
 *    on their first instruction after the ENDBR64:
 *      mov   okp_bench_target: `mov %rdi,%rax`, which the kernel copies to a slot (boosted
 *            or stepped) and okprobes emulates in the trap (one trap, no slot, either way);
 *      lea   okp_bench_target_lea: `lea 1(%rdi),%rax`: the same (okprobes emulates lea);
 *      add   okp_bench_target_add: `add $1,%rdi`, which both frameworks copy to a slot.
 *    A loop calls the target `calls` times with the probe in one of five states, run in this
 *    interleaved order for `warmup` + `rounds` rounds:
 *      none          no probe
 *      kernel-boost  register_kprobe(), pre_handler only: the copy returns by a jmp (boosted)
 *      kernel-step   register_kprobe(), pre_handler + post_handler: a second int3 ends the step
 *      okp-boost     okp_register_kprobe(), pre_handler only
 *      okp-step      okp_register_kprobe(), pre_handler + post_handler
 *    The probe is registered before its run and unregistered after, outside the timing. Per
 *    state: the median ns per call over the rounds, the overhead per hit (median minus the
 *    median of `none`), hits/s, and the okprobes/kernel ratios for boost and step.
 *    Checked on every run: each call was one hit (pre, and post when set), nothing missed,
 *    the target's result is right, the kernel probe is boosted or not as intended (never in
 *    a preemptible kernel: Debian's), neither probe is ever a jump, and okprobes says "not
 *    boosted" exactly when the probe has a post handler and the instruction runs from a
 *    slot. Any failure prints a BENCH-ERROR line.
 * 2. Registration cost. register_kprobes() + unregister_kprobes() against
 *    okp_register_kprobes() + okp_unregister_kprobes() of 1, 100 and 1000 probes at distinct
 *    instructions, pre_handler only, `reg_reps` times each (alternating which framework goes
 *    first), in two layouts: "dense" (consecutive instructions of one function, as a script
 *    probing every line of a function would) and "spread" (one probe per function). Timed
 *    separately: registration and unregistration; between them every probe is hit once.
 *
 * 3. Return-probe hit cost (okp_bench_ret.c): the kernel's kretprobe against okp_kretprobe
 *    on a C function (ftrace entry) and an assembly one (int3 entry), states none /
 *    kernel-ret / okp-ret, reported like the hit cost with mode=return.
 * 4. Jump-optimized hit cost (okp_bench_opt.c): target=opt, states none / kernel-int3 /
 *    okp-int3 / kernel-opt / okp-opt; modes opt, int3, speedup-okp, speedup-kernel.
 * 5. Return probes with a jump-optimized entry (okp_bench_ret.c): target=ret-opt, states
 *    none / kernel-ret / okp-ret / kernel-ret-opt / okp-ret-opt; modes return (int3
 *    entries), return-opt, speedup-okp, speedup-kernel.
 * 6. Registration until optimized (okp_bench_opt.c): 1, 100, 1000 probes, one per function,
 *    framework kernel / okp-wait / okp-poll.
 * 7. Scale (`scale`, okp_bench_scale.c, `tests/bench/run --scale`): one hot probe's hit cost
 *    with 1..10000 other probes registered, memory per probe, batches of 10000; its output
 *    lines (BENCH-SCALE*) are documented there.
 *
 * Output lines (all start with BENCH; values are integers or fixed-point decimals):
 *   BENCH-INFO key=value ...
 *   BENCH-RUN target=T round=R state=S ns=T
 *   BENCH target=T state=S calls=N rounds=R ns_per_call=X min_ns_per_call=X
 *         max_ns_per_call=X overhead_ns=X hits_per_s=N
 *   BENCH-RATIO target=T mode=M overhead=X ns_per_call=X overhead_of_min=X
 *         overhead_per_round=X
 *         (okprobes / kernel: of the medians; of the overheads computed from the fastest run
 *         of each state; the median over rounds of each round's overhead ratio. For
 *         mode=speedup-okp|speedup-kernel: that framework's int3 state / its jump state)
 *   BENCH-REG layout=L n=N framework=kernel|okprobes reg_ns=T unreg_ns=T total_ns=T
 *   BENCH-REG-RATIO layout=L n=N reg=X unreg=X total=X          (okprobes / kernel)
 *   BENCH-OPTREG n=N framework=kernel|okp-wait|okp-poll reg_ns=T optimized_ns=T unreg_ns=T
 *         (the registration call; from its start until every probe is a jump; the
 *         unregistration until the text is back)
 *   BENCH-OPTREG-RATIO n=N okp_wait=X okp_poll=X reg=X unreg=X
 *         (optimized_ns of okp-wait and okp-poll / the kernel's; reg_ns and unreg_ns of
 *         okp-wait / the kernel's)
 *   BENCH-ERROR what went wrong
 *   BENCH-DONE errors=E
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

#include "okp_bench.h"

/* okp_bench_text.S */
#define OKP_BENCH_DENSE 1024
#define OKP_BENCH_SPREAD 1024
#define OKP_BENCH_DENSE_INSN_LEN 3	/* mov %rdi,%rax */
unsigned long okp_bench_target(unsigned long x);
unsigned long okp_bench_target_lea(unsigned long x);
unsigned long okp_bench_target_add(unsigned long x);
unsigned long okp_bench_dense(unsigned long x);
extern const unsigned long okp_bench_spread_fns[OKP_BENCH_SPREAD];

unsigned long calls = 200000;
BENCH_PARAM(calls, ulong, "calls of the target per run");
unsigned int rounds = 11;
BENCH_PARAM(rounds, uint, "measured rounds of the interleaved runs (median taken)");
unsigned int warmup = 1;
BENCH_PARAM(warmup, uint, "rounds run first and not counted");
unsigned int reg_reps = 3;
BENCH_PARAM(reg_reps, uint, "repetitions of each registration measurement (median taken)");
unsigned int reg_max = 1000;
BENCH_PARAM(reg_max, uint, "largest probe count of the registration benchmark (<= 1024)");
static unsigned int reg_dense_max = 1024;
BENCH_PARAM(reg_dense_max, uint, "largest probe count of the dense layout (tests/bench/run --icount: 100)");
static bool classic = true;
BENCH_PARAM(classic, bool, "run the breakpoint parts (hit, return, registration), optimization off");
static bool opt = true;
BENCH_PARAM(opt, bool, "run the jump-optimization parts (okp_bench_opt.c)");
static bool scale;
BENCH_PARAM(scale, bool, "run the scale benchmark (okp_bench_scale.c: 1..10000 registered probes)");

enum bench_state { S_NONE, S_KBOOST, S_KSTEP, S_OBOOST, S_OSTEP, S_NR };

/* The probed instructions of the hit benchmark. */
enum bench_target { T_MOV, T_LEA, T_ADD, T_NR };
static const struct {
	const char *name;
	unsigned long (*fn)(unsigned long x);
	bool okp_emulates;	/* okprobes runs it in the trap: no slot, no second trap */
} targets[T_NR] = {
	[T_MOV] = { "mov", okp_bench_target, true },
	[T_LEA] = { "lea", okp_bench_target_lea, true },
	[T_ADD] = { "add", okp_bench_target_add, true },
};
static const char *const state_name[S_NR] = {
	"none", "kernel-boost", "kernel-step", "okp-boost", "okp-step",
};

unsigned int errors;

/* Handler counters: one CPU runs the loop, handlers run with interrupts off. */
static unsigned long pre_hits, post_hits;
static volatile unsigned long bench_sink;

static int k_pre(struct kprobe *p, struct pt_regs *regs)
{
	pre_hits++;
	return 0;
}
NOKPROBE_SYMBOL(k_pre);

static void k_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	post_hits++;
}
NOKPROBE_SYMBOL(k_post);

static int o_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	pre_hits++;
	return 0;
}
NOKPROBE_SYMBOL(o_pre);

static void o_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	post_hits++;
}
NOKPROBE_SYMBOL(o_post);

/* The first instruction after the function's landing pad (ENDBR64, or its sealed poison). */
void *first_insn(const void *fn)
{
	static const u8 endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 poison[4] = { 0x0f, 0x1f, 0x40, 0xd6 };

	if (!memcmp(fn, endbr64, 4) || !memcmp(fn, poison, 4))
		return (void *)fn + 4;
	return (void *)fn;
}

/* "12.345" from a value in thousandths (signed). */
const char *milli(char *buf, size_t len, s64 v)
{
	u64 a = v < 0 ? -v : v;

	snprintf(buf, len, "%s%llu.%03llu", v < 0 ? "-" : "", a / 1000, a % 1000);
	return buf;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

u64 median(u64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), cmp_u64, NULL);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* a / b in thousandths, 0 when b is not positive. */
s64 ratio_milli(s64 a, s64 b)
{
	return b > 0 ? div64_s64(a * 1000, b) : 0;
}

/* The BENCH line of each state; med_ps/min_ps get the median/fastest ps per call. */
void bench_report_states(const char *tn, const char *const *names, unsigned int nstates,
			 u64 (*times)[MAX_ROUNDS], u64 *med_ps, u64 *min_ps)
{
	static u64 sorted[MAX_ROUNDS];
	char a[32], b[32], c[32], d[32];
	unsigned int s;

	for (s = 0; s < nstates; s++) {
		u64 med;

		memcpy(sorted, times[s], rounds * sizeof(u64));
		med = median(sorted, rounds);
		/* picoseconds per call */
		med_ps[s] = div64_u64(med * 1000, calls);
		min_ps[s] = div64_u64(sorted[0] * 1000, calls);
		pr_info("BENCH target=%s state=%s calls=%lu rounds=%u ns_per_call=%s min_ns_per_call=%s max_ns_per_call=%s overhead_ns=%s hits_per_s=%llu\n",
			tn, names[s], calls, rounds, milli(a, sizeof(a), med_ps[s]),
			milli(b, sizeof(b), min_ps[s]),
			milli(c, sizeof(c), div64_u64(sorted[rounds - 1] * 1000, calls)),
			milli(d, sizeof(d), (s64)med_ps[s] - (s64)med_ps[0]),
			s == 0 ? 0 : div64_u64((u64)calls * NSEC_PER_SEC, med));
	}
}

/*
 * The BENCH-RATIO line of okprobes' state ok against the kernel's state ke (state 0 is no
 * probe). Host noise (the TCG guest shares the host's CPUs) only ever slows a run down, and it
 * comes in bursts longer than a run. Two estimates resist it: the ratio of the fastest runs,
 * and the median over rounds of each round's own ratio (its runs are adjacent).
 */
void bench_report_ratio(const char *tn, const char *mode, u64 (*times)[MAX_ROUNDS],
			const u64 *med_ps, const u64 *min_ps, unsigned int ok, unsigned int ke)
{
	static u64 per_round[MAX_ROUNDS];
	char a[32], b[32], c[32], d[32];
	unsigned int r;

	for (r = 0; r < rounds; r++) {
		s64 o = (s64)times[ok][r] - (s64)times[0][r];
		s64 k = (s64)times[ke][r] - (s64)times[0][r];

		per_round[r] = max_t(s64, ratio_milli(o, k), 0);
	}
	pr_info("BENCH-RATIO target=%s mode=%s overhead=%s ns_per_call=%s overhead_of_min=%s overhead_per_round=%s\n",
		tn, mode,
		milli(a, sizeof(a), ratio_milli(med_ps[ok] - med_ps[0], med_ps[ke] - med_ps[0])),
		milli(b, sizeof(b), ratio_milli(med_ps[ok], med_ps[ke])),
		milli(c, sizeof(c), ratio_milli(min_ps[ok] - min_ps[0], min_ps[ke] - min_ps[0])),
		milli(d, sizeof(d), median(per_round, rounds)));
}

/*
 * The jump-optimization sysctls, through /proc as the guest script uses them: the kernel
 * exports no accessor for its own. Writing 0 to kprobes-optimization when it was 1 also
 * waits for the kernel's optimizer to finish its pending work (unoptimize_all_kprobes()).
 */
int bench_sysctl_read(const char *name)
{
	char path[64], buf[16] = "";
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	int v;

	snprintf(path, sizeof(path), "/proc/sys/debug/%s", name);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n < 0)
		return n;
	buf[n] = '\0';
	if (kstrtoint(strim(buf), 10, &v))
		return -EINVAL;
	return v;
}

bool bench_sysctl_write(const char *name, int value)
{
	char path[64], buf[8];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/sys/debug/%s", name);
	snprintf(buf, sizeof(buf), "%d\n", value);
	f = filp_open(path, O_WRONLY, 0);
	if (IS_ERR(f)) {
		bench_error("cannot open %s (%ld)", path, PTR_ERR(f));
		return false;
	}
	n = kernel_write(f, buf, strlen(buf), &pos);
	filp_close(f, NULL);
	if (n != strlen(buf)) {
		bench_error("cannot write %d to %s (%zd)", value, path, n);
		return false;
	}
	return true;
}

bool text_is_jump(const void *addr)
{
	return READ_ONCE(*(const u8 *)addr) == 0xe9;	/* jmp rel32 */
}

/*
 * With CONFIG_OPTPROBES a kprobe is served by an aggregate (an optimized_kprobe) and sits
 * alone on its list; the aggregate carries KPROBE_FLAG_OPTIMIZED from the moment it is
 * queued for optimization, and its jump is in the text once the optimizer ran.
 */
bool kernel_kprobe_optimized(struct kprobe *kp)
{
	struct kprobe *ap = list_empty(&kp->list) ? kp :
			    list_entry(READ_ONCE(kp->list.next), struct kprobe, list);

	return (READ_ONCE(ap->flags) & KPROBE_FLAG_OPTIMIZED) && text_is_jump(kp->addr);
}

/* The breakpoint parts need both frameworks on breakpoints: the guest script wrote 0s. */
static void check_optimization_sysctls(void)
{
	int k = bench_sysctl_read(KPROBES_OPT), o = bench_sysctl_read(OKP_OPT);

	pr_info("BENCH-INFO kprobes_optimization=%d okprobes_optimization=%d\n", k, o);
	if (k != 0)
		bench_error("kprobes optimization is %d: write 0 to /proc/sys/debug/%s before loading", k,
			    KPROBES_OPT);
	if (o != 0)
		bench_error("okprobes optimization is %d: write 0 to /proc/sys/debug/%s before loading", o,
			    OKP_OPT);
}

/* The timed loop; the target returns its argument + 1. Direct calls: no retpoline in it. */
static noinline u64 bench_loop(enum bench_target t, unsigned long n, unsigned long *sum)
{
	unsigned long i, acc = 0;
	u64 t0, t1;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		acc += t == T_MOV ? okp_bench_target(i) :
		       t == T_LEA ? okp_bench_target_lea(i) : okp_bench_target_add(i);
		if (unlikely(!(i & 0xffff)))
			cond_resched();
	}
	t1 = ktime_get_ns();
	*sum = acc;
	return t1 - t0;
}

/* One run of one state; returns its time in ns, 0 on failure. */
static u64 run_state(enum bench_target t, enum bench_state st, unsigned long n, bool first)
{
	static struct kprobe kp;
	static struct okp_kprobe op;
	void *addr = first_insn(targets[t].fn);
	const char *tn = targets[t].name;
	bool kernel = st == S_KBOOST || st == S_KSTEP;
	bool okp = st == S_OBOOST || st == S_OSTEP;
	bool step = st == S_KSTEP || st == S_OSTEP;
	unsigned long sum;
	u64 ns;
	int ret;

	memset(&kp, 0, sizeof(kp));
	memset(&op, 0, sizeof(op));
	if (kernel) {
		kp.addr = addr;
		kp.pre_handler = k_pre;
		kp.post_handler = step ? k_post : NULL;
		ret = register_kprobe(&kp);
		if (ret) {
			bench_error("target=%s state=%s register_kprobe at %pS: %d", tn, state_name[st], addr, ret);
			return 0;
		}
		/*
		 * The kernel boosts only without a post_handler, and never in a preemptible kernel
		 * (prepare_singlestep(): Debian's PREEMPT_DYNAMIC kernel has CONFIG_PREEMPTION):
		 * there its "boost" state single-steps too.
		 */
		if (kp.ainsn.boostable != (!step && !IS_ENABLED(CONFIG_PREEMPTION)))
			bench_error("target=%s state=%s the kernel's probe is %sboosted", tn, state_name[st],
				    kp.ainsn.boostable ? "" : "not ");
		/*
		 * With CONFIG_OPTPROBES, register_kprobe() prepares a jump optimization even when
		 * optimizing is off, and then serves the probe through an aggregate (its handlers
		 * called by aggr_pre_handler/aggr_post_handler): kp is then on the aggregate's list.
		 */
		if (first)
			pr_info("BENCH-INFO target=%s state=%s kernel_boostable=%u kernel_aggregate=%d\n",
				tn, state_name[st], kp.ainsn.boostable, !list_empty(&kp.list));
	} else if (okp) {
		op.addr = addr;
		op.pre_handler = o_pre;
		op.post_handler = step ? o_post : NULL;
		ret = okp_register_kprobe(&op);
		if (ret) {
			bench_error("target=%s state=%s okp_register_kprobe at %pS: %d (%s)", tn, state_name[st],
				    addr, ret, okp_kprobe_reason(&op));
			return 0;
		}
		/*
		 * okprobes says "not boosted" exactly when a slot instruction is not boosted (else,
		 * optimization being off, it says why the probe is not optimized).
		 */
		if (!strncmp(okp_kprobe_reason(&op), "not boosted", 11) != (step && !targets[t].okp_emulates))
			bench_error("target=%s state=%s okprobes says \"%s\"", tn, state_name[st],
				    okp_kprobe_reason(&op));
		if (first)
			pr_info("BENCH-INFO target=%s state=%s okp_reason=\"%s\"\n", tn, state_name[st],
				okp_kprobe_reason(&op));
	}
	/* Let an optimizer that should not be on (kernel: 5 jiffies; okprobes: 20 ms) show itself. */
	msleep(30);

	pre_hits = post_hits = 0;
	ns = bench_loop(t, n, &sum);
	bench_sink = sum;

	if (sum != n * (n + 1) / 2)
		bench_error("target=%s state=%s the target computed %lu, not %lu", tn, state_name[st], sum,
			    n * (n + 1) / 2);
	if (st != S_NONE && pre_hits != n)
		bench_error("target=%s state=%s %lu pre-handler hits for %lu calls", tn, state_name[st], pre_hits, n);
	if (post_hits != (step ? n : 0))
		bench_error("target=%s state=%s %lu post-handler hits for %lu calls", tn, state_name[st], post_hits,
			    n);
	if (kernel) {
		if (kernel_kprobe_optimized(&kp))
			bench_error("target=%s state=%s the kernel's kprobe is OPTIMIZED (jump), not int3",
				    tn, state_name[st]);
		if (kp.nmissed)
			bench_error("target=%s state=%s kprobe nmissed=%lu", tn, state_name[st], kp.nmissed);
		unregister_kprobe(&kp);
	} else if (okp) {
		if (op.nhit != n || op.nmissed)
			bench_error("target=%s state=%s okprobes nhit=%lu nmissed=%lu for %lu calls",
				    tn, state_name[st], op.nhit, op.nmissed, n);
		if ((op.flags & OKP_KPROBE_FLAG_OPTIMIZED) || text_is_jump(addr))
			bench_error("target=%s state=%s the okprobes probe is OPTIMIZED (jump), not int3",
				    tn, state_name[st]);
		okp_unregister_kprobe(&op);
	}
	cond_resched();
	return ns;
}

static void bench_hits(enum bench_target t)
{
	const char *tn = targets[t].name;
	static u64 times[S_NR][MAX_ROUNDS];
	u64 med_ps[S_NR] = {}, min_ps[S_NR] = {};
	unsigned int r, s;

	for (r = 0; r < warmup + rounds; r++) {
		for (s = 0; s < S_NR; s++) {
			u64 ns = run_state(t, s, calls, r == 0);

			if (!ns)
				return;
			if (r >= warmup)
				times[s][r - warmup] = ns;
		}
	}
	for (r = 0; r < rounds; r++)
		for (s = 0; s < S_NR; s++)
			pr_info("BENCH-RUN target=%s round=%u state=%s ns=%llu\n", tn, r, state_name[s],
				times[s][r]);

	bench_report_states(tn, state_name, S_NR, times, med_ps, min_ps);
	bench_report_ratio(tn, "boost", times, med_ps, min_ps, S_OBOOST, S_KBOOST);
	bench_report_ratio(tn, "step", times, med_ps, min_ps, S_OSTEP, S_KSTEP);
}

enum layout { L_DENSE, L_SPREAD, L_NR };
static const char *const layout_name[L_NR] = { "dense", "spread" };

static void *reg_addr(enum layout l, unsigned int i)
{
	if (l == L_DENSE)
		return first_insn(okp_bench_dense) + i * OKP_BENCH_DENSE_INSN_LEN;
	return first_insn((void *)okp_bench_spread_fns[i]);
}

/* Every probe once, outside the timing: proves they were all live. */
static void hit_all(enum layout l, unsigned int n)
{
	unsigned int i;

	if (l == L_DENSE) {
		bench_sink = okp_bench_dense(0);
		return;
	}
	for (i = 0; i < n; i++)
		bench_sink = ((unsigned long (*)(unsigned long))okp_bench_spread_fns[i])(0);
}

struct reg_arrays {
	struct kprobe *k;
	struct kprobe **kp;
	struct okp_kprobe *o;
	struct okp_kprobe **op;
};

/* One register-all + unregister-all; false on failure. */
static bool reg_once(struct reg_arrays *ra, bool okp, enum layout l, unsigned int n,
		     u64 *reg_ns, u64 *unreg_ns)
{
	const char *fw = okp ? "okprobes" : "kernel";
	unsigned int i;
	u64 t0, t1, t2;
	int ret;

	for (i = 0; i < n; i++) {
		if (okp) {
			memset(&ra->o[i], 0, sizeof(ra->o[i]));
			ra->o[i].addr = reg_addr(l, i);
			ra->o[i].pre_handler = o_pre;
			ra->op[i] = &ra->o[i];
		} else {
			memset(&ra->k[i], 0, sizeof(ra->k[i]));
			ra->k[i].addr = reg_addr(l, i);
			ra->k[i].pre_handler = k_pre;
			ra->kp[i] = &ra->k[i];
		}
	}
	t0 = ktime_get_ns();
	ret = okp ? okp_register_kprobes(ra->op, n) : register_kprobes(ra->kp, n);
	t1 = ktime_get_ns();
	if (ret) {
		bench_error("layout=%s n=%u framework=%s registration failed: %d", layout_name[l], n,
			    fw, ret);
		return false;
	}
	pre_hits = 0;
	hit_all(l, n);
	if (pre_hits != n)
		bench_error("layout=%s n=%u framework=%s %lu hits after registering, not %u",
			    layout_name[l], n, fw, pre_hits, n);
	t2 = ktime_get_ns();
	if (okp)
		okp_unregister_kprobes(ra->op, n);
	else
		unregister_kprobes(ra->kp, n);
	*unreg_ns = ktime_get_ns() - t2;
	*reg_ns = t1 - t0;
	cond_resched();
	return true;
}

static void bench_registration(void)
{
	static const unsigned int counts[] = { 1, 100, 1000 };
	unsigned int max = min_t(unsigned int, reg_max, min(OKP_BENCH_DENSE, OKP_BENCH_SPREAD));
	struct reg_arrays ra = {};
	u64 *v = kcalloc(6 * reg_reps, sizeof(u64), GFP_KERNEL);
	unsigned int ci, rep;
	enum layout l;

	ra.k = kcalloc(max, sizeof(*ra.k), GFP_KERNEL);
	ra.kp = kcalloc(max, sizeof(*ra.kp), GFP_KERNEL);
	ra.o = kcalloc(max, sizeof(*ra.o), GFP_KERNEL);
	ra.op = kcalloc(max, sizeof(*ra.op), GFP_KERNEL);
	if (!v || !ra.k || !ra.kp || !ra.o || !ra.op) {
		bench_error("out of memory for the registration benchmark");
		goto out;
	}
	for (l = 0; l < L_NR; l++) {
		for (ci = 0; ci < ARRAY_SIZE(counts) && counts[ci] <= max; ci++) {
			unsigned int n = counts[ci];

			if (l == L_DENSE && n > reg_dense_max)
				continue;
			/* v: [fw][reg|unreg|total][rep] */
			u64 *kreg = v, *kunreg = v + reg_reps, *ktot = v + 2 * reg_reps;
			u64 *oreg = v + 3 * reg_reps, *ounreg = v + 4 * reg_reps, *otot = v + 5 * reg_reps;
			u64 km[3], om[3];
			char a[32], b[32], c[32];

			for (rep = 0; rep < reg_reps; rep++) {
				bool okp_first = rep & 1;
				int k;

				for (k = 0; k < 2; k++) {
					bool okp = okp_first ? k == 0 : k == 1;
					u64 *r = okp ? oreg : kreg, *u = okp ? ounreg : kunreg;
					u64 *t = okp ? otot : ktot;

					if (!reg_once(&ra, okp, l, n, &r[rep], &u[rep]))
						goto out;
					t[rep] = r[rep] + u[rep];
				}
			}
			km[0] = median(kreg, reg_reps);
			km[1] = median(kunreg, reg_reps);
			km[2] = median(ktot, reg_reps);
			om[0] = median(oreg, reg_reps);
			om[1] = median(ounreg, reg_reps);
			om[2] = median(otot, reg_reps);
			pr_info("BENCH-REG layout=%s n=%u framework=kernel reg_ns=%llu unreg_ns=%llu total_ns=%llu\n",
				layout_name[l], n, km[0], km[1], km[2]);
			pr_info("BENCH-REG layout=%s n=%u framework=okprobes reg_ns=%llu unreg_ns=%llu total_ns=%llu\n",
				layout_name[l], n, om[0], om[1], om[2]);
			pr_info("BENCH-REG-RATIO layout=%s n=%u reg=%s unreg=%s total=%s\n",
				layout_name[l], n, milli(a, sizeof(a), ratio_milli(om[0], km[0])),
				milli(b, sizeof(b), ratio_milli(om[1], km[1])),
				milli(c, sizeof(c), ratio_milli(om[2], km[2])));
		}
	}
out:
	kfree(ra.op);
	kfree(ra.o);
	kfree(ra.kp);
	kfree(ra.k);
	kfree(v);
}

static int __init okp_bench_init(void)
{
	enum bench_target t;

	if (okp_api_version() != OKP_API_VERSION) {
		pr_err("BENCH-ERROR okprobes API %u, built for %u\n", okp_api_version(),
		       OKP_API_VERSION);
		return -EPROTO;
	}
	if (!rounds || rounds > MAX_ROUNDS || !calls || !reg_reps) {
		pr_err("BENCH-ERROR bad parameters (rounds 1..%d, calls and reg_reps > 0)\n",
		       MAX_ROUNDS);
		return -EINVAL;
	}
	pr_info("BENCH-INFO calls=%lu rounds=%u warmup=%u reg_reps=%u reg_max=%u classic=%d opt=%d scale=%d\n",
		calls, rounds, warmup, reg_reps, reg_max, classic, opt, scale);
	for (t = 0; t < T_NR; t++)
		pr_info("BENCH-INFO target=%s fn=%pS probe=%pS okp_emulates=%d\n", targets[t].name,
			targets[t].fn, first_insn(targets[t].fn), targets[t].okp_emulates);
	check_optimization_sysctls();
	if (classic) {
		for (t = 0; t < T_NR && !errors; t++)
			bench_hits(t);
		if (!errors)
			bench_returns(false);
		if (!errors)
			bench_registration();
	}
	if (opt) {
		/* Both switches go to 1 only around the runs that want them, and back to 0. */
		if (!errors)
			bench_opt_hits();
		if (!errors)
			bench_returns(true);
		if (!errors)
			bench_opt_registration();
		bench_sysctl_write(KPROBES_OPT, 0);
		bench_sysctl_write(OKP_OPT, 0);
	}
	if (scale && !errors)
		bench_scale();
	pr_info("BENCH-DONE errors=%u\n", errors);
	return 0;
}

static void __exit okp_bench_exit(void)
{
}

module_init(okp_bench_init);
module_exit(okp_bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes benchmark: hit and registration cost against the kernel's kprobes");
