// SPDX-License-Identifier: GPL-2.0
/*
 * riscv64: a pre handler that changes the pc through a jump probe's detour. The detour's pre
 * entry leaves a changed epc by `sret` with every register restored from the frame
 * (src/kernel/arch/riscv/detour_entry.S); this module checks that way out end to end. At load,
 * on okp_dredir_fn (detour_redirect_text_riscv.S), probed one instruction in once the probe is
 * a jump ([OPTIMIZED]): every hit must come through the detour (the pt_regs a detour builds
 * has no trap cause, an ebreak's has EXC_BREAKPOINT), and
 *  - a handler sending the pc to another function (okp_dredir_away) and returning 1: the
 *    result is x + 1 + 1000 (the new pc ran, returning to the caller by the probed code's ra;
 *    the displaced `slli; addi` did not run), no post handler runs;
 *  - to the instruction after the region (okp_dredir_fn's ret): x + 1;
 *  - the same detour with the handler not redirecting: ((x + 1) << 4) + 3, the post handler
 *    once per call;
 * and after each call interrupts are on and the preempt count is what it was (sret restored
 * SIE from the frame; the hit's preempt_disable was undone on that way out too).
 * Logs "OKP-DREDIR: PASS ..." or "OKP-DREDIR: FAIL ..." lines.
 */
#include <linux/irqflags.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <asm/csr.h>
#include <okprobes/okprobes.h>

unsigned long okp_dredir_fn(unsigned long x);
unsigned long okp_dredir_away(unsigned long x);

#define DREDIR_PROBE_OFFSET 2	/* after the c.addi */
#define DREDIR_RET_OFFSET 10	/* okp_dredir_fn's ret, after the region */

static unsigned long redirect_to;	/* 0: the handler does not redirect */
static unsigned long pre_calls, post_calls, wrong_path, seen_a0;

static int dredir_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	pre_calls++;
	seen_a0 = regs->a0;
	if (regs->cause != 0 || regs->epc != (unsigned long)p->addr)
		wrong_path++;
	if (!redirect_to)
		return 0;
	instruction_pointer_set(regs, redirect_to);
	return 1;	/* the kprobes convention: the pc changed, do not resume at the probe */
}

static void dredir_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	post_calls++;
}
OKP_NOKPROBE_SYMBOL(dredir_pre);
OKP_NOKPROBE_SYMBOL(dredir_post);

static int failures;

static void expect(bool ok, const char *what, unsigned long got, unsigned long want)
{
	if (ok)
		return;
	failures++;
	pr_err("OKP-DREDIR: FAIL %s: got %lu (%#lx), want %lu (%#lx)\n", what, got, got, want, want);
}

/* One call of okp_dredir_fn(x) under the probe: its result, each handler's calls checked. */
static void call_once(const char *what, unsigned long x, unsigned long want,
		      unsigned long want_post)
{
	int preempt = preempt_count();
	unsigned long r;

	pre_calls = post_calls = 0;
	r = okp_dredir_fn(x);
	expect(r == want, what, r, want);
	expect(pre_calls == 1, "pre handler calls", pre_calls, 1);
	expect(post_calls == want_post, "post handler calls", post_calls, want_post);
	expect(seen_a0 == x + 1, "the handler's a0 (x + 1, the c.addi before the probe ran)",
	       seen_a0, x + 1);
	expect(!irqs_disabled(), "interrupts on after the call", irqs_disabled(), 0);
	expect(preempt_count() == preempt, "the preempt count after the call", preempt_count(),
	       preempt);
}

static int __init okp_dredir_init(void)
{
	struct okp_kprobe kp = { .addr = (void *)((u8 *)okp_dredir_fn + DREDIR_PROBE_OFFSET),
				 .pre_handler = dredir_pre, .post_handler = dredir_post };
	const unsigned long ret_insn = (unsigned long)okp_dredir_fn + DREDIR_RET_OFFSET;
	unsigned long x;
	int ret;

	expect(okp_dredir_fn(5) == 99, "okp_dredir_fn(5) unprobed", okp_dredir_fn(5), 99);
	ret = okp_register_kprobe(&kp);
	if (ret) {
		pr_err("OKP-DREDIR: FAIL cannot register at %pS: %d %s\n", kp.addr, ret,
		       okp_kprobe_reason(&kp));
		return 0;
	}
	okp_wait_for_optimizer();
	if (!okp_kprobe_optimized(&kp)) {
		pr_err("OKP-DREDIR: FAIL %pS is not a jump: %s\n", kp.addr, okp_kprobe_reason(&kp));
		okp_unregister_kprobe(&kp);
		return 0;
	}
	for (x = 0; x < 4; x++) {
		redirect_to = (unsigned long)okp_dredir_away;
		call_once("redirected to okp_dredir_away: x + 1 + 1000", x, x + 1001, 0);
		redirect_to = ret_insn;
		call_once("redirected past the region: x + 1", x, x + 1, 0);
		redirect_to = 0;
		call_once("not redirected: ((x + 1) << 4) + 3", x, ((x + 1) << 4) + 3, 1);
	}
	expect(wrong_path == 0, "hits that did not come through the detour", wrong_path, 0);
	expect(okp_kprobe_optimized(&kp), "still a jump after the calls", 0, 1);
	expect(kp.nhit == 12, "hits", kp.nhit, 12);
	okp_unregister_kprobe(&kp);
	expect(okp_dredir_fn(5) == 99, "okp_dredir_fn(5) unregistered", okp_dredir_fn(5), 99);
	if (!failures)
		pr_info("OKP-DREDIR: PASS a pre handler's new pc through a detour (sret): another function, past the region, and no redirect\n");
	else
		pr_info("OKP-DREDIR: FAIL %d checks\n", failures);
	return 0;
}

static void __exit okp_dredir_exit(void)
{
}

module_init(okp_dredir_init);
module_exit(okp_dredir_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: a pre handler's pc change through a riscv64 detour");
