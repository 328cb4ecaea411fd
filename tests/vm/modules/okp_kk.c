// SPDX-License-Identifier: GPL-2.0
/*
 * A probe of the kernel's own kprobes, for coexistence tests: registers a kprobe at
 * symbol+offset (or addr) and exposes its result and hit count as read-only module parameters
 * (/sys/module/okp_kk/parameters/{result,hits}). Loading succeeds even when registration
 * fails, so the script can read the errno.
 */
#include <linux/kprobes.h>
#include <linux/module.h>

static char symbol[KSYM_NAME_LEN] = "okp_target_body";
module_param_string(symbol, symbol, KSYM_NAME_LEN, 0444);
static uint offset;
module_param(offset, uint, 0444);
static ulong addr;	/* instead of symbol: a raw address */
module_param(addr, ulong, 0444);
static int result = 1;
module_param(result, int, 0444);
static ulong hits;
module_param(hits, ulong, 0444);

static int okp_kk_pre(struct kprobe *p, struct pt_regs *regs)
{
	hits++;
	return 0;
}

static struct kprobe kp = { .pre_handler = okp_kk_pre };

static int __init okp_kk_init(void)
{
	if (addr)
		kp.addr = (kprobe_opcode_t *)addr;
	else
		kp.symbol_name = symbol;
	kp.offset = offset;
	result = register_kprobe(&kp);
	pr_info("okp_kk: register_kprobe(%s+%u) = %d\n", symbol, offset, result);
	return 0;
}

static void __exit okp_kk_exit(void)
{
	if (result == 0)
		unregister_kprobe(&kp);
}

module_init(okp_kk_init);
module_exit(okp_kk_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: a kernel kprobe beside okprobes");
