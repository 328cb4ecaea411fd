// SPDX-License-Identifier: GPL-2.0
/*
 * The okprobes counterpart of the kernel's samples/kprobes/kprobe_example.c: a probe on a
 * symbol given as a module parameter (default kernel_clone, which every busybox command that
 * forks reaches), printing registers on hits, rate-limited so a busy path cannot flood the
 * console. Load with `insmod okprobe_example.ko symbol=do_sys_openat2 offset=0x4`, or by
 * address with `insmod okprobe_example.ko addr=0xffffffff81234560`; `post=0` registers it
 * without a post_handler, so that on x86-64 it is jump-optimized shortly after.
 * A port by renaming: it needs no <linux/kprobes.h> (__kprobes -> __okp_kprobes).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/ratelimit.h>
#include <linux/stacktrace.h>
#include <okprobes/okprobes.h>

static char symbol[KSYM_NAME_LEN] = "kernel_clone";
module_param_string(symbol, symbol, KSYM_NAME_LEN, 0444);
static unsigned int offset;
module_param(offset, uint, 0444);
static unsigned long addr;
module_param(addr, ulong, 0444);
MODULE_PARM_DESC(addr, "probe this address instead of symbol (symbol is then ignored)");
static bool post = true;
module_param(post, bool, 0444);
MODULE_PARM_DESC(post, "0: no post_handler, so the probe may be jump-optimized (x86-64)");
static bool dump;
module_param(dump, bool, 0444);
MODULE_PARM_DESC(dump, "1: log the stack on the first hit (the probed function and its callers)");
static atomic_t dumped = ATOMIC_INIT(0);

static struct okp_kprobe kp = {
	.symbol_name = symbol,
};

/* The status/flags word each architecture saves, as kprobe_example.c prints it. */
#if defined(CONFIG_X86)
#define REGS_STATUS(regs) ((regs)->flags)
#elif defined(CONFIG_ARM64)
#define REGS_STATUS(regs) ((unsigned long)(regs)->pstate)
#elif defined(CONFIG_RISCV)
#define REGS_STATUS(regs) ((regs)->status)
#else
#define REGS_STATUS(regs) 0UL
#endif

static DEFINE_RATELIMIT_STATE(okp_example_rs, HZ, 5);

/*
 * The stack as dump_stack() would unwind it (the same unwinder, from the handler), on one
 * line: what a handler sees of its callers, without a "Call Trace:" a test harness would take
 * for a splat.
 */
static void log_stack(void)
{
	unsigned long entries[16];
	unsigned int n = stack_trace_save(entries, ARRAY_SIZE(entries), 0), i;
	char line[16 * 64];
	int len = 0;

	for (i = 0; i < n && len < (int)sizeof(line); i++)
		len += scnprintf(line + len, sizeof(line) - len, " %pS", (void *)entries[i]);
	pr_info("stack:%s\n", line);
}

/* __okp_kprobes, as the kernel's sample marks its handlers __kprobes: okprobes refuses probes
 * on them (a probe there would recurse into this handler). */
static int __okp_kprobes handler_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	if (dump && !atomic_xchg(&dumped, 1))
		log_stack();
	if (__ratelimit(&okp_example_rs))
		pr_info("<%s+%#x> pre: ip=%lx status=%lx arg0=%lx\n", p->symbol_name, p->offset,
			instruction_pointer(regs), REGS_STATUS(regs), okp_arg(regs, 0));
	return 0;
}

static void __okp_kprobes handler_post(struct okp_kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	if (__ratelimit(&okp_example_rs))
		pr_info("<%s+%#x> post: ip=%lx status=%lx\n", p->symbol_name, p->offset,
			instruction_pointer(regs), REGS_STATUS(regs));
}

static int __init okprobe_example_init(void)
{
	int ret;

	kp.offset = offset;
	if (addr) {
		kp.symbol_name = NULL;
		kp.addr = (void *)addr;
	}
	kp.pre_handler = handler_pre;
	kp.post_handler = post ? handler_post : NULL;
	ret = okp_register_kprobe(&kp);
	if (ret < 0) {
		pr_err("okp_register_kprobe failed, returned %d: %s\n", ret, okp_kprobe_reason(&kp));
		return ret;
	}
	pr_info("planted okprobe at %pS (%px)\n", kp.addr, kp.addr);
	return 0;
}

static void __exit okprobe_example_exit(void)
{
	okp_unregister_kprobe(&kp);
	pr_info("okprobe at %pS unregistered after %lu hits, %lu missed\n", kp.addr, kp.nhit,
		kp.nmissed);
}

module_init(okprobe_example_init);
module_exit(okprobe_example_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes sample: the kprobe_example counterpart");
