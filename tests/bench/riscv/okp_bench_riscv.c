// SPDX-License-Identifier: GPL-2.0
/*
 * okprobes against the kernel's kprobes on riscv64, in one guest: for each state (an
 * instruction both simulate, one both step, its compressed form, addi which okprobes simulates
 * and the kernel steps, and a return probe) and each round, the same calls run unprobed, under
 * the kernel's probe and under okprobes' (the order alternating per round), and the per-hit cost
 * is the probed time minus the unprobed, per call. Medians over the rounds are printed as
 *   BENCH-RISCV <state> kernel=<ns> okprobes=<ns> ratio=<okprobes/kernel, x1000>
 * and every result and hit count is checked (a wrong sum or a missed hit is a
 * BENCH-RISCV-ERROR line).
 *
 * The kernel's kprobes are called first from do_trap_break(); okprobes, a module, is reached
 * only through the die notifier chain (DIE_TRAP) after the kernel's kprobes and uprobes have
 * looked and missed. What that entry costs by itself is the die-entry line: an ebreak claimed
 * by a trivial die notifier of this module's own (registered below okprobes', above kgdb's),
 *   BENCH-RISCV die-entry notifier=<ns> kernel-simulated=<ns> okprobes-simulated=<ns>
 * (per hit, the simulated state timed again in the same rounds): the floor under every
 * okprobes breakpoint hit.
 *
 * jump=1 (with debug.okprobes-optimization=1; the guest runs the module once with it at 0 for
 * the states above, where every okprobes probe must be an ebreak): okprobes' probe on a
 * mid-function instruction is a jump into a detour against the kernel's ebreak on the same
 * instruction (states detour, detour-post), then registration until armed
 *   BENCH-RISCV registration kernel=<ns> okprobes=<ns> ratio=<x1000> optimized=<ns> probes=<n>
 * (medians per probe: the kernel's register_kprobe(), okprobes' okp_register_kprobe(), and
 * okprobes' until the probe was a jump). Each run checks the path the hits took: a pre handler
 * reached through the ebreak sees regs->cause = EXC_BREAKPOINT, one reached through a detour
 * sees 0 (the detour's pt_regs has no trap cause); an okprobes probe is [OPTIMIZED] exactly
 * under jump=1, before and after its run, and the text at the probe is the kernel's ebreak or
 * okprobes' jump (an auipc or a jal) accordingly.
 * Everything runs in the init, which returns 0 (an error return makes busybox's insmod load the
 * module a second time): the guest rmmods it afterwards, no probe being left registered.
 */
#define pr_fmt(fmt) "okp_bench_riscv: " fmt
#define OKP_BENCH_TAG "BENCH-RISCV"

#include <linux/delay.h>
#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/ptrace.h>
#include <asm/csr.h>
#include <asm/unaligned.h>
#include <okprobes/okprobes.h>
#include "okp_bench_rounds.h"

unsigned long okp_brv_sim(unsigned long x);
unsigned long okp_brv_step(unsigned long x);
unsigned long okp_brv_step_c(unsigned long x);
unsigned long okp_brv_addimm(unsigned long x);
unsigned long okp_brv_ret(unsigned long x);
unsigned long okp_brv_die_entry(unsigned long x);
unsigned long okp_brv_detour(unsigned long x);
extern const u8 okp_brv_sim_insn[], okp_brv_step_insn[], okp_brv_step_c_insn[],
	okp_brv_addimm_insn[], okp_brv_die_entry_insn[];
/* The detour state's probe, one instruction into okp_brv_detour (no symbol of its own). */
#define OKP_BRV_DETOUR_INSN ((const u8 *)okp_brv_detour + 4)

static bool jump;
module_param(jump, bool, 0444);

static unsigned long handler_calls;	/* every pre (or return) handler of either framework */
static unsigned long post_calls;	/* every post handler of either framework */
/*
 * What a pre handler must see of the path its hit took (epc 0: any), and how often it did not.
 */
static unsigned long expected_cause, expected_epc, wrong_path;

