// SPDX-License-Identifier: GPL-2.0
/*
 * Step slots at production scale (issue 29): a breakpoint probe on each of the OKP_STEPS
 * (10,000) multiplications of okp_steps_fn_0..999 (stepscale_text*.S: ten each, then the
 * return), each an instruction the arch runs from an out-of-line slot (boosted or
 * single-stepped, never emulated or simulated), all registered in one okp_register_kprobes()
 * call with jump optimization off (the script sets debug.okprobes-optimization=0), so every
 * probe holds a slot at once. Running the text is calling the 1000 functions in turn, each on
 * the last one's result: x * 3^OKP_STEPS.
 *
 * Driven by tests/vm/scripts/scale.sh in three steps:
 *   insmod        unprobed the text computes x * 3^OKP_STEPS; OKP-STEPSCALE-SITES names the
 *                 first and the last probed instruction (for debugfs explain)
 *   arm=1         the `n` probes register at once; one call hits each exactly once and
 *                 computes the same; the probes stay registered (the script reads debugfs)
 *   finish=1      they unregister at once; the text runs unprobed again with no hit; then the
 *                 same probes register and unregister once more: every slot came back
 * Each check prints
 *   OKP-STEPSCALE: ok - DESCRIPTION      or      OKP-STEPSCALE: not ok - DESCRIPTION
 * which the script numbers as TAP; OKP-STEPSCALE-ARMED after arm, OKP-STEPSCALE-END after finish.
 */
#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <okprobes/okprobes.h>

#include "scale_common.h"
#include "stepscale_layout.h"
#define OKP_STEPS (OKP_STEPS_FNS * OKP_STEPS_PER_FN)
#define OKP_STEPS_INSN_SIZE 4	/* imul $3,%rdi,%rdi; add x0,x0,x0,lsl #1; mul a0,a0,a1 */
/* fn(x, 3) = x * 3^OKP_STEPS_PER_FN; riscv multiplies by its second argument. */
typedef unsigned long (*okp_steps_fn_t)(unsigned long x, unsigned long three);
extern const okp_steps_fn_t okp_steps_fns[OKP_STEPS_FNS];

static unsigned int n = OKP_STEPS;
module_param(n, uint, 0444);
MODULE_PARM_DESC(n, "probes, one per instruction from the first (<= 10000)");

#define report(ok, fmt, ...) \
	pr_info("OKP-STEPSCALE: %s - " fmt "\n", (ok) ? "ok" : "not ok", ##__VA_ARGS__)

static struct okp_kprobe *probes;
static struct okp_kprobe **probe_ptrs;
static atomic_t *hits;	/* per instruction, by the pre-handler */
static bool armed;
static DEFINE_MUTEX(stage_lock);

/* Running the text: each function on the last one's result. */
static unsigned long okp_steps_run(unsigned long x)
{
	unsigned int f;

	for (f = 0; f < OKP_STEPS_FNS; f++)
		x = okp_steps_fns[f](x, 3);
	return x;
}

/* A function's first multiplication: past an ENDBR64 (or the nop IBT seals it into) on
 * x86-64, a BTI c on arm64. */
static const u8 *first_insn(const void *fn)
{
#ifdef CONFIG_X86_64
	static const u8 endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 sealed[4] = { 0x0f, 0x1f, 0x40, 0xd6 };

	if (!memcmp(fn, endbr64, 4) || !memcmp(fn, sealed, 4))
		return (const u8 *)fn + 4;
#elif defined(CONFIG_ARM64)
	if (*(const u32 *)fn == 0xd503245f)	/* bti c */
		return (const u8 *)fn + 4;
#endif
	return fn;
}

static const u8 *site_of(unsigned int i)
{
	return first_insn(okp_steps_fns[i / OKP_STEPS_PER_FN]) + (i % OKP_STEPS_PER_FN) * OKP_STEPS_INSN_SIZE;
}

static unsigned long okp_steps_expected(unsigned long x)
{
	unsigned int i;

	for (i = 0; i < OKP_STEPS; i++)
		x *= 3;
	return x;
}

static int okp_steps_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&hits[p - probes]);
	return 0;
}

static void okp_steps_prepare(void)
{
	unsigned int i;

	memset(probes, 0, n * sizeof(*probes));
	for (i = 0; i < n; i++) {
		probes[i].addr = (void *)site_of(i);
		probes[i].pre_handler = okp_steps_pre;
		probe_ptrs[i] = &probes[i];
	}
}

/* The batch's refusal: it stopped at the refused probe, the last one with a reason (the ones
 * before it may carry a note, such as why they are not optimized; none after it was tried). */
static void okp_steps_refused(int ret)
{
	unsigned int i;

	for (i = n; i-- > 0;)
		if (okp_kprobe_reason(&probes[i])[0]) {
			pr_err("OKP-STEPSCALE-REFUSED: registering %u probes failed with %d at probe %u: %s\n",
			       n, ret, i, okp_kprobe_reason(&probes[i]));
			return;
		}
	pr_err("OKP-STEPSCALE-REFUSED: registering %u probes failed with %d\n", n, ret);
}

