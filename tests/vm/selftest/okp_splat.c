// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: a kernel WARN that run-guest must turn into a failed run. */
#include <linux/bug.h>
#include <linux/module.h>

static int __init okp_splat_init(void)
{
	WARN(1, "okp_splat: deliberate warning for the harness self-test\n");
	return 0;
}

static void __exit okp_splat_exit(void)
{
}

module_init(okp_splat_init);
module_exit(okp_splat_exit);
MODULE_LICENSE("GPL");