static const struct state states[] = {
	{ "simulated", okp_brv_sim, okp_brv_sim_insn, 1 },
	{ "stepped", okp_brv_step, okp_brv_step_insn, 2 },
	{ "stepped-c", okp_brv_step_c, okp_brv_step_c_insn, 2 },
	{ "add-imm", okp_brv_addimm, okp_brv_addimm_insn, 1 },
	{ "return", okp_brv_ret, NULL, 1 },
};

static const struct state jump_states[] = {
	{ "detour", okp_brv_detour, OKP_BRV_DETOUR_INSN, 2 },
	{ "detour-post", okp_brv_detour, OKP_BRV_DETOUR_INSN, 2, true },
};

/* A probe's first parcel as each framework arms it. */
#define RV_OPCODE(insn) ((insn) & 0x7f)
#define RV_OPCODE_AUIPC 0x17
#define RV_OPCODE_JAL 0x6f
#define RV_EBREAK 0x00100073

static void count_hit(struct pt_regs *regs)
{
	handler_calls++;
	if (regs->cause != expected_cause || (expected_epc && regs->epc != expected_epc))
		wrong_path++;
}
static int count_pre(struct kprobe *p, struct pt_regs *regs) { count_hit(regs); return 0; }
static void count_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{ post_calls++; }
static int count_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{ handler_calls++; return 0; }
static int okp_count_pre(struct okp_kprobe *p, struct pt_regs *regs) { count_hit(regs); return 0; }
static void okp_count_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{ post_calls++; }
static int okp_count_ret(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{ handler_calls++; return 0; }
NOKPROBE_SYMBOL(count_hit);
NOKPROBE_SYMBOL(count_pre);
NOKPROBE_SYMBOL(count_post);
NOKPROBE_SYMBOL(count_ret);
NOKPROBE_SYMBOL(okp_count_pre);
NOKPROBE_SYMBOL(okp_count_post);
NOKPROBE_SYMBOL(okp_count_ret);

/* Before a run: what its pre handler must see (an ebreak's cause, or a detour's 0). */
static void expect_path(const struct state *s, unsigned long cause)
{
	handler_calls = 0;
	post_calls = 0;
	wrong_path = 0;
	expected_cause = cause;
	expected_epc = (unsigned long)s->insn;
}

static void check_hits(const struct state *s, const char *who)
{
	if (handler_calls != calls) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: %s's handler ran %lu times for %lu calls\n", s->name,
		       who, handler_calls, calls);
	}
	if (s->post && post_calls != calls) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: %s's post handler ran %lu times for %lu calls\n",
		       s->name, who, post_calls, calls);
	}
	if (wrong_path) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: %lu of %s's hits did not come %s (cause %lu, epc %px expected)\n",
		       s->name, wrong_path, who,
		       expected_cause ? "through the ebreak" : "through the detour",
		       expected_cause, (void *)expected_epc);
	}
}

/* The probe's first parcel must be the kernel's ebreak, or okprobes' jump (jump=1). */
static void check_text(const struct state *s, const char *who, bool want_jump)
{
	u32 insn;
	bool ok;

	if (!s->insn)
		return;	/* a return probe */
	insn = get_unaligned((const u32 *)s->insn);
	if (!want_jump && (insn & 0x3) != 0x3)
		return;	/* a compressed site's c.ebreak */
	ok = want_jump ? RV_OPCODE(insn) == RV_OPCODE_AUIPC || RV_OPCODE(insn) == RV_OPCODE_JAL
		       : insn == RV_EBREAK;
	if (!ok) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: %s's probe site holds %08x, not %s\n", s->name, who,
		       insn, want_jump ? "a jump (auipc or jal)" : "an ebreak");
	}
}

/* okprobes' probe is [OPTIMIZED] exactly under jump=1. */
static void check_optimized(const struct state *s, struct okp_kprobe *kp, const char *when)
{
	if (!!okp_kprobe_optimized(kp) != jump) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: okprobes' probe %s %s: %s\n", s->name,
		       jump ? "is not a jump" : "is a jump", when, okp_kprobe_reason(kp));
	}
}

