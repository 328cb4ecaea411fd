// SPDX-License-Identifier: GPL-2.0
/*
 * Return-probe hit cost: the kernel's kretprobe against okp_kretprobe on the same function,
 * interleaved in one boot (see okp_bench.c for the method and the output lines). Two
 * targets, both returning x + 1:
 *   ret-ftrace  okp_bench_ret_target, a C function: its entry is an ftrace site, so both
 *               frameworks enter through ftrace;
 *   ret-int3    okp_bench_target_lea (okp_bench_text.S): no ftrace call, so both enter
 *               through an int3 (boosted slot: no post_handler on a return probe's entry).
 * States: none, kernel-ret (register_kretprobe), okp-ret (okp_register_kretprobe), okp-ret-stubs
 * (the same with okprobes' own return stubs forced, see ret_state); each with
 * an entry_handler that stores the argument in the instance data and a return handler that
 * checks it against the return value. Checked on every run: one entry and one return per
 * call, no miss, the data paired, the target's result, and that neither entry is
 * jump-optimized (both sysctls are 0 there).
 *
 * With jump optimization (bench_returns(true), after the breakpoint parts), a third target:
 *   ret-opt     okp_bench_target_opt (okp_bench_text.S): no ftrace call and a plain region
 *               at the entry (+4: mov, add), so both frameworks can turn the entry's int3
 *               into a jmp. Five states: none, kernel-ret and okp-ret (their optimization
 *               sysctl 0: int3 entries), kernel-ret-opt and okp-ret-opt (sysctl 1, and the
 *               run starts only once the entry is a jump: the kernel's polled, okprobes'
 *               through okp_wait_for_optimizer()). Checked as above, plus: the entry is a
 *               jump exactly in the -opt states, before and after the run.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <okprobes/okprobes.h>

#include "okp_bench.h"

noinline unsigned long okp_bench_ret_target(unsigned long x)
{
	barrier();
	return x + 1;
}

/*
 * okp-ret is okprobes' return probe as registered by default: through the kernel's rethook
 * where okprobes uses it (debugfs return_probes), else through its own stubs; okp-ret-stubs
 * forces the stubs (okp_test_force_return_stubs()), so both mechanisms are measured in one
 * boot. On a kernel without rethook the two are the same.
 */
enum ret_state { R_NONE, R_KERNEL, R_OKP, R_OKP_STUBS, R_KERNEL_OPT, R_OKP_OPT, R_OKP_OPT_STUBS,
		 R_NR };
static const char *const ret_state_name[R_NR] = {
	"none", "kernel-ret", "okp-ret", "okp-ret-stubs", "kernel-ret-opt", "okp-ret-opt",
	"okp-ret-opt-stubs",
};

enum ret_target { RT_FTRACE, RT_INT3, RT_OPT, RT_NR };
static const struct {
	const char *name;
	unsigned long (*fn)(unsigned long x);
	unsigned int nstates;
} ret_targets[RT_NR] = {
	[RT_FTRACE] = { "ret-ftrace", okp_bench_ret_target, R_OKP_STUBS + 1 },
	[RT_INT3] = { "ret-int3", okp_bench_target_lea, R_OKP_STUBS + 1 },
	[RT_OPT] = { "ret-opt", okp_bench_target_opt, R_NR },
};

/* One CPU runs the loop; handlers run with interrupts or preemption off. */
static unsigned long entries, returns, mispaired;

static int k_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(unsigned long *)ri->data = regs->di;
	entries++;
	return 0;
}
NOKPROBE_SYMBOL(k_entry);

static int k_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (regs_return_value(regs) != *(unsigned long *)ri->data + 1)
		mispaired++;
	returns++;
	return 0;
}
NOKPROBE_SYMBOL(k_return);

static int o_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	*(unsigned long *)ri->data = regs->di;
	entries++;
	return 0;
}
NOKPROBE_SYMBOL(o_entry);

static int o_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	if (regs_return_value(regs) != *(unsigned long *)ri->data + 1)
		mispaired++;
	returns++;
	return 0;
}
NOKPROBE_SYMBOL(o_return);

