// SPDX-License-Identifier: GPL-2.0
/*
 * sysctl debug.okprobes-optimization (/proc/sys/debug/okprobes-optimization): 0/1, as the
 * kernel's debug.kprobes-optimization; any other value is -EINVAL. The value lives in the
 * core; this handler only converts.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/sysctl.h>
#include <linux/version.h>

#include "okp_glue.h"

/* 6.11 made the table a handler gets const. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define OKP_CTL_TABLE const struct ctl_table
#else
#define OKP_CTL_TABLE struct ctl_table
#endif

static int okp_optimization_handler(OKP_CTL_TABLE *table, int write, void *buffer,
				    size_t *lenp, loff_t *ppos)
{
	int value = okp_core_optimization();
	struct ctl_table local = *table;
	int ret;

	local.data = &value;
	local.maxlen = sizeof(value);
	local.extra1 = SYSCTL_ZERO;
	local.extra2 = SYSCTL_ONE;
	ret = proc_dointvec_minmax(&local, write, buffer, lenp, ppos);
	if (write && !ret)
		ret = okp_core_set_optimization(value);
	return ret;
}

/* Return probes registered after a write of 1 use okprobes' own stubs even where the kernel's
 * rethook is usable (rethook.c): for comparisons and tests of both. */
int okp_force_return_stubs;

static struct ctl_table okp_sysctl_table[] = {
	{
		.procname = "okprobes-optimization",
		.mode = 0644,
		.proc_handler = okp_optimization_handler,
	},
	{
		.procname = "okprobes-return-stubs",
		.data = &okp_force_return_stubs,
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = SYSCTL_ONE,
	},
	/* Since 6.6 register_sysctl() takes the table's size; 6.11 checks every entry of it, so
	 * an empty sentinel there fails the registration. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	{}
#endif
};

static struct ctl_table_header *okp_sysctl_header;

int okp_sysctl_init(void)
{
	okp_sysctl_header = register_sysctl("debug", okp_sysctl_table);
	if (!okp_sysctl_header) {
		pr_err("cannot register sysctls debug.okprobes-*\n");
		return -ENOMEM;
	}
	return 0;
}

void okp_sysctl_exit(void)
{
	unregister_sysctl_table(okp_sysctl_header);
	okp_sysctl_header = NULL;
}