/* The kernel's probe on s: ns for the calls, its handler calls and misses checked. */
static u64 run_kernel(const struct state *s)
{
	struct kprobe kp = { .addr = (kprobe_opcode_t *)s->insn, .pre_handler = count_pre,
			     .post_handler = s->post ? count_post : NULL };
	struct kretprobe rp = { .kp.addr = (kprobe_opcode_t *)s->fn, .handler = count_ret,
				.maxactive = 16 };
	u64 t;
	int ret = s->insn ? register_kprobe(&kp) : register_kretprobe(&rp);

	if (ret) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: the kernel refused (%d)\n", s->name, ret);
		return 0;
	}
	check_text(s, "the kernel", false);
	expect_path(s, EXC_BREAKPOINT);
	t = time_calls(s);
	check_hits(s, "the kernel");
	if (s->insn)
		unregister_kprobe(&kp);
	else
		unregister_kretprobe(&rp);
	if (s->insn ? kp.nmissed : rp.nmissed) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: the kernel missed %lu\n", s->name,
		       s->insn ? kp.nmissed : (unsigned long)rp.nmissed);
	}
	return t;
}

static u64 run_okprobes(const struct state *s)
{
	struct okp_kprobe kp = { .addr = (void *)s->insn, .pre_handler = okp_count_pre,
				 .post_handler = s->post ? okp_count_post : NULL };
	struct okp_kretprobe rp = { .kp.addr = (void *)s->fn, .handler = okp_count_ret,
				    .maxactive = 16 };
	u64 t;
	int ret = s->insn ? okp_register_kprobe(&kp) : okp_register_kretprobe(&rp);

	if (ret) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: okprobes refused (%d): %s\n", s->name, ret,
		       okp_kprobe_reason(s->insn ? &kp : &rp.kp));
		return 0;
	}
	if (s->insn) {
		if (jump)
			okp_wait_for_optimizer();
		check_optimized(s, &kp, "before its run");
		check_text(s, "okprobes", jump);
	}
	expect_path(s, jump ? 0 : EXC_BREAKPOINT);
	t = time_calls(s);
	check_hits(s, "okprobes");
	if (s->insn)
		check_optimized(s, &kp, "after its run");
	if (s->insn)
		okp_unregister_kprobe(&kp);
	else
		okp_unregister_kretprobe(&rp);
	return t;
}

/*
 * The die-entry floor: okp_brv_die_entry's ebreak, claimed here. notrace and off-limits to
 * probes: it runs in the breakpoint exception, like okprobes' own notifier.
 */
static int notrace die_entry_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;

	if (val != DIE_TRAP || user_mode(args->regs) ||
	    args->regs->epc != (unsigned long)okp_brv_die_entry_insn)
		return NOTIFY_DONE;
	handler_calls++;
	args->regs->epc += 4;	/* past the (uncompressed) ebreak */
	return NOTIFY_STOP;
}
NOKPROBE_SYMBOL(die_entry_notify);

static struct notifier_block die_entry_nb = {
	.notifier_call = die_entry_notify,
	/* After okprobes' (INT_MAX, which misses on this address), before kgdb's (0). */
	.priority = 1,
};

/*
 * The die-entry floor against both frameworks' simulated hit, in the same rounds (so that host
 * load moves all three alike): per round the unprobed okp_brv_addimm (the same instructions
 * but the ebreak), the die-entry ebreak, and the simulated state under each framework. Prints
 * the medians per hit. Nothing runs the ebreak unless the notifier is registered (it would be
 * a kernel BUG).
 */
