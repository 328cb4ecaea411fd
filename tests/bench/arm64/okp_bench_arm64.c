// SPDX-License-Identifier: GPL-2.0
/*
 * okprobes against the kernel's kprobes on arm64, in one guest: for each state (an instruction
 * both simulate; one run from a slot with a pre_handler only, which okprobes boosts and the
 * kernel steps; the same with a post_handler too, which both step; add-imm which okprobes
 * simulates and the kernel steps; and a return probe) and each round, the same calls run unprobed, under the kernel's probe and under
 * okprobes' (the order alternating per round), and the per-hit cost is the probed time minus
 * the unprobed, per call. Medians over the rounds are printed as
 *   BENCH-ARM64 <state> kernel=<ns> okprobes=<ns> ratio=<okprobes/kernel, x1000>
 * and every result is checked (a wrong sum or a missed hit is a BENCH-ARM64-ERROR line).
 * Everything runs in the init, which returns 0 (an error return makes busybox's insmod load the
 * module a second time): the guest rmmods it afterwards, no probe being left registered.
 */
#define pr_fmt(fmt) "okp_bench_arm64: " fmt
#define OKP_BENCH_TAG "BENCH-ARM64"

#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <okprobes/okprobes.h>
#include "okp_bench_rounds.h"

unsigned long okp_b64_sim(unsigned long x);
unsigned long okp_b64_step(unsigned long x);
unsigned long okp_b64_addimm(unsigned long x);
unsigned long okp_b64_ret(unsigned long x);
extern const u8 okp_b64_sim_insn[], okp_b64_step_insn[], okp_b64_addimm_insn[];

static const struct state states[] = {
	{ "simulated", okp_b64_sim, okp_b64_sim_insn, 1 },
	{ "boosted", okp_b64_step, okp_b64_step_insn, 2 },
	{ "stepped", okp_b64_step, okp_b64_step_insn, 2, true },
	{ "add-imm", okp_b64_addimm, okp_b64_addimm_insn, 1 },
	{ "return", okp_b64_ret, NULL, 1 },
};

/*
 * jump=1 (with debug.okprobes-optimization=1; the guest runs the module once with it off for
 * the states above): okprobes' probes are branches to detours (each registration waits for
 * the optimizer and checks the probe is [OPTIMIZED]) against the kernel's BRK on the same
 * instructions.
 */
static bool jump;
module_param(jump, bool, 0444);
static const struct state jump_states[] = {
	{ "jump-b", okp_b64_sim, okp_b64_sim_insn, 1 },
	{ "jump-lsl", okp_b64_step, okp_b64_step_insn, 2 },
	{ "jump-lsl-post", okp_b64_step, okp_b64_step_insn, 2, true },
	{ "jump-add-imm", okp_b64_addimm, okp_b64_addimm_insn, 1 },
	{ "jump-return", okp_b64_ret, NULL, 1 },
};

static int noop_pre(struct kprobe *p, struct pt_regs *regs) { return 0; }
static void noop_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags) { }
static int noop_ret(struct kretprobe_instance *ri, struct pt_regs *regs) { return 0; }
static int okp_noop_pre(struct okp_kprobe *p, struct pt_regs *regs) { return 0; }
static void okp_noop_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags) { }
static int okp_noop_ret(struct okp_kretprobe_instance *ri, struct pt_regs *regs) { return 0; }

/* The kernel's probe on s: ns for the calls, and its hit count checked. */
static u64 run_kernel(const struct state *s)
{
	struct kprobe kp = { .addr = (kprobe_opcode_t *)s->insn, .pre_handler = noop_pre,
			     .post_handler = s->post ? noop_post : NULL };
	struct kretprobe rp = { .kp.addr = (kprobe_opcode_t *)s->fn, .handler = noop_ret,
				.maxactive = 16 };
	u64 t;
	int ret = s->insn ? register_kprobe(&kp) : register_kretprobe(&rp);

	if (ret) {
		errors++;
		pr_err("BENCH-ARM64-ERROR %s: the kernel refused (%d)\n", s->name, ret);
		return 0;
	}
	t = time_calls(s);
	if (s->insn) {
		unregister_kprobe(&kp);
		if (kp.nmissed)
			pr_err("BENCH-ARM64-ERROR %s: the kernel missed %lu\n", s->name, kp.nmissed);
	} else {
		unregister_kretprobe(&rp);
		if (rp.nmissed)
			pr_err("BENCH-ARM64-ERROR %s: the kernel missed %d\n", s->name, rp.nmissed);
	}
	return t;
}