static noinline u64 ret_loop(enum ret_target t, unsigned long n, unsigned long *sum)
{
	unsigned long i, acc = 0;
	u64 t0, t1;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		acc += t == RT_FTRACE ? okp_bench_ret_target(i) :
		       t == RT_INT3 ? okp_bench_target_lea(i) : okp_bench_target_opt(i);
		if (unlikely(!(i & 0xffff)))
			cond_resched();
	}
	t1 = ktime_get_ns();
	*sum = acc;
	return t1 - t0;
}

/* One run of one state; its time in ns, 0 on failure. */
static u64 ret_run(enum ret_target t, enum ret_state st, unsigned long n, bool first)
{
	static struct kretprobe krp;
	static struct okp_kretprobe orp;
	const char *tn = ret_targets[t].name, *sn = ret_state_name[st];
	bool kernel = st == R_KERNEL || st == R_KERNEL_OPT;
	bool stubs = st == R_OKP_STUBS || st == R_OKP_OPT_STUBS;
	bool okp = st == R_OKP || st == R_OKP_OPT || stubs;
	bool optimized = st == R_KERNEL_OPT || st == R_OKP_OPT || st == R_OKP_OPT_STUBS;
	void *entry = first_insn(ret_targets[t].fn);
	unsigned long sum;
	u64 ns;
	int ret;

	memset(&krp, 0, sizeof(krp));
	memset(&orp, 0, sizeof(orp));
	if (kernel && t == RT_OPT && !bench_sysctl_write(KPROBES_OPT, optimized))
		return 0;
	if (okp && t == RT_OPT && !bench_sysctl_write(OKP_OPT, optimized))
		return 0;
	if (kernel) {
		krp.kp.addr = (kprobe_opcode_t *)ret_targets[t].fn;
		krp.entry_handler = k_entry;
		krp.handler = k_return;
		krp.data_size = sizeof(unsigned long);
		krp.maxactive = 4;
		ret = register_kretprobe(&krp);
		if (ret) {
			bench_error("target=%s state=%s register_kretprobe: %d", tn, sn, ret);
			return 0;
		}
		if (optimized && !bench_kernel_optimized_wait(&krp.kp, tn)) {
			unregister_kretprobe(&krp);
			bench_kernel_optimizer_flush();
			return 0;
		}
	} else if (okp) {
		orp.kp.addr = (void *)ret_targets[t].fn;
		orp.entry_handler = o_entry;
		orp.handler = o_return;
		orp.data_size = sizeof(unsigned long);
		orp.maxactive = 4;
		if (stubs)
			okp_test_force_return_stubs(1);
		ret = okp_register_kretprobe(&orp);
		if (stubs)
			okp_test_force_return_stubs(0);
		if (ret) {
			bench_error("target=%s state=%s okp_register_kretprobe: %d (%s)", tn, sn, ret,
				    okp_kprobe_reason(&orp.kp));
			return 0;
		}
		if (optimized)
			okp_wait_for_optimizer();
	}
	if (st != R_NONE && t == RT_OPT && first)
		pr_info("BENCH-INFO target=%s state=%s entry=%pS okp_reason=\"%s\"\n", tn, sn,
			kernel ? (void *)krp.kp.addr : (void *)orp.kp.addr,
			okp ? okp_kprobe_reason(&orp.kp) : "");
	if (t == RT_OPT && !optimized)
		msleep(30);	/* an optimizer that should not be on would show itself */
	if (st != R_NONE && text_is_jump(entry) != optimized)
		bench_error("target=%s state=%s the entry is %s before the run", tn, sn,
			    optimized ? "not a jump" : "a jump");
	if (okp && !!(orp.kp.flags & OKP_KPROBE_FLAG_OPTIMIZED) != optimized)
		bench_error("target=%s state=%s okprobes' entry is %sOPTIMIZED (%s)", tn, sn,
			    optimized ? "not " : "", okp_kprobe_reason(&orp.kp));
	bench_trace_call(tn, sn, ret_targets[t].fn);
	entries = returns = mispaired = 0;
	ns = ret_loop(t, n, &sum);
	if (sum != n * (n + 1) / 2)
		bench_error("target=%s state=%s the target computed %lu, not %lu", tn, sn, sum,
			    n * (n + 1) / 2);
	if (st != R_NONE && (entries != n || returns != n || mispaired))
		bench_error("target=%s state=%s %lu entries, %lu returns, %lu mispaired for %lu calls",
			    tn, sn, entries, returns, mispaired, n);
	if (st != R_NONE && text_is_jump(entry) != optimized)
		bench_error("target=%s state=%s the entry is %s after the run", tn, sn,
			    optimized ? "not a jump" : "a jump");
	if (kernel) {
		if (krp.nmissed || krp.kp.nmissed)
			bench_error("target=%s state=%s kretprobe nmissed=%d/%lu", tn, sn, krp.nmissed,
				    krp.kp.nmissed);
		unregister_kretprobe(&krp);
		/* Its jump stays until the kernel's optimizer runs: have it run now. */
		if (optimized)
			bench_kernel_optimizer_flush();
	} else if (okp) {
		if (orp.nmissed || orp.kp.nmissed)
			bench_error("target=%s state=%s okp_kretprobe nmissed=%d/%lu", tn, sn,
				    orp.nmissed, orp.kp.nmissed);
		okp_unregister_kretprobe(&orp);
		if (t == RT_OPT)
			bench_sysctl_write(OKP_OPT, 0);
	}
	if (st != R_NONE && text_is_jump(entry))
		bench_error("target=%s state=%s the entry is still a jump after unregistering", tn, sn);
	cond_resched();
	return ns;
}

