// SPDX-License-Identifier: GPL-2.0
/*
 * Jump-optimized probes: the kernel's optprobes (CONFIG_OPTPROBES) against okprobes' jump
 * optimizer, in the same boot as the breakpoint parts and after them (okp_bench.c has the
 * method and the output lines). The guest starts with both sysctls at 0
 * (/proc/sys/debug/kprobes-optimization and okprobes-optimization); each run here writes
 * its own framework's switch first and puts it back to 0 afterwards.
 *
 * 1. Hit cost on okp_bench_target_opt (okp_bench_text.S), probed at +7 (`add $1,%rax`, off
 *    the entry; its region +7..+13 is two plain instructions, no ftrace site), pre_handler
 *    only, states in this order each round:
 *      none         no probe
 *      kernel-int3  register_kprobe(), kprobes-optimization 0: int3, boosted copy
 *      okp-int3     okp_register_kprobe(), okprobes-optimization 0: int3, add emulated in the trap
 *      kernel-opt   register_kprobe(), kprobes-optimization 1; the run starts once the jump
 *                   is in the text (polled: the kernel exports no wait for its optimizer)
 *      okp-opt      okp_register_kprobe(), okprobes-optimization 1, okp_wait_for_optimizer()
 *    Checked on every run: one handler call per call, no miss, the target's result, the
 *    probe is a jump exactly in the -opt states (the byte at the address is 0xe9, the
 *    kernel's aggregate or okprobes' probe says OPTIMIZED) before and after the run, and
 *    once unregistered the function's text is exactly what it was. Ratios: opt (okp-opt /
 *    kernel-opt), int3 (okp-int3 / kernel-int3), speedup-okp (okp-int3 / okp-opt: how many
 *    times cheaper the jump is) and speedup-kernel (the same for the kernel).
 * 2. Return probes with a jump-optimized entry: okp_bench_ret.c, target ret-opt.
 * 3. Registration until optimized: N = 1, 100, 1000 probes at +7 of N copies of the target
 *    (okp_bench_ofn_<i>), pre_handler only, both switches 1, three ways, `reg_reps` times each
 *    (the order rotating each repetition):
 *      kernel    register_kprobes(), then the jumps polled until all N are in the text
 *      okp-wait  okp_register_kprobes() + okp_wait_for_optimizer() (the batch runs at once)
 *      okp-poll  okp_register_kprobes(), then polled like the kernel (the batch runs after
 *                okprobes' own delay, 20 ms)
 *    Timed: the registration call alone, and from its start until every probe is a jump;
 *    beforehand, the grace periods the optimizers wait for are timed alone (median of 3);
 *    then (not timed) every probe is hit once through its jump; then unregistration until
 *    the text is back (the kernel restores it from its optimizer, 5 jiffies later: polled).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

#include "okp_bench.h"

#define OKP_BENCH_OPT 1024
extern const unsigned long okp_bench_opt_fns[OKP_BENCH_OPT];

/* Where the probe goes in okp_bench_target_opt and its copies: +7, after mov %rdi,%rax. */
#define OPT_PROBE_OFFSET 3
/* The target's bytes from the first instruction on: mov %rdi,%rax; add $1,%rax; mov %rax,%rdx. */
static const u8 opt_text[] = { 0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x89, 0xc2 };

/*
 * Registration until optimized, reg_one_insn=1: the probes go on each copy's movl $0x2a,%ecx
 * (b9 2a 00 00 00, +10 from the first instruction), a region of one instruction, which
 * okprobes patches without grace periods (core/optimizer/jump_optimizer.cpp) and the kernel does not.
 */
static bool reg_one_insn;
module_param(reg_one_insn, bool, 0444);
MODULE_PARM_DESC(reg_one_insn, "registration benchmark: probe a one-instruction region");
#define OPT_ONE_INSN_OFFSET 10
static const u8 opt_one_insn[] = { 0xb9, 0x2a, 0x00, 0x00, 0x00 };

/* How long a poll for the kernel's optimizer may take before it is an error. */
#define POLL_LIMIT_NS (60ULL * NSEC_PER_SEC)

static void *opt_addr(unsigned long (*fn)(unsigned long))
{
	return first_insn(fn) + OPT_PROBE_OFFSET;
}

/* The function's instructions are exactly the original ones: nothing left behind. */
static bool opt_text_intact(unsigned long (*fn)(unsigned long))
{
	return !memcmp(first_insn(fn), opt_text, sizeof(opt_text));
}