static u64 run_okprobes(const struct state *s)
{
	struct okp_kprobe kp = { .addr = (void *)s->insn, .pre_handler = okp_noop_pre,
				 .post_handler = s->post ? okp_noop_post : NULL };
	struct okp_kretprobe rp = { .kp.addr = (void *)s->fn, .handler = okp_noop_ret,
				    .maxactive = 16 };
	u64 t;
	int ret = s->insn ? okp_register_kprobe(&kp) : okp_register_kretprobe(&rp);

	if (ret) {
		errors++;
		pr_err("BENCH-ARM64-ERROR %s: okprobes refused (%d): %s\n", s->name, ret,
		       okp_kprobe_reason(s->insn ? &kp : &rp.kp));
		return 0;
	}
	if (jump) {
		okp_wait_for_optimizer();
		if (!((s->insn ? kp.flags : rp.kp.flags) & OKP_KPROBE_FLAG_OPTIMIZED)) {
			errors++;
			pr_err("BENCH-ARM64-ERROR %s: okprobes did not optimize it: %s\n", s->name,
			       okp_kprobe_reason(s->insn ? &kp : &rp.kp));
		}
	}
	t = time_calls(s);
	if (s->insn) {
		if (kp.nhit != calls) {
			errors++;
			pr_err("BENCH-ARM64-ERROR %s: okprobes hit %lu of %lu\n", s->name, kp.nhit,
			       calls);
		}
		okp_unregister_kprobe(&kp);
	} else {
		okp_unregister_kretprobe(&rp);
	}
	return t;
}

/*
 * Registration until armed (jump=1): OKP_B64_DENSE probes, one on each instruction of
 * okp_b64_dense, registered one at a time by each framework (the kernel's first, then
 * unregistered, then okprobes'). The kernel's probe is armed when register_kprobe() returns
 * (its BRK written). okprobes' is armed on return too: by a BRK where the kernel delivers
 * one to a module, a branch to its detour from the optimizer's next run (the "optimized"
 * time, polled); by the branch itself where no BRK reaches a module (jump-only: written
 * before the return, so the two times are one). Medians per probe, then every probe's hit
 * checked on one call.
 */
#define OKP_B64_DENSE 64
unsigned long okp_b64_dense(unsigned long x);

static struct kprobe reg_kps[OKP_B64_DENSE];
static struct kprobe *reg_kp_ptrs[OKP_B64_DENSE];
static struct okp_kprobe reg_okps[OKP_B64_DENSE];
static struct okp_kprobe *reg_okp_ptrs[OKP_B64_DENSE];

static void *dense_insn(unsigned int i)
{
	return (u8 *)okp_b64_dense + 4 * i;
}

/* ns to register each of the kernel's probes; 0 when one was refused. */
static u64 kernel_registration(void)
{
	static u64 t[OKP_B64_DENSE];
	unsigned int i;
	u64 t0;
	int ret;

	for (i = 0; i < OKP_B64_DENSE; i++) {
		reg_kps[i] = (struct kprobe){ .addr = dense_insn(i), .pre_handler = noop_pre };
		reg_kp_ptrs[i] = &reg_kps[i];
		t0 = ktime_get_ns();
		ret = register_kprobe(&reg_kps[i]);
		t[i] = ktime_get_ns() - t0;
		if (ret) {
			errors++;
			pr_err("BENCH-ARM64-ERROR registration: the kernel refused +%u (%d)\n", 4 * i, ret);
			unregister_kprobes(reg_kp_ptrs, i);
			return 0;
		}
	}
	if (okp_b64_dense(0) != OKP_B64_DENSE) {
		errors++;
		pr_err("BENCH-ARM64-ERROR registration: wrong result under the kernel's probes\n");
	}
	unregister_kprobes(reg_kp_ptrs, OKP_B64_DENSE);
	return median(t, OKP_B64_DENSE);
}