static void bench_ret_target(enum ret_target t)
{
	static u64 times[R_NR][MAX_ROUNDS];
	u64 med_ps[R_NR] = {}, min_ps[R_NR] = {};
	unsigned int r, s;

	for (r = 0; r < warmup + rounds; r++) {
		for (s = 0; s < ret_targets[t].nstates; s++) {
			u64 ns = ret_run(t, s, calls, r == 0);

			if (!ns)
				return;
			if (r >= warmup)
				times[s][r - warmup] = ns;
		}
	}
	for (r = 0; r < rounds; r++)
		for (s = 0; s < ret_targets[t].nstates; s++)
			pr_info("BENCH-RUN target=%s round=%u state=%s ns=%llu\n", ret_targets[t].name,
				r, ret_state_name[s], times[s][r]);
	bench_report_states(ret_targets[t].name, ret_state_name, ret_targets[t].nstates, times,
			    med_ps, min_ps);
	bench_report_ratio(ret_targets[t].name, "return", times, med_ps, min_ps, R_OKP, R_KERNEL);
	bench_report_ratio(ret_targets[t].name, "return-stubs", times, med_ps, min_ps, R_OKP_STUBS,
			   R_KERNEL);
	if (t != RT_OPT)
		return;
	bench_report_ratio(ret_targets[t].name, "return-opt", times, med_ps, min_ps, R_OKP_OPT,
			   R_KERNEL_OPT);
	bench_report_ratio(ret_targets[t].name, "return-opt-stubs", times, med_ps, min_ps,
			   R_OKP_OPT_STUBS, R_KERNEL_OPT);
	/* What optimizing the entry saves: the int3 entry's overhead / the jump entry's. */
	bench_report_ratio(ret_targets[t].name, "speedup-okp", times, med_ps, min_ps, R_OKP,
			   R_OKP_OPT);
	bench_report_ratio(ret_targets[t].name, "speedup-kernel", times, med_ps, min_ps, R_KERNEL,
			   R_KERNEL_OPT);
}

/* optimized: the jump-optimized target only (ret-opt); else the breakpoint ones. */
void bench_returns(bool optimized)
{
	enum ret_target t;

	for (t = optimized ? RT_OPT : 0; t < (optimized ? RT_NR : RT_OPT) && !errors; t++) {
		pr_info("BENCH-INFO target=%s fn=%pS\n", ret_targets[t].name, ret_targets[t].fn);
		bench_ret_target(t);
	}
}