/* One CPU runs the loop; handlers run with preemption or interrupts off. */
static unsigned long opt_hits;

static int ko_pre(struct kprobe *p, struct pt_regs *regs)
{
	opt_hits++;
	return 0;
}
NOKPROBE_SYMBOL(ko_pre);

static int oo_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	opt_hits++;
	return 0;
}
NOKPROBE_SYMBOL(oo_pre);

bool bench_kernel_optimized_wait(struct kprobe *kp, const char *what)
{
	u64 t0 = ktime_get_ns();

	while (!kernel_kprobe_optimized(kp)) {
		if (ktime_get_ns() - t0 > POLL_LIMIT_NS) {
			bench_error("%s: the kernel's kprobe at %pS is not optimized after %llu s", what,
				    kp->addr, POLL_LIMIT_NS / NSEC_PER_SEC);
			return false;
		}
		usleep_range(200, 400);
	}
	return true;
}

/*
 * An unregistered optimized kprobe keeps its jump, and its place in kprobes' hash (okprobes
 * then refuses the address as the kernel's), until the kernel's optimizer runs. Writing 0 to
 * the sysctl when it was 1 runs it now and waits for it (unoptimize_all_kprobes() ->
 * wait_for_kprobe_optimizer()). The switch stays 0 until the next run that wants it.
 */
void bench_kernel_optimizer_flush(void)
{
	bench_sysctl_write(KPROBES_OPT, 0);
}

/* --- 1. Hit cost ------------------------------------------------------------------------ */

enum opt_state { O_NONE, O_KINT3, O_OINT3, O_KOPT, O_OOPT, O_NR };
static const char *const opt_state_name[O_NR] = {
	"none", "kernel-int3", "okp-int3", "kernel-opt", "okp-opt",
};

static noinline u64 opt_loop(unsigned long n, unsigned long *sum)
{
	unsigned long i, acc = 0;
	u64 t0, t1;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		acc += okp_bench_target_opt(i);
		if (unlikely(!(i & 0xffff)))
			cond_resched();
	}
	t1 = ktime_get_ns();
	*sum = acc;
	return t1 - t0;
}

/* Is this run's probe a jump, by its framework's word and by the text? */
static bool opt_is_jump(bool kernel, struct kprobe *kp, struct okp_kprobe *op, void *addr)
{
	if (kernel)
		return kernel_kprobe_optimized(kp);
	return (op->flags & OKP_KPROBE_FLAG_OPTIMIZED) && text_is_jump(addr);
}

/* One run of one state; its time in ns, 0 on failure. */
static u64 opt_run(enum opt_state st, unsigned long n, bool first)
{
	static struct kprobe kp;
	static struct okp_kprobe op;
	void *addr = opt_addr(okp_bench_target_opt);
	const char *sn = opt_state_name[st];
	bool kernel = st == O_KINT3 || st == O_KOPT;
	bool okp = st == O_OINT3 || st == O_OOPT;
	bool optimized = st == O_KOPT || st == O_OOPT;
	unsigned long sum;
	u64 ns, t0, ready_ns = 0;
	int ret;

	memset(&kp, 0, sizeof(kp));
	memset(&op, 0, sizeof(op));
	if (kernel) {
		if (!bench_sysctl_write(KPROBES_OPT, optimized))
			return 0;
		kp.addr = addr;
		kp.pre_handler = ko_pre;
		t0 = ktime_get_ns();
		ret = register_kprobe(&kp);
		if (ret) {
			bench_error("target=opt state=%s register_kprobe at %pS: %d", sn, addr, ret);
			return 0;
		}
		if (optimized && !bench_kernel_optimized_wait(&kp, "target=opt")) {
			unregister_kprobe(&kp);
			bench_kernel_optimizer_flush();
			return 0;
		}
		ready_ns = ktime_get_ns() - t0;
	} else if (okp) {
		if (!bench_sysctl_write(OKP_OPT, optimized))
			return 0;
		op.addr = addr;
		op.pre_handler = oo_pre;
		t0 = ktime_get_ns();
		ret = okp_register_kprobe(&op);
		if (ret) {
			bench_error("target=opt state=%s okp_register_kprobe at %pS: %d (%s)", sn, addr, ret,
				    okp_kprobe_reason(&op));
			return 0;
		}
		if (optimized)
			okp_wait_for_optimizer();
		ready_ns = ktime_get_ns() - t0;
	}
	if (!optimized)
		msleep(30);	/* an optimizer that should not be on would show itself */
	if (first && st != O_NONE)
		pr_info("BENCH-INFO target=opt state=%s ready_ns=%llu okp_reason=\"%s\"\n", sn, ready_ns,
			okp ? okp_kprobe_reason(&op) : "");
	if (st != O_NONE && opt_is_jump(kernel, &kp, &op, addr) != optimized)
		bench_error("target=opt state=%s the probe is %s before the run (%s)", sn,
			    optimized ? "not a jump" : "a jump", okp ? okp_kprobe_reason(&op) : "kernel");

	opt_hits = 0;
	ns = opt_loop(n, &sum);

	if (sum != n * (n + 1) / 2)
		bench_error("target=opt state=%s the target computed %lu, not %lu", sn, sum,
			    n * (n + 1) / 2);
	if (opt_hits != (st == O_NONE ? 0 : n))
		bench_error("target=opt state=%s %lu handler calls for %lu calls", sn, opt_hits, n);
	if (st != O_NONE && opt_is_jump(kernel, &kp, &op, addr) != optimized)
		bench_error("target=opt state=%s the probe is %s after the run", sn,
			    optimized ? "not a jump" : "a jump");
	if (kernel) {
		if (kp.nmissed)
			bench_error("target=opt state=%s kprobe nmissed=%lu", sn, kp.nmissed);
		unregister_kprobe(&kp);
		if (optimized)
			bench_kernel_optimizer_flush();
	} else if (okp) {
		if (op.nhit != n || op.nmissed)
			bench_error("target=opt state=%s okprobes nhit=%lu nmissed=%lu for %lu calls", sn,
				    op.nhit, op.nmissed, n);
		okp_unregister_kprobe(&op);
		bench_sysctl_write(OKP_OPT, 0);
	}
	if (!opt_text_intact(okp_bench_target_opt))
		bench_error("target=opt state=%s the text is not restored after unregistering: %*ph",
			    sn, (int)sizeof(opt_text), first_insn(okp_bench_target_opt));
	cond_resched();
	return ns;
}

