// SPDX-License-Identifier: GPL-2.0
/*
 * The okprobes counterpart of the kernel's samples/kprobes/kretprobe_example.c: a return
 * probe on a function given as a module parameter (default kernel_clone), printing what it
 * returned and how long it took, rate-limited. The entry handler stores the entry time in
 * the instance's data (from the NMI-safe clock: handlers may run in the int3 exception);
 * the return handler reads it back. On unload it prints the pool
 * statistics okprobes keeps (peak instances in use, misses by cause).
 *
 *   insmod okretprobe_example.ko func=do_sys_openat2
 *
 * A port by renaming: it needs no <linux/kprobes.h> (NOKPROBE_SYMBOL -> OKP_NOKPROBE_SYMBOL).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/ratelimit.h>
#include <okprobes/okprobes.h>

static char func[KSYM_NAME_LEN] = "kernel_clone";
module_param_string(func, func, KSYM_NAME_LEN, 0444);
MODULE_PARM_DESC(func, "Function to return-probe");
static int maxactive = 20;
module_param(maxactive, int, 0444);
MODULE_PARM_DESC(maxactive, "Instances of func that may be running at once (default 20)");

/* Per-instance data: the entry time. */
struct my_data {
	u64 entry_ns;
};

static DEFINE_RATELIMIT_STATE(okretprobe_example_rs, HZ, 5);

static int entry_handler(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct my_data *data = (struct my_data *)ri->data;

	if (!current->mm)
		return 1;	/* kernel threads: skip, as kretprobe_example.c does */
	/*
	 * Not ktime_get(), as kretprobe_example.c has it: a function whose entry is a breakpoint
	 * (no ftrace call there) runs the handlers in the int3 exception, an NMI-like context
	 * where ktime_get()'s seqcount can spin forever on a writer it interrupted.
	 */
	data->entry_ns = ktime_get_mono_fast_ns();
	return 0;
}
/* As kretprobe_example.c's NOKPROBE_SYMBOL(): okprobes refuses probes on the handlers. */
OKP_NOKPROBE_SYMBOL(entry_handler);

static int ret_handler(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned long retval = regs_return_value(regs);
	struct my_data *data = (struct my_data *)ri->data;
	s64 delta = ktime_get_mono_fast_ns() - data->entry_ns;

	if (__ratelimit(&okretprobe_example_rs))
		pr_info("%s returned %lu and took %lld ns to execute\n", func, retval,
			(long long)delta);
	return 0;
}
OKP_NOKPROBE_SYMBOL(ret_handler);

static struct okp_kretprobe my_kretprobe = {
	.handler = ret_handler,
	.entry_handler = entry_handler,
	.data_size = sizeof(struct my_data),
};

static int __init okretprobe_example_init(void)
{
	int ret;

	my_kretprobe.kp.symbol_name = func;
	my_kretprobe.maxactive = maxactive;
	ret = okp_register_kretprobe(&my_kretprobe);
	if (ret < 0) {
		pr_err("okp_register_kretprobe failed, returned %d: %s\n", ret,
		       okp_kprobe_reason(&my_kretprobe.kp));
		return ret;
	}
	pr_info("planted return probe at %s: %pS\n", func, my_kretprobe.kp.addr);
	return 0;
}

static void __exit okretprobe_example_exit(void)
{
	okp_unregister_kretprobe(&my_kretprobe);
	pr_info("return probe at %pS unregistered: peak %u of %d instances, missed %d (pool empty), %lu (re-entry)\n",
		my_kretprobe.kp.addr, my_kretprobe.peak, my_kretprobe.maxactive,
		my_kretprobe.nmissed, my_kretprobe.nmissed_by[OKP_RP_MISS_REENTRY] +
		my_kretprobe.kp.nmissed_by[OKP_MISS_REENTRY]);
}

module_init(okretprobe_example_init)
module_exit(okretprobe_example_exit)
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes: return probe example (function latency)");