static void okp_steps_arm(void)
{
	unsigned int i, once = 0, counted_once = 0, served_otherwise = 0, missed = 0;
	unsigned long x = 5, got;
	u64 t;
	int ret;

	okp_steps_prepare();
	t = ktime_get_ns();
	ret = okp_register_kprobes(probe_ptrs, n);
	pr_info("OKP-STEPSCALE-TIMES: register %u: %llu ms\n", n, (ktime_get_ns() - t) / 1000000);
	if (ret)
		okp_steps_refused(ret);
	report(!ret, "%u breakpoint probes, one per instruction, register in one call (%d)", n, ret);
	if (ret)
		return;
	armed = true;
	for (i = 0; i < n; i++)
		if (probes[i].flags & (OKP_KPROBE_FLAG_OPTIMIZED | OKP_KPROBE_FLAG_FTRACE))
			served_otherwise++;
	report(!served_otherwise, "none is a jump or ftrace site: each is a breakpoint (%u are not)",
	       served_otherwise);

	t = ktime_get_ns();
	got = okp_steps_run(x);
	pr_info("OKP-STEPSCALE-TIMES: one run through %u probes: %llu ms\n", n,
		(ktime_get_ns() - t) / 1000000);
	report(got == okp_steps_expected(x), "probed, the text computes what it computes unprobed (%#lx, %#lx)",
	       got, okp_steps_expected(x));
	for (i = 0; i < n; i++) {
		once += atomic_read(&hits[i]) == 1;
		counted_once += probes[i].nhit == 1;
		missed += probes[i].nmissed != 0;
	}
	report(once == n && counted_once == n,
	       "one run hits every probe exactly once (%u handlers ran once, %u nhit 1, of %u)", once,
	       counted_once, n);
	report(!missed, "no probe missed its hit (%u did)", missed);
	pr_info("OKP-STEPSCALE-ARMED: %u probes\n", n);
}

static void okp_steps_finish(void)
{
	unsigned long x = 11, got;
	unsigned int i, still = 0;
	u64 t;
	int ret;

	t = ktime_get_ns();
	okp_unregister_kprobes(probe_ptrs, n);
	armed = false;
	pr_info("OKP-STEPSCALE-TIMES: unregister %u: %llu ms\n", n, (ktime_get_ns() - t) / 1000000);
	for (i = 0; i < n; i++)
		atomic_set(&hits[i], 0);
	got = okp_steps_run(x);
	for (i = 0; i < n; i++)
		still += atomic_read(&hits[i]) != 0;
	report(got == okp_steps_expected(x) && !still,
	       "unregistered, the text computes the same with no handler run (%u probes still hit)", still);
	/* Every slot came back: the same batch fits again. */
	okp_steps_prepare();
	t = ktime_get_ns();
	ret = okp_register_kprobes(probe_ptrs, n);
	if (ret)
		okp_steps_refused(ret);
	report(!ret, "the %u probes register again: every slot came back (%d)", n, ret);
	if (!ret) {
		got = okp_steps_run(x);
		still = 0;
		for (i = 0; i < n; i++)
			still += atomic_read(&hits[i]) != 1;
		report(got == okp_steps_expected(x) && !still,
		       "... and hit once each again, computing the same (%u probes off)", still);
		okp_unregister_kprobes(probe_ptrs, n);
	}
	pr_info("OKP-STEPSCALE-TIMES: register, run, unregister again: %llu ms\n",
		(ktime_get_ns() - t) / 1000000);
	pr_info("OKP-STEPSCALE-END: %u probes\n", n);
}

/* A stage runs when 1 is written to its parameter, once in its turn. */
static int okp_steps_stage(const char *val, bool arm)
{
	int ret = okp_scale_trigger(val);

	if (ret)
		return ret;
	mutex_lock(&stage_lock);
	if (arm && !armed)
		okp_steps_arm();
	else if (!arm && armed)
		okp_steps_finish();
	else
		ret = -EINVAL;
	mutex_unlock(&stage_lock);
	return ret;
}

static int okp_steps_set_arm(const char *val, const struct kernel_param *kp)
{
	return okp_steps_stage(val, true);
}

static int okp_steps_set_finish(const char *val, const struct kernel_param *kp)
{
	return okp_steps_stage(val, false);
}

static const struct kernel_param_ops okp_steps_arm_ops = { .set = okp_steps_set_arm };
static const struct kernel_param_ops okp_steps_finish_ops = { .set = okp_steps_set_finish };
module_param_cb(arm, &okp_steps_arm_ops, NULL, 0200);
MODULE_PARM_DESC(arm, "1: register the probes at once and run the text");
module_param_cb(finish, &okp_steps_finish_ops, NULL, 0200);
MODULE_PARM_DESC(finish, "1: unregister them, run it again; register and unregister once more");

static int __init okp_stepscale_init(void)
{
	unsigned long x = 7;

	BUILD_BUG_ON(OKP_STEPS != 10000);
	if (!n || n > OKP_STEPS) {
		pr_err("OKP-STEPSCALE-REFUSED: n=%u: 1 to %u probes\n", n, OKP_STEPS);
		return -EINVAL;
	}
	report(okp_steps_run(x) == okp_steps_expected(x), "unprobed, the text computes x * 3^%u",
	       OKP_STEPS);
	pr_info("OKP-STEPSCALE-SITES: first=%pS last=%pS\n", site_of(0), site_of(n - 1));
	probes = kvcalloc(n, sizeof(*probes), GFP_KERNEL);
	probe_ptrs = kvcalloc(n, sizeof(*probe_ptrs), GFP_KERNEL);
	hits = kvcalloc(n, sizeof(*hits), GFP_KERNEL);
	if (!probes || !probe_ptrs || !hits) {
		kvfree(probes);
		kvfree(probe_ptrs);
		kvfree(hits);
		return -ENOMEM;
	}
	return 0;
}

static void __exit okp_stepscale_exit(void)
{
	if (armed)
		okp_unregister_kprobes(probe_ptrs, n);
	kvfree(probes);
	kvfree(probe_ptrs);
	kvfree(hits);
}

module_init(okp_stepscale_init);
module_exit(okp_stepscale_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: 10,000 breakpoint probes that each need a step slot");