void bench_opt_hits(void)
{
	static u64 times[O_NR][MAX_ROUNDS];
	u64 med_ps[O_NR] = {}, min_ps[O_NR] = {};
	unsigned int r, s;

	pr_info("BENCH-INFO target=opt fn=%pS probe=%pS text=%*ph hz=%d\n", okp_bench_target_opt,
		opt_addr(okp_bench_target_opt), (int)sizeof(opt_text),
		first_insn(okp_bench_target_opt), HZ);
	if (!opt_text_intact(okp_bench_target_opt)) {
		bench_error("okp_bench_target_opt is not the expected instructions");
		return;
	}
	for (r = 0; r < warmup + rounds; r++) {
		for (s = 0; s < O_NR; s++) {
			u64 ns = opt_run(s, calls, r == 0);

			if (!ns)
				return;
			if (r >= warmup)
				times[s][r - warmup] = ns;
		}
	}
	for (r = 0; r < rounds; r++)
		for (s = 0; s < O_NR; s++)
			pr_info("BENCH-RUN target=opt round=%u state=%s ns=%llu\n", r, opt_state_name[s],
				times[s][r]);
	bench_report_states("opt", opt_state_name, O_NR, times, med_ps, min_ps);
	bench_report_ratio("opt", "opt", times, med_ps, min_ps, O_OOPT, O_KOPT);
	bench_report_ratio("opt", "int3", times, med_ps, min_ps, O_OINT3, O_KINT3);
	bench_report_ratio("opt", "speedup-okp", times, med_ps, min_ps, O_OINT3, O_OOPT);
	bench_report_ratio("opt", "speedup-kernel", times, med_ps, min_ps, O_KINT3, O_KOPT);
}

/* --- 3. Registration until optimized ---------------------------------------------------- */

enum opt_fw { F_KERNEL, F_OKP_WAIT, F_OKP_POLL, F_NR };
static const char *const opt_fw_name[F_NR] = { "kernel", "okp-wait", "okp-poll" };

struct opt_reg_arrays {
	struct kprobe *k;
	struct kprobe **kp;
	struct okp_kprobe *o;
	struct okp_kprobe **op;
};

static unsigned long (*opt_fn(unsigned int i))(unsigned long)
{
	return (unsigned long (*)(unsigned long))okp_bench_opt_fns[i];
}

/* Copy i's instructions are the original ones, the 5-byte one included. */
static bool opt_reg_intact(unsigned int i)
{
	return opt_text_intact(opt_fn(i)) &&
	       !memcmp(first_insn(opt_fn(i)) + OPT_ONE_INSN_OFFSET, opt_one_insn, sizeof(opt_one_insn));
}

