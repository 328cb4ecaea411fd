// SPDX-License-Identifier: GPL-2.0
/*
 * arm64, riscv64: what a function-entry probe's handler writes into pt_regs takes effect,
 * whether the kernel's ftrace saves a whole pt_regs (WITH_REGS, 6.1) or only ftrace_regs
 * (WITH_ARGS, as Debian's arm64 6.12 and riscv64 6.12, where okprobes fills a pt_regs and
 * writes back what ftrace restores: src/kernel/arch/<arch>/ftrace_regs.c). At load, on this module's own C functions (each an
 * ftrace site): the handler sees the argument and the entry pc; an argument it changes is the
 * one the function gets; a new pc redirects the call, with OKP_KPROBE_FLAG_IPMODIFY and without
 * it (as the kernel's kprobes obey a redirect). Logs "OKP-FTREGS: PASS ..." or "... FAIL ...".
 */
#include <linux/module.h>
#include <linux/ptrace.h>
#include <okprobes/okprobes.h>

/* noipa: every call happens and its result is not folded at the call site. */
static __attribute__((__noipa__)) unsigned long okp_ftregs_add(unsigned long a, unsigned long b)
{
	return a + b;
}

static __attribute__((__noipa__)) unsigned long okp_ftregs_double(unsigned long x)
{
	return x * 2;
}

static __attribute__((__noipa__)) unsigned long okp_ftregs_triple(unsigned long x)
{
	return x * 3;
}

/* The second argument's register: x1 on arm64, a1 on riscv64. */
#ifdef CONFIG_ARM64
#define okp_second_arg(regs) ((regs)->regs[1])
#else
#define okp_second_arg(regs) ((regs)->a1)
#endif

static unsigned long seen_arg0, seen_pc;

static int change_second_arg(struct okp_kprobe *p, struct pt_regs *regs)
{
	seen_arg0 = regs_get_kernel_argument(regs, 0);
	seen_pc = instruction_pointer(regs);
	okp_second_arg(regs) = 100;
	return 0;
}

static int redirect_to_triple(struct okp_kprobe *p, struct pt_regs *regs)
{
	instruction_pointer_set(regs, (unsigned long)okp_ftregs_triple);
	return 1;	/* the kprobes convention: pc changed, do not resume at the probe */
}

static int failures;

static void expect(bool ok, const char *what, unsigned long got, unsigned long want)
{
	if (ok)
		return;
	failures++;
	pr_err("OKP-FTREGS: FAIL %s: got %lu (%#lx), want %lu (%#lx)\n", what, got, got, want, want);
}

static int run(struct okp_kprobe *kp)
{
	int ret = okp_register_kprobe(kp);

	if (ret) {
		failures++;
		pr_err("OKP-FTREGS: FAIL cannot register on %ps: %d %s\n", kp->addr, ret,
		       okp_kprobe_reason(kp));
	}
	return ret;
}

static int __init okp_ftregs_init(void)
{
	struct okp_kprobe arg = { .addr = (void *)okp_ftregs_add, .pre_handler = change_second_arg };
	struct okp_kprobe ipmod = { .addr = (void *)okp_ftregs_double, .pre_handler = redirect_to_triple,
				    .flags = OKP_KPROBE_FLAG_IPMODIFY };
	struct okp_kprobe plain = { .addr = (void *)okp_ftregs_double, .pre_handler = redirect_to_triple };
	unsigned long r;

	if (!run(&arg)) {
		expect(arg.flags & OKP_KPROBE_FLAG_FTRACE, "served by ftrace", arg.flags,
		       OKP_KPROBE_FLAG_FTRACE);
		r = okp_ftregs_add(7, 2);
		expect(r == 107, "add(7, 2) with its second argument set to 100 by the handler", r, 107);
		expect(seen_arg0 == 7, "the handler's first argument", seen_arg0, 7);
		expect(seen_pc >= (unsigned long)okp_ftregs_add &&
		       seen_pc < (unsigned long)okp_ftregs_add + 16,
		       "the handler's pc, at the function's entry", seen_pc, (unsigned long)okp_ftregs_add);
		expect(arg.nhit == 1, "hits on add", arg.nhit, 1);
		okp_unregister_kprobe(&arg);
	}
	r = okp_ftregs_add(7, 2);
	expect(r == 9, "add(7, 2) after unregistering", r, 9);

	if (!run(&ipmod)) {
		r = okp_ftregs_double(5);
		expect(r == 15, "double(5) redirected to triple (IPMODIFY)", r, 15);
		okp_unregister_kprobe(&ipmod);
	}
	if (!run(&plain)) {
		r = okp_ftregs_double(5);
		expect(r == 15, "double(5) redirected to triple (without IPMODIFY)", r, 15);
		expect(plain.nmissed == 0, "no miss on the redirect", plain.nmissed, 0);
		okp_unregister_kprobe(&plain);
	}
	if (!failures)
		pr_info("OKP-FTREGS: PASS argument change, entry pc, redirect with and without IPMODIFY\n");
	else
		pr_info("OKP-FTREGS: FAIL %d checks\n", failures);
	return 0;
}

static void __exit okp_ftregs_exit(void)
{
}

module_init(okp_ftregs_init);
module_exit(okp_ftregs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: entry handlers' pt_regs writes take effect");
