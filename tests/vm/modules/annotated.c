// SPDX-License-Identifier: GPL-2.0
/*
 * okp_annotated: a module using okprobes' annotations and nothing else of okprobes (no call
 * into it, so it loads before okprobes as well as after): okp_annotated_nokprobe is marked
 * OKP_NOKPROBE_SYMBOL(), okp_annotated_kprobes is __okp_kprobes, okp_annotated_plain is an
 * unannotated neighbour. tests/vm/scripts/annotations.sh probes the three through the sample:
 * the first two must be refused with a reason naming the annotation, the third accepted.
 * Writing N to /sys/module/okp_annotated/parameters/call calls all three with N.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <okprobes/okprobes.h>

static noinline long okp_annotated_nokprobe(long a)
{
	return a * 3 + 1;
}
OKP_NOKPROBE_SYMBOL(okp_annotated_nokprobe);

static noinline long __okp_kprobes okp_annotated_kprobes(long a)
{
	return a * 5 + 2;
}

static noinline long okp_annotated_plain(long a)
{
	return a * 7 + 3;
}

/* Called through volatile pointers: the three stay out of line and keep their names. */
static long (*volatile okp_annotated_fns[])(long) = {
	okp_annotated_nokprobe, okp_annotated_kprobes, okp_annotated_plain,
};

static long okp_annotated_sum;

static int okp_annotated_call(const char *val, const struct kernel_param *kp)
{
	long a, sum = 0;
	unsigned int i;
	int ret = kstrtol(val, 0, &a);

	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(okp_annotated_fns); i++)
		sum += okp_annotated_fns[i](a);
	okp_annotated_sum = sum;
	return 0;
}

static int okp_annotated_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%ld\n", okp_annotated_sum);
}

static const struct kernel_param_ops okp_annotated_call_ops = {
	.set = okp_annotated_call,
	.get = okp_annotated_get,
};
module_param_cb(call, &okp_annotated_call_ops, NULL, 0644);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: functions annotated with OKP_NOKPROBE_SYMBOL and __okp_kprobes");
