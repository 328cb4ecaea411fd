// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 jump-probe coverage (issue 25): a probe at every instruction of each function named in
 * funcs=, and what became of it. One function at a time: every offset registered (a probe may
 * be refused: counted by its reason), the optimizer waited for, each probe's state read, then
 * all of them unregistered. Prints
 *   OKP-COV64 total=N optimized=N ftrace=N breakpoint=N refused=N functions=N
 * and one line per probe that is not a jump, for the guest to tally by reason:
 *   OKP-COV64-NOT <refused|breakpoint> <func>+<off> <reason>
 * No handler runs anything but a count: the probes are live while they are registered, on
 * whatever runs through these functions meanwhile.
 */
#define pr_fmt(fmt) "okp_arm64_coverage: " fmt

#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <okprobes/okprobes.h>

static char *funcs[512];
static int nfuncs;
module_param_array(funcs, charp, &nfuncs, 0444);
/* At most this many instructions of a function are tried (its first ones). */
static unsigned int max_insns = 256;
module_param(max_insns, uint, 0444);

static atomic_long_t hits;

static int count_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&hits);
	return 0;
}

/* The function's size, from kallsyms' "name+0x0/0xSIZE". */
static unsigned long size_of(void *addr)
{
	char buf[KSYM_SYMBOL_LEN], *slash;
	unsigned long size;

	sprint_symbol(buf, (unsigned long)addr);
	slash = strchr(buf, '/');
	if (!slash)
		return 0;
	slash[strcspn(slash, " ")] = '\0';
	return kstrtoul(slash + 1, 0, &size) ? 0 : size;
}

static unsigned long total, optimized, ftrace, breakpoint, refused, functions;

static void cover(const char *name)
{
	struct okp_kprobe first = { .symbol_name = name, .pre_handler = count_pre };
	struct okp_kprobe *kps;
	unsigned long size, n, i;

	/* The function's start, through okprobes' own lookup (kallsyms_lookup_name is not exported). */
	if (okp_register_kprobe(&first)) {
		pr_info("OKP-COV64-SKIP %s: %s\n", name, okp_kprobe_reason(&first));
		return;
	}
	okp_unregister_kprobe(&first);
	size = size_of(first.addr);
	n = min_t(unsigned long, size / 4, max_insns);
	if (!n)
		return;
	kps = kcalloc(n, sizeof(*kps), GFP_KERNEL);
	if (!kps)
		return;
	functions++;
	for (i = 0; i < n; i++) {
		kps[i].symbol_name = name;
		kps[i].offset = i * 4;
		kps[i].pre_handler = count_pre;
		if (okp_register_kprobe(&kps[i])) {
			refused++;
			total++;
			pr_info("OKP-COV64-NOT refused %s+%#lx %s\n", name, i * 4, okp_kprobe_reason(&kps[i]));
			kps[i].symbol_name = NULL;
		}
	}
	okp_wait_for_optimizer();
	for (i = 0; i < n; i++) {
		if (!kps[i].symbol_name)
			continue;
		total++;
		if (kps[i].flags & OKP_KPROBE_FLAG_FTRACE) {
			ftrace++;
		} else if (kps[i].flags & OKP_KPROBE_FLAG_OPTIMIZED) {
			optimized++;
		} else {
			breakpoint++;
			pr_info("OKP-COV64-NOT breakpoint %s+%#lx %s\n", name, i * 4,
				okp_kprobe_reason(&kps[i]));
		}
		okp_unregister_kprobe(&kps[i]);
	}
	kfree(kps);
}

static int __init okp_arm64_coverage_init(void)
{
	int i;

	for (i = 0; i < nfuncs; i++)
		cover(funcs[i]);
	pr_info("OKP-COV64 total=%lu optimized=%lu ftrace=%lu breakpoint=%lu refused=%lu functions=%lu hits=%ld\n",
		total, optimized, ftrace, breakpoint, refused, functions, atomic_long_read(&hits));
	return 0;
}
module_init(okp_arm64_coverage_init);

static void __exit okp_arm64_coverage_exit(void)
{
}
module_exit(okp_arm64_coverage_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("arm64 jump-probe coverage over a sample of vmlinux functions");