/* Where the registration benchmark probes copy i. */
static void *opt_reg_addr(unsigned int i)
{
	return reg_one_insn ? first_insn(opt_fn(i)) + OPT_ONE_INSN_OFFSET : opt_addr(opt_fn(i));
}

/* Probe i is a jump (fw's word and the text), or its text is back (restored). */
static bool opt_reg_jump(struct opt_reg_arrays *ra, enum opt_fw fw, unsigned int i)
{
	if (fw == F_KERNEL)
		return kernel_kprobe_optimized(&ra->k[i]);
	return (READ_ONCE(ra->o[i].flags) & OKP_KPROBE_FLAG_OPTIMIZED) &&
	       text_is_jump(opt_reg_addr(i));
}

/* Polls until every probe satisfies the predicate; false (and an error) after the limit. */
static bool opt_reg_poll(struct opt_reg_arrays *ra, enum opt_fw fw, unsigned int n, bool restored)
{
	u64 t0 = ktime_get_ns();
	unsigned int i = 0;

	while (i < n) {
		if (restored ? opt_reg_intact(i) : opt_reg_jump(ra, fw, i)) {
			i++;
			continue;
		}
		if (ktime_get_ns() - t0 > POLL_LIMIT_NS) {
			bench_error("n=%u framework=%s probe %u (%pS) is %s after %llu s: %s", n,
				    opt_fw_name[fw], i, opt_reg_addr(i),
				    restored ? "not restored" : "not optimized",
				    POLL_LIMIT_NS / NSEC_PER_SEC,
				    fw == F_KERNEL ? "kernel" : okp_kprobe_reason(&ra->o[i]));
			return false;
		}
		usleep_range(200, 400);
	}
	return true;
}

/* One register-until-optimized + unregister-until-restored; false on failure. */
static bool opt_reg_once(struct opt_reg_arrays *ra, enum opt_fw fw, unsigned int n,
			 u64 *reg_ns, u64 *opt_ns, u64 *unreg_ns)
{
	const char *fw_name = opt_fw_name[fw];
	bool kernel = fw == F_KERNEL;
	unsigned int i;
	u64 t0, t1, t2, t3;
	bool ok;
	int ret;

	for (i = 0; i < n; i++) {
		if (kernel) {
			memset(&ra->k[i], 0, sizeof(ra->k[i]));
			ra->k[i].addr = opt_reg_addr(i);
			ra->k[i].pre_handler = ko_pre;
			ra->kp[i] = &ra->k[i];
		} else {
			memset(&ra->o[i], 0, sizeof(ra->o[i]));
			ra->o[i].addr = opt_reg_addr(i);
			ra->o[i].pre_handler = oo_pre;
			ra->op[i] = &ra->o[i];
		}
	}
	if (!bench_sysctl_write(kernel ? KPROBES_OPT : OKP_OPT, 1))
		return false;

	t0 = ktime_get_ns();
	ret = kernel ? register_kprobes(ra->kp, n) : okp_register_kprobes(ra->op, n);
	t1 = ktime_get_ns();
	if (ret) {
		bench_error("n=%u framework=%s registration failed: %d", n, fw_name, ret);
		return false;
	}
	if (fw == F_OKP_WAIT) {
		okp_wait_for_optimizer();
		t2 = ktime_get_ns();
		for (i = 0, ok = true; i < n && ok; i++) {
			ok = opt_reg_jump(ra, fw, i);
			if (!ok)
				bench_error("n=%u framework=%s okp_wait_for_optimizer() returned with probe %u (%pS) not optimized: %s",
					    n, fw_name, i, opt_reg_addr(i), okp_kprobe_reason(&ra->o[i]));
		}
	} else {
		ok = opt_reg_poll(ra, fw, n, false);
		t2 = ktime_get_ns();
	}

	/* Every probe once, through its jump (not timed). */
	opt_hits = 0;
	for (i = 0; i < n; i++)
		opt_fn(i)(i);
	if (ok && opt_hits != n)
		bench_error("n=%u framework=%s %lu hits through the jumps, not %u", n, fw_name, opt_hits,
			    n);

	t3 = ktime_get_ns();
	if (kernel)
		unregister_kprobes(ra->kp, n);
	else
		okp_unregister_kprobes(ra->op, n);
	ok = opt_reg_poll(ra, fw, n, true) && ok;
	*unreg_ns = ktime_get_ns() - t3;
	*reg_ns = t1 - t0;
	*opt_ns = t2 - t0;
	/* Not timed: the kernel frees its probes in its optimizer; both switches back to 0. */
	if (kernel)
		bench_kernel_optimizer_flush();
	else
		bench_sysctl_write(OKP_OPT, 0);
	cond_resched();
	return ok;
}