static void bench_die_entry(void)
{
	static u64 d[MAX_ROUNDS], k[MAX_ROUNDS], o[MAX_ROUNDS];
	const struct state *sim = &states[0];
	unsigned int r;
	int ret = register_die_notifier(&die_entry_nb);

	if (ret) {
		errors++;
		pr_err("BENCH-RISCV-ERROR die-entry: register_die_notifier failed (%d)\n", ret);
		return;
	}
	for (r = 0; r < rounds; r++) {
		u64 base = time_fn("die-entry base", okp_brv_addimm, 1), t;
		u64 sim_base = time_calls(sim);

		handler_calls = 0;
		t = time_fn("die-entry", okp_brv_die_entry, 1);
		if (handler_calls != calls) {
			errors++;
			pr_err("BENCH-RISCV-ERROR die-entry: claimed %lu of %lu\n", handler_calls,
			       calls);
		}
		d[r] = t > base ? t - base : 0;
		k[r] = run_kernel(sim);
		o[r] = run_okprobes(sim);
		k[r] = k[r] > sim_base ? k[r] - sim_base : 0;
		o[r] = o[r] > sim_base ? o[r] - sim_base : 0;
	}
	unregister_die_notifier(&die_entry_nb);
	pr_info("BENCH-RISCV die-entry notifier=%llu kernel-simulated=%llu okprobes-simulated=%llu calls=%lu rounds=%u\n",
		div64_u64(median(d, rounds), calls), div64_u64(median(k, rounds), calls),
		div64_u64(median(o, rounds), calls), calls, rounds);
}

/*
 * Registration until armed (jump=1): OKP_BRV_OFNS probes, one at the slli (+4) of each
 * okp_brv_ofn_<i> (okp_bench_riscv_text.S), registered one at a time by each framework (the
 * kernel's first, then unregistered, then okprobes'). The kernel's probe is armed when
 * register_kprobe() returns (its ebreak written). okprobes' is too: by an ebreak on this
 * (KGDB) kernel, which the optimizer's next batch turns into the jump (the "optimized" time,
 * polled); without KGDB the jump is written before the return. Medians per probe; then every
 * function is called once and each probe's single hit checked.
 */
#define OKP_BRV_OFNS 64
#define OKP_BRV_OFN_SIZE 16
extern const u8 okp_brv_ofn_0[], okp_brv_ofn_63[];

static struct kprobe reg_kps[OKP_BRV_OFNS];
static struct kprobe *reg_kp_ptrs[OKP_BRV_OFNS];
static struct okp_kprobe reg_okps[OKP_BRV_OFNS];
static struct okp_kprobe *reg_okp_ptrs[OKP_BRV_OFNS];

static unsigned long (*ofn(unsigned int i))(unsigned long)
{
	return (unsigned long (*)(unsigned long))(okp_brv_ofn_0 + OKP_BRV_OFN_SIZE * i);
}

static void *ofn_insn(unsigned int i)
{
	return (void *)(okp_brv_ofn_0 + OKP_BRV_OFN_SIZE * i + 4);
}

/* Each function once: every result 2i + 1, one handler call each, by the expected path. */
static void call_ofns(const char *who)
{
	unsigned int i;

	handler_calls = 0;
	for (i = 0; i < OKP_BRV_OFNS; i++) {
		if (ofn(i)(i) != 2 * i + 1) {
			errors++;
			pr_err("BENCH-RISCV-ERROR registration: okp_brv_ofn_%u wrong under %s's probe\n",
			       i, who);
		}
	}
	if (handler_calls != OKP_BRV_OFNS) {
		errors++;
		pr_err("BENCH-RISCV-ERROR registration: %lu handler calls for %u probed calls under %s\n",
		       handler_calls, OKP_BRV_OFNS, who);
	}
	if (wrong_path) {
		errors++;
		pr_err("BENCH-RISCV-ERROR registration: %lu of %s's hits did not come %s\n",
		       wrong_path, who, expected_cause ? "through the ebreak" : "through the detour");
	}
}

/* ns to register each of the kernel's probes; 0 when one was refused. */
static u64 kernel_registration(void)
{
	static u64 t[OKP_BRV_OFNS];
	unsigned int i;
	u64 t0;
	int ret;

	for (i = 0; i < OKP_BRV_OFNS; i++) {
		reg_kps[i] = (struct kprobe){ .addr = ofn_insn(i), .pre_handler = count_pre };
		reg_kp_ptrs[i] = &reg_kps[i];
		t0 = ktime_get_ns();
		ret = register_kprobe(&reg_kps[i]);
		t[i] = ktime_get_ns() - t0;
		if (ret) {
			errors++;
			pr_err("BENCH-RISCV-ERROR registration: the kernel refused ofn_%u (%d)\n", i, ret);
			unregister_kprobes(reg_kp_ptrs, i);
			return 0;
		}
	}
	wrong_path = 0;	/* the epc differs per probe: only the cause is checked */
	expected_cause = EXC_BREAKPOINT;
	expected_epc = 0;
	call_ofns("the kernel");
	unregister_kprobes(reg_kp_ptrs, OKP_BRV_OFNS);
	return median(t, OKP_BRV_OFNS);
}

