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
 * Everything runs in the init, which returns 0 (an error return makes busybox's insmod load the
 * module a second time): the guest rmmods it afterwards, no probe being left registered.
 */
#define pr_fmt(fmt) "okp_bench_riscv: " fmt
#define OKP_BENCH_TAG "BENCH-RISCV"

#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/ptrace.h>
#include <asm/csr.h>
#include <okprobes/okprobes.h>
#include "okp_bench_rounds.h"

unsigned long okp_brv_sim(unsigned long x);
unsigned long okp_brv_step(unsigned long x);
unsigned long okp_brv_step_c(unsigned long x);
unsigned long okp_brv_addimm(unsigned long x);
unsigned long okp_brv_ret(unsigned long x);
unsigned long okp_brv_die_entry(unsigned long x);
extern const u8 okp_brv_sim_insn[], okp_brv_step_insn[], okp_brv_step_c_insn[],
	okp_brv_addimm_insn[], okp_brv_die_entry_insn[];

static unsigned long handler_calls;	/* every handler of either framework counts here */

static const struct state states[] = {
	{ "simulated", okp_brv_sim, okp_brv_sim_insn, 1 },
	{ "stepped", okp_brv_step, okp_brv_step_insn, 2 },
	{ "stepped-c", okp_brv_step_c, okp_brv_step_c_insn, 2 },
	{ "add-imm", okp_brv_addimm, okp_brv_addimm_insn, 1 },
	{ "return", okp_brv_ret, NULL, 1 },
};

static int count_pre(struct kprobe *p, struct pt_regs *regs) { handler_calls++; return 0; }
static int count_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{ handler_calls++; return 0; }
static int okp_count_pre(struct okp_kprobe *p, struct pt_regs *regs) { handler_calls++; return 0; }
static int okp_count_ret(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{ handler_calls++; return 0; }
NOKPROBE_SYMBOL(count_pre);
NOKPROBE_SYMBOL(count_ret);
NOKPROBE_SYMBOL(okp_count_pre);
NOKPROBE_SYMBOL(okp_count_ret);

static void check_hits(const struct state *s, const char *who)
{
	if (handler_calls != calls) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: %s's handler ran %lu times for %lu calls\n", s->name,
		       who, handler_calls, calls);
	}
}

/* The kernel's probe on s: ns for the calls, its handler calls and misses checked. */
static u64 run_kernel(const struct state *s)
{
	struct kprobe kp = { .addr = (kprobe_opcode_t *)s->insn, .pre_handler = count_pre };
	struct kretprobe rp = { .kp.addr = (kprobe_opcode_t *)s->fn, .handler = count_ret,
				.maxactive = 16 };
	u64 t;
	int ret = s->insn ? register_kprobe(&kp) : register_kretprobe(&rp);

	if (ret) {
		errors++;
		pr_err("BENCH-RISCV-ERROR %s: the kernel refused (%d)\n", s->name, ret);
		return 0;
	}
	handler_calls = 0;
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
	struct okp_kprobe kp = { .addr = (void *)s->insn, .pre_handler = okp_count_pre };
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
	handler_calls = 0;
	t = time_calls(s);
	check_hits(s, "okprobes");
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

static int __init okp_bench_riscv_init(void)
{
	rounds = clamp(rounds, 1U, (unsigned int)MAX_ROUNDS);
	bench_states(states, ARRAY_SIZE(states));
	bench_die_entry();
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