/*
 * What both optimizers wait for, measured alone: okprobes' batch waits for an RCU and then a
 * tasks-RCU grace period; the kernel's optimizer for a tasks-RCU one (synchronize_rcu() where
 * the kernel has no tasks RCU, as the test kernel).
 */
static void bench_grace_periods(void)
{
	u64 rcu[3], tasks[3], t0;
	int i;

	for (i = 0; i < 3; i++) {
		t0 = ktime_get_ns();
		synchronize_rcu();
		rcu[i] = ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		synchronize_rcu_tasks();
		tasks[i] = ktime_get_ns() - t0;
	}
	pr_info("BENCH-INFO grace_periods rcu_ns=%llu tasks_rcu_ns=%llu\n", median(rcu, 3),
		median(tasks, 3));
}

void bench_opt_registration(void)
{
	static const unsigned int counts[] = { 1, 100, 1000 };
	unsigned int max = min_t(unsigned int, reg_max, OKP_BENCH_OPT);
	struct opt_reg_arrays ra = {};
	/* [fw][reg|opt|unreg][rep] */
	u64 *v = kcalloc(F_NR * 3 * reg_reps, sizeof(u64), GFP_KERNEL);
	unsigned int ci, rep, i;

	ra.k = kcalloc(max, sizeof(*ra.k), GFP_KERNEL);
	ra.kp = kcalloc(max, sizeof(*ra.kp), GFP_KERNEL);
	ra.o = kcalloc(max, sizeof(*ra.o), GFP_KERNEL);
	ra.op = kcalloc(max, sizeof(*ra.op), GFP_KERNEL);
	if (!v || !ra.k || !ra.kp || !ra.o || !ra.op) {
		bench_error("out of memory for the optimized registration benchmark");
		goto out;
	}
	bench_grace_periods();
	pr_info("BENCH-INFO registration probes %s\n", reg_one_insn ?
		"movl $0x2a,%ecx (+10): a region of one instruction" :
		"add $1,%rax (+3): a region of two instructions");
	for (i = 0; i < max; i++) {
		if (!opt_reg_intact(i)) {
			bench_error("okp_bench_ofn_%u is not the expected instructions", i);
			goto out;
		}
	}
	for (ci = 0; ci < ARRAY_SIZE(counts) && counts[ci] <= max; ci++) {
		unsigned int n = counts[ci];
		u64 med[F_NR][3];
		char a[32], b[32], c[32], d[32];
		enum opt_fw f;
		int k;

		for (rep = 0; rep < reg_reps; rep++) {
			for (k = 0; k < F_NR; k++) {
				u64 *x;

				f = (rep + k) % F_NR;
				x = v + (f * 3) * reg_reps;
				if (!opt_reg_once(&ra, f, n, &x[rep], &x[reg_reps + rep],
						  &x[2 * reg_reps + rep]))
					goto out;
			}
		}
		for (f = 0; f < F_NR; f++) {
			for (k = 0; k < 3; k++)
				med[f][k] = median(v + (f * 3 + k) * reg_reps, reg_reps);
			pr_info("BENCH-OPTREG n=%u framework=%s reg_ns=%llu optimized_ns=%llu unreg_ns=%llu\n",
				n, opt_fw_name[f], med[f][0], med[f][1], med[f][2]);
		}
		pr_info("BENCH-OPTREG-RATIO n=%u okp_wait=%s okp_poll=%s reg=%s unreg=%s\n", n,
			milli(a, sizeof(a), ratio_milli(med[F_OKP_WAIT][1], med[F_KERNEL][1])),
			milli(b, sizeof(b), ratio_milli(med[F_OKP_POLL][1], med[F_KERNEL][1])),
			milli(c, sizeof(c), ratio_milli(med[F_OKP_WAIT][0], med[F_KERNEL][0])),
			milli(d, sizeof(d), ratio_milli(med[F_OKP_WAIT][2], med[F_KERNEL][2])));
	}
out:
	kfree(ra.op);
	kfree(ra.o);
	kfree(ra.kp);
	kfree(ra.k);
	kfree(v);
}