/* ns to register each of okprobes' probes, and (*optimized) until each was a jump. */
static u64 okprobes_registration(u64 *optimized)
{
	static u64 t[OKP_BRV_OFNS], topt[OKP_BRV_OFNS];
	unsigned int i, n = 0;
	u64 t0, t1;
	int ret;

	for (i = 0; i < OKP_BRV_OFNS; i++, n++) {
		struct okp_kprobe *kp = &reg_okps[i];

		*kp = (struct okp_kprobe){ .addr = ofn_insn(i), .pre_handler = okp_count_pre };
		reg_okp_ptrs[i] = kp;
		t0 = ktime_get_ns();
		ret = okp_register_kprobe(kp);
		t1 = ktime_get_ns();
		t[i] = t1 - t0;
		if (ret) {
			errors++;
			pr_err("BENCH-RISCV-ERROR registration: okprobes refused ofn_%u (%d): %s\n", i,
			       ret, okp_kprobe_reason(kp));
			break;
		}
		/* The optimizer gathers what registers within its delay: poll, two seconds at most. */
		while (!okp_kprobe_optimized(kp) && ktime_get_ns() - t1 < 2 * NSEC_PER_SEC)
			usleep_range(20, 40);
		topt[i] = ktime_get_ns() - t0;
		if (!okp_kprobe_optimized(kp)) {
			errors++;
			pr_err("BENCH-RISCV-ERROR registration: ofn_%u not a jump after 2 s: %s\n", i,
			       okp_kprobe_reason(kp));
			n++;
			break;
		}
	}
	if (n == OKP_BRV_OFNS) {
		wrong_path = 0;
		expected_cause = 0;	/* every hit through its detour */
		expected_epc = 0;
		call_ofns("okprobes");
		for (i = 0; i < OKP_BRV_OFNS; i++) {
			if (reg_okps[i].nhit != 1) {
				errors++;
				pr_err("BENCH-RISCV-ERROR registration: ofn_%u hit %lu times, not once\n",
				       i, reg_okps[i].nhit);
			}
		}
	}
	okp_unregister_kprobes(reg_okp_ptrs, n);
	if (n != OKP_BRV_OFNS)
		return 0;
	*optimized = median(topt, OKP_BRV_OFNS);
	return median(t, OKP_BRV_OFNS);
}

static void bench_registration(void)
{
	u64 k, o, optimized = 0;

	if (okp_brv_ofn_63 - okp_brv_ofn_0 != (OKP_BRV_OFNS - 1) * OKP_BRV_OFN_SIZE) {
		errors++;
		pr_err("BENCH-RISCV-ERROR registration: okp_brv_ofn_63 is %ld bytes after _0, not %d\n",
		       (long)(okp_brv_ofn_63 - okp_brv_ofn_0), (OKP_BRV_OFNS - 1) * OKP_BRV_OFN_SIZE);
		return;
	}
	k = kernel_registration();
	o = okprobes_registration(&optimized);
	pr_info("BENCH-RISCV registration kernel=%llu okprobes=%llu ratio=%llu optimized=%llu probes=%u\n",
		k, o, k ? div64_u64(o * 1000, k) : 0, optimized, OKP_BRV_OFNS);
}

static int __init okp_bench_riscv_init(void)
{
	rounds = clamp(rounds, 1U, (unsigned int)MAX_ROUNDS);
	if (jump) {
		bench_states(jump_states, ARRAY_SIZE(jump_states));
		bench_registration();
	} else {
		bench_states(states, ARRAY_SIZE(states));
		bench_die_entry();
	}
	pr_info("BENCH-RISCV done errors=%u\n", errors);
	return 0;
}

module_init(okp_bench_riscv_init);

static void __exit okp_bench_riscv_exit(void)
{
}
module_exit(okp_bench_riscv_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes vs the kernel's kprobes on riscv64, per state");