/* ns to register each of okprobes' probes, and (*optimized) until each was a branch. */
static u64 okprobes_registration(u64 *optimized)
{
	static u64 t[OKP_B64_DENSE], topt[OKP_B64_DENSE];
	unsigned int i, n = 0;
	u64 t0, t1;
	int ret;

	for (i = 0; i < OKP_B64_DENSE; i++, n++) {
		struct okp_kprobe *kp = &reg_okps[i];

		*kp = (struct okp_kprobe){ .addr = dense_insn(i), .pre_handler = okp_noop_pre };
		reg_okp_ptrs[i] = kp;
		t0 = ktime_get_ns();
		ret = okp_register_kprobe(kp);
		t1 = ktime_get_ns();
		t[i] = t1 - t0;
		if (ret) {
			errors++;
			pr_err("BENCH-ARM64-ERROR registration: okprobes refused +%u (%d): %s\n", 4 * i,
			       ret, okp_kprobe_reason(kp));
			break;
		}
		/* The optimizer gathers what registers within its delay: poll, two seconds at most. */
		while (!okp_kprobe_optimized(kp) && ktime_get_ns() - t1 < 2 * NSEC_PER_SEC)
			usleep_range(20, 40);
		topt[i] = ktime_get_ns() - t0;
		if (!okp_kprobe_optimized(kp)) {
			errors++;
			pr_err("BENCH-ARM64-ERROR registration: +%u not a branch after 2 s: %s\n", 4 * i,
			       okp_kprobe_reason(kp));
			n++;
			break;
		}
	}
	if (n == OKP_B64_DENSE) {
		if (okp_b64_dense(0) != OKP_B64_DENSE) {
			errors++;
			pr_err("BENCH-ARM64-ERROR registration: wrong result under okprobes' probes\n");
		}
		for (i = 0; i < OKP_B64_DENSE; i++) {
			if (reg_okps[i].nhit != 1) {
				errors++;
				pr_err("BENCH-ARM64-ERROR registration: +%u hit %lu times, not once\n",
				       4 * i, reg_okps[i].nhit);
			}
		}
	}
	okp_unregister_kprobes(reg_okp_ptrs, n);
	if (n != OKP_B64_DENSE)
		return 0;
	*optimized = median(topt, OKP_B64_DENSE);
	return median(t, OKP_B64_DENSE);
}

static void bench_registration(void)
{
	u64 k = kernel_registration(), optimized = 0, o = okprobes_registration(&optimized);

	pr_info("BENCH-ARM64 registration kernel=%llu okprobes=%llu ratio=%llu optimized=%llu probes=%u\n",
		k, o, k ? div64_u64(o * 1000, k) : 0, optimized, OKP_B64_DENSE);
}

/*
 * What one atomic add costs here, as the core's hit path does it (a compiler builtin: LL/SC on
 * an armv8.0 build) and as the kernel's own atomics do (LSE where the CPU has it, patched in
 * at boot): the simulated state's only per-hit work the kernel's kprobes do not do.
 */
static void bench_atomics(void)
{
	static unsigned long counter;
	static atomic64_t kcounter;
	unsigned long i;
	u64 t0, t1, t2;

	t0 = ktime_get_ns();
	for (i = 0; i < calls; i++)
		__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	t1 = ktime_get_ns();
	for (i = 0; i < calls; i++)
		atomic64_inc(&kcounter);
	t2 = ktime_get_ns();
	pr_info("BENCH-ARM64 atomic-add builtin=%llu kernel-atomic64=%llu (ns per op)\n",
		div64_u64(t1 - t0, calls), div64_u64(t2 - t1, calls));
}

static int __init okp_bench_arm64_init(void)
{
	rounds = clamp(rounds, 1U, (unsigned int)MAX_ROUNDS);
	if (jump) {
		bench_states(jump_states, ARRAY_SIZE(jump_states));
		bench_registration();
	} else {
		bench_atomics();
		bench_states(states, ARRAY_SIZE(states));
	}
	pr_info("BENCH-ARM64 done errors=%u\n", errors);
	return 0;
}
module_init(okp_bench_arm64_init);

static void __exit okp_bench_arm64_exit(void)
{
}
module_exit(okp_bench_arm64_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes vs the kernel's kprobes on arm64, per state");
